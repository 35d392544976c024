//! `Network::generate` end to end, without compiling the result (the workspace's
//! `tests/test_network_crate.rs` and the runner compile and run it): the files it writes, that
//! they are the same byte for byte on every run, that the model file it writes plans to the very
//! arena the module has (what `memplan plan` shows is what `run` uses), and that every problem
//! with the model is an error naming it.

use std::path::{Path, PathBuf};

use memplan_build::Network;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn default_model() -> PathBuf {
    workspace().join("memplan-runner/models/default.onnx")
}

fn fixture(name: &str) -> PathBuf {
    workspace().join("memplan-runner/tests/fixtures").join(name)
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `text` without whitespace, to look for code whatever its layout.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect()
}

fn generate(network: Network, dir: &Path) -> memplan_build::Generated {
    network
        .out_dir(dir)
        .emit_rerun_if_changed(false)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_files_are_written_and_the_same_on_every_run() {
    let (a, b) = (out_dir("same-a"), out_dir("same-b"));
    let first = generate(Network::from_onnx(default_model()).name("cnn"), &a);
    generate(Network::from_onnx(default_model()).name("cnn"), &b);
    for file in ["cnn.weights.bin", "cnn.toml"] {
        assert_eq!(
            std::fs::read(a.join(file)).unwrap(),
            std::fs::read(b.join(file)).unwrap(),
            "{file}"
        );
    }
    // The Rust files differ only in where the weights are included from (the output directory).
    let rust = |dir: &Path| {
        std::fs::read_to_string(dir.join("cnn.rs"))
            .unwrap()
            .replace(&dir.display().to_string(), "OUT")
    };
    assert_eq!(rust(&a), rust(&b));
    assert_eq!(first.name, "cnn");
    assert_eq!(first.rust, a.join("cnn.rs"));
    assert_eq!(first.inputs.len(), 1);
    assert_eq!(first.inputs[0].name, "input");
    assert_eq!(first.outputs[0].name, "probs");
    assert_eq!(first.outputs[0].elements, 10);
    assert!(first.arena_size >= first.lower_bound && first.lower_bound > 0);
    assert_eq!(
        first.weight_bytes,
        std::fs::metadata(a.join("cnn.weights.bin")).unwrap().len()
    );
    let source = squeeze(&std::fs::read_to_string(&first.rust).unwrap());
    assert!(
        source.contains(&squeeze(
            "pub fn run(arena: &mut Arena, input: &[f32; len::input], probs: &mut [f32; len::probs])"
        )),
        "{source}"
    );
    assert!(
        source.contains("include_bytes!"),
        "the weights are included, not decoded"
    );
    assert!(
        !source.contains("Vec"),
        "the generated code allocates nothing"
    );
}

#[test]
fn the_model_file_written_plans_to_the_modules_arena() {
    let dir = out_dir("one-truth");
    let generated = generate(Network::from_onnx(default_model()).name("cnn"), &dir);
    let text = std::fs::read_to_string(&generated.model).unwrap();
    let model = memplan_core::parse_model("cnn.toml", &text).unwrap();
    let plan = memplan_core::model_plan::plan_model(&model).unwrap();
    assert_eq!(plan.total_arena_size(), generated.arena_size);
    let source = squeeze(&std::fs::read_to_string(&generated.rust).unwrap());
    assert!(
        source.contains(&squeeze(&format!(
            "pub const ARENA_SIZE: usize = {};",
            generated.arena_size
        ))),
        "{source}"
    );
    // Every tensor's offset in the module is the one the model file plans to.
    for (i, tensor) in model.tensors.iter().enumerate() {
        if tensor.memory.external {
            continue;
        }
        let line = squeeze(&format!(
            "pub const {}: usize = {};",
            tensor.name,
            plan.offset(i)
        ));
        assert!(source.contains(&line), "missing `{line}`");
    }
    // The graph's input and output are the caller's, so not in the arena.
    let external: Vec<&str> = model
        .tensors
        .iter()
        .filter(|t| t.memory.external)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(external, ["input", "probs"]);
}

#[test]
fn options_change_the_plan() {
    let dir = out_dir("options");
    // Unfused, the default model's Relus run in place; fused, they are part of the Convs.
    let inplace = generate(
        Network::from_onnx(default_model()).name("a").fuse(false),
        &dir,
    );
    let copies = generate(
        Network::from_onnx(default_model())
            .name("b")
            .inplace(false)
            .fuse(false),
        &dir,
    );
    assert!(inplace.arena_size < copies.arena_size);
    let in_arena = generate(
        Network::from_onnx(default_model())
            .name("c")
            .io_in_arena(true)
            .alignment(128),
        &dir,
    );
    let text = std::fs::read_to_string(&in_arena.model).unwrap();
    assert!(!text.contains("external = true"), "{text}");
    assert!(text.contains("alignment = 128"), "{text}");
    let pools = generate(
        Network::from_onnx(default_model())
            .name("d")
            .pool_in_section("sram", Some(64 * 1024), ".sram")
            .pool("psram", None),
        &dir,
    );
    let text = std::fs::read_to_string(&pools.rust).unwrap();
    assert!(
        squeeze(&text).contains(&squeeze("pub fn run(arena: &mut Arenas<'_>")),
        "{text}"
    );
    // The docs show the attribute to write; the code itself places nothing in a section.
    assert!(
        text.lines()
            .all(|l| !l.trim_start().starts_with("#[unsafe(link_section")
                && !l.trim_start().starts_with("#[link_section")),
        "the generated code places nothing in a section"
    );
    let no_docs = generate(
        Network::from_onnx(default_model())
            .name("e")
            .plan_docs(false),
        &dir,
    );
    let with = std::fs::read_to_string(&inplace.rust).unwrap();
    let without = std::fs::read_to_string(&no_docs.rust).unwrap();
    assert!(without.len() < with.len());
}

#[test]
fn problems_are_errors_that_name_them() {
    let dir = out_dir("errors");
    let error = |network: Network| {
        network
            .out_dir(&dir)
            .emit_rerun_if_changed(false)
            .generate()
            .expect_err("must fail")
            .to_string()
    };
    let unsupported = error(Network::from_onnx(fixture("unsupported_op.onnx")));
    assert!(
        unsupported.contains("node `/det/Det` (Det)"),
        "{unsupported}"
    );
    assert!(
        unsupported.contains("= help: the kernels implement:"),
        "{unsupported}"
    );
    let dynamic = error(Network::from_onnx(fixture("dynamic_shape.onnx")));
    assert!(dynamic.contains("dynamic dimension `batch`"), "{dynamic}");
    let missing = error(Network::from_onnx(fixture("missing_external_data.onnx")));
    assert!(missing.contains("weight `w`"), "{missing}");
    let absent = error(Network::from_onnx(dir.join("absent.onnx")));
    assert!(absent.contains("absent.onnx"), "{absent}");
    let over = error(Network::from_onnx(default_model()).budget(1000));
    assert!(over.contains("1000"), "{over}");
    let solver = error(Network::from_onnx(default_model()).solver("fastest"));
    assert!(solver.contains("solver `fastest`"), "{solver}");
    // `Debug` is the message too, for `fn main() -> Result<(), memplan_build::Error>`.
    let debug = format!(
        "{:?}",
        Network::from_onnx(fixture("unsupported_op.onnx"))
            .out_dir(&dir)
            .emit_rerun_if_changed(false)
            .generate()
            .unwrap_err()
    );
    assert!(debug.starts_with("cannot build the network in"), "{debug}");
    // Nothing was written for a failed network.
    assert!(!dir.join("unsupported_op.rs").exists());
}

#[test]
fn fusion_runs_fewer_nodes_on_fewer_tensors_with_packed_weights() {
    let dir = out_dir("fusion");
    let fused = generate(Network::from_onnx(default_model()).name("fused"), &dir);
    let plain = generate(
        Network::from_onnx(default_model())
            .name("plain")
            .fuse(false),
        &dir,
    );
    let text = |g: &memplan_build::Generated| std::fs::read_to_string(&g.rust).unwrap();
    let (f, p) = (text(&fused), text(&plain));
    let count = |s: &str, what: &str| s.matches(what).count();
    // Every Relu after a Conv or Gemm is gone into it, and their output tensors with it.
    assert!(
        count(&f, "op_type: \"Relu\"") < count(&p, "op_type: \"Relu\""),
        "{f}"
    );
    assert!(squeeze(&f).contains(&squeeze("(\"activation\", Attr::Str(\"Relu\"))")));
    assert!(squeeze(&f).contains(&squeeze("(\"packed\", Attr::Int(16))")));
    assert!(!squeeze(&p).contains(&squeeze("(\"packed\", Attr::Int(16))")));
    let tensors = |g: &memplan_build::Generated| {
        let model = std::fs::read_to_string(&g.model).unwrap();
        memplan_core::parse_model("m.toml", &model)
            .unwrap()
            .tensors
            .len()
    };
    assert!(tensors(&fused) < tensors(&plain));
    assert!(f.contains("pub const FUSED_NODES: usize = "));
    // The model file written is still the plan the code uses.
    let model = std::fs::read_to_string(&fused.model).unwrap();
    let parsed = memplan_core::parse_model("fused.toml", &model).unwrap();
    let plan = memplan_core::model_plan::plan_model(&parsed).unwrap();
    assert_eq!(plan.total_arena_size(), fused.arena_size);
}

/// GELU as PyTorch exports it (`Div`, `Erf`, `Add`, `Mul`, `Mul`, operands in either order)
/// after a MatMul becomes its fused activation `ErfGelu` with the file's constants; a block whose
/// input has a third reader stays five nodes (`tests/fixtures/make_erf_gelu.py`).
#[test]
fn gelu_as_exported_is_fused_into_the_matmul_before_it() {
    let dir = out_dir("erf-gelu");
    let model = fixture("erf_gelu.onnx");
    let fused = generate(Network::from_onnx(&model).name("fused"), &dir);
    let plain = generate(Network::from_onnx(&model).name("plain").fuse(false), &dir);
    let text = |g: &memplan_build::Generated| squeeze(&std::fs::read_to_string(&g.rust).unwrap());
    let (f, p) = (text(&fused), text(&plain));
    // Once in the table, once beside the call: the first block only.
    assert_eq!(f.matches("Attr::Str(\"ErfGelu\")").count(), 2, "{f}");
    assert!(!p.contains("ErfGelu"));
    let params = squeeze(&format!(
        "(\"activation_params\", Attr::Floats(&[f32::from_bits({:#010x}), f32::from_bits({:#010x}), f32::from_bits({:#010x})]))",
        std::f32::consts::SQRT_2.to_bits(),
        1.0f32.to_bits(),
        0.5f32.to_bits()
    ));
    assert!(f.contains(&params), "{f}");
    // The second block's input is read three times: its five nodes stay.
    let erfs = |s: &str| s.matches(&squeeze("op_type: \"Erf\"")).count();
    assert_eq!((erfs(&f), erfs(&p)), (1, 2));
}

/// SiLU as PyTorch exports it (`Sigmoid` then `Mul` by the input, operands in either order)
/// after a Conv becomes its fused activation `Silu`; a block whose input has a third reader
/// stays two nodes (`memplan-runner/tests/fixtures/make_silu.py`).
#[test]
fn silu_as_exported_is_fused_into_the_conv_before_it() {
    let dir = out_dir("silu");
    let model = fixture("silu.onnx");
    let fused = generate(Network::from_onnx(&model).name("fused"), &dir);
    let plain = generate(Network::from_onnx(&model).name("plain").fuse(false), &dir);
    let text = |g: &memplan_build::Generated| squeeze(&std::fs::read_to_string(&g.rust).unwrap());
    let (f, p) = (text(&fused), text(&plain));
    // Once in the table, once beside the call: the first two blocks.
    assert_eq!(f.matches("Attr::Str(\"Silu\")").count(), 4, "{f}");
    assert!(!p.contains("Silu"));
    // The third block's input is read three times: its two nodes stay.
    let sigmoids = |s: &str| s.matches(&squeeze("op_type: \"Sigmoid\"")).count();
    assert_eq!((sigmoids(&f), sigmoids(&p)), (1, 3));
}

/// An int8 TFLite network's `run` calls each node's kernel directly, chosen at build time: the
/// convolutions, pools and ADDs their `tflite::s8` kernel with a constant parameter struct, every
/// other node its own `tflite::op` function, and nothing goes through `memplan_kernels::run` or
/// reads the interpreter's `network::NODES` table.
#[test]
fn an_int8_network_calls_its_kernels_directly() {
    for (model, kernels) in [
        (
            "resnet8_like.tflite",
            &[
                "s8::conv(",
                "s8::elementwise(",
                "s8::pool(",
                "s8::fully_connected(",
            ][..],
        ),
        (
            "mobilenet_like.tflite",
            &["s8::conv(", "s8::depthwise("][..],
        ),
        (
            "mobilenet_like_f32.tflite",
            &[
                "float::conv(",
                "float::depthwise(",
                "float::fully_connected(",
            ][..],
        ),
    ] {
        let dir = out_dir(&format!("direct-{model}"));
        let generated = generate(
            Network::from_tflite(fixture(&format!("tflite/{model}"))).name("net"),
            &dir,
        );
        let source = std::fs::read_to_string(&generated.rust).unwrap();
        let run = &source[source.find("pub fn run(").expect("a run function")..];
        let run = &run[..run.find("pub fn run_dyn(").unwrap_or(run.len())];
        for kernel in kernels {
            assert!(run.contains(kernel), "{model}: no {kernel} in\n{run}");
        }
        assert!(
            !run.contains("__k::run("),
            "{model}: a node is interpreted:\n{run}"
        );
        assert!(
            !run.contains("NODES"),
            "{model}: run reads the tables:\n{run}"
        );
        // The parameters are literals: the shapes are in the code, not looked up.
        assert!(squeeze(run).contains("stride:["), "{model}");
    }
}

/// The generated module's `network::WRITTEN_IN_PLACE` list.
fn written_in_place(source: &str) -> String {
    let at = source
        .find("WRITTEN_IN_PLACE")
        .expect("the module lists the nodes written in place");
    let line = &source[at..];
    squeeze(&line[..line.find(';').unwrap_or(line.len())])
}

#[test]
fn a_ram_budget_below_the_whole_tensor_plan_is_met_by_writing_convolutions_in_place() {
    let dir = out_dir("ram-budget");
    let model = dir.join("separable.tflite");
    let file = memplan_tflite::fixture::separable_cnn_int8(12, 6, [4, 16, 8], 7);
    std::fs::write(&model, file.bytes()).unwrap();
    let build = |budget: Option<u64>| {
        let network = Network::from_tflite(&model)
            .name("net")
            .out_dir(&dir)
            .emit_rerun_if_changed(false);
        match budget {
            Some(bytes) => network.ram_budget(bytes),
            None => network,
        }
        .generate()
    };
    // Over whole tensors: two 12 x 6 x 16 activations at once (1,152 bytes each) and the first
    // convolution's columns; nothing is written in place.
    let whole = build(None).unwrap();
    assert_eq!(whole.arena_size, whole.lower_bound);
    assert!(whole.arena_size >= 2 * 1152, "{}", whole.arena_size);
    let source = std::fs::read_to_string(&whole.rust).unwrap();
    assert_eq!(written_in_place(&source), "WRITTEN_IN_PLACE:&[&str]=&[]");
    // A budget of the whole plan changes nothing.
    let same = build(Some(whole.arena_size)).unwrap();
    assert_eq!(same.arena_size, whole.arena_size);
    assert_eq!(std::fs::read_to_string(&same.rust).unwrap(), source);

    // Just below it: the pointwise convolution goes over its input (free), no depthwise ring.
    let below = build(Some(whole.arena_size - 1)).unwrap();
    assert!(below.arena_size < whole.arena_size);
    let source = std::fs::read_to_string(&below.rust).unwrap();
    assert!(
        written_in_place(&source).contains("CONV_2D_2"),
        "{}",
        written_in_place(&source)
    );
    assert!(squeeze(&source).contains("s8::conv_in_place("), "{source}");

    // Half of it: every convolution that can, the depthwise ones through their rings.
    let half = build(Some(whole.arena_size / 2 + 256)).unwrap();
    assert!(half.arena_size <= whole.arena_size / 2 + 256);
    let source = std::fs::read_to_string(&half.rust).unwrap();
    let listed = written_in_place(&source);
    for node in ["DEPTHWISE_CONV_2D_1", "CONV_2D_2"] {
        assert!(listed.contains(node), "{listed}");
    }
    assert!(squeeze(&source).contains("s8::depthwise_in_place("));
    // The op view of a node written in place is one view, the input's bytes (the output of
    // the stride-2 depthwise is a quarter of them).
    assert!(
        source.contains("written in place: on entry it holds input"),
        "{source}"
    );

    // Below what any schedule reaches: refused, with the least arena reachable.
    let error = build(Some(64)).unwrap_err().to_string();
    assert!(
        error.contains("the arena cannot fit the RAM budget of 64 bytes")
            && error.contains("the least arena this network can run in is")
            && error.contains("= help:"),
        "{error}"
    );
    let least: u64 = error
        .split("the least arena this network can run in is ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the least arena in bytes");
    assert_eq!(build(Some(least)).unwrap().arena_size, least);
    assert!(build(Some(least - 1)).is_err());
}

#[test]
fn a_budget_below_what_in_place_reaches_runs_a_chain_band_by_band() {
    let dir = out_dir("ram-budget-patches");
    let model = fixture("tflite/mobilenet_like.tflite");
    let build = |budget: u64| {
        Network::from_tflite(&model)
            .name("net")
            .out_dir(&dir)
            .emit_rerun_if_changed(false)
            .ram_budget(budget)
            .generate()
    };
    let whole = generate(Network::from_tflite(&model).name("net"), &dir);
    // The expanding pointwise convolution of the stem (24 x 24, 8 -> 16 channels) sets the
    // whole-tensor bound; writing in place cannot go below it.
    assert_eq!(whole.arena_size, 13_856);
    let error = build(5_000).unwrap_err().to_string();
    assert!(
        error.contains("convolutions can write their output over their input"),
        "{error}"
    );
    // Band by band, the stem's four layers need a few rows of each tensor between them.
    let least: u64 = error
        .split("the least arena this network can run in is ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the least arena in bytes");
    assert!(least <= whole.arena_size * 51 / 100, "{least}");
    assert!(build(least - 1).is_err());
    let streamed = build(least).unwrap();
    assert_eq!(streamed.arena_size, least);
    let source = std::fs::read_to_string(&streamed.rust).unwrap();
    let squeezed = squeeze(&source);
    assert!(
        squeezed.contains("BAND_BY_BAND:&[(&str,usize)]=&[(\"CONV_2D_0..DEPTHWISE_CONV_2D_3\","),
        "{source}"
    );
    assert!(squeezed.contains("static__STEPS"));
    assert!(squeezed.contains("memplan.PATCHES"));
    // The tables keep every node of the file, for the interpreters.
    assert_eq!(squeezed.matches("Node{name:").count(), 12, "{source}");
}

#[test]
fn the_visual_wake_words_network_fits_half_its_whole_tensor_bound() {
    let model = fixture("tflite/vww_like.tflite");
    let dir = out_dir("ram-budget-vww");
    let whole = generate(Network::from_tflite(&model).name("net"), &dir);
    assert_eq!(whole.arena_size, whole.lower_bound);
    let half = whole.lower_bound / 2;
    let fitted = Network::from_tflite(&model)
        .name("net")
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .ram_budget(half)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(fitted.arena_size <= half, "{} > {half}", fitted.arena_size);
    let source = squeeze(&std::fs::read_to_string(&fitted.rust).unwrap());
    assert!(
        source.contains("BAND_BY_BAND:&[(&str,usize)]=&[(\"CONV_2D_0.."),
        "{source}"
    );
    println!(
        "vww_like: whole tensors {} bytes, under a budget of {half}: {}",
        whole.arena_size, fitted.arena_size
    );
}

#[test]
fn an_onnx_network_calls_its_operators_functions() {
    let dir = out_dir("onnx-direct");
    let generated = generate(Network::from_onnx(default_model()).name("cnn"), &dir);
    let source = std::fs::read_to_string(&generated.rust).unwrap();
    let run = &source[source.find("pub fn run(").expect("a run function")..];
    let run = squeeze(&run[..run.find("pub fn run_dyn(").unwrap_or(run.len())]);
    assert!(run.contains("__k::op::conv("), "{run}");
    assert!(
        !run.contains("__k::run("),
        "a node goes through the interpreter:\n{run}"
    );
}

/// The generated files are written through `memplan_output`: a link planted where a
/// predictable temporary (`net.rs.tmp`) would go is never followed, so the file it points to
/// keeps its bytes, and the network's files are whole regular files.
#[cfg(unix)]
#[test]
fn a_link_planted_beside_the_output_is_not_followed() {
    let dir = out_dir("planted-link");
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, b"keep me").unwrap();
    for file in ["cnn.rs", "cnn.toml", "cnn.weights.bin"] {
        std::os::unix::fs::symlink(&victim, dir.join(format!("{file}.tmp"))).unwrap();
    }
    let generated = generate(Network::from_onnx(default_model()).name("cnn"), &dir);
    assert!(
        std::fs::read(&victim).unwrap() == b"keep me",
        "the file behind the planted link was written over"
    );
    for path in [&generated.rust, &generated.weights] {
        let meta = std::fs::symlink_metadata(path).unwrap();
        assert!(meta.is_file() && meta.len() > 0, "{}", path.display());
    }
}
