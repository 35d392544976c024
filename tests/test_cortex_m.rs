//! The Cortex-M4F firmware of `examples/cortex-m`, built for `thumbv7em-none-eabihf` and run on
//! QEMU's `mps2-an386` board: the network it runs (the MLPerf Tiny keyword spotter when
//! `../shared/bench/tinyml` is there, else the runner's small CNN) matches ONNX Runtime's
//! reference output, its stack peak is bounded, its ELF has no allocator and copies next to
//! nothing from flash to RAM (the arena is `.bss`, the weights `.rodata`); the section sizes, RAM
//! and flash against the arena and the weights, the stack peak and a deterministic instruction
//! count are printed.
//!
//! Needs `rustup target add thumbv7em-none-eabihf` and `qemu-system-arm` (`.ci/run` installs
//! both); skipped with a message when either is missing. The firmware builds into
//! `target/cortex-m` (its own workspace, so it never touches the root's build).

mod common;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use object::{Object as _, ObjectSection as _, ObjectSymbol as _};

const TARGET: &str = "thumbv7em-none-eabihf";
const QEMU: &str = "qemu-system-arm";
/// The firmware's `cargo run` runner (`examples/cortex-m/.cargo/config.toml`), less `-kernel`.
const QEMU_ARGS: &[&str] = &[
    "-machine",
    "mps2-an386",
    "-cpu",
    "cortex-m4",
    "-nographic",
    "-semihosting-config",
    "enable=on,target=native",
];
/// QEMU is killed after this long: the firmware itself runs in well under a second.
const QEMU_TIMEOUT: Duration = Duration::from_secs(60);
/// `-icount shift=ICOUNT_SHIFT`: each instruction takes `2^ICOUNT_SHIFT` ns of virtual time, so
/// the run (SysTick interrupts included) is deterministic, and SysTick (25 MHz, 40 ns a tick)
/// counts 1.6 ticks an instruction: `systick_ticks` resolves the computation to one instruction.
const ICOUNT_SHIFT: u32 = 6;
/// Nanoseconds per SysTick tick: the mps2-an386 board's 25 MHz system clock.
const SYSTICK_NS: u64 = 40;
/// The stack the network may use: the kernels' frames (shapes and strides on the stack),
/// semihosting's formatting, one exception frame.
const STACK_BOUND: usize = 16 * 1024;
/// `.data` is copied from flash to RAM at reset: a few statics at most, never a buffer.
const DATA_BOUND: u64 = 256;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `target/cortex-m` under the root's target directory, wherever that is.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is <target>/tmp")
        .join("cortex-m")
}

