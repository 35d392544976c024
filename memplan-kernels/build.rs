//! Sets `cfg(memplan_dsp)` when the target has the Armv7E-M DSP extension (Cortex-M4, M7:
//! every `thumbv7em-*` target), so the int8 kernels of `tflite::s8` use its packed 16-bit
//! multiply-accumulates. Stable Rust does not expose `target_feature = "dsp"` (the Arm target
//! features are unstable), so the target's name decides, as the `cortex-m` crate's build script
//! decides its `armv7em` cfg. `MEMPLAN_KERNELS_PORTABLE=1` keeps the portable loops on such a
//! target too (to measure what the DSP instructions change).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(memplan_dsp)");
    println!("cargo::rerun-if-env-changed=MEMPLAN_KERNELS_PORTABLE");
    let target = std::env::var("TARGET").unwrap_or_default();
    let portable = std::env::var_os("MEMPLAN_KERNELS_PORTABLE").is_some_and(|v| v == "1");
    if target.starts_with("thumbv7em") && !portable {
        println!("cargo::rustc-cfg=memplan_dsp");
    }
}
