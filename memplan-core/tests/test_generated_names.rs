//! Generated names never collide (issue 19, item 5): a model whose names would make the
//! generated code declare a name twice, or hide the prelude, is a located error of
//! `parse_model` (so `memplan plan` refuses it too), never an unlocated rustc error.
#![cfg(feature = "model-file")]

use memplan_core::parse_model;

/// A two-op model; `pools` and `extra` are spliced in.
fn model(name: &str, pools: &str, x: &str, y: &str, op: &str) -> String {
    format!(
        "[model]\nname = \"{name}\"\ninputs = [\"{x}\"]\noutputs = [\"{y}\"]\n{pools}\n[tensors]\n\
         {x} = {{ dtype = \"f32\", shape = [4] }}\nmid = {{ dtype = \"f32\", shape = [4] }}\n\
         {y} = {{ dtype = \"f32\", shape = [4] }}\n\n\
         [[ops]]\nname = \"{op}\"\ninputs = [\"{x}\"]\noutputs = [\"mid\"]\n\n\
         [[ops]]\nname = \"last\"\ninputs = [\"mid\"]\noutputs = [\"{y}\"]\n"
    )
}

fn error(text: &str) -> String {
    let e = parse_model("model.toml", text).expect_err("the names collide");
    assert!(!e.help.is_empty(), "{e}");
    format!("{}:{} {}", e.line, e.column, e.message)
}

#[test]
fn colliding_names_are_located_errors() {
    let two = |a: &str, b: &str| {
        format!("\n[[pools]]\nname = \"{a}\"\nsize = \"1 KiB\"\n\n[[pools]]\nname = \"{b}\"\n")
    };
    let cases = [
        // A tensor accessor beside the arena's own `views` and `new`.
        (
            model("net", "", "views", "y", "first"),
            "7:1 tensor `views` (its accessor method) generates `views`, which is already the views-by-index method",
        ),
        (
            model("net", "", "x", "new", "first"),
            "9:1 tensor name `new` clashes with `Arena::new`",
        ),
        // An op view beside a tensor accessor of the same name.
        (
            model("net", "", "op_relu", "y", "relu"),
            "12:8 op `relu` has view method `op_relu`, which is also a tensor's accessor",
        ),
        // Pools: the `Arenas` struct, an alias against a module, a primitive type.
        (
            model("net", &two("Arenas", "dram"), "x", "y", "first"),
            "6:1 pool `Arenas` (its module) generates `Arenas`, which is already the struct holding every pool's arena",
        ),
        (
            model("net", &two("sram", "SramArena"), "x", "y", "first"),
            "10:1 pool `SramArena` (its module) generates `SramArena` in the model's module `net`, as pool `sram` (its arena type alias `SramArena`) does (model.toml:6:1)",
        ),
        (
            model("net", &two("fast_mem", "fastMem"), "x", "y", "first"),
            "11:8 pool names `fast_mem` and `fastMem` give the same arena type name",
        ),
        (
            model("net", &two("usize", "dram"), "x", "y", "first"),
            "6:1 pool `usize` (its module) generates `usize`, which is already a primitive type",
        ),
        (
            model("net", &two("Option", "dram"), "x", "y", "first"),
            "6:1 pool `Option` (its module) generates `Option`, which is already a name of Rust's prelude",
        ),
        // The model's module beside the prelude of the code that calls `memplan!`.
        (
            model("Vec", "", "x", "y", "first"),
            "2:8 the model's name `Vec` (its module) generates `Vec`, which is already a name of Rust's prelude",
        ),
        (
            model("u8", "", "x", "y", "first"),
            "2:8 the model's name `u8` (its module) generates `u8`, which is already a primitive type",
        ),
    ];
    for (text, expected) in cases {
        let got = error(&text);
        assert!(
            got.starts_with(expected),
            "expected `{expected}`,\n     got `{got}`\n{text}"
        );
    }
    // An app-owned tensor is a parameter of its op's view beside the arena-cutting locals.
    let text = model("net", "", "x", "y", "first")
        .replace(
            "x = { dtype = \"f32\", shape = [4] }",
            "rest = { dtype = \"f32\", shape = [4], external = true }",
        )
        .replace("\"x\"", "\"rest\"");
    let got = error(&text);
    assert!(
        got.starts_with("7:1 app-owned tensor `rest` is a parameter of op `first`'s view method"),
        "{got}"
    );
}

#[test]
fn names_that_only_look_alike_are_accepted() {
    // Different scopes or namespaces: no collision.
    for text in [
        model("net", "", "vec", "result", "views"),
        model("net", "", "op", "len", "new"),
        model(
            "arenas",
            "\n[[pools]]\nname = \"arena\"\n\n[[pools]]\nname = \"take\"\n",
            "x",
            "y",
            "first",
        ),
        model("net", "", "x", "op_last_2", "first"),
    ] {
        parse_model("model.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
}
