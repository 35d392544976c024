//! On a 32-bit target, a model whose numbers do not fit `usize` fails to compile with a message
//! naming the model file, instead of silently wrapping offsets (issue: a 4 GiB tensor became
//! offset 0); a normal model builds for the same target.
//!
//! Builds a tiny `no_std` crate for `thumbv7em-none-eabihf` (`rustup target add
//! thumbv7em-none-eabihf`, which `.ci/run` does); skipped with a message when it is missing.

mod common;

const TARGET: &str = "thumbv7em-none-eabihf";

const LIB: &str = "#![no_std]\nmemplan::memplan!(\"../model.toml\");\n\
                   pub fn first(arena: &mut net::Arena) -> usize { arena.views(0).map_or(0, |v| v.len()) }\n";

fn model(big: &str) -> String {
    format!(
        "[model]\nname = \"net\"\ninputs = [\"x\"]\noutputs = [\"y\"]\n\n[tensors]\n\
         x = {{ dtype = \"f32\", shape = [16] }}\nbig = {big}\ny = {{ dtype = \"f32\", shape = [16] }}\n\n\
         [[ops]]\nname = \"expand\"\ninputs = [\"x\"]\noutputs = [\"big\"]\n\n\
         [[ops]]\nname = \"reduce\"\ninputs = [\"big\", \"x\"]\noutputs = [\"y\"]\n"
    )
}

#[test]
fn a_model_too_big_for_the_target_fails_with_a_clear_message() {
    if !common::target_installed(TARGET) {
        common::skip(&format!(
            "the `{TARGET}` standard library is not installed (rustup target add {TARGET})"
        ));
        return;
    }
    // 4 GiB + 16 bytes: every offset past it wraps in a 32-bit `usize`.
    let dir = common::scratch_crate(
        "memplan-32bit-huge",
        LIB,
        &model("{ dtype = \"f32\", shape = [1073741828] }"),
    );
    let output = common::cargo(&dir, &["build", "--target", TARGET]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "built a wrapping plan:\n{stderr}");
    // `memplan!("../model.toml")` in `src/lib.rs`: the message names it from the crate root,
    // where it opens.
    assert!(dir.join("model.toml").is_file());
    assert!(
        stderr.contains("memplan: model `net` needs numbers up to")
            && stderr.contains("more than a 32-bit target allows")
            && stderr.contains("--> model.toml:8:1"),
        "{stderr}"
    );

    // The same model with a small tensor builds for the target.
    let dir = common::scratch_crate(
        "memplan-32bit-small",
        LIB,
        &model("{ dtype = \"f32\", shape = [1024] }"),
    );
    let output = common::cargo(&dir, &["build", "--target", TARGET]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Issue 19, item 6: an arena from 2^31 to 2^32 - 1 bytes fits a 32-bit `usize` but not a type
/// (Rust limits types to `isize::MAX` bytes): memplan's message, not rustc's unlocated "too big
/// for the target architecture".
#[test]
fn an_arena_past_isize_max_fails_with_memplans_message() {
    if !common::target_installed(TARGET) {
        common::skip(&format!(
            "the `{TARGET}` standard library is not installed (rustup target add {TARGET})"
        ));
        return;
    }
    // 2^31 bytes and 3 GiB: both below `u32::MAX`, both above `i32::MAX`.
    for (name, elements) in [("2g", 536_870_912u64), ("3g", 805_306_368)] {
        let dir = common::scratch_crate(
            &format!("memplan-32bit-{name}"),
            LIB,
            &model(&format!("{{ dtype = \"f32\", shape = [{elements}] }}")),
        );
        let output = common::cargo(&dir, &["build", "--target", TARGET]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "built a {name} arena:\n{stderr}");
        assert!(
            stderr.contains("memplan: model `net` needs numbers up to")
                && stderr.contains("`isize::MAX` bytes (2^31 - 1)")
                && stderr.contains("--> model.toml:8:1")
                && stderr.contains("= help: build it for a 64-bit target"),
            "{name}: {stderr}"
        );
        let errors = stderr
            .lines()
            .filter(|l| l.starts_with("error") && !l.starts_with("error: could not compile"))
            .count();
        assert_eq!(errors, 1, "{name}: one error, no cascade: {stderr}");
        assert!(
            !stderr.contains("too big for the target architecture"),
            "{name}: rustc's unlocated error: {stderr}"
        );
    }
}
