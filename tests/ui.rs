//! Compile-time errors of `memplan!`: one ui case per kind of mistake in a model file, each with
//! the model next to it and the expected compiler output in a `.stderr` file.
//!
//! The `.stderr` files match the pinned stable toolchain. After an intended change, regenerate
//! them with `TRYBUILD=overwrite cargo test --test ui` and review the diff.
//!
//! A message names its model file from the crate root, here the `memplan` crate's:
//! `--> tests/ui/no-ops.toml:6:2`. trybuild's preferred form (the one `TRYBUILD=overwrite`
//! writes) erases line numbers in every file but the case's `.rs`, so an overwrite leaves
//! `--> tests/ui/no-ops.toml`; put the `:LINE:COLUMN` back before committing (the overwrite's
//! diff shows the removed ones; for a new case, `memplan plan tests/ui/<case>.toml` prints the
//! same location). trybuild accepts the form with numbers (its `RelativeToDir` variation) and
//! fails the case when one is wrong, so the locations stay tested.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
