//! `memplan plan` on alignments near 2^61 (issue 12, item 6): a problem whose stack could pass
//! 2^64 is refused with a located error, whatever the solver, and never planned with wrapped
//! (overlapping) offsets.

mod common;

use common::{memplan, text};

#[test]
fn huge_alignments_are_refused_by_every_solver_with_the_line() {
    let dir = common::scratch("huge_alignments", "refused");
    let input = dir.join("huge.csv");
    let mut csv = String::from("id,lower,upper,size,alignment\n");
    for i in 0..8 {
        csv.push_str(&format!("b{i},0,1,1,{}\n", 1u64 << 61));
    }
    std::fs::write(&input, csv).unwrap();
    for solver in [
        "naive",
        "first-fit",
        "best-fit",
        "patent",
        "enumerate",
        "exact",
        "auto",
    ] {
        let plan = dir.join(format!("{solver}.csv"));
        let out = memplan(&[
            "plan",
            input.to_str().unwrap(),
            "--solver",
            solver,
            "--out",
            plan.to_str().unwrap(),
        ]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{solver}: {stderr}");
        assert!(stderr.contains("huge.csv:3:"), "{solver}: {stderr}");
        assert!(stderr.contains("2^62"), "{solver}: {stderr}");
        assert!(!plan.exists(), "{solver} wrote a plan");
    }
}
