//! The small constant evaluation of shape operands: an initializer's or a `Constant`'s
//! elements, `Cast`, elementwise arithmetic on known values, and the operators that make
//! constants (`Constant`, `ConstantOfShape`, `Range`, `Shape`).

use std::path::Path;

use super::node::{
    BOOL, DOUBLE, FLOAT, INT32, INT64, Info, MAX_VALUE_ELEMENTS, Node, Outputs, UINT8, Values, one,
    product,
};
use crate::{proto, weights};

/// The elements of a small tensor (an initializer or a `Constant`'s value), if its type is one
/// inference computes with.
pub(super) fn tensor_values(tensor: &proto::TensorProto, base_dir: &Path) -> Option<Values> {
    let dtype = crate::dtype_of(tensor.data_type).ok()?;
    let bytes = weights::from_tensor(tensor, dtype, base_dir)
        .ok()?
        .load()
        .ok()?;
    decode(tensor.data_type, &bytes)
}

/// Little-endian elements of ONNX type `elem_type`.
fn decode(elem_type: i32, bytes: &[u8]) -> Option<Values> {
    fn each<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
        bytes
            .chunks_exact(N)
            .map(|c| f(c.try_into().expect("N bytes")))
            .collect()
    }
    Some(match elem_type {
        FLOAT => Values::Float(each(bytes, |b| f32::from_le_bytes(b) as f64)),
        DOUBLE => Values::Float(each(bytes, f64::from_le_bytes)),
        UINT8 | BOOL => Values::Int(bytes.iter().map(|&b| b as i64).collect()),
        3 => Values::Int(bytes.iter().map(|&b| b as i8 as i64).collect()),
        4 => Values::Int(each(bytes, |b| u16::from_le_bytes(b) as i64)),
        5 => Values::Int(each(bytes, |b| i16::from_le_bytes(b) as i64)),
        INT32 => Values::Int(each(bytes, |b| i32::from_le_bytes(b) as i64)),
        INT64 => Values::Int(each(bytes, i64::from_le_bytes)),
        12 => Values::Int(each(bytes, |b| u32::from_le_bytes(b) as i64)),
        13 => Values::Int(each(bytes, |b| u64::from_le_bytes(b) as i64)),
        _ => return None,
    })
}

fn is_float(elem_type: i32) -> bool {
    matches!(elem_type, FLOAT | DOUBLE | 10 | 16)
}

/// `values` cast to ONNX type `to` (integers truncate toward zero, bools are `!= 0`).
pub(super) fn cast(values: &Values, to: i32) -> Option<Values> {
    Some(match (values, to) {
        (Values::Int(v), t) if is_float(t) => Values::Float(v.iter().map(|&x| x as f64).collect()),
        (Values::Float(v), t) if is_float(t) => Values::Float(v.clone()),
        (v, BOOL) => Values::Int((0..v.len()).map(|k| (v.f64_at(k) != 0.0) as i64).collect()),
        (Values::Int(v), _) => Values::Int(v.clone()),
        (Values::Float(v), _) => {
            if v.iter().any(|x| !x.is_finite() || x.abs() > 9.0e18) {
                return None;
            }
            Values::Int(v.iter().map(|&x| x.trunc() as i64).collect())
        }
    })
}

/// The elementwise `op` over operands already broadcast to one shape, when inference computes it
/// (integer shape arithmetic and float scale arithmetic); `None` otherwise.
pub(super) fn fold_values(op: &str, operands: &[Values], fmod: bool) -> Option<Values> {
    let n = operands.first()?.len();
    if operands.iter().all(|v| matches!(v, Values::Int(_))) {
        let ints: Vec<&Vec<i64>> = operands
            .iter()
            .filter_map(|v| match v {
                Values::Int(v) => Some(v),
                Values::Float(_) => None,
            })
            .collect();
        let binary = |f: &dyn Fn(i64, i64) -> Option<i64>| -> Option<Values> {
            (0..n)
                .map(|i| f(ints[0][i], ints[1][i]))
                .collect::<Option<Vec<i64>>>()
                .map(Values::Int)
        };
        let fold = |f: &dyn Fn(i64, i64) -> Option<i64>| -> Option<Values> {
            (0..n)
                .map(|i| ints[1..].iter().try_fold(ints[0][i], |a, v| f(a, v[i])))
                .collect::<Option<Vec<i64>>>()
                .map(Values::Int)
        };
        return match op {
            "Add" => binary(&|a, b| a.checked_add(b)),
            "Sub" => binary(&|a, b| a.checked_sub(b)),
            "Mul" => binary(&|a, b| a.checked_mul(b)),
            "Div" => binary(&|a, b| a.checked_div(b)),
            "Mod" if fmod => binary(&|a, b| a.checked_rem(b)),
            "Mod" => binary(&|a, b| {
                let r = a.checked_rem(b)?;
                Some(if r != 0 && (r < 0) != (b < 0) {
                    r + b
                } else {
                    r
                })
            }),
            "Equal" => binary(&|a, b| Some((a == b) as i64)),
            "Less" => binary(&|a, b| Some((a < b) as i64)),
            "Greater" => binary(&|a, b| Some((a > b) as i64)),
            "LessOrEqual" => binary(&|a, b| Some((a <= b) as i64)),
            "GreaterOrEqual" => binary(&|a, b| Some((a >= b) as i64)),
            "And" => binary(&|a, b| Some((a != 0 && b != 0) as i64)),
            "Or" => binary(&|a, b| Some((a != 0 || b != 0) as i64)),
            "Xor" => binary(&|a, b| Some(((a != 0) != (b != 0)) as i64)),
            "Max" => fold(&|a, b| Some(a.max(b))),
            "Min" => fold(&|a, b| Some(a.min(b))),
            "Sum" => fold(&|a, b| a.checked_add(b)),
            _ => None,
        };
    }
    if operands.iter().all(|v| matches!(v, Values::Float(_))) {
        let f = |k: usize, i: usize| operands[k].f64_at(i);
        let binary = |g: &dyn Fn(f64, f64) -> f64| -> Option<Values> {
            Some(Values::Float((0..n).map(|i| g(f(0, i), f(1, i))).collect()))
        };
        return match op {
            "Add" => binary(&|a, b| a + b),
            "Sub" => binary(&|a, b| a - b),
            "Mul" => binary(&|a, b| a * b),
            "Div" => binary(&|a, b| a / b),
            "Max" if operands.len() == 2 => binary(&f64::max),
            "Min" if operands.len() == 2 => binary(&f64::min),
            "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" => {
                let cmp = |a: f64, b: f64| -> bool {
                    match op {
                        "Equal" => a == b,
                        "Less" => a < b,
                        "Greater" => a > b,
                        "LessOrEqual" => a <= b,
                        _ => a >= b,
                    }
                };
                Some(Values::Int(
                    (0..n).map(|i| cmp(f(0, i), f(1, i)) as i64).collect(),
                ))
            }
            _ => None,
        };
    }
    None
}

