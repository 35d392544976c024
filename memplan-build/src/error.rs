//! The one error of a build: what is wrong with the network, and how to fix it.

use std::fmt;
use std::path::Path;

/// Why a network could not be generated: the message names the ONNX file and the node, value
/// or weight at fault, and its `= help:` lines say what to do. `Debug` prints the same text, so
/// `fn main() -> Result<(), memplan_build::Error>` in a build script shows it as it is.
pub struct Error {
    message: String,
}

impl Error {
    pub(crate) fn new(source: &Path, message: String) -> Self {
        Self {
            message: format!(
                "cannot build the network in `{}`: {message}",
                source.display()
            ),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
