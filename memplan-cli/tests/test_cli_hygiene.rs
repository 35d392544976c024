//! The CLI behaves on the edges: a closed stdout, plans with the fewest columns, pins, offsets
//! near 2^64, chains and pools, overlapping plans drawn with a warning, located errors in plan
//! files, and no output file left behind by a failed command.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{memplan, text};

fn scratch(name: &str) -> PathBuf {
    common::scratch("hygiene", name)
}

fn two_pools() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/models/two_pools.toml")
        .display()
        .to_string()
}

fn write(dir: &Path, name: &str, contents: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

/// The compiled plan of `two_pools.toml` (see `plan --out`), with `edit` applied to its rows.
fn two_pools_plan(dir: &Path, name: &str, edit: impl Fn(&str) -> String) -> String {
    let plan = dir.join("compiled.csv");
    let out = memplan(&["plan", &two_pools(), "--out", plan.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<String> = std::fs::read_to_string(&plan)
        .unwrap()
        .lines()
        .map(&edit)
        .collect();
    write(dir, name, &(rows.join("\n") + "\n"))
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let dir = scratch("pipe");
    let mut csv = String::from("id,lower,upper,size\n");
    for i in 0..20_000 {
        csv.push_str(&format!("buffer{i},{},{},64\n", i % 50, i % 50 + 3));
    }
    let input = write(&dir, "many.csv", &csv);
    // `memplan plan many.csv --format table | head -1`: the reader leaves after one line.
    let mut child = Command::new(env!("CARGO_BIN_EXE_memplan"))
        .args(["plan", &input, "--format", "table", "--solver", "best-fit"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("buffers 20000"), "{first}");
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn a_plan_needs_only_id_and_offset() {
    let dir = scratch("id_offset");
    let problem = write(&dir, "p.csv", "id,lower,upper,size\na,0,2,8\nb,1,3,8\n");
    let plan = write(&dir, "plan.csv", "id,offset\nb,8\na,0\n");
    let out = memplan(&["check", &problem, &plan]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("ok: 2 buffers, arena 16 bytes"));
    // The help says so.
    let help = text(&memplan(&["check", "--help"]).stdout);
    assert!(
        help.contains("at least the columns `id` and `offset`"),
        "{help}"
    );
    // A model with pools needs `pool` too, and says so at the header.
    let plan = write(&dir, "no_pool.csv", "id,offset\ndma,0\n");
    let out = memplan(&["check", &two_pools(), &plan]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no_pool.csv:1:1"), "{stderr}");
    assert!(stderr.contains("no `pool` column"), "{stderr}");
}

#[test]
fn check_holds_pins_chains_and_pools_to_the_generated_code() {
    let dir = scratch("model_rules");
    let accepted = two_pools_plan(&dir, "same.csv", str::to_owned);
    assert!(
        memplan(&["check", &two_pools(), &accepted])
            .status
            .success()
    );
    // `plan --out` writes the pinned `dma` at its pin: offset 0 of `sram`.
    let rows = std::fs::read_to_string(&accepted).unwrap();
    assert!(rows.contains("\ndma,0,2,2048,16,0,sram,\n"), "{rows}");

    // `dma` is pinned at 0 in `sram`.
    let moved = two_pools_plan(&dir, "pin.csv", |row| {
        if row.starts_with("dma,") {
            row.replace(",2048,16,0,sram", ",2048,16,16384,sram")
        } else {
            row.to_owned()
        }
    });
    let out = memplan(&["check", &two_pools(), &moved]);
    assert!(!out.status.success());
    assert!(
        text(&out.stdout).contains("`dma` is pinned at 0 but placed at 16384"),
        "{}",
        text(&out.stdout)
    );

    // `act1` is written in place over `hidden1`: same offset, same pool.
    let split = two_pools_plan(&dir, "chain.csv", |row| {
        if row.starts_with("act1,") {
            row.replace(",16,0,psram,", ",16,16384,psram,")
        } else {
            row.to_owned()
        }
    });
    let out = memplan(&["check", &two_pools(), &split]);
    assert!(!out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout
            .contains("`hidden1` and `act1` share memory in place but start at different offsets"),
        "{stdout}"
    );
    let apart = two_pools_plan(&dir, "pools.csv", |row| {
        if row.starts_with("act1,") {
            row.replace(",psram,", ",sram,")
        } else {
            row.to_owned()
        }
    });
    let out = memplan(&["check", &two_pools(), &apart]);
    assert!(!out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("in different pools"), "{stdout}");
    // `sram` holds 32 KiB: `act1` there overflows it next to `hidden2`'s chain.
    assert!(stdout.contains("pool `sram`"), "{stdout}");
}

#[test]
fn offsets_near_two_to_the_64_are_refused_not_wrapped() {
    let dir = scratch("wrap");
    let problem = write(&dir, "p.csv", "id,lower,upper,size\na,0,2,8\nb,1,3,8\n");
    let plan = write(&dir, "plan.csv", "id,offset\na,0\nb,18446744073709551612\n");
    let out = memplan(&["check", &problem, &plan]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("`b` at offset 18446744073709551612"),
        "{stdout}"
    );
    assert!(!stdout.contains("ok:"), "{stdout}");

    let plan = two_pools_plan(&dir, "model.csv", |row| {
        if row.starts_with("logits,") {
            row.replace(",16,0,psram,", ",16,18446744073709551600,psram,")
        } else {
            row.to_owned()
        }
    });
    let out = memplan(&["check", &two_pools(), &plan]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("would end past byte"));
    let svg = dir.join("wrap.svg");
    let out = memplan(&[
        "render",
        &problem,
        "--plan",
        &dir.join("plan.csv").display().to_string(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(!text(&out.stderr).contains("panicked"));
    assert!(!svg.exists());
}

#[test]
fn render_warns_about_an_overlapping_plan() {
    let dir = scratch("overlap");
    let problem = write(&dir, "p.csv", "id,lower,upper,size\na,0,2,8\nb,1,3,8\n");
    let plan = write(&dir, "plan.csv", "id,offset\na,0\nb,4\n");
    let svg = dir.join("overlap.svg");
    let out = memplan(&[
        "render",
        &problem,
        "--plan",
        &plan,
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("warning: `a`"), "{stderr}");
    assert!(stderr.contains("overlap"), "{stderr}");
    // The offending buffers are marked in the picture.
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("a [overlaps]"), "{picture}");
    assert!(picture.contains("b [overlaps]"), "{picture}");

    // A model plan with a split chain: warned, drawn.
    let split = two_pools_plan(&dir, "chain.csv", |row| {
        if row.starts_with("act1,") {
            row.replace(",16,0,psram,", ",16,16384,psram,")
        } else {
            row.to_owned()
        }
    });
    let svg = dir.join("model.svg");
    let out = memplan(&[
        "render",
        &two_pools(),
        "--plan",
        &split,
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("warning:"),
        "{}",
        text(&out.stderr)
    );
    // A valid plan draws without warnings.
    let same = two_pools_plan(&dir, "same.csv", str::to_owned);
    let out = memplan(&[
        "render",
        &two_pools(),
        "--plan",
        &same,
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
}

#[test]
fn errors_in_plan_files_are_located() {
    let dir = scratch("located");
    let problem = write(&dir, "p.csv", "id,lower,upper,size\na,0,2,8\nb,1,3,8\n");
    for (plan, at, says) in [
        ("id,offset\na,0\nb,x\n", "bad.csv:3:3", "`offset` value `x`"),
        ("id,offset\na,0\nc,8\n", "bad.csv:3:1", "no buffer `c`"),
        ("id,offset\na,0\na,8\n", "bad.csv:3:1", "placed twice"),
        (
            "id,offset,size\na,0,8\nb,8,9\n",
            "bad.csv:3:5",
            "`size` of `b` is 9",
        ),
        ("id,place\na,0\n", "bad.csv:1:4", "unknown column `place`"),
        ("id\na\n", "bad.csv:1:1", "no `offset` column"),
    ] {
        let plan = write(&dir, "bad.csv", plan);
        let out = memplan(&["check", &problem, &plan]);
        assert_eq!(out.status.code(), Some(1));
        let stderr = text(&out.stderr);
        assert!(stderr.contains(at), "{at}: {stderr}");
        assert!(stderr.contains(says), "{says}: {stderr}");
        assert!(stderr.contains("help:"), "{stderr}");
    }
    let plan = write(&dir, "pool.csv", "id,offset,pool\ndma,0,fast\n");
    let out = memplan(&["check", &two_pools(), &plan]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("pool.csv:2:7"), "{stderr}");
    assert!(stderr.contains("no pool `fast`"), "{stderr}");
}

#[test]
fn a_failed_command_leaves_no_output_file() {
    let dir = scratch("no_output");
    let source = std::fs::read_to_string(two_pools()).unwrap();
    let over = write(
        &dir,
        "over.toml",
        &source.replacen("[model]\n", "[model]\nbudget = \"40 KiB\"\n", 1),
    );
    let csv = dir.join("plan.csv");
    let out = memplan(&["plan", &over, "--out", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("over budget"), "{stderr}");
    assert!(stderr.contains("over.toml:3:10"), "{stderr}");
    assert!(!csv.exists());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Issue 19, item 11: `plan` refuses a model file the `memplan!` macro refuses (the same
/// reader and the same 64 MiB limit, `memplan_core::model_file::MAX_MODEL_FILE_BYTES`).
#[test]
fn plan_refuses_a_model_file_larger_than_the_macro_reads() {
    let dir = scratch("too_large");
    let path = dir.join("big.toml");
    let source = std::fs::read_to_string(two_pools()).unwrap();
    let mut file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut file, source.as_bytes()).unwrap();
    // One byte past the limit, sparse (no disk space used): refused by its size, never read.
    let limit = memplan_core::model_file::MAX_MODEL_FILE_BYTES;
    file.set_len(limit + 1).unwrap();
    drop(file);
    for command in ["plan", "render"] {
        let out = match command {
            "plan" => memplan(&["plan", path.to_str().unwrap()]),
            _ => memplan(&[
                "render",
                path.to_str().unwrap(),
                "-o",
                dir.join("p.svg").to_str().unwrap(),
            ]),
        };
        assert_eq!(out.status.code(), Some(1), "{command}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("cannot read model file")
                && stderr.contains("it is larger than 64 MiB, the most a model file may be")
                && stderr.contains("= help:"),
            "{command}: {stderr}"
        );
    }
}
