//! memplan-core without its default features depends on nothing: `cargo tree` of this crate
//! lists it and memplan-core only, and this crate builds with memplan-core that way, alone.

use std::path::Path;
use std::process::Command;

fn cargo(args: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(&root)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The package names of `cargo tree --prefix none` lines (`name vX.Y.Z (path)`), deduplicated.
fn packages(tree: &str) -> Vec<String> {
    let mut names: Vec<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn this_crate_depends_on_memplan_core_alone() {
    let tree = cargo(&[
        "tree",
        "--offline",
        "-p",
        "memplan-example-embed-planner",
        "-e",
        "normal",
        "--prefix",
        "none",
    ]);
    assert_eq!(
        packages(&tree),
        ["memplan-core", "memplan-example-embed-planner"],
        "{tree}"
    );
}

#[test]
fn memplan_core_without_default_features_has_no_dependency() {
    let tree = cargo(&[
        "tree",
        "--offline",
        "-p",
        "memplan-core",
        "--no-default-features",
        "-e",
        "normal",
        "--prefix",
        "none",
    ]);
    assert_eq!(packages(&tree), ["memplan-core"], "{tree}");
}

/// In `cargo test --workspace` other members turn memplan-core's features on (cargo unifies
/// them); built on its own, in a target folder of its own, this crate gets the planner alone.
#[test]
fn this_crate_builds_with_the_planner_alone() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("embed-planner-alone");
    let target = target.to_str().expect("a UTF-8 path");
    cargo(&[
        "build",
        "--offline",
        "--quiet",
        "-p",
        "memplan-example-embed-planner",
        "--target-dir",
        target,
    ]);
}
