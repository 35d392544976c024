//! Weights: the constants a network's ops read. ONNX stores them as initializers (`TensorProto`s
//! with inline or external data) or computes them with nodes whose inputs are all constants
//! (`Constant`, a weight's `Identity`, the `Shape` of a statically shaped tensor), which the
//! importer folds away.
//!
//! A weight's bytes are little-endian elements in row-major order, whatever field of the file
//! held them: `raw_data`, one of the typed fields (`float_data`, `int64_data`, `int32_data` for
//! the small integer types and 16-bit floats, ...) or an external file (`data_location =
//! EXTERNAL`, keys `location`, `offset`, `length`, the location relative to the model's
//! directory). External data is read only when asked for ([`WeightValue::load`]), so `memplan
//! import` works without the `.bin` files.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use memplan_core::DType;

use crate::proto;

/// A constant that an op reads: an initializer or the value of a folded node.
#[derive(Clone, Debug, PartialEq)]
pub struct Weight {
    /// Its name in the model file: a Rust identifier, distinct from every tensor's.
    pub name: String,
    /// Its ONNX name.
    pub source: String,
    /// Its type, shape and data; an error (why its value is unknown) when the importer cannot
    /// tell (the file is fine for planning, but a runner cannot use it).
    pub value: Result<WeightValue, String>,
}

/// A weight's dtype, shape and data.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightValue {
    /// Element type.
    pub dtype: DType,
    /// Dimensions in ONNX (`[]` for a scalar).
    pub shape: Vec<u64>,
    /// Where the bytes are.
    pub data: WeightData,
}

/// Where a weight's bytes are.
#[derive(Clone, Debug, PartialEq)]
pub enum WeightData {
    /// In memory, little-endian.
    Bytes(Vec<u8>),
    /// In an external file.
    External {
        /// The file (the model's directory joined with `location`).
        path: PathBuf,
        /// Byte offset in it.
        offset: u64,
        /// Byte length, if the file says.
        length: Option<u64>,
    },
    /// Computed by a folded node the importer does not evaluate itself (`Gather` of a constant
    /// table, shape arithmetic): the node with its constant inputs, for a runner to evaluate with
    /// its kernels.
    Computed(Box<FoldedNode>),
}

/// A value's element type and ONNX shape.
pub type TensorType = (DType, Vec<u64>);

/// A folded node whose output is a weight: everything needed to compute it before inference.
#[derive(Clone, Debug, PartialEq)]
pub struct FoldedNode {
    /// The node's name (or `(op_type node)`).
    pub node: String,
    /// Its `op_type`.
    pub op_type: String,
    /// Its inputs in ONNX order: `None` for an absent one, else the constant's value (or why it
    /// is unknown).
    pub inputs: Vec<Option<Result<WeightValue, String>>>,
    /// Its scalar and list attributes.
    pub attrs: Vec<(String, crate::AttrValue)>,
    /// Its outputs' dtypes and ONNX shapes (or why they are unknown); empty names are `None`.
    pub outputs: Vec<Option<Result<TensorType, String>>>,
    /// Which of its outputs this weight is.
    pub output: usize,
}

impl WeightValue {
    /// Number of elements (1 for a scalar).
    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Number of bytes of its data.
    pub fn byte_len(&self) -> u64 {
        self.elements() * self.dtype.size()
    }

    /// Its bytes: little-endian elements, row-major, exactly [`Self::byte_len`] of them.
    pub fn load(&self) -> Result<Vec<u8>, String> {
        let expected = self.byte_len();
        let bytes = match &self.data {
            WeightData::Bytes(bytes) => bytes.clone(),
            WeightData::External {
                path,
                offset,
                length,
            } => read_external(path, *offset, length.unwrap_or(expected))?,
            WeightData::Computed(folded) => {
                return Err(format!(
                    "it is computed by node `{}` ({}), which the importer folds but does not evaluate",
                    folded.node, folded.op_type
                ));
            }
        };
        if bytes.len() as u64 != expected {
            return Err(format!(
                "it has {} bytes of data, but its shape {:?} of {} needs {expected}",
                bytes.len(),
                self.shape,
                self.dtype.name()
            ));
        }
        Ok(bytes)
    }
}

fn read_external(path: &Path, offset: u64, length: u64) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let mut file = std::fs::File::open(path)
        .map_err(|e| format!("its external data file `{shown}` cannot be opened ({e})"))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if offset.checked_add(length).is_none_or(|end| end > size) {
        return Err(format!(
            "its external data (bytes {offset}..{}) runs past the end of `{shown}` ({size} bytes): the file is truncated",
            offset.saturating_add(length)
        ));
    }
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| format!("cannot seek in `{shown}` ({e})"))?;
    let mut bytes = vec![0; usize::try_from(length).map_err(|_| "too large".to_owned())?];
    file.read_exact(&mut bytes)
        .map_err(|e| format!("cannot read `{shown}` ({e})"))?;
    Ok(bytes)
}