/// Whether `qemu-system-arm` runs.
fn qemu_installed() -> bool {
    Command::new(QEMU)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// `cargo build --release --locked <args>` of the crate in `dir`, into [`target_dir`]. The
/// crate's `.cargo/config.toml` supplies the target and the linker script, so the variables
/// that would override its flags are removed.
fn cargo_build(dir: &Path, args: &[&str], model: &str) {
    cargo_build_with_budget(dir, args, model, None);
}

/// [`cargo_build`] with `MEMPLAN_FIRMWARE_RAM_BUDGET` (empty: none).
fn cargo_build_with_budget(dir: &Path, args: &[&str], model: &str, budget: Option<u64>) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["build", "--release", "--locked"])
        .args(args)
        .current_dir(dir)
        .env("MEMPLAN_FIRMWARE_MODEL", model)
        .env(
            "MEMPLAN_FIRMWARE_RAM_BUDGET",
            budget.map_or_else(String::new, |b| b.to_string()),
        )
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo build in {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The host's tuple (`rustc -vV`), where `--target host-tuple` puts its output.
fn host_tuple() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("-vV").output().expect("rustc runs");
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

/// Runs `command` to its end, or kills it after [`QEMU_TIMEOUT`]; stdout and stderr are read
/// while it runs, so a full pipe never stalls it.
fn run_with_timeout(command: &mut Command) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("QEMU starts");
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).ok();
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for QEMU") {
            break status;
        }
        if start.elapsed() > QEMU_TIMEOUT {
            child.kill().ok();
            let _ = child.wait();
            panic!("QEMU still running after {QEMU_TIMEOUT:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// What the firmware reported (its protocol: `examples/cortex-m/src/main.rs`).
#[derive(Debug, PartialEq)]
struct Report {
    model: String,
    arena: u64,
    lower_bound: u64,
    weights: u64,
    output: Vec<u8>,
    systick_ticks: u64,
    stack_compute: usize,
    stack_peak: usize,
}

/// The value of the line `<key> <value>` of `stdout`.
fn field<'a>(stdout: &'a str, key: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no `{key}` line in the firmware's output:\n{stdout}"))
}

/// Decodes lowercase or uppercase hex, two digits a byte.
fn from_hex(hex: &str) -> Vec<u8> {
    assert!(
        hex.len().is_multiple_of(2),
        "odd number of hex digits: {hex}"
    );
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digits"))
        .collect()
}

/// Runs the firmware on QEMU with `extra` arguments.
fn qemu(elf: &Path, extra: &[&str]) -> Output {
    run_with_timeout(
        Command::new(QEMU)
            .args(QEMU_ARGS)
            .args(extra)
            .arg("-kernel")
            .arg(elf),
    )
}

/// The firmware's report from QEMU's `output`; QEMU must have exited 0.
fn parse(output: &Output) -> Report {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "QEMU exited with {}:\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let number = |key| -> u64 {
        field(&stdout, key)
            .parse()
            .unwrap_or_else(|_| panic!("`{key}` is not a number:\n{stdout}"))
    };
    let size = |key| usize::try_from(number(key)).expect("fits usize");
    Report {
        model: field(&stdout, "model").to_owned(),
        arena: number("arena"),
        lower_bound: number("lower_bound"),
        weights: number("weights"),
        output: from_hex(field(&stdout, "output")),
        systick_ticks: number("systick_ticks"),
        stack_compute: size("stack_compute"),
        stack_peak: size("stack_peak"),
    }
}

