//! Plans `model.toml` when the crate builds and writes the generated module to `OUT_DIR`: the
//! same code `memplan!` would expand to, from `memplan_core::expand_model`.

use std::path::PathBuf;

fn main() {
    let model = "model.toml";
    println!("cargo::rerun-if-changed={model}");
    let text = std::fs::read_to_string(model).expect("model.toml is next to build.rs");
    let source = match memplan_core::codegen::expand_model_source(model, &text) {
        Ok(source) => source,
        Err(error) => {
            // `error: <message>` ` --> model.toml:LINE:COL` `= help: ...`, then fail the build.
            println!("cargo::error={}", error.to_string().replace('\n', " "));
            std::process::exit(1);
        }
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // Written to a temporary file and renamed, so an interrupted build never leaves half a file.
    let temporary = out.join("plan.rs.tmp");
    std::fs::write(&temporary, source).expect("OUT_DIR is writable");
    std::fs::rename(&temporary, out.join("plan.rs")).expect("OUT_DIR is writable");
}
