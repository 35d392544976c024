//! Errors in user input, located to the line and column, with what is wrong and how to fix it.

use std::fmt;

/// A problem in an input file: what is wrong, where, and how to fix it.
///
/// Displayed as
/// ```text
/// error: <what is wrong>
///  --> <file>:<line>:<column>
///   = help: <how to fix it>
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file's name as the user knows it (for example `model.toml`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong, as a short sentence fragment.
    pub message: String,
    /// How to fix it.
    pub help: String,
}

impl InputError {
    /// An error at `file:line:column`.
    pub fn new(
        file: impl Into<String>,
        line: usize,
        column: usize,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            line,
            column,
            message: message.into(),
            help: help.into(),
        }
    }

    /// `file:line:column`.
    pub fn location(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.column)
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\n --> {}\n  = help: {}",
            self.message,
            self.location(),
            self.help
        )
    }
}

impl std::error::Error for InputError {}