/// LiteRT's output (int8 bytes) for a TFLite model the firmware ran on its reference input (a
/// shared MLPerf Tiny model or a runner fixture).
fn litert_output(model: &str) -> Vec<u8> {
    let fixture = root().join(format!(
        "memplan-runner/tests/fixtures/tflite/{}.output.bin",
        model.trim_end_matches(".tflite")
    ));
    let path = if fixture.is_file() {
        fixture
    } else {
        root().join(format!("../shared/bench/tinyml/{model}.output.bin"))
    };
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// ONNX Runtime's output for the model the firmware ran on its reference input.
fn reference_output(model: &str) -> Vec<f32> {
    let path = if model == "default.onnx" {
        root().join("memplan-runner/models/default.output.bin")
    } else {
        let stem = model.trim_end_matches(".onnx");
        root().join(format!("../shared/bench/tinyml/{stem}.output.bin"))
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The firmware's builds share one target directory and ELF path: one test at a time.
static FIRMWARE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The firmware's default network: the MLPerf Tiny keyword spotter (with `../shared`), else the
/// runner's small CNN; the instruction count of one inference too.
#[test]
fn the_firmware_runs_on_qemu_and_matches_onnx_runtime() {
    let _one = FIRMWARE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    firmware("", true);
}

/// The runner's small CNN (residual, depthwise, Gemm, Softmax) on the Cortex-M4F too.
#[test]
fn the_small_cnn_runs_on_qemu_and_matches_onnx_runtime() {
    let _one = FIRMWARE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let model = root().join("memplan-runner/models/default.onnx");
    firmware(model.to_str().expect("a UTF-8 path"), false);
}

/// The MLPerf Tiny int8 keyword spotter (`kws_ref_model.tflite`) from flash: its output equals
/// LiteRT's reference kernels' byte for byte; its arena (16,256 bytes, the lower bound) is a
/// quarter of the float network's. Skipped with a message without `../shared`.
#[test]
fn the_int8_keyword_spotter_runs_on_qemu_and_equals_litert() {
    let _one = FIRMWARE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let model = root().join("../shared/bench/tinyml/kws_ref_model.tflite");
    if !model.is_file() {
        common::skip(&format!("{} is absent", model.display()));
        return;
    }
    firmware(model.to_str().expect("a UTF-8 path"), true);
}

/// MLPerf Tiny's visual wake words network (the `vww_like` fixture: MobileNetV1 0.25 at 96x96,
/// int8) under a RAM budget of half its whole-tensor arena (55,328 bytes): the firmware's arena
/// is within it and in `.bss`, and the output equals LiteRT's byte for byte.
#[test]
fn the_visual_wake_words_network_runs_on_qemu_in_half_its_whole_tensor_arena() {
    let _one = FIRMWARE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let model = root().join("memplan-runner/tests/fixtures/tflite/vww_like.tflite");
    let budget = 55_328 / 2;
    if let Some(report) =
        firmware_with_budget(model.to_str().expect("a UTF-8 path"), false, Some(budget))
    {
        assert!(
            report.arena <= budget,
            "the arena ({} bytes) is over the budget ({budget})",
            report.arena
        );
    }
}

/// Builds the firmware for `model` (`MEMPLAN_FIRMWARE_MODEL`; empty for its default), runs it on
/// QEMU and checks it; with `count`, also counts its instructions.
fn firmware(model: &str, count: bool) {
    firmware_with_budget(model, count, None);
}

/// [`firmware`] with a RAM budget (`MEMPLAN_FIRMWARE_RAM_BUDGET`); the run's report, or `None`
/// when skipped.
fn firmware_with_budget(model: &str, count: bool, budget: Option<u64>) -> Option<Report> {
    if !common::target_installed(TARGET) {
        common::skip(&format!(
            "the `{TARGET}` standard library is not installed (rustup target add {TARGET})"
        ));
        return None;
    }
    if !qemu_installed() {
        common::skip(&format!(
            "`{QEMU}` is not installed (apt-get install qemu-system-arm)"
        ));
        return None;
    }
    let crate_dir = root().join("examples/cortex-m");
    cargo_build_with_budget(&crate_dir, &[], model, budget);
    let elf = target_dir()
        .join(TARGET)
        .join("release/memplan-cortex-m-example");

    let report = parse(&qemu(&elf, &[]));
    if report.model.ends_with(".tflite") {
        // An int8 TFLite network: its bytes against LiteRT's reference kernels'.
        let want = litert_output(&report.model);
        let differ = report
            .output
            .iter()
            .zip(&want)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(
            report.output, want,
            "{}: {differ} elements differ from LiteRT on the Cortex-M4",
            report.model
        );
        println!(
            "{} on the Cortex-M4F: equals LiteRT byte for byte (0 of {} elements differ) | arena \
             {} bytes (lower bound {}) | weights {} bytes",
            report.model,
            want.len(),
            report.arena,
            report.lower_bound,
            report.weights
        );
    } else {
        check_float(&report);
    }
    finish(&crate_dir, &elf, &report, count);
    Some(report)
}

/// A float network's output against ONNX Runtime's.
fn check_float(report: &Report) {
    let output: Vec<f32> = report
        .output
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let want = reference_output(&report.model);
    assert_eq!(output.len(), want.len(), "{}: output length", report.model);
    let mut worst = 0.0f32;
    for (i, (&x, &r)) in output.iter().zip(&want).enumerate() {
        let diff = (x - r).abs();
        worst = worst.max(diff);
        assert!(
            diff <= 1e-4 + 1e-3 * r.abs(),
            "{}: element {i} is {x} on the Cortex-M4, ONNX Runtime gives {r}",
            report.model
        );
    }
    println!(
        "{} on the Cortex-M4F: matches ONNX Runtime, max abs diff {worst:.3e} | arena {} bytes \
         (lower bound {}) | weights {} bytes",
        report.model, report.arena, report.lower_bound, report.weights
    );
}

/// The checks every network shares: a non-zero output, the stack, the ELF's sections and no
/// allocator; with `count`, the instruction count.
fn finish(crate_dir: &Path, elf: &Path, report: &Report, count: bool) {
    assert!(
        report.output.iter().any(|&b| b != 0),
        "an all-zero output proves nothing"
    );

    // The stack.
    println!(
        "stack: {} bytes at peak, {} up to the end of the computation",
        report.stack_peak, report.stack_compute
    );
    assert!(report.stack_compute > 0 && report.stack_compute <= report.stack_peak);
    assert!(
        report.stack_peak < STACK_BOUND,
        "stack peak {} bytes",
        report.stack_peak
    );

    // The ELF: section sizes, no allocator.
    let bytes = std::fs::read(elf).unwrap();
    let file = object::File::parse(&*bytes).expect("an ELF file");
    assert_eq!(file.architecture(), object::Architecture::Arm);
    let size = |name| file.section_by_name(name).map_or(0, |s| s.size());
    let (vectors, text, rodata, data, bss, uninit) = (
        size(".vector_table"),
        size(".text"),
        size(".rodata"),
        size(".data"),
        size(".bss"),
        size(".uninit"),
    );
    println!(
        "sections: .vector_table {vectors}, .text {text}, .rodata {rodata}, .data {data}, \
         .bss {bss}, .uninit {uninit} bytes"
    );
    println!(
        "flash: {} bytes (.vector_table + .text + .rodata + .data)",
        vectors + text + rodata + data
    );
    println!(
        "RAM: {} bytes (.data + .bss + .uninit + stack peak)",
        data + bss + uninit + report.stack_peak as u64
    );
    assert!(
        text > 0 && rodata >= report.weights,
        "the weights ({} bytes) belong in .rodata ({rodata} bytes)",
        report.weights
    );
    println!(
        "RAM against the arena: {} bytes beyond the {}-byte arena; flash against the weights: \
         {} bytes of code and tables beyond the {}-byte weights",
        data + bss + uninit + report.stack_peak as u64 - report.arena,
        report.arena,
        vectors + text + rodata + data - report.weights,
        report.weights
    );
    assert!(
        data <= DATA_BOUND,
        ".data is {data} bytes: something big is copied from flash to RAM"
    );
    assert!(
        bss >= report.arena,
        "the arena ({} bytes) belongs in .bss ({bss} bytes)",
        report.arena
    );
    let names: Vec<&str> = file.symbols().filter_map(|s| s.name().ok()).collect();
    assert!(
        names.contains(&"main") || names.contains(&"Reset"),
        "no symbol table?"
    );
    for allocator in ["__rust_alloc", "__rdl_alloc", "__rg_alloc"] {
        let found: Vec<_> = names.iter().filter(|n| n.contains(allocator)).collect();
        assert!(
            found.is_empty(),
            "allocator symbols in the firmware: {found:?}"
        );
    }

    if count {
        instruction_count(crate_dir, elf, report);
    }
}

/// Counts the instructions of the whole run with the `qemu-insn-count` plugin under `-icount`,
/// twice: same count, same SysTick ticks, same output. The plugin speaks QEMU 7.2's plugin API; a
/// QEMU that rejects it gets a message instead of a count.
fn instruction_count(crate_dir: &Path, elf: &Path, plain: &Report) {
    let plugin_dir = crate_dir.join("qemu-insn-count");
    cargo_build(&plugin_dir, &["--target", "host-tuple"], "");
    let plugin = target_dir()
        .join(host_tuple())
        .join("release")
        .join(format!(
            "{}memplan_qemu_insn_count{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ));
    let plugin = plugin.to_str().expect("a UTF-8 path");
    let icount = format!("shift={ICOUNT_SHIFT}");
    let args = ["-icount", &icount, "-plugin", plugin, "-d", "plugin"];

    let mut runs = Vec::new();
    for _ in 0..2 {
        let output = qemu(elf, &args);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if !output.status.success() && stderr.contains("plugin") {
            println!("instruction count unavailable, this QEMU rejects the plugin:\n{stderr}");
            return;
        }
        let insns: u64 = field(&stderr, "insns").parse().expect("a count");
        runs.push((parse(&output), insns));
    }
    assert_eq!(runs[0], runs[1], "two -icount runs differ");
    let (report, insns) = &runs[0];
    assert_eq!(report.output, plain.output);
    let compute = report.systick_ticks * SYSTICK_NS / (1 << ICOUNT_SHIFT);
    println!(
        "instructions (-icount shift={ICOUNT_SHIFT}): {insns} for the whole run (painting and \
         scanning the 4 MiB stack region included); the computation {} SysTick ticks, \
         about {compute}",
        report.systick_ticks
    );
    assert!(*insns > 0 && compute > 0 && compute < *insns);
}