impl Node<'_> {
    pub(super) fn constant(&self) -> Outputs {
        if let Some(tensor) = self.attr("value").and_then(|a| a.t.as_ref()) {
            let dims: Vec<u64> = tensor.dims.iter().map(|&d| d.max(0) as u64).collect();
            let info = Info::new(tensor.data_type, dims);
            let value = info
                .elements()
                .filter(|&n| n <= MAX_VALUE_ELEMENTS)
                .and_then(|_| tensor_values(tensor, self.base_dir));
            return one(info.with_value(value));
        }
        if let Some(a) = self.attr("value_float") {
            return one(Info::new(FLOAT, vec![]).with_value(Some(Values::Float(vec![a.f as f64]))));
        }
        if let Some(a) = self.attr("value_floats") {
            let v: Vec<f64> = a.floats.iter().map(|&f| f as f64).collect();
            return one(Info::new(FLOAT, vec![v.len() as u64]).with_value(Some(Values::Float(v))));
        }
        if let Some(a) = self.attr("value_int") {
            return one(Info::new(INT64, vec![]).with_value(Some(Values::Int(vec![a.i]))));
        }
        if let Some(a) = self.attr("value_ints") {
            return one(Info::new(INT64, vec![a.ints.len() as u64])
                .with_value(Some(Values::Int(a.ints.clone()))));
        }
        Err("it has no tensor, float or int value".to_owned())
    }

    pub(super) fn shape(&self) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank() as i64;
        let bound = |key: &str, default: i64| {
            let v = self.attr(key).map_or(default, |a| a.i);
            (if v < 0 { v + r } else { v }).clamp(0, r) as usize
        };
        let (start, end) = (bound("start", 0), bound("end", r));
        let values: Vec<i64> = x.dims[start..end.max(start)]
            .iter()
            .map(|&d| d as i64)
            .collect();
        one(Info::new(INT64, vec![values.len() as u64]).with_value(Some(Values::Int(values))))
    }

    pub(super) fn constant_of_shape(&self) -> Outputs {
        let shape = self.const_ints(0, "shape")?;
        let dims = shape
            .iter()
            .map(|&d| u64::try_from(d).map_err(|_| format!("shape {shape:?} has a negative size")))
            .collect::<Result<Vec<u64>, String>>()?;
        let (t, fill) = match self.attr("value").and_then(|a| a.t.as_ref()) {
            Some(tensor) => (
                tensor.data_type,
                tensor_values(tensor, self.base_dir).filter(|v| v.len() == 1),
            ),
            None => (FLOAT, Some(Values::Float(vec![0.0]))),
        };
        let n = product(&dims)?;
        let value = fill
            .filter(|_| n <= MAX_VALUE_ELEMENTS)
            .map(|v| v.pick(&vec![0; n as usize]));
        one(Info::new(t, dims).with_value(value))
    }

    pub(super) fn range(&self) -> Outputs {
        let (start, limit, delta) = (self.input(0)?, self.input(1)?, self.input(2)?);
        let scalar = |i: &Info, k: usize, what: &str| -> Result<f64, String> {
            match &i.value {
                Some(v) if v.len() == 1 => Ok(v.f64_at(0)),
                _ => Err(format!(
                    "its {what} (input {k}, `{}`) is not a constant known before \
                     inference, so the output shape depends on values computed at run time",
                    self.node.input[k]
                )),
            }
        };
        let (s, l, d) = (
            scalar(start, 0, "start")?,
            scalar(limit, 1, "limit")?,
            scalar(delta, 2, "delta")?,
        );
        if d == 0.0 {
            return Err("its delta is 0".to_owned());
        }
        let n = ((l - s) / d).ceil().max(0.0);
        if n > (1u64 << 40) as f64 {
            return Err(format!("it would make {n} elements"));
        }
        let n = n as u64;
        let value = if n > MAX_VALUE_ELEMENTS {
            None
        } else {
            match (&start.value, &delta.value) {
                (Some(Values::Int(v)), Some(Values::Int(step))) => (0..n as i64)
                    .map(|k| k.checked_mul(step[0]).and_then(|x| x.checked_add(v[0])))
                    .collect::<Option<Vec<i64>>>()
                    .map(Values::Int),
                _ => Some(Values::Float((0..n).map(|k| s + k as f64 * d).collect())),
            }
        };
        one(Info::new(start.elem_type, vec![n]).with_value(value))
    }
}
