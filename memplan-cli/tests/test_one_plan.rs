//! One plan: for every model — the repository's examples, memplan-core's golden models and every
//! ONNX graph of the shared bench imported with `memplan import` — the CLI shows, writes and
//! checks exactly what `memplan!` compiles. The compiled values are read from the code that
//! `memplan_core::expand_model` (the function the macro calls) generates: each pool's
//! `ARENA_SIZE` and every `TENSORS` placement.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{memplan, text};

/// What the generated code says: `ARENA_SIZE` per pool module (in order), and every placement
/// as (pool module, offset, start, end) by tensor name.
struct Generated {
    arena_sizes: Vec<u64>,
    placements: BTreeMap<String, (String, u64, u64, u64)>,
}

/// The integer at the start of `text` (a literal such as `4096` or `4096usize`).
fn leading_number(text: &str) -> u64 {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number at {:?}", &text[..text.len().min(40)]))
}

/// The name of the last `pub mod NAME` in `text`.
fn last_module(text: &str) -> String {
    let at = text.rfind("pub mod ").expect("a module") + "pub mod ".len();
    text[at..]
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap()
        .to_owned()
}

fn expand(path: &Path) -> Result<Generated, String> {
    let source = std::fs::read_to_string(path).unwrap();
    let tokens = memplan_core::expand_model(&path.display().to_string(), &source)
        .map_err(|e| e.to_string())?
        .to_string();
    let arena_sizes = tokens
        .split("const ARENA_SIZE : usize =")
        .skip(1)
        .map(leading_number)
        .collect();
    let mut placements = BTreeMap::new();
    let tables: Vec<&str> = tokens.split("const TENSORS").collect();
    for k in 1..tables.len() {
        let pool = last_module(tables[k - 1]);
        let table = &tables[k][..tables[k].find("] ;").unwrap()];
        for entry in table.split("placement (").skip(1) {
            let name_end = entry[1..].find('"').unwrap() + 1;
            let name = entry[1..name_end].to_owned();
            let numbers: Vec<u64> = entry[name_end + 1..]
                .split(',')
                .skip(1)
                .take(4)
                .map(leading_number)
                .collect();
            let (offset, start, end) = (numbers[0], numbers[2], numbers[3]);
            placements.insert(name, (pool.clone(), offset, start, end));
        }
    }
    Ok(Generated {
        arena_sizes,
        placements,
    })
}

/// `<workspace>/../shared/bench`, or `MEMPLAN_BENCH_DIR`.
fn bench_dir() -> PathBuf {
    std::env::var_os("MEMPLAN_BENCH_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"),
        PathBuf::from,
    )
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The repository's model TOMLs: examples and memplan-core's golden models.
fn repository_models() -> Vec<PathBuf> {
    let mut models = vec![
        workspace().join("examples/cnn/model.toml"),
        workspace().join("examples/no-std-lib/model.toml"),
        workspace().join("examples/build-script/model.toml"),
    ];
    for folder in ["examples/models", "memplan-core/tests/golden"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(workspace().join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| if p.is_dir() { p.join("model.toml") } else { p })
            .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.exists())
            .collect();
        found.sort();
        models.extend(found);
    }
    models
}

/// The shared bench's ONNX graphs imported into `dir`, or `None` (with the reason printed) when
/// the shared data is absent.
fn imported_bench_models(dir: &Path) -> Option<Vec<PathBuf>> {
    let models = bench_dir().join("models");
    let Ok(entries) = std::fs::read_dir(&models) else {
        println!(
            "skipping the shared bench models: {} not found (set MEMPLAN_BENCH_DIR)",
            models.display()
        );
        return None;
    };
    let mut graphs: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".graph.onnx"))
        .collect();
    graphs.sort();
    let mut imported = Vec::new();
    for onnx in graphs {
        let name = onnx
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".graph.onnx", "");
        let toml = dir.join(format!("{name}.toml"));
        let out = memplan(&[
            "import",
            onnx.to_str().unwrap(),
            "-o",
            toml.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        imported.push(toml);
    }
    Some(imported)
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("one_plan", name)
}

/// The model text with `budget = N` added to its `[model]` table.
fn with_budget(source: &str, budget: u64) -> String {
    assert!(source.contains("[model]\n") && !source.contains("\nbudget"));
    source.replacen("[model]\n", &format!("[model]\nbudget = {budget}\n"), 1)
}

