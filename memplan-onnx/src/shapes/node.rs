//! What inference knows: a value's element type, shape and small constant elements (`Info`,
//! `Values`), the node being inferred with its attributes and inputs (`Node`), and the shape
//! arithmetic every rule uses (axes, element counts, numpy broadcasting).

use std::path::Path;

use crate::proto;

/// The most elements of a constant whose value inference tracks (shape operands are small).
pub const MAX_VALUE_ELEMENTS: u64 = 1 << 16;

/// ONNX element types.
pub(super) const FLOAT: i32 = 1;
pub(super) const UINT8: i32 = 2;
pub(super) const INT32: i32 = 6;
pub(super) const INT64: i32 = 7;
pub(super) const BOOL: i32 = 9;
pub(super) const DOUBLE: i32 = 11;

/// A constant's elements, row-major: integers (and bools) or floats.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Values {
    Int(Vec<i64>),
    Float(Vec<f64>),
}

impl Values {
    pub(super) fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
        }
    }

    pub(super) fn f64_at(&self, i: usize) -> f64 {
        match self {
            Values::Int(v) => v[i] as f64,
            Values::Float(v) => v[i],
        }
    }

    pub(super) fn ints(&self) -> Option<Vec<i64>> {
        match self {
            Values::Int(v) => Some(v.clone()),
            Values::Float(_) => None,
        }
    }

    /// The elements at `indices`.
    pub(super) fn pick(&self, indices: &[usize]) -> Values {
        match self {
            Values::Int(v) => Values::Int(indices.iter().map(|&i| v[i]).collect()),
            Values::Float(v) => Values::Float(indices.iter().map(|&i| v[i]).collect()),
        }
    }
}

/// A value's inferred type: element type (ONNX code), static shape, and its elements when it is
/// a small constant.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Info {
    pub(super) elem_type: i32,
    pub(super) dims: Vec<u64>,
    pub(super) value: Option<Values>,
}

impl Info {
    pub(super) fn new(elem_type: i32, dims: Vec<u64>) -> Self {
        Self {
            elem_type,
            dims,
            value: None,
        }
    }

    pub(super) fn with_value(mut self, value: Option<Values>) -> Self {
        let elements: Option<u64> = self.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
        if let Some(v) = value
            && elements == Some(v.len() as u64)
        {
            self.value = Some(match v {
                // An f32 constant holds f32 values: round what was computed in f64.
                Values::Float(f) if self.elem_type == FLOAT => {
                    Values::Float(f.into_iter().map(|x| x as f32 as f64).collect())
                }
                v => v,
            });
        }
        self
    }

    pub(super) fn rank(&self) -> usize {
        self.dims.len()
    }

    pub(super) fn elements(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
    }

    /// The integer elements, if known.
    pub(super) fn ints(&self) -> Option<Vec<i64>> {
        self.value.as_ref().and_then(Values::ints)
    }
}

/// `axis` (negative counts from the end) as an index below `rank`.
pub(super) fn axis_index(axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(format!("axis {axis} is out of range for rank {rank}"))
    }
}

/// The numpy (multidirectional) broadcast of `shapes`.
pub(super) fn broadcast(shapes: &[&[u64]]) -> Result<Vec<u64>, String> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1u64; rank];
    for shape in shapes {
        let offset = rank - shape.len();
        for (i, &d) in shape.iter().enumerate() {
            let o = &mut out[offset + i];
            if *o == d || d == 1 {
                continue;
            }
            if *o == 1 {
                *o = d;
            } else {
                let all: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
                return Err(format!(
                    "shapes {} do not broadcast (dimension {} is {} and {d})",
                    all.join(", "),
                    offset + i,
                    *o
                ));
            }
        }
    }
    Ok(out)
}

/// For each element of `out` (row-major), the index of the element of a value of shape `dims`
/// that broadcasting reads.
pub(super) fn broadcast_indices(dims: &[u64], out: &[u64]) -> Vec<usize> {
    let total: u64 = out.iter().product();
    let offset = out.len() - dims.len();
    let mut strides = vec![0usize; out.len()];
    let mut stride = 1usize;
    for i in (0..dims.len()).rev() {
        strides[offset + i] = if dims[i] == 1 { 0 } else { stride };
        stride *= dims[i] as usize;
    }
    let mut indices = Vec::with_capacity(total as usize);
    let mut counter = vec![0u64; out.len()];
    for _ in 0..total {
        indices.push(
            counter
                .iter()
                .zip(&strides)
                .map(|(&c, &s)| c as usize * s)
                .sum(),
        );
        for i in (0..out.len()).rev() {
            counter[i] += 1;
            if counter[i] < out[i] {
                break;
            }
            counter[i] = 0;
        }
    }
    indices
}

pub(super) fn product(dims: &[u64]) -> Result<u64, String> {
    dims.iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| format!("the shape {dims:?} has too many elements"))
}

/// Whether a value of shape `dims` is small enough to compute.
pub(super) fn dims_small(dims: &[u64]) -> bool {
    product(dims).is_ok_and(|n| n <= MAX_VALUE_ELEMENTS)
}

/// One node being inferred: its inputs' types (`None` for an absent optional input).
pub(super) struct Node<'a> {
    pub(super) node: &'a proto::NodeProto,
    pub(super) ins: &'a [Option<&'a Info>],
    pub(super) opset: i64,
    pub(super) base_dir: &'a Path,
}

pub(super) type Outputs = Result<Vec<Result<Info, String>>, String>;

pub(super) fn one(info: Info) -> Outputs {
    Ok(vec![Ok(info)])
}

impl<'a> Node<'a> {
    pub(super) fn attr(&self, name: &str) -> Option<&'a proto::AttributeProto> {
        self.node.attribute.iter().find(|a| a.name == name)
    }

    pub(super) fn int(&self, name: &str, default: i64) -> i64 {
        self.attr(name).map_or(default, |a| a.i)
    }

    pub(super) fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.attr(name).map(|a| a.ints.clone())
    }

    pub(super) fn text(&self, name: &str, default: &str) -> String {
        self.attr(name).map_or(default.to_owned(), |a| {
            String::from_utf8_lossy(&a.s).into_owned()
        })
    }

    /// Input `k`, which must be given.
    pub(super) fn input(&self, k: usize) -> Result<&'a Info, String> {
        self.ins
            .get(k)
            .copied()
            .flatten()
            .ok_or_else(|| format!("input {k} is missing"))
    }

    /// Input `k`, if given.
    pub(super) fn optional(&self, k: usize) -> Option<&'a Info> {
        self.ins.get(k).copied().flatten()
    }

    /// The integer elements of input `k`, which must be a known constant.
    pub(super) fn const_ints(&self, k: usize, what: &str) -> Result<Vec<i64>, String> {
        let info = self.input(k)?;
        info.ints().ok_or_else(|| {
            format!(
                "its {what} (input {k}, `{}`) is not a constant known before inference, so the \
                 output shape depends on values computed at run time",
                self.node.input[k]
            )
        })
    }

    /// The integers of input `k` if given, else of attribute `attr` (older opsets), else `None`.
    pub(super) fn ints_input_or_attr(
        &self,
        k: usize,
        attr: &str,
    ) -> Result<Option<Vec<i64>>, String> {
        match self.optional(k) {
            Some(_) => self.const_ints(k, attr).map(Some),
            None => Ok(self.ints(attr)),
        }
    }

    pub(super) fn same(&self, k: usize) -> Outputs {
        let x = self.input(k)?;
        one(Info::new(x.elem_type, x.dims.clone()))
    }
}