/// The file an external data `location` names: `base_dir` joined with it, only if it stays in
/// `base_dir`. An absolute location, one that `..` takes above `base_dir`, or one whose file
/// (after resolving symlinks) is outside `base_dir` is refused, as ONNX Runtime does.
pub(crate) fn external_path(base_dir: &Path, location: &str) -> Result<PathBuf, String> {
    use std::path::Component;
    let relative = Path::new(location);
    if location.is_empty() {
        return Err("its external data `location` is empty".to_owned());
    }
    if relative.has_root() || relative.is_absolute() {
        return Err(format!(
            "its external data `location` {location:?} is an absolute path; a model may only \
             read data files in its own folder"
        ));
    }
    // `..` may not climb above the folder, even through a folder that comes back down.
    let mut depth = 0usize;
    for component in relative.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => {
                return Err(format!(
                    "its external data `location` {location:?} leaves the model's folder; a \
                     model may only read data files in its own folder"
                ));
            }
        }
    }
    let path = base_dir.join(relative);
    // Symlinks: the file (when it exists) must resolve to a place inside the folder.
    let folder = if base_dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base_dir
    };
    if let (Ok(real), Ok(base)) = (std::fs::canonicalize(&path), std::fs::canonicalize(folder))
        && !real.starts_with(&base)
    {
        return Err(format!(
            "its external data `location` {location:?} resolves (through a symlink) to `{}`, \
                 outside the model's folder `{}`; a model may only read data files in its own \
                 folder",
            real.display(),
            base.display()
        ));
    }
    Ok(path)
}

/// A static shape from ONNX dims.
fn dims(tensor: &proto::TensorProto) -> Result<Vec<u64>, String> {
    tensor
        .dims
        .iter()
        .map(|&d| u64::try_from(d).map_err(|_| format!("it has a negative dimension ({d})")))
        .collect()
}

/// The value of an initializer (or a `Constant`'s tensor); `base_dir` resolves external data.
pub(crate) fn from_tensor(
    tensor: &proto::TensorProto,
    dtype: DType,
    base_dir: &Path,
) -> Result<WeightValue, String> {
    let shape = dims(tensor)?;
    let elements = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n.checked_mul(dtype.size()).is_some())
        .ok_or_else(|| format!("its shape {shape:?} is too large"))?;
    if tensor.data_location == 1 {
        let entry = |key: &str| {
            tensor
                .external_data
                .iter()
                .find(|e| e.key == key)
                .map(|e| e.value.as_str())
        };
        let location = entry("location")
            .ok_or("its external data has no `location`")?
            .to_owned();
        let number = |key: &str| -> Result<Option<u64>, String> {
            entry(key)
                .map(|v| {
                    v.trim()
                        .parse::<u64>()
                        .map_err(|_| format!("its external data's `{key}` is `{v}`, not a number"))
                })
                .transpose()
        };
        return Ok(WeightValue {
            dtype,
            shape,
            data: WeightData::External {
                path: external_path(base_dir, &location)?,
                offset: number("offset")?.unwrap_or(0),
                length: number("length")?,
            },
        });
    }
    let bytes: Vec<u8> = if !tensor.raw_data.is_empty() {
        tensor.raw_data.clone()
    } else {
        match dtype {
            DType::F32 => tensor
                .float_data
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            DType::F64 => tensor
                .double_data
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            DType::I64 => tensor
                .int64_data
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            DType::U64 => tensor
                .uint64_data
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            DType::U32 => tensor
                .uint64_data
                .iter()
                .flat_map(|&v| (v as u32).to_le_bytes())
                .collect(),
            DType::I32 => tensor
                .int32_data
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            DType::I16 | DType::U16 | DType::F16 | DType::Bf16 => tensor
                .int32_data
                .iter()
                .flat_map(|&v| (v as u16).to_le_bytes())
                .collect(),
            DType::I8 | DType::U8 | DType::Bool => {
                tensor.int32_data.iter().map(|&v| v as u8).collect()
            }
        }
    };
    if bytes.is_empty() && elements > 0 {
        return Err("it has no data (no raw_data, no typed values, not external)".to_owned());
    }
    Ok(WeightValue {
        dtype,
        shape,
        data: WeightData::Bytes(bytes),
    })
}

/// A value made of `i64`s.
pub(crate) fn i64s(values: &[i64], shape: Vec<u64>) -> WeightValue {
    WeightValue {
        dtype: DType::I64,
        shape,
        data: WeightData::Bytes(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
    }
}

/// A value made of `f32`s.
pub(crate) fn f32s(values: &[f32], shape: Vec<u64>) -> WeightValue {
    WeightValue {
        dtype: DType::F32,
        shape,
        data: WeightData::Bytes(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
    }
}
