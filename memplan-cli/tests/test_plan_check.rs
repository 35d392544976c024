//! End-to-end tests of `memplan plan` and `memplan check`: exit codes, messages, and no partial output.

mod common;

use common::{memplan, text};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    common::scratch("plan_check", name)
}

const EXAMPLE: &str = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n";

#[test]
fn plan_writes_a_plan_that_check_accepts() {
    let dir = scratch("roundtrip");
    let input = dir.join("example.csv");
    let plan = dir.join("plan.csv");
    std::fs::write(&input, EXAMPLE).unwrap();
    for solver in [
        "naive",
        "first-fit",
        "best-fit",
        "patent",
        "enumerate",
        "exact",
        "auto",
    ] {
        let out = memplan(&[
            "plan",
            input.to_str().unwrap(),
            "--solver",
            solver,
            "--out",
            plan.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{solver}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("buffers 5"),
            "{}",
            text(&out.stdout)
        );
        let check = memplan(&["check", input.to_str().unwrap(), plan.to_str().unwrap()]);
        assert!(check.status.success(), "{solver}: {}", text(&check.stdout));
        assert!(text(&check.stdout).starts_with("ok: 5 buffers"));
    }
}

#[test]
fn minimallocs_later_header_plans_and_checks() {
    // MiniMalloc's asplos2024 files spell the columns `buffer,start,end,size`.
    let dir = scratch("later_header");
    let input = dir.join("example.csv");
    let later = EXAMPLE.replacen("id,lower,upper", "buffer,start,end", 1);
    std::fs::write(&input, &later).unwrap();
    let out = memplan(&["plan", input.to_str().unwrap(), "--capacity", "12"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("arena 12 bytes"),
        "{}",
        text(&out.stdout)
    );
    // A plan in the same spelling: b3 and b5 overlap at 0 (a violation check must find).
    let plan = dir.join("plan.csv");
    std::fs::write(
        &plan,
        "buffer,start,end,size,offset\nb1,0,3,4,8\nb2,3,9,4,8\nb3,0,9,4,4\nb4,9,21,4,4\nb5,0,21,4,0\n",
    )
    .unwrap();
    let check = memplan(&["check", input.to_str().unwrap(), plan.to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check.stdout));
    std::fs::write(&plan, "buffer,offset\nb1,8\nb2,8\nb3,0\nb4,4\nb5,0\n").unwrap();
    let check = memplan(&["check", input.to_str().unwrap(), plan.to_str().unwrap()]);
    assert!(!check.status.success(), "{}", text(&check.stdout));
}

#[test]
fn plan_json_has_the_documented_keys() {
    let dir = scratch("json");
    let input = dir.join("example.csv");
    std::fs::write(&input, EXAMPLE).unwrap();
    let out = memplan(&[
        "plan",
        input.to_str().unwrap(),
        "--solver",
        "best-fit",
        "--json",
    ]);
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "buffers",
        "arena_size",
        "lower_bound",
        "solver",
        "time_ms",
        "fits_capacity",
        "optimal",
        "nodes",
    ] {
        assert!(json.get(key).is_some(), "missing {key} in {json}");
    }
    assert_eq!(json["buffers"], 5);
    assert_eq!(json["lower_bound"], 12);
    assert_eq!(json["solver"], "best-fit");
}

#[test]
fn plan_fails_when_over_capacity() {
    let dir = scratch("capacity");
    let input = dir.join("example.csv");
    std::fs::write(&input, EXAMPLE).unwrap();
    let out = memplan(&[
        "plan",
        input.to_str().unwrap(),
        "--solver",
        "naive",
        "--capacity",
        "12",
        "--json",
    ]);
    assert!(!out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["fits_capacity"], false);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("does not fit"), "{stderr}");
    assert!(stderr.contains("capacity of 12 bytes"), "{stderr}");
    assert!(
        stderr.contains("the naive heuristic does not search"),
        "{stderr}"
    );
}

