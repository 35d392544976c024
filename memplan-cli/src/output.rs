//! Summaries and safe file output.

use std::fmt;
use std::io::Write as _;
use std::path::Path;

use memplan_core::{Plan, Problem};
use serde::Serialize;

use crate::bench::SolverRun;

/// The one-line result of `memplan plan`.
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    pub(crate) buffers: usize,
    pub(crate) arena_size: u64,
    pub(crate) lower_bound: u64,
    pub(crate) ratio: f64,
    pub(crate) solver: String,
    pub(crate) time_ms: f64,
    pub(crate) fits_capacity: bool,
    pub(crate) optimal: bool,
    pub(crate) nodes: u64,
}

impl Summary {
    pub(crate) fn new(problem: &Problem, run: &SolverRun, capacity: Option<u64>) -> Self {
        let arena_size = run.solution.plan.arena_size;
        let lower_bound = memplan_core::lower_bound(problem);
        Self {
            buffers: problem.len(),
            arena_size,
            lower_bound,
            ratio: ratio(arena_size, lower_bound),
            solver: run.solution.solver.to_string(),
            time_ms: run.seconds * 1e3,
            fits_capacity: capacity.is_none_or(|c| arena_size <= c),
            optimal: run.solution.optimal,
            nodes: run.solution.nodes,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "buffers {} | arena {} bytes | lower bound {} | ratio {:.4} | solver {}{} | {:.2} ms",
            self.buffers,
            self.arena_size,
            self.lower_bound,
            self.ratio,
            self.solver,
            if self.optimal { " (optimal)" } else { "" },
            self.time_ms
        )
    }
}

/// What `memplan plan` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// The summary line, then one row per buffer.
    Table,
    /// The summary and the plan as one JSON object.
    Json,
    /// The plan as CSV (`id,lower,upper,size[,alignment],offset`); the summary goes to stderr.
    Csv,
}

/// The width of a text column: its widest entry or its header.
pub(crate) fn column_width<'a>(header: &str, entries: impl IntoIterator<Item = &'a str>) -> usize {
    entries
        .into_iter()
        .map(|e| e.chars().count())
        .chain([header.chars().count()])
        .max()
        .unwrap_or(0)
}

/// One row per buffer: id, offset, size, lifetime, aligned in columns.
pub(crate) fn plan_table(problem: &Problem, plan: &Plan) -> String {
    let width = column_width("buffer", problem.buffers().iter().map(|b| b.id.as_str()));
    let mut out = format!(
        "{:<width$}  {:>14}  {:>14}  lifetime\n",
        "buffer", "offset", "bytes"
    );
    for (buffer, offset) in problem.buffers().iter().zip(&plan.offsets) {
        out.push_str(&format!(
            "{:<width$}  {:>14}  {:>14}  {}\n",
            buffer.id, offset, buffer.size, buffer.lifetime
        ));
    }
    out
}

/// One buffer of the JSON plan.
#[derive(Debug, Serialize)]
struct PlacedBuffer<'a> {
    id: &'a str,
    offset: u64,
    size: u64,
    start: u64,
    end: u64,
}

/// The summary's keys plus `plan`: one `{id, offset, size, start, end}` per buffer.
pub(crate) fn plan_json(
    summary: &Summary,
    problem: &Problem,
    plan: &Plan,
) -> anyhow::Result<serde_json::Value> {
    let mut value = serde_json::to_value(summary)?;
    let placed: Vec<PlacedBuffer<'_>> = problem
        .buffers()
        .iter()
        .zip(&plan.offsets)
        .map(|(b, &offset)| PlacedBuffer {
            id: &b.id,
            offset,
            size: b.size,
            start: b.lifetime.start,
            end: b.lifetime.end,
        })
        .collect();
    value["plan"] = serde_json::to_value(placed)?;
    Ok(value)
}

/// `arena / lower_bound`, 1 for an empty problem.
pub(crate) fn ratio(arena: u64, lower_bound: u64) -> f64 {
    if lower_bound == 0 {
        1.0
    } else {
        arena as f64 / lower_bound as f64
    }
}

/// Writes `contents` to `path`, the one way every output file of the CLI is written.
///
/// A regular file (or a new one) is replaced whole: the contents go to a temporary in the same
/// folder, with a random name and created exclusively (`tempfile`: `O_EXCL`, so a planted file or
/// symlink cannot redirect the write), which is then renamed over the target, so a failure never
/// leaves a half-written file. Symlinks are resolved first: the link's target is replaced and the
/// link stays a link. An existing file keeps its permissions (and, where allowed, its owner).
/// Anything else that exists (a device such as `/dev/null`, a FIFO) is written in place, never
/// replaced; a directory is refused.
pub(crate) fn write_atomically(path: &Path, contents: &str) -> anyhow::Result<()> {
    let cannot = |what: String| {
        anyhow::anyhow!(
            "cannot write `{}`: {what}\n  = help: name a file in a folder you can write to (a new \
             file, an existing one to replace, or a device or FIFO to write to)",
            path.display()
        )
    };
    // `metadata` follows every link, including `/proc`'s `/dev/stdout`, which has no path to
    // resolve by hand.
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(cannot("it is a directory".into())),
        Ok(meta) if !meta.is_file() => {
            // A device, FIFO or socket: written in place, as a shell's `>` does.
            let write = || -> std::io::Result<()> {
                let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
                file.write_all(contents.as_bytes())?;
                file.flush()
            };
            return write().map_err(|e| cannot(format!("{e} (it is not a regular file)")));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(cannot(e.to_string())),
    }
    let target = resolve_links(path).map_err(|e| cannot(e.to_string()))?;
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
        temp.write_all(contents.as_bytes())?;
        if let Some(old) = &old {
            keep_owner(temp.as_file(), old);
            // After the owner: a change of owner may clear set-id bits.
            temp.as_file().set_permissions(old.permissions())?;
        }
        temp.as_file().sync_all()?;
        temp.persist(&target).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| cannot(e.to_string()))
}

/// `path` with every symlink of its last component followed (its folders are left as they are:
/// a rename in a folder reached through a link lands in the link's target). A link to nowhere
/// gives the path it points to, so the file is created there and the link kept.
fn resolve_links(path: &Path) -> std::io::Result<std::path::PathBuf> {
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

/// Gives `file` the owner and group of `old` when they differ (running as root, say); where that
/// is not allowed the new file keeps the writer's, as any newly written file does.
#[cfg(unix)]
fn keep_owner(file: &std::fs::File, old: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(new) = file.metadata()
        && (new.uid(), new.gid()) != (old.uid(), old.gid())
    {
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
    }
}

#[cfg(not(unix))]
fn keep_owner(_: &std::fs::File, _: &std::fs::Metadata) {}

#[cfg(test)]
mod tests {
    use super::write_atomically;

    /// The temporary's name is random and it is created exclusively: a symlink planted at the
    /// name the CLI once used (`.<name>.<pid>.tmp`) redirects nothing.
    #[cfg(unix)]
    #[test]
    fn a_planted_temporary_redirects_nothing() {
        let dir = std::env::temp_dir().join(format!("memplan_cli_planted_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let planted = dir.join(format!(".plan.csv.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let target = dir.join("plan.csv");
        write_atomically(&target, "id,offset\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(&target).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "id,offset\n");
        // Two writes use two different temporaries.
        write_atomically(&target, "second\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "second\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
