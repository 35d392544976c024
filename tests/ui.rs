//! Compile-time errors of `memplan!`: one ui case per kind of mistake in a model file, each with
//! the model next to it and the expected compiler output in a `.stderr` file.
//!
//! The `.stderr` files match the pinned stable toolchain. After an intended change, regenerate
//! them with `TRYBUILD=overwrite cargo test --test ui` and review the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
