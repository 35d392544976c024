//! Why a file could not be written, and what to do about it.

use std::fmt;
use std::path::{Path, PathBuf};

/// A file that could not be written: its path and the reason. Nothing was written to it (or, for
/// a device or FIFO written in place, whatever the device accepted before the error).
#[derive(Debug)]
pub struct WriteError {
    path: PathBuf,
    reason: String,
}

impl WriteError {
    pub(crate) fn new(path: &Path, reason: String) -> Self {
        Self {
            path: path.to_owned(),
            reason,
        }
    }

    /// The path that was to be written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write `{}`: {}\n  = help: name a file in a folder you can write to (a new \
             file, an existing one to replace, or a device or FIFO to write to)",
            self.path.display(),
            self.reason
        )
    }
}

impl std::error::Error for WriteError {}
