//! The one error type of the kernels: a message naming what does not fit.

use std::fmt;

/// Why a kernel refused to run: a shape, dtype or attribute it cannot (or must not) compute with.
///
/// Kernels never panic on bad input and never produce a wrong answer: anything they do not
/// implement exactly is reported here instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    message: String,
}

impl KernelError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        KernelError {
            message: message.into(),
        }
    }

    /// The message, without any prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error, its message prefixed by `context: `.
    pub(crate) fn context(self, context: &str) -> Self {
        KernelError {
            message: format!("{context}: {}", self.message),
        }
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for KernelError {}

/// `Err(KernelError::new(format!(...)))`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::kernels::KernelError::new(format!($($arg)*)))
    };
}
pub(crate) use bail;
