//! Times the phases of macro expansion once on a synthetic model (a quick look; the numbers that
//! count come from `cargo bench --bench expansion`). `expansion_phases N expand` runs only
//! `expand_model`, for measuring its CPU time with `perf stat -e task-clock`.

#[path = "../benches/synthetic/mod.rs"]
mod synthetic;

use std::time::Instant;

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let text = synthetic::model_text(n);
    if std::env::args().nth(2).as_deref() == Some("expand") {
        // Only the macro's work, once: for `perf stat -e task-clock` (CPU time, not wall time).
        let t = Instant::now();
        let tokens = memplan_core::expand_model("m.toml", &text).unwrap();
        println!("expand_model: {:?} wall", t.elapsed());
        std::mem::forget(tokens);
        return;
    }
    let t = Instant::now();
    let table = toml::de::DeTable::parse(&text).unwrap();
    println!("toml DeTable::parse: {:?}", t.elapsed());
    drop(table);
    let t = Instant::now();
    let model = memplan_core::parse_model("m.toml", &text).unwrap();
    println!("parse_model: {:?}", t.elapsed());
    let t = Instant::now();
    let plan = memplan_core::model_plan::plan_model(&model).unwrap();
    println!("plan_model: {:?}", t.elapsed());
    let t = Instant::now();
    let tokens = memplan_core::codegen::generate(&model, &plan);
    println!("generate: {:?}", t.elapsed());
    let t = Instant::now();
    let s = tokens.to_string();
    println!("to_string: {:?} ({} bytes)", t.elapsed(), s.len());
    if let Some(path) = std::env::var_os("MEMPLAN_DUMP") {
        std::fs::write(path, &s).unwrap();
    }
    let t = Instant::now();
    let again: proc_macro2::TokenStream = s.parse().unwrap();
    println!("parse back: {:?}", t.elapsed());
    drop(again);
}
