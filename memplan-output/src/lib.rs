//! Writing an output file safely: whole or not at all, and never replacing what is not a regular
//! file.
//!
//! A tool that writes `--out FILE` the naive way (`File::create`, then write) leaves half a file
//! when it fails midway. The usual fix, writing a temporary and renaming it over the target, has
//! pitfalls of its own, each of which has bitten real tools:
//!
//! - a temporary with a predictable name (`.plan.csv.1234.tmp`) opened with `File::create`
//!   follows a symlink someone planted there, so the write lands in another file;
//! - renaming over `/dev/null`, a FIFO or a symlink replaces the device node, the pipe or the link
//!   with a regular file;
//! - a new file gets default permissions, so a `0600` file becomes `0644`.
//!
//! [`write_file`] avoids all three: the temporary has a random name and is created exclusively
//! (`O_EXCL`, by the `tempfile` crate) in the target's folder; symlinks are followed first (the
//! link's target is replaced, the link stays); the old file's permissions (and, where allowed,
//! owner) are kept; anything that exists and is not a regular file (a device, a FIFO) is written
//! in place as a shell's `>` would; a directory is refused.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let out = dir.path().join("plan.csv");
//! memplan_output::write_file(&out, b"id,offset\n").unwrap();
//! assert_eq!(std::fs::read(&out).unwrap(), b"id,offset\n");
//! ```

mod error;
mod links;
mod owner;

use std::io::Write as _;
use std::path::Path;

pub use error::WriteError;

/// Writes `contents` to `path`: a regular file (or a new one) is replaced whole, anything else
/// that exists is written in place, a directory is refused. See the crate docs for why.
pub fn write_file(path: &Path, contents: &[u8]) -> Result<(), WriteError> {
    let cannot = |reason: String| WriteError::new(path, reason);
    // `metadata` follows every link, including `/proc`'s `/dev/stdout`, which has no path to
    // resolve by hand.
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(cannot("it is a directory".into())),
        Ok(meta) if !meta.is_file() => {
            // A device, FIFO or socket: written in place, as a shell's `>` does.
            let write = || -> std::io::Result<()> {
                let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
                file.write_all(contents)?;
                file.flush()
            };
            return write().map_err(|e| cannot(format!("{e} (it is not a regular file)")));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(cannot(e.to_string())),
    }
    let target = links::resolve_links(path).map_err(|e| cannot(e.to_string()))?;
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .ok_or_else(|| cannot("it does not name a file".into()))?;
    let old = std::fs::metadata(&target).ok().filter(|m| m.is_file());
    // `.<name>.<random>.tmp`: the random part is what makes it safe, the rest what a user sees.
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A new file gets what `File::create` gives it (0666 less the umask).
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let write = || -> std::io::Result<()> {
        let mut temp = builder.tempfile_in(dir)?;
        temp.write_all(contents)?;
        if let Some(old) = &old {
            owner::keep_owner(temp.as_file(), old);
            // After the owner: a change of owner may clear set-id bits.
            temp.as_file().set_permissions(old.permissions())?;
        }
        temp.as_file().sync_all()?;
        temp.persist(&target).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| cannot(e.to_string()))
}
