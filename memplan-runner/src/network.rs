//! The network this binary is built for: the module `net` that `memplan-build` generated into
//! `OUT_DIR` from `MEMPLAN_MODEL` (see `build.rs`), as a user's crate includes it.
#![allow(
    missing_docs,
    unreachable_pub,
    dead_code,
    clippy::all,
    clippy::pedantic
)]

memplan::include_network!("net");
