//! `memplan check` refuses plans the generated code cannot use (issue 19, item 7): a tensor moved
//! out of the pool its `pool =` binds it to (the generated accessor is in that pool's module), and
//! a `chain` column that groups the tensors otherwise than the model's in-place chains.

mod common;

use std::path::{Path, PathBuf};

use common::{memplan, text};

/// Two pools; `slow` is bound to `dram`; `relu1` and `relu2` write in place (two chains:
/// `h1`/`r1` and `h2`/`r2`).
const MODEL: &str = r#"[model]
name = "net"
inputs = ["x"]
outputs = ["y"]

[[pools]]
name = "sram"
size = "64 KiB"

[[pools]]
name = "dram"

[tensors]
x = { dtype = "f32", shape = [16] }
slow = { dtype = "f32", shape = [16], pool = "dram" }
h1 = { dtype = "f32", shape = [64] }
r1 = { dtype = "f32", shape = [64] }
h2 = { dtype = "f32", shape = [32] }
r2 = { dtype = "f32", shape = [32] }
y = { dtype = "f32", shape = [16] }

[[ops]]
name = "load"
inputs = ["x"]
outputs = ["slow"]

[[ops]]
name = "fc1"
inputs = ["slow"]
outputs = ["h1"]

[[ops]]
name = "relu1"
kind = "Relu"
inputs = ["h1"]
outputs = ["r1"]

[[ops]]
name = "fc2"
inputs = ["r1"]
outputs = ["h2"]

[[ops]]
name = "relu2"
kind = "Relu"
inputs = ["h2"]
outputs = ["r2"]

[[ops]]
name = "fc3"
inputs = ["r2"]
outputs = ["y"]
"#;