#[test]
fn a_capacity_out_of_reach_says_whether_it_is_proven_or_the_budget_ran_out() {
    let dir = scratch("capacity-reasons");
    // Two 5-byte buffers that meet: 10 bytes is the least, proven at once.
    let proven = dir.join("pair.csv");
    std::fs::write(&proven, "id,lower,upper,size\na,0,2,5\nb,1,3,5\n").unwrap();
    let out = memplan(&[
        "plan",
        proven.to_str().unwrap(),
        "--solver",
        "exact",
        "--capacity",
        "9",
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("needs 10 bytes, 1 more than the capacity of 9"),
        "{stderr}"
    );
    assert!(stderr.contains("proven to be the least"), "{stderr}");
    // Sixty buffers over thirty steps, asked to fit the bytes live at once with 3 nodes: the
    // budget runs out, and the message says so and what to raise.
    let mut csv = String::from("id,lower,upper,size\n");
    let mut x = 7u64;
    for i in 0..60 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let start = (x >> 33) % 30;
        let len = 1 + (x >> 40) % 10;
        csv.push_str(&format!(
            "b{i},{start},{},{}\n",
            start + len,
            1 + (x >> 50) % 40
        ));
    }
    let spent = dir.join("sixty.csv");
    std::fs::write(&spent, csv).unwrap();
    let out = memplan(&["plan", spent.to_str().unwrap(), "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bound = json["lower_bound"].as_u64().unwrap();
    let out = memplan(&[
        "plan",
        spent.to_str().unwrap(),
        "--solver",
        "exact",
        "--nodes",
        "3",
        "--capacity",
        &bound.to_string(),
    ]);
    // (The heuristics' best plan is 353 bytes against a bound of 316.)
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("does not fit"), "{stderr}");
    assert!(stderr.contains("of its 3 nodes"), "{stderr}");
    assert!(stderr.contains("raise `--nodes`"), "{stderr}");
}

#[test]
fn check_reports_every_violation_and_fails() {
    let dir = scratch("violations");
    let input = dir.join("example.csv");
    let plan = dir.join("plan.csv");
    std::fs::write(&input, EXAMPLE).unwrap();
    // b1, b3 and b5 are live together at step 0 and all sit at offset 0.
    std::fs::write(
        &plan,
        "id,lower,upper,size,offset\nb1,0,3,4,0\nb2,3,9,4,4\nb3,0,9,4,0\nb5,0,21,4,0\n",
    )
    .unwrap();
    let out = memplan(&["check", input.to_str().unwrap(), plan.to_str().unwrap()]);
    assert!(!out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("buffer `b4` has no offset"), "{stdout}");
    assert!(
        stdout.contains("`b1`") && stdout.contains("`b3`"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("and overlap").count(), 3, "{stdout}");
}

#[test]
fn bad_input_exits_non_zero_with_location_and_leaves_no_output() {
    let dir = scratch("bad");
    let input = dir.join("bad.csv");
    let plan = dir.join("plan.csv");
    std::fs::write(&input, "id,lower,upper,size\na,5,2,4\n").unwrap();
    let out = memplan(&[
        "plan",
        input.to_str().unwrap(),
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("bad.csv:2:5"), "{stderr}");
    assert!(stderr.contains("help:"), "{stderr}");
    assert!(!plan.exists(), "no output file on error");
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "only the input remains: {leftovers:?}");
}

#[test]
fn missing_file_and_unknown_solver_are_errors() {
    let out = memplan(&["plan", "/nonexistent/x.csv"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("cannot read"));
    let out = memplan(&["plan", "x.csv", "--solver", "magic"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("unknown solver `magic`"));
}

#[test]
fn enumerate_refuses_large_problems() {
    let dir = scratch("enumerate");
    let input = dir.join("many.csv");
    let mut csv = String::from("id,lower,upper,size\n");
    for i in 0..11 {
        csv.push_str(&format!("t{i},{i},{},8\n", i + 2));
    }
    std::fs::write(&input, csv).unwrap();
    let out = memplan(&["plan", input.to_str().unwrap(), "--solver", "enumerate"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("at most 10 buffers"),
        "{}",
        text(&out.stderr)
    );
}

/// `examples/models/two_pools.toml`: two pools, a pin, two in-place chains, two app-owned tensors.
fn two_pools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/models/two_pools.toml")
}

#[test]
fn a_model_plan_shows_what_the_generated_code_uses() {
    let model = two_pools();
    let model = model.to_str().unwrap();
    let out = memplan(&["plan", model, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pools: Vec<&str> = json["pools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(pools, ["sram", "psram"]);
    let tensors = json["plan"].as_array().unwrap();
    assert_eq!(tensors.len(), 8);
    for tensor in tensors {
        // App-owned tensors have neither pool nor offset; every other one has both.
        assert_eq!(
            tensor["pool"].is_null(),
            tensor["offset"].is_null(),
            "{tensor}"
        );
    }
    let external: Vec<&str> = tensors
        .iter()
        .filter(|t| t["pool"].is_null())
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(external, ["features", "scores"]);
    // The members of a chain share one pool and offset.
    let chained: Vec<&serde_json::Value> =
        tensors.iter().filter(|t| !t["chain"].is_null()).collect();
    assert_eq!(chained.len(), 4);
    for a in &chained {
        for b in chained.iter().filter(|b| b["chain"] == a["chain"]) {
            assert_eq!((&a["pool"], &a["offset"]), (&b["pool"], &b["offset"]));
        }
    }
    // The pinned `dma` keeps its offset in `sram`.
    let dma = tensors.iter().find(|t| t["id"] == "dma").unwrap();
    assert_eq!(
        (&dma["pool"], &dma["offset"]),
        (&serde_json::json!("sram"), &serde_json::json!(0))
    );

    let table = text(&memplan(&["plan", model, "--format", "table"]).stdout);
    assert!(
        table.starts_with("tensors 6 | arena 49152 bytes in 2 pools: sram 32768, psram 16384"),
        "{table}"
    );
    assert!(
        table.contains("pool sram:") && table.contains("shares with"),
        "{table}"
    );
    // `--format csv` is the plan CSV of the compiled plan: pool and chain columns, no app-owned
    // tensors; the summary goes to stderr.
    let csv = memplan(&["plan", model, "--format", "csv"]);
    let rows = text(&csv.stdout);
    assert!(
        rows.starts_with("id,lower,upper,size,alignment,offset,pool,chain\n"),
        "{rows}"
    );
    assert!(rows.contains("\ndma,0,2,2048,"), "{rows}");
    assert!(!rows.contains("features"), "{rows}");
    assert!(text(&csv.stderr).starts_with("tensors 6 | arena 49152 bytes"));

    // `--no-inplace` is the plain problem, labelled.
    let out = memplan(&["plan", model, "--no-inplace"]);
    assert!(out.status.success());
    let line = text(&out.stdout);
    assert!(line.starts_with("buffers 8 | arena "), "{line}");
    assert!(line.contains("(--no-inplace)"), "{line}");
}
