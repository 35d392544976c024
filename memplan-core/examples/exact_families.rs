//! Writes the exact search's generalisation families as MiniMalloc CSVs into a directory:
//! `cargo run --release -p memplan-core --example exact_families -- OUT_DIR [MINIMALLOC_DIR]`.
//!
//! - `planted_<seed>.1048576.csv`: guillotine cuts of a 1048576 x 1000 rectangle into 120-300
//!   buffers (optimum 1048576, the lower bound); seeds 1-24.
//! - `reuse_<seed>.1048576.csv`: 150-300 buffers of an allocator that refills freed space at once
//!   (`families::planted_reuse`; optimum 1048576, the lower bound); seeds 1-24.
//! - `square_<seed>.1048576.csv`: a 2^20 x 2^20 square (bytes by steps, grain 1024) cut into
//!   150-400 pieces, 55-100% of them kept (`families::planted_square`: the shape of
//!   MiniMalloc's published challenging set; 1048576 fits); seeds 1-20 cut the largest piece
//!   next, seeds 21-40 a piece picked at random by area.
//! - with `MINIMALLOC_DIR` (the `A.1048576.csv` ... files): `<X>.rev.1048576.csv` (time reversed) and
//!   `<X>.shuf<k>.1048576.csv` (rows shuffled, k = 1, 2) and `<X>.cut<k>.1048576.csv` (3k% of
//!   the buffers cut in two, in bytes or in time, and 3% left out for even k; k = 1-10), all
//!   fitting 1048576 like their originals.

#[path = "../benches/families/mod.rs"]
mod families;

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .ok_or("usage: exact_families OUT_DIR [MINIMALLOC_DIR]")?,
    );
    std::fs::create_dir_all(&out)?;
    for seed in 1..=24u64 {
        let pieces = 120 + (seed as usize * 37) % 181;
        let p = families::planted_guillotine(seed, 1 << 20, 1000, pieces, 512);
        std::fs::write(
            out.join(format!("planted_{seed:02}.1048576.csv")),
            memplan_core::write_problem_csv(&p),
        )?;
    }
    for seed in 1..=24u64 {
        let count = 150 + (seed as usize * 53) % 151;
        let fill = 300 + (seed * 211) % 700;
        let (p, _) = families::planted_reuse(seed, 1 << 20, 1000, count, 1024, fill);
        std::fs::write(
            out.join(format!("reuse_{seed:02}.1048576.csv")),
            memplan_core::write_problem_csv(&p),
        )?;
    }
    for seed in 1..=40u64 {
        let pieces = 150 + (seed as usize * 89) % 251;
        let keep = 550 + (seed * 131) % 451;
        let (p, _) = families::planted_square(seed, 1 << 20, 1024, pieces, keep, seed <= 20);
        std::fs::write(
            out.join(format!("square_{seed:02}.1048576.csv")),
            memplan_core::write_problem_csv(&p),
        )?;
    }
    if let Some(dir) = args.next() {
        let dir = PathBuf::from(dir);
        for name in ["A", "B", "C", "D", "E", "F"] {
            let file = dir.join(format!("{name}.1048576.csv"));
            let Ok(text) = std::fs::read_to_string(&file) else {
                eprintln!("skipping {}: cannot read it", file.display());
                continue;
            };
            let p = memplan_core::read_csv(&file.display().to_string(), &text)?.problem;
            let write = |suffix: &str, p: &memplan_core::Problem| {
                std::fs::write(
                    out.join(format!("{name}.{suffix}.1048576.csv")),
                    memplan_core::write_problem_csv(p),
                )
            };
            write("rev", &families::reversed(&p))?;
            for k in 1..=2 {
                write(&format!("shuf{k}"), &families::shuffled(&p, k))?;
            }
            for k in 1..=10 {
                let cut = 30 * k;
                let drop = if k % 2 == 0 { 30 } else { 0 };
                write(
                    &format!("cut{k}"),
                    &families::mutated(&p, k, cut, drop, 1024),
                )?;
            }
        }
    }
    Ok(())
}
