//! Keeping a replaced file's owner.

/// Gives `file` the owner and group of `old` when they differ (running as root, say); where that
/// is not allowed the new file keeps the writer's, as any newly written file does.
#[cfg(unix)]
pub(crate) fn keep_owner(file: &std::fs::File, old: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(new) = file.metadata()
        && (new.uid(), new.gid()) != (old.uid(), old.gid())
    {
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
    }
}

#[cfg(not(unix))]
pub(crate) fn keep_owner(_: &std::fs::File, _: &std::fs::Metadata) {}
