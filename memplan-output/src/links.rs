//! Following symlinks by hand, so the link is kept and its target replaced.

use std::path::{Path, PathBuf};

/// `path` with every symlink of its last component followed (its folders are left as they are:
/// a rename in a folder reached through a link lands in the link's target). A link to nowhere
/// gives the path it points to, so the file is created there and the link kept.
pub(crate) fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_owned();
    // Linux's own limit on links followed in one lookup.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) if link.is_relative() => parent.join(link),
                    _ => link,
                };
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}
