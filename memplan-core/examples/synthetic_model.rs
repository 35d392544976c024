//! Writes a synthetic model file of N tensors to stdout: `cargo run -p memplan-core --example
//! synthetic_model -- 1000 > model.toml`. The macro-expansion benchmark uses the same generator.

#[path = "../benches/synthetic/mod.rs"]
mod synthetic;

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    print!("{}", synthetic::model_text(n));
}
