//! Op views compile to straight-line code: in a release build of a client crate, the function
//! that gets the views of an op with 1, 8 or 30 tensors has no panic call and no conditional
//! branch (the cuts are constant-size array splits, the casts' checks fold at compile time).
//!
//! The assembly (`--emit asm`) of one `#[inline(never)]` function per op is inspected. Only on
//! x86_64, where the instruction names are known. (Before the constant-size cuts, the 30-view op
//! compiled to 402 instructions with 43 conditional jumps and 2 panic calls.)

mod common;

/// A model whose ops have 1, 8 and 30 views, of mixed element types, and an in-place pair.
fn model() -> String {
    let mut text = String::from(
        "[model]\nname = \"probe\"\ninputs = [\"x\"]\noutputs = [\"out\"]\n\n[tensors]\n\
         x = { dtype = \"f32\", shape = [1, 16] }\n",
    );
    let dtypes = ["f32", "u8", "i64", "f16", "bool", "f64"];
    for i in 0..29 {
        text += &format!(
            "t{i} = {{ dtype = \"{}\", shape = [{}] }}\n",
            dtypes[i % dtypes.len()],
            3 + i
        );
    }
    text += "s = { dtype = \"f32\", shape = [8] }\nout = { dtype = \"f32\", shape = [8] }\n";
    let outputs: Vec<String> = (0..29).map(|i| format!("\"t{i}\"")).collect();
    let inputs: Vec<String> = (0..7).map(|i| format!("\"t{i}\"")).collect();
    let rest: Vec<String> = (7..29).map(|i| format!("\"t{i}\"")).collect();
    text += &format!(
        "\n[[ops]]\nname = \"thirty\"\ninputs = [\"x\"]\noutputs = [{}]\n\n\
         [[ops]]\nname = \"eight\"\ninputs = [{}]\noutputs = [\"s\"]\n\n\
         [[ops]]\nname = \"drain\"\ninputs = [{}, \"s\"]\noutputs = [\"out\"]\n\n\
         [[ops]]\nname = \"one\"\nkind = \"Relu\"\ninputs = [\"out\"]\noutputs = [\"final_\"]\n",
        outputs.join(", "),
        inputs.join(", "),
        rest.join(", ")
    );
    text.replace(
        "out = { dtype = \"f32\", shape = [8] }\n",
        "out = { dtype = \"f32\", shape = [8] }\nfinal_ = { dtype = \"f32\", shape = [8] }\n",
    )
    .replace(
        "outputs = [\"out\"]\n\n[tensors]",
        "outputs = [\"final_\"]\n\n[tensors]",
    )
}

const LIB: &str = r#"#![no_std]
memplan::memplan!("../model.toml");

#[inline(never)]
#[unsafe(no_mangle)]
pub fn views_of_one(arena: &mut probe::Arena) -> probe::op::one<'_> {
    arena.op_one()
}

#[inline(never)]
#[unsafe(no_mangle)]
pub fn views_of_eight(arena: &mut probe::Arena) -> probe::op::eight<'_> {
    arena.op_eight()
}

#[inline(never)]
#[unsafe(no_mangle)]
pub fn views_of_thirty(arena: &mut probe::Arena) -> probe::op::thirty<'_> {
    arena.op_thirty()
}

#[inline(never)]
#[unsafe(no_mangle)]
pub fn views_by_index(
    arena: &mut probe::Arena,
    k: usize,
) -> Option<memplan::Views<'_, { probe::MAX_VIEWS }>> {
    arena.views(k)
}
"#;

/// The instructions of function `name` in an assembly listing.
fn function<'a>(asm: &'a str, name: &str) -> Vec<&'a str> {
    let start = asm
        .lines()
        .position(|l| l.trim_end() == format!("{name}:"))
        .unwrap_or_else(|| panic!("`{name}` not in the assembly"));
    asm.lines()
        .skip(start + 1)
        .take_while(|l| !l.starts_with(".Lfunc_end") && !l.trim_start().starts_with(".size"))
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with('.') && !l.starts_with('#') && !l.ends_with(':')
        })
        .collect()
}

#[test]
fn op_views_have_no_panic_path_and_no_branch() {
    if !cfg!(target_arch = "x86_64") {
        println!("skipped: the assembly check knows x86_64 only");
        return;
    }
    let dir = common::scratch_crate("memplan-asm-probe", LIB, &model());
    let output = common::cargo(
        &dir,
        &[
            "rustc",
            "--release",
            "--lib",
            "--quiet",
            "--",
            "--emit",
            "asm",
            "-C",
            "codegen-units=1",
        ],
    );
    assert!(
        output.status.success(),
        "the probe crate does not build:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let deps = dir.join("target/release/deps");
    let asm_file = std::fs::read_dir(&deps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .expect("an .s file");
    let asm = std::fs::read_to_string(asm_file).unwrap();
    for (name, views) in [
        ("views_of_one", 1),
        ("views_of_eight", 8),
        ("views_of_thirty", 30),
    ] {
        let body = function(&asm, name);
        let jumps: Vec<&&str> = body
            .iter()
            .filter(|l| l.starts_with('j') && !l.starts_with("jmp"))
            .collect();
        // Calls, and tail calls (a `jmp` to another function rather than a local label).
        let calls: Vec<&&str> = body
            .iter()
            .filter(|l| l.starts_with("call") || (l.starts_with("jmp") && !l.contains(".L")))
            .collect();
        let panics = body.iter().filter(|l| l.contains("panic")).count();
        println!(
            "{name}: {views} views, {} instructions, {} conditional jumps, {} calls",
            body.len(),
            jumps.len(),
            calls.len()
        );
        assert!(
            jumps.is_empty(),
            "{name} branches: {jumps:?}\n{}",
            body.join("\n")
        );
        assert!(
            calls.is_empty(),
            "{name} calls: {calls:?}\n{}",
            body.join("\n")
        );
        assert_eq!(panics, 0, "{name} can panic:\n{}", body.join("\n"));
        // Two words (pointer, length) per view, stored into the returned struct.
        assert!(body.len() >= 2 * views, "{name}: {}", body.join("\n"));
    }
    // `views(k)` walks the op's cut table: a short loop with checked splits, never a panic.
    let body = function(&asm, "views_by_index");
    let panics = body
        .iter()
        .filter(|l| l.contains("panic") || l.contains("unwrap_failed"))
        .count();
    println!(
        "views_by_index: {} instructions (a loop over the op's cuts)",
        body.len()
    );
    assert_eq!(panics, 0, "views(k) can panic:\n{}", body.join("\n"));
}
