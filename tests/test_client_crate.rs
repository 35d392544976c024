//! A crate outside the workspace (`tests/client-crate`), depending on `memplan` by path with its
//! own model.toml, compiles, its own tests validate its plan, editing its model rebuilds it, and
//! its binary does not contain memplan-core.
//!
//! The crate is copied to a scratch directory first (its `memplan` path made absolute), so the
//! build never touches the source tree; it builds offline into its own target directory under
//! this test's `CARGO_TARGET_TMPDIR`, which later runs reuse.

use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            let bytes = std::fs::read(entry.path()).unwrap();
            // Only rewrite when changed, so cargo's fingerprints stay fresh between runs.
            if std::fs::read(&target).ok().as_ref() != Some(&bytes) {
                std::fs::write(&target, bytes).unwrap();
            }
        }
    }
}

fn cargo(dir: &Path, target: &Path, args: &[&str]) -> std::process::Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn an_outside_crate_builds_and_its_plan_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("client-crate");
    let source = scratch.join("src-copy");
    let target = scratch.join("target");
    copy_dir(&root.join("tests/client-crate"), &source);
    let manifest = std::fs::read_to_string(source.join("Cargo.toml")).unwrap();
    let absolute = format!("path = {:?}", root.display().to_string());
    std::fs::write(
        source.join("Cargo.toml"),
        manifest.replace("path = \"../..\"", &absolute),
    )
    .unwrap();

    // Its tests check: no two tensors live together share bytes, every tensor is inside
    // ARENA_SIZE, ARENA_SIZE >= LOWER_BOUND.
    let test = cargo(&source, &target, &["test", "--offline", "--quiet"]);
    let stdout = String::from_utf8_lossy(&test.stdout);
    assert!(
        stdout.contains("3 passed"),
        "the plan tests did not all run:\n{stdout}"
    );

    let run = cargo(&source, &target, &["run", "--offline", "--quiet"]);
    let line = String::from_utf8_lossy(&run.stdout);
    assert!(line.starts_with("kws: arena "), "{line}");
    assert!(line.contains("11 tensors, label 2"), "{line}");

    // Editing the model rebuilds the crate (the expansion includes the file with
    // `include_bytes!`), and building again without an edit does not.
    let model = source.join("model.toml");
    let text = std::fs::read_to_string(&model).unwrap();
    std::fs::write(&model, format!("{text}# edited by the test\n")).unwrap();
    let rebuild = cargo(&source, &target, &["build", "--offline"]);
    let log = String::from_utf8_lossy(&rebuild.stderr);
    assert!(
        log.contains("Compiling memplan-client"),
        "no rebuild after an edit:\n{log}"
    );
    let again = cargo(&source, &target, &["build", "--offline"]);
    let log = String::from_utf8_lossy(&again.stderr);
    assert!(
        !log.contains("Compiling"),
        "rebuilt without an edit:\n{log}"
    );
    std::fs::write(&model, text).unwrap();

    // Only the proc macro depends on memplan-core: the normal, non-proc-macro dependencies are
    // memplan and bytemuck, and the binary has no memplan_core code in it.
    let tree = cargo(
        &source,
        &target,
        &[
            "tree",
            "--offline",
            "-e",
            "normal,no-proc-macro",
            "--prefix",
            "none",
        ],
    );
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(!tree.contains("memplan-core"), "{tree}");
    assert!(tree.contains("bytemuck"), "{tree}");
    let binary = std::fs::read(target.join("debug/memplan-client")).unwrap();
    let needle = b"memplan_core";
    assert!(
        !binary.windows(needle.len()).any(|w| w == needle),
        "the client's binary mentions memplan_core"
    );
}
