//! A value in a heap buffer of its own (`memplan_kernels::OwnedData`): the `--heap` run's
//! storage, the decoded input file and the arena run's outputs. The buffer type is the kernels'
//! (shared with memplan-build's constant folding and the kernels' tests); what stays here is the
//! runner's own: buffers sized by the generated tables, the input file's length check and its
//! message, and the output file's conversion to float32.

use memplan_kernels::program::Value as TensorInfo;
use memplan_kernels::{Data, OwnedData};

/// A zeroed buffer for `tensor`.
pub(crate) fn zeroed(tensor: &TensorInfo) -> OwnedData {
    OwnedData::zeroed(tensor.dtype, tensor.elements())
}

/// `bytes` (little-endian elements of `tensor`, row-major) decoded; an error names the
/// expected size when the length is wrong.
pub(crate) fn from_le_bytes(tensor: &TensorInfo, bytes: &[u8]) -> Result<OwnedData, String> {
    let size = tensor.dtype.size();
    let expected = tensor.elements() * size;
    if bytes.len() != expected {
        return Err(format!(
            "the input file has {} bytes, but the model's input `{}` is {} {:?} = {expected} bytes (raw little-endian, row-major)",
            bytes.len(),
            tensor.onnx,
            tensor.dtype.name(),
            tensor.shape
        ));
    }
    OwnedData::from_le_bytes(tensor.dtype, bytes).map_err(|e| e.to_string())
}

/// `data` as f32 values (integers converted), for the output file.
// an integer output is written as float32, as documented
pub(crate) fn to_f32(data: Data<'_>) -> Vec<f32> {
    match data {
        Data::F32(v) => v.to_vec(),
        Data::I64(v) => v.iter().map(|&x| x as f32).collect(),
        Data::I32(v) => v.iter().map(|&x| x as f32).collect(),
        Data::Bool(v) => v.iter().map(|&x| f32::from(x)).collect(),
        Data::I8(v) => v.iter().map(|&x| f32::from(x)).collect(),
        Data::U8(v) => v.iter().map(|&x| f32::from(x)).collect(),
    }
}
