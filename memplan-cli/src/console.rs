//! Printing that never panics. `println!` panics when stdout is closed (`memplan plan x | head -1`
//! closes it after the first line), which would end the command with exit code 101; here a closed
//! stdout ends the command quietly with success, and a failed write to stderr is ignored (there is
//! nowhere left to report it).

use std::fmt;
use std::io::{ErrorKind, Write as _};

/// The reader of stdout went away; the command stops printing and exits with success.
#[derive(Debug)]
pub(crate) struct StdoutClosed;

impl fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("stdout was closed")
    }
}

impl std::error::Error for StdoutClosed {}

/// Writes `text` to stdout and flushes it. A closed pipe gives [`StdoutClosed`]; any other I/O
/// error is returned with what was being written.
pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}

/// [`print`] with a line break after `text`.
pub(crate) fn println(text: &str) -> anyhow::Result<()> {
    print(&format!("{text}\n"))
}

/// Writes `text` and a line break to stderr; errors are ignored.
pub(crate) fn eprintln(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}
