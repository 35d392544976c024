//! The one error type of the kernels: a message naming what does not fit.
//!
//! The kernels allocate nothing, so the message lives in a fixed buffer inside the error
//! ([`MESSAGE_CAPACITY`] bytes); a longer message is cut at a character boundary and ends in
//! `...`. Building one formats into that buffer with `core::fmt`, no heap involved.

use core::fmt;

use arrayvec::ArrayString;

/// The most bytes of a [`KernelError`]'s message: small enough that a `Result` carrying the
/// error (or a `RunError` with it) stays under clippy's `result_large_err` threshold.
pub const MESSAGE_CAPACITY: usize = 96;

/// Why a kernel refused to run: a shape, dtype or attribute it cannot (or must not) compute with.
///
/// Kernels never panic on bad input and never produce a wrong answer: anything they do not
/// implement exactly is reported here instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    message: ArrayString<MESSAGE_CAPACITY>,
}

/// A `fmt::Write` into a fixed buffer that keeps what fits and marks a cut with `...`.
struct Truncating<'a> {
    out: &'a mut ArrayString<MESSAGE_CAPACITY>,
    cut: bool,
}

impl fmt::Write for Truncating<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.cut {
            return Ok(());
        }
        for c in s.chars() {
            // Keep room for the `...` that marks a cut.
            if self.out.len() + c.len_utf8() > MESSAGE_CAPACITY - 3 {
                self.cut = true;
                self.out.push_str("...");
                return Ok(());
            }
            self.out.push(c);
        }
        Ok(())
    }
}

impl KernelError {
    /// An error with this message.
    pub fn new(message: &str) -> Self {
        Self::from_args(format_args!("{message}"))
    }

    /// An error with a formatted message: `KernelError::from_args(format_args!(..))`.
    pub fn from_args(args: fmt::Arguments<'_>) -> Self {
        let mut message = ArrayString::new();
        let mut out = Truncating {
            out: &mut message,
            cut: false,
        };
        // `Truncating` never fails; a `Display` impl that does leaves the message cut there.
        let _ = fmt::write(&mut out, args);
        KernelError { message }
    }

    /// The message, without any prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error, its message prefixed by `context: `.
    pub(crate) fn context(self, context: &str) -> Self {
        Self::from_args(format_args!("{context}: {}", self.message))
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for KernelError {}

/// `Err(KernelError::from_args(format_args!(...)))`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::KernelError::from_args(format_args!($($arg)*)))
    };
}
pub(crate) use bail;

/// `KernelError::from_args(format_args!(...))`.
macro_rules! error {
    ($($arg:tt)*) => {
        $crate::KernelError::from_args(format_args!($($arg)*))
    };
}
pub(crate) use error;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_is_cut_at_a_character_boundary() {
        let long = "é".repeat(200);
        let e = KernelError::new(&long);
        assert!(e.message().len() <= MESSAGE_CAPACITY);
        assert!(e.message().ends_with("..."));
        assert!(e.message().starts_with("éé"));
    }

    #[test]
    fn context_prefixes_the_message() {
        let e = KernelError::from_args(format_args!("input {} is required", 2)).context("Conv");
        assert_eq!(e.message(), "Conv: input 2 is required");
    }
}