fn setup(name: &str) -> (PathBuf, String, String) {
    let dir = common::scratch("check_bindings", name);
    let model = dir.join("model.toml");
    std::fs::write(&model, MODEL).unwrap();
    let plan = dir.join("compiled.csv");
    let out = memplan(&[
        "plan",
        model.to_str().unwrap(),
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = std::fs::read_to_string(&plan).unwrap();
    (dir, model.display().to_string(), rows)
}

/// An edit of one row's fields.
type Edit<'a> = &'a dyn Fn(&mut Vec<String>);

/// The compiled plan with the row of each `id` edited (its fields), written to `name`.
fn edited(dir: &Path, rows: &str, name: &str, edits: &[(&str, Edit<'_>)]) -> String {
    let mut out = String::new();
    for line in rows.lines() {
        let mut fields: Vec<String> = line.split(',').map(str::to_owned).collect();
        for (id, edit) in edits {
            if fields[0] == *id {
                edit(&mut fields);
            }
        }
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    path.display().to_string()
}

/// Column indices of `plan --out`'s header `id,lower,upper,size,alignment,offset,pool,chain`.
const OFFSET: usize = 5;
const POOL: usize = 6;
const CHAIN: usize = 7;

fn set(column: usize, value: &'static str) -> impl Fn(&mut Vec<String>) {
    move |fields: &mut Vec<String>| fields[column] = value.to_owned()
}

#[test]
fn the_compiled_plan_is_accepted_and_has_the_bindings_and_chains() {
    let (dir, model, rows) = setup("accepted");
    assert!(rows.contains("\nslow,"), "{rows}");
    let slow = rows.lines().find(|l| l.starts_with("slow,")).unwrap();
    assert_eq!(slow.split(',').nth(POOL), Some("dram"), "{rows}");
    let chain = |id: &str| {
        let row = rows
            .lines()
            .find(|l| l.starts_with(&format!("{id},")))
            .unwrap();
        row.split(',').nth(CHAIN).unwrap().to_owned()
    };
    assert_eq!(chain("h1"), chain("r1"));
    assert_eq!(chain("h2"), chain("r2"));
    assert_ne!(chain("h1"), chain("h2"));
    assert_eq!(chain("x"), "");
    let plan = edited(&dir, &rows, "same.csv", &[]);
    let out = memplan(&["check", &model, &plan]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // The numbers are labels: swapped, the chains are the same.
    let (a, b) = (chain("h1"), chain("h2"));
    let swapped = rows
        .lines()
        .map(|l| {
            let mut f: Vec<String> = l.split(',').map(str::to_owned).collect();
            if f.len() > CHAIN && f[0] != "id" {
                if f[CHAIN] == a {
                    f[CHAIN] = b.clone();
                } else if f[CHAIN] == b {
                    f[CHAIN] = a.clone();
                }
            }
            f.join(",") + "\n"
        })
        .collect::<String>();
    std::fs::write(dir.join("swapped.csv"), swapped).unwrap();
    let out = memplan(&["check", &model, dir.join("swapped.csv").to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn a_tensor_moved_out_of_its_pool_binding_is_a_violation() {
    let (dir, model, rows) = setup("moved");
    // `slow` in `sram`, at an offset where it overlaps nothing and the pool keeps its size: the
    // bytes are fine, but `net::dram::Arena` has the accessor, not `net::sram::Arena`.
    let plan = edited(
        &dir,
        &rows,
        "moved.csv",
        &[("slow", &|f: &mut Vec<String>| {
            f[POOL] = "sram".to_owned();
            f[OFFSET] = "60000".to_owned();
        })],
    );
    let out = memplan(&["check", &model, &plan]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "violation: tensor `slow` is bound to pool `dram` (`pool =` in the model) but placed in pool `sram`"
        ),
        "{stdout}"
    );
    assert_eq!(stdout.matches("violation:").count(), 1, "{stdout}");
}

#[test]
fn a_chain_column_that_lies_is_refused_where_it_lies() {
    let (dir, model, rows) = setup("chains");
    let chain_of = |id: &str| {
        let row = rows
            .lines()
            .find(|l| l.starts_with(&format!("{id},")))
            .unwrap();
        row.split(',').nth(CHAIN).unwrap().to_owned()
    };
    let line_of = |id: &str| {
        1 + rows
            .lines()
            .position(|l| l.starts_with(&format!("{id},")))
            .unwrap()
    };
    let first: &'static str = Box::leak(chain_of("h1").into_boxed_str());
    let refused = |name: &str, id: &str, edit: &dyn Fn(&mut Vec<String>), wanted: &str| {
        let plan = edited(&dir, &rows, name, &[(id, edit)]);
        let out = memplan(&["check", &model, &plan]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out.stdout));
        let stderr = text(&out.stderr);
        // Located at the row's `chain` cell (the last column).
        let row = rows.lines().nth(line_of(id) - 1).unwrap();
        let column = row.len() - row.split(',').nth(CHAIN).unwrap().len() + 1;
        assert!(
            stderr.contains(&format!("{name}:{}:{column}", line_of(id))),
            "{name}: {stderr}"
        );
        assert!(stderr.contains(wanted), "{name}: {stderr}");
        assert!(stderr.contains("help:"), "{name}: {stderr}");
    };
    // A tensor in no chain said to be in one.
    refused(
        "stranger.csv",
        "x",
        &set(CHAIN, first),
        &format!("`chain` of `x` is {first}, but the model writes no tensor in place over `x`"),
    );
    // A chain's member said to be in none.
    refused(
        "dropped.csv",
        "r1",
        &set(CHAIN, ""),
        "`chain` of `r1` is empty, but the model makes it share its bytes in place: it is in the chain `h1`, `r1`",
    );
    // One chain with two numbers.
    refused(
        "split.csv",
        "r1",
        &set(CHAIN, "7"),
        "`chain` of `r1` is 7, but `h1`",
    );
    // Two chains with one number.
    refused(
        "merged.csv",
        "h2",
        &set(CHAIN, first),
        "in different chains",
    );
}
