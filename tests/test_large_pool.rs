//! A large pool costs the compiler next to nothing (issue 19, item 4): its `static` is a
//! `memplan::Memory`, bytes rustc does not build. Before, a pool's arena was a zeroed value that
//! rustc evaluated and moved (with rustc 1.95: 1 GiB took 19 s and 6.4 GB of its memory, 4 GiB
//! more than 9 GB); now 4 GiB takes a few seconds and about 130 MB. A crate with a 4 GiB pool is
//! built here, outside the workspace, and its second build (this crate alone) timed.

mod common;

use std::time::{Duration, Instant};

const MODEL: &str = r#"[model]
name = "net"
inputs = ["x"]
outputs = ["big"]

[[pools]]
name = "main"

[tensors]
x = { bytes = 16 }
big = { bytes = 4294967296 }

[[ops]]
name = "expand"
inputs = ["x"]
outputs = ["big"]
"#;

const LIB: &str = "memplan::memplan!(\"../model.toml\");\n\
    pub fn take() -> Option<net::Arenas<'static>> { net::take() }\n";

#[test]
fn a_4_gib_pool_builds_in_seconds() {
    let dir = common::scratch_crate("memplan-large-pool", LIB, MODEL);
    // The dependencies, once.
    let output = common::cargo(&dir, &["build", "--lib"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // This crate alone.
    common::write_if_changed(
        &dir.join("src/lib.rs"),
        format!("{LIB}// again\n").as_bytes(),
    );
    let start = Instant::now();
    let output = common::cargo(&dir, &["build", "--lib"]);
    let elapsed = start.elapsed();
    common::write_if_changed(&dir.join("src/lib.rs"), LIB.as_bytes());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        elapsed < Duration::from_secs(60),
        "a crate with a 4 GiB pool took {elapsed:?} to build"
    );
}
