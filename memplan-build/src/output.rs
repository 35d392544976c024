//! Writing the generated files: each to a temporary file beside it, then renamed over it, so an
//! interrupted build never leaves half a file (cargo's `OUT_DIR` belongs to this build alone).

use std::io;
use std::path::Path;

/// Writes `bytes` to `path` whole, or leaves `path` as it was.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        // Unchanged: keep the file's time, so cargo does not rebuild what includes it.
        return Ok(());
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}
