//! `memplan import` on arbitrary bytes and on mutated valid ONNX files never panics: it exits 0
//! with a model that plans, or 1 with an error, and never leaves a half-written output file.
//!
//! Each case runs the binary, so the default budget is small (a few seconds); run longer with
//! `PROPTEST_CASES=20000 cargo test -p memplan-cli --test test_import_fuzz`. When the importer
//! moves to its own crate (`memplan-onnx`), this test can call its function directly.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{memplan, text};
use proptest::prelude::*;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .expect("the ONNX fixtures are in the repository")
}

/// A fresh path per case (the cases share one scratch folder).
fn case_paths() -> (PathBuf, PathBuf) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| common::scratch("import_fuzz", "cases"));
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    (dir.join(format!("{k}.onnx")), dir.join(format!("{k}.toml")))
}

/// Imports `bytes` and checks the outcome.
fn import_is_clean(bytes: &[u8]) -> Result<(), TestCaseError> {
    let (onnx, toml) = case_paths();
    std::fs::write(&onnx, bytes).unwrap();
    let out = memplan(&[
        "import",
        onnx.to_str().unwrap(),
        "-o",
        toml.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    prop_assert!(!stderr.contains("panicked"), "panic: {stderr}");
    match out.status.code() {
        Some(0) => {
            let model = std::fs::read_to_string(&toml).expect("exit 0 wrote the model");
            prop_assert!(
                memplan_core_plans(&toml),
                "the imported model does not plan:\n{model}"
            );
        }
        Some(1) => {
            prop_assert!(!toml.exists(), "a failed import left {}", toml.display());
            prop_assert!(stderr.starts_with("error"), "{stderr}");
        }
        other => prop_assert!(false, "exit {other:?}: {stderr}"),
    }
    let _ = std::fs::remove_file(&onnx);
    let _ = std::fs::remove_file(&toml);
    Ok(())
}

/// Whether `memplan plan` accepts the imported model.
fn memplan_core_plans(toml: &Path) -> bool {
    memplan(&["plan", toml.to_str().unwrap(), "--solver", "best-fit"])
        .status
        .success()
}

/// One mutation of a valid protobuf: flip a byte, overwrite a varint-ish byte, cut, or splice.
#[derive(Clone, Debug)]
enum Mutation {
    Set(f64, u8),
    Truncate(f64),
    Duplicate(f64, f64),
    Delete(f64, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (0.0..1.0f64, any::<u8>()).prop_map(|(at, b)| Mutation::Set(at, b)),
        1 => (0.0..1.0f64).prop_map(Mutation::Truncate),
        1 => (0.0..1.0f64, 0.0..1.0f64).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
        1 => (0.0..1.0f64, 1..16usize).prop_map(|(at, n)| Mutation::Delete(at, n)),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    let at = |len: usize, f: f64| ((len as f64) * f) as usize;
    for m in mutations {
        let len = bytes.len();
        match *m {
            Mutation::Set(f, b) if len > 0 => bytes[at(len, f).min(len - 1)] = b,
            Mutation::Set(..) => {}
            Mutation::Truncate(f) => bytes.truncate(at(len, f)),
            Mutation::Duplicate(a, b) => {
                let (from, to) = (at(len, a.min(b)), at(len, a.max(b)));
                let copy = bytes[from..to].to_vec();
                bytes.splice(to..to, copy);
            }
            Mutation::Delete(f, n) => {
                let start = at(len, f);
                bytes.drain(start..(start + n).min(len));
            }
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        import_is_clean(&bytes)?;
    }

    #[test]
    fn mutated_models_never_panic(
        which in 0..3usize,
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let name = ["tiny.onnx", "tiny_dynamic.onnx", "tiny_string.onnx"][which];
        import_is_clean(&mutate(fixture(name), &mutations))?;
    }
}
