//! The model file (`model.toml`): its schema, parser and writer.
//!
//! ```toml
//! [model]
//! name = "tiny_cnn"        # the generated module's name
//! alignment = 64           # optional, default 16
//! budget = "512 KiB"       # optional: fail if the arena is larger
//! solver = "auto"          # optional
//! nodes = 500000           # optional: the exact search's node budget
//! inputs = ["input"]       # graph inputs: live from the first step
//! outputs = ["logits"]     # graph outputs: live through the last step
//!
//! [tensors]
//! input   = { dtype = "f32", shape = [1, 1, 28, 28] }
//! logits  = { dtype = "f32", shape = [1, 10] }
//! scratch = { bytes = 4096 }
//!
//! [[ops]]                  # op k runs at step k
//! name = "net"
//! inputs = ["input"]
//! outputs = ["logits"]
//! scratch = ["scratch"]
//! ```

mod dtype;
mod ident;
pub(crate) mod inplace;
pub mod names;
mod parse;
mod read;
mod schema;
mod size;
pub(crate) mod source;
mod write;

pub use dtype::{DType, UnknownDType};
pub use ident::{identifier_problem, module_name_problem, sanitize_identifier};
pub use inplace::{INPLACE_KINDS, allows_inplace};
pub use parse::{MAX_TENSOR_BYTES, parse_model};
pub use read::{MAX_MODEL_FILE_BYTES, read_model_file};
pub use schema::{
    Alias, AttrValue, DEFAULT_ALIGNMENT, Layout, Location, MAX_ALIGNMENT, Model, ModelLocations,
    Op, OpInput, PoolDecl, Tensor, TensorMemory, Weight,
};
pub use size::{format_byte_size, parse_byte_size};
pub use write::quote as toml_string;
