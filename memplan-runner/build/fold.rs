//! Values of folded nodes that the importer does not compute itself (a `Gather` from a constant
//! table, shape arithmetic on constants): evaluated here, at build time, with the runner's own
//! kernels, so the binary gets them as ordinary weights.

use memplan_core::DType;
use memplan_onnx::{AttrValue, FoldedNode, WeightData, WeightValue};

use crate::kernels::{self, Attr, Attrs, DataMut, Input, Output};

/// A folded value's elements.
enum Buffer {
    F32(Vec<f32>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<u8>),
}

impl Buffer {
    fn zeroed(dtype: DType, n: usize) -> Result<Self, String> {
        Ok(match dtype {
            DType::F32 => Self::F32(vec![0.0; n]),
            DType::I64 => Self::I64(vec![0; n]),
            DType::I32 => Self::I32(vec![0; n]),
            DType::Bool => Self::Bool(vec![0; n]),
            other => return Err(format!("element type {} is not supported", other.name())),
        })
    }

    fn from_le(dtype: DType, bytes: &[u8]) -> Result<Self, String> {
        let w4 = |c: &[u8]| [c[0], c[1], c[2], c[3]];
        Ok(match dtype {
            DType::F32 => Self::F32(
                bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes(w4(c)))
                    .collect(),
            ),
            DType::I32 => Self::I32(
                bytes
                    .chunks_exact(4)
                    .map(|c| i32::from_le_bytes(w4(c)))
                    .collect(),
            ),
            DType::I64 => Self::I64(
                bytes
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect(),
            ),
            DType::Bool => Self::Bool(bytes.to_vec()),
            other => return Err(format!("element type {} is not supported", other.name())),
        })
    }

    fn data(&self) -> kernels::Data<'_> {
        match self {
            Self::F32(v) => kernels::Data::F32(v),
            Self::I64(v) => kernels::Data::I64(v),
            Self::I32(v) => kernels::Data::I32(v),
            Self::Bool(v) => kernels::Data::Bool(v),
        }
    }

    fn data_mut(&mut self) -> DataMut<'_> {
        match self {
            Self::F32(v) => DataMut::F32(v),
            Self::I64(v) => DataMut::I64(v),
            Self::I32(v) => DataMut::I32(v),
            Self::Bool(v) => DataMut::Bool(v),
        }
    }

    fn to_le(&self) -> Vec<u8> {
        match self {
            Self::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Self::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Self::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Self::Bool(v) => v.clone(),
        }
    }
}

/// The kernels' form of an attribute.
pub(crate) fn attr(value: &AttrValue) -> Attr {
    match value {
        AttrValue::Int(i) => Attr::Int(*i),
        AttrValue::Float(f) => Attr::Float(*f),
        AttrValue::Str(s) => Attr::Str(s.clone()),
        AttrValue::Ints(v) => Attr::Ints(v.clone()),
        AttrValue::Floats(v) => Attr::Floats(v.clone()),
        AttrValue::Strs(v) => Attr::Strs(v.clone()),
    }
}

fn usizes(shape: &[u64]) -> Vec<usize> {
    shape.iter().map(|&d| d as usize).collect()
}

/// A weight's bytes: read from the file, or computed by its folded node.
pub(crate) fn load(value: &WeightValue) -> Result<Vec<u8>, String> {
    match &value.data {
        WeightData::Computed(folded) => evaluate(folded, 0),
        _ => value.load(),
    }
}

fn evaluate(folded: &FoldedNode, depth: usize) -> Result<Vec<u8>, String> {
    let what = format!("folded node `{}` ({})", folded.node, folded.op_type);
    if depth > 64 {
        return Err(format!("{what}: more than 64 folded nodes in a chain"));
    }
    crate::supported::check_node(&folded.op_type, &[], &[])
        .map_err(|why| format!("{what} cannot be evaluated: {why}"))?;
    let mut inputs = Vec::with_capacity(folded.inputs.len());
    for input in &folded.inputs {
        inputs.push(match input {
            None => None,
            Some(Err(why)) => return Err(format!("{what}: an input is unknown: {why}")),
            Some(Ok(value)) => {
                let bytes = match &value.data {
                    WeightData::Computed(inner) => evaluate(inner, depth + 1)?,
                    _ => value
                        .load()
                        .map_err(|why| format!("{what}: an input: {why}"))?,
                };
                Some((usizes(&value.shape), Buffer::from_le(value.dtype, &bytes)?))
            }
        });
    }
    let mut outputs = Vec::with_capacity(folded.outputs.len());
    for output in &folded.outputs {
        match output {
            Some(Ok((dtype, shape))) => {
                let n = shape.iter().product::<u64>() as usize;
                outputs.push((usizes(shape), Buffer::zeroed(*dtype, n)?));
            }
            Some(Err(why)) => return Err(format!("{what}: an output is unknown: {why}")),
            None => break,
        }
    }
    let attrs = Attrs::new(
        folded
            .attrs
            .iter()
            .map(|(name, value)| (name.clone(), attr(value)))
            .collect(),
    );
    let input_views: Vec<Input<'_>> = inputs
        .iter()
        .map(|input| match input {
            None => Input::Absent,
            Some((shape, buffer)) => Input::Value {
                shape,
                data: buffer.data(),
            },
        })
        .collect();
    {
        let mut output_views: Vec<Output<'_>> = outputs
            .iter_mut()
            .map(|(shape, buffer)| Output {
                shape,
                data: buffer.data_mut(),
            })
            .collect();
        kernels::run(&folded.op_type, &attrs, &input_views, &mut output_views)
            .map_err(|e| format!("{what} cannot be evaluated: {e}"))?;
    }
    outputs
        .get(folded.output)
        .map(|(_, buffer)| buffer.to_le())
        .ok_or_else(|| format!("{what}: its output {} is unknown", folded.output))
}
