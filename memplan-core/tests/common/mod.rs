//! Helpers shared by the integration tests.

use std::path::PathBuf;

/// `sub` of the shared benchmark data (`<workspace>/../shared/bench`, or `MEMPLAN_BENCH_DIR`),
/// if it is there.
pub(crate) fn bench_dir(sub: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MEMPLAN_BENCH_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"),
        PathBuf::from,
    );
    let dir = dir.join(sub);
    dir.is_dir().then_some(dir)
}
