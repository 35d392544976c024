//! Writing the generated files through [`memplan_output::write_file`]: whole or not at all, by a
//! temporary of a random name created exclusively beside the file, never through a link or over
//! what is not a regular file. A file whose bytes are already the same is left alone.

use std::path::Path;

/// Writes `bytes` to `path` whole, or leaves `path` as it was.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), memplan_output::WriteError> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        // Unchanged: keep the file's time, so cargo does not rebuild what includes it.
        return Ok(());
    }
    memplan_output::write_file(path, bytes)
}
