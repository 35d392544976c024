//! Output files are written, never clobbered (issue 19, item 2): `plan --out`, `render -o` and
//! `import -o` write a FIFO in place instead of replacing it, write a symlink's target and keep the
//! link, and keep an existing file's permissions.
#![cfg(unix)]

mod common;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::{memplan, text};

fn scratch(name: &str) -> PathBuf {
    common::scratch("output", name)
}

fn two_pools() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/models/two_pools.toml")
        .display()
        .to_string()
}

fn tiny_onnx() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tiny.onnx")
        .display()
        .to_string()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The files of `dir` whose name ends in `.tmp`: temporaries left behind.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn a_fifo_is_written_in_place_not_replaced() {
    let dir = scratch("fifo");
    let fifo = dir.join("plan.csv");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        println!("skipped: `mkfifo` is not available");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = memplan(&["plan", &two_pools(), "--out", s(&fifo)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced by {kind:?}");
    let csv = reader.join().unwrap();
    assert!(csv.starts_with("id,"), "the reader got {csv:?}");
    assert!(csv.contains("\ndma,"), "{csv}");
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[test]
fn dev_null_stays_a_device() {
    let null = Path::new("/dev/null");
    if !std::fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
        println!("skipped: no `/dev/null` device");
        return;
    }
    let out = memplan(&["plan", &two_pools(), "--out", "/dev/null"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let kind = std::fs::symlink_metadata(null).unwrap().file_type();
    assert!(kind.is_char_device(), "/dev/null is now {kind:?}");
}

#[test]
fn a_symlink_stays_a_symlink_and_its_target_is_written() {
    let dir = scratch("symlink");
    std::fs::create_dir_all(dir.join("real")).unwrap();
    let target = dir.join("real/plan.html");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("plan.html");
    std::os::unix::fs::symlink("real/plan.html", &link).unwrap();
    let out = memplan(&["render", &two_pools(), "-o", s(&link)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced"
    );
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("real/plan.html")
    );
    let html = std::fs::read_to_string(&target).unwrap();
    assert!(html.contains("<svg"), "{html}");
    assert!(leftovers(&dir).is_empty() && leftovers(&dir.join("real")).is_empty());

    // A link to a file that does not exist yet: the file is created where it points.
    let dangling = dir.join("model.toml");
    std::os::unix::fs::symlink("real/new.toml", &dangling).unwrap();
    let out = memplan(&["import", &tiny_onnx(), "-o", s(&dangling)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let toml = std::fs::read_to_string(dir.join("real/new.toml")).unwrap();
    assert!(toml.contains("[model]"), "{toml}");
}

#[test]
fn an_existing_file_keeps_its_permissions() {
    let dir = scratch("mode");
    for (command, name, mode) in [
        ("plan", "plan.csv", 0o600),
        ("render", "plan.svg", 0o640),
        ("import", "model.toml", 0o604),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = match command {
            "import" => memplan(&["import", &tiny_onnx(), "-o", s(&path)]),
            "plan" => memplan(&["plan", &two_pools(), "--out", s(&path)]),
            _ => memplan(&["render", &two_pools(), "-o", s(&path)]),
        };
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_ne!(std::fs::read_to_string(&path).unwrap(), "old", "{command}");
        let now = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(now, mode, "{command} -> {name}: mode {now:o}, was {mode:o}");
    }
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[test]
fn a_directory_is_refused_with_a_message() {
    let dir = scratch("directory");
    let out = memplan(&["plan", &two_pools(), "--out", s(&dir)]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("it is a directory") && stderr.contains("help:"),
        "{stderr}"
    );
    assert!(dir.is_dir());
}