/// Everything the CLI says about `model` agrees with the generated code. Returns the compiled
/// total arena.
fn assert_one_plan(model: &Path, dir: &Path) -> u64 {
    let name = model.file_stem().unwrap().to_string_lossy().into_owned();
    let generated = expand(model).unwrap_or_else(|e| panic!("{name}: {e}"));
    let total: u64 = generated.arena_sizes.iter().sum();
    let path = model.to_str().unwrap();

    // The first line and the JSON are the compiled arena(s).
    let out = memplan(&["plan", path]);
    assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let first = stdout.lines().next().unwrap();
    assert!(
        first.contains(&format!("| arena {total} bytes")),
        "{name}: {first}"
    );
    let csv = dir.join(format!("{name}.plan.csv"));
    let out = memplan(&["plan", path, "--json", "--out", csv.to_str().unwrap()]);
    assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["arena_size"], total, "{name}");
    let pools: Vec<u64> = json["pools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["arena_size"].as_u64().unwrap())
        .collect();
    assert_eq!(pools, generated.arena_sizes, "{name}: ARENA_SIZE per pool");
    if pools.len() > 1 {
        for (pool, size) in json["pools"].as_array().unwrap().iter().zip(&pools) {
            let shown = format!("{} {size}", pool["name"].as_str().unwrap());
            assert!(first.contains(&shown), "{name}: {first} lacks {shown}");
        }
    }
    for tensor in json["plan"].as_array().unwrap() {
        let id = tensor["id"].as_str().unwrap();
        match generated.placements.get(id) {
            Some(&(_, offset, start, end)) => {
                assert_eq!(tensor["offset"], offset, "{name}: offset of {id}");
                assert_eq!(tensor["start"], start, "{name}: start of {id}");
                assert_eq!(tensor["end"], end, "{name}: end of {id}");
            }
            None => assert!(tensor["offset"].is_null(), "{name}: {id} is app-owned"),
        }
    }

    // `plan --out` writes the compiled offsets and lifetimes, one row per placement.
    let written = std::fs::read_to_string(&csv).unwrap();
    let mut lines = written.lines();
    assert_eq!(
        lines.next(),
        Some("id,lower,upper,size,alignment,offset,pool,chain")
    );
    let mut rows = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let (_, offset, start, end) = &generated.placements[f[0]];
        let row = (
            f[5].parse::<u64>().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
        );
        assert_eq!(row, (*offset, *start, *end), "{name}: row {line}");
        rows += 1;
    }
    assert_eq!(
        rows,
        generated.placements.len(),
        "{name}: one row per placement"
    );

    // `check` accepts `plan --out` and reproduces the compiled arenas.
    let out = memplan(&["check", path, csv.to_str().unwrap()]);
    assert!(out.status.success(), "{name}: {}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains(&format!("arena {total} bytes")),
        "{name}: {}",
        text(&out.stdout)
    );

    // `check` accepts the generated `TENSORS` themselves (id, offset, pool as generated).
    let several = generated.arena_sizes.len() > 1;
    let mut tensors = String::from(if several {
        "id,offset,pool\n"
    } else {
        "id,offset\n"
    });
    for (id, (pool, offset, _, _)) in &generated.placements {
        if several {
            tensors.push_str(&format!("{id},{offset},{pool}\n"));
        } else {
            tensors.push_str(&format!("{id},{offset}\n"));
        }
    }
    let tensors_csv = dir.join(format!("{name}.tensors.csv"));
    std::fs::write(&tensors_csv, tensors).unwrap();
    let out = memplan(&["check", path, tensors_csv.to_str().unwrap()]);
    assert!(out.status.success(), "{name}: {}", text(&out.stdout));

    // The budget check agrees with the macro's, at the compiled arena and one byte below it.
    let source = std::fs::read_to_string(model).unwrap();
    if !source.contains("\nbudget") && source.contains("[model]\n") {
        for budget in [total, total - 1] {
            let budgeted = dir.join(format!("{name}_{budget}.toml"));
            std::fs::write(&budgeted, with_budget(&source, budget)).unwrap();
            let macro_ok = expand(&budgeted).is_ok();
            let out = memplan(&["plan", budgeted.to_str().unwrap()]);
            assert_eq!(
                out.status.success(),
                macro_ok,
                "{name}, budget {budget}: the CLI and the macro disagree: {}",
                text(&out.stderr)
            );
            if budget == total {
                assert!(macro_ok, "{name}: the compiled arena fits its own size");
            }
            if !macro_ok {
                assert!(text(&out.stderr).contains("over budget"), "{name}");
            }
            println!(
                "{name}: budget {budget}: macro {}, CLI {}",
                if macro_ok { "builds" } else { "refuses" },
                if out.status.success() {
                    "exit 0"
                } else {
                    "exit 1"
                }
            );
        }
    }
    total
}

#[test]
fn the_repository_models_show_what_memplan_compiles() {
    let dir = scratch("repository");
    for model in repository_models() {
        let total = assert_one_plan(&model, &dir);
        println!("{}: ARENA_SIZE total {total}", model.display());
    }
}

#[test]
fn the_shared_bench_models_show_what_memplan_compiles() {
    let dir = scratch("bench");
    let Some(models) = imported_bench_models(&dir) else {
        return;
    };
    assert!(!models.is_empty());
    for model in models {
        let total = assert_one_plan(&model, &dir);
        println!("{}: ARENA_SIZE total {total}", model.display());
    }
}
