//! Helpers shared by the CLI's integration tests: run the built binary, make scratch folders.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `memplan` binary this test was built with.
pub(crate) fn memplan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memplan"))
        .args(args)
        .output()
        .expect("the memplan binary runs")
}

/// A new, empty folder under cargo's test scratch space, named after the test file and `name`.
pub(crate) fn scratch(prefix: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Output bytes as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
