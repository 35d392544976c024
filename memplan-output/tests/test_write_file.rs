//! What `write_file` promises, on real files.

use memplan_output::write_file;

fn scratch_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("memplan_output_{name}_"))
        .tempdir()
        .unwrap()
}

/// The temporary's name is random and it is created exclusively: a symlink planted at the name a
/// naive tool would use (`.<name>.<pid>.tmp`) redirects nothing.
#[cfg(unix)]
#[test]
fn a_planted_temporary_redirects_nothing() {
    let dir = scratch_dir("planted");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let planted = dir
        .path()
        .join(format!(".plan.csv.{}.tmp", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let target = dir.path().join("plan.csv");
    write_file(&target, b"id,offset\n").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&target).unwrap().is_file());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "id,offset\n");
    // Two writes use two different temporaries, and leave none behind.
    write_file(&target, b"second\n").unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "second\n");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && !n.contains(&std::process::id().to_string()))
        .collect();
    assert!(left.is_empty(), "temporaries left behind: {left:?}");
}

/// A symlink stays a link; its target gets the contents.
#[cfg(unix)]
#[test]
fn a_symlink_stays_a_link() {
    let dir = scratch_dir("link");
    let real = dir.path().join("real.bin");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("out.bin");
    std::os::unix::fs::symlink("real.bin", &link).unwrap();
    write_file(&link, b"new").unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
}

/// A dangling link's target is created, and the link kept.
#[cfg(unix)]
#[test]
fn a_dangling_link_creates_its_target() {
    let dir = scratch_dir("dangling");
    let link = dir.path().join("out.bin");
    std::os::unix::fs::symlink("made.bin", &link).unwrap();
    write_file(&link, b"made").unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("made.bin")).unwrap(),
        "made"
    );
}

/// A 0600 file stays 0600.
#[cfg(unix)]
#[test]
fn a_replaced_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir("mode");
    let out = dir.path().join("secret.bin");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    write_file(&out, b"new").unwrap();
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
}

/// A FIFO is written in place (a reader gets the bytes), never replaced by a regular file.
#[cfg(unix)]
#[test]
fn a_fifo_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch_dir("fifo");
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: `mkfifo` is not available here");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    write_file(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

/// A directory is refused, with the path and a help line, and left as it was.
#[test]
fn a_directory_is_refused() {
    let dir = scratch_dir("dir");
    let err = write_file(dir.path(), b"x").unwrap_err();
    let message = err.to_string();
    assert!(message.contains("it is a directory"), "{message}");
    assert!(message.contains("= help:"), "{message}");
    assert_eq!(err.path(), dir.path());
    assert!(dir.path().is_dir());
}

/// A write into a folder that does not exist fails and creates nothing.
#[test]
fn a_missing_folder_is_an_error() {
    let dir = scratch_dir("missing");
    let out = dir.path().join("no_such_folder").join("out.bin");
    let err = write_file(&out, b"x").unwrap_err();
    assert!(err.to_string().contains("cannot write"), "{err}");
    assert!(!dir.path().join("no_such_folder").exists());
}
