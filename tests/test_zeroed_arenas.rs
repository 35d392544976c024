//! Every arena, pooled or not, is zero-initialised memory (issue 19, item 10): in `.bss` or in
//! the pool's own (`NOLOAD`) section, never in `.data`, whose bytes are stored in flash and
//! copied to RAM at start. Only the small bookkeeping (hand-out flags, pointers) may be elsewhere.
//!
//! Links a `no_std` binary for `thumbv7em-none-eabihf` (`rustup target add
//! thumbv7em-none-eabihf`, which `.ci/run` does) with a minimal linker script, as cortex-m-rt
//! lays memory out, and reads the ELF's section sizes; skipped with a message when the target is
//! missing.

mod common;

use object::{Object, ObjectSection, SectionFlags, SectionKind};

// The same models on the host, for their arena sizes.
memplan::memplan!("../examples/models/two_pools.toml");
memplan::memplan!("zeroed/single.toml");

const TARGET: &str = "thumbv7em-none-eabihf";

/// Two models: `kws` (`examples/models/two_pools.toml`: a 32 KiB pool in `.sram.kws` and an
/// unsized one) and a single-arena one in the user's own `StaticArena`.
const MAIN: &str = r#"#![no_std]
#![no_main]

memplan::memplan!("../model.toml");
memplan::memplan!("../single.toml");

#[unsafe(link_section = ".sram.kws")]
static SRAM: kws::sram::Memory = kws::sram::Memory::zeroed();

static SINGLE: memplan::StaticArena<net::Arena> = memplan::StaticArena::new(net::Arena::new());

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}

#[unsafe(no_mangle)]
pub extern "C" fn reset() -> ! {
    let features = [0.5f32; kws::len::features];
    if let Some(mut arenas) = kws::take(&SRAM) {
        let v = arenas.op_capture(&features);
        v.dma[0] = 1;
        let v = arenas.op_fc1();
        v.hidden1[4095] = f32::from(v.dma[2047]);
        let v = arenas.op_fc2();
        v.hidden2[8191] = v.act1[4095];
        core::hint::black_box(&arenas);
    }
    if let Some(arena) = SINGLE.take() {
        let v = arena.op_expand();
        v.big[0] = v.x[15];
        core::hint::black_box(arena);
    }
    loop {}
}
"#;

/// Flash, RAM and a separate SRAM bank; `.data` is loaded from flash, `.bss` and `.sram.kws` are
/// `NOLOAD` (start-up code zeroes `.bss` and leaves `.sram.kws` as it is).
const LINKER_SCRIPT: &str = "MEMORY {\n  FLASH : ORIGIN = 0x08000000, LENGTH = 1M\n  \
     RAM : ORIGIN = 0x20000000, LENGTH = 256K\n  SRAM : ORIGIN = 0x30000000, LENGTH = 64K\n}\n\
     ENTRY(reset)\nSECTIONS {\n  .text : { *(.text .text.*) } > FLASH\n  \
     .rodata : { *(.rodata .rodata.*) } > FLASH\n  \
     .data : { *(.data .data.*) } > RAM AT > FLASH\n  \
     .bss (NOLOAD) : { *(.bss .bss.*) *(COMMON) } > RAM\n  \
     .sram.kws (NOLOAD) : { *(.sram.kws .sram.kws.*) } > SRAM\n}\n";

#[test]
fn no_arena_is_stored_in_data_or_flash() {
    if !common::target_installed(TARGET) {
        common::skip(&format!(
            "the `{TARGET}` standard library is not installed (rustup target add {TARGET})"
        ));
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let model = std::fs::read_to_string(root.join("examples/models/two_pools.toml")).unwrap();
    let dir = common::scratch_crate("memplan-zeroed-arenas", "#![no_std]\n", &model);
    let script = dir.join("link.x");
    common::write_if_changed(&dir.join("src/main.rs"), MAIN.as_bytes());
    let single = std::fs::read(root.join("tests/zeroed/single.toml")).unwrap();
    common::write_if_changed(&dir.join("single.toml"), &single);
    common::write_if_changed(&script, LINKER_SCRIPT.as_bytes());
    let link_arg = format!("link-arg=-T{}", script.display());
    let output = common::cargo(
        &dir,
        &[
            "rustc",
            "--release",
            "--bin",
            "memplan-zeroed-arenas",
            "--target",
            TARGET,
            "--",
            "-C",
            &link_arg,
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let elf = dir.join(format!("target/{TARGET}/release/memplan-zeroed-arenas"));
    let bytes = std::fs::read(&elf).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let size = |name: &str| file.section_by_name(name).map_or(0, |s| s.size());

    // The arenas: the SRAM pool in its bank, the other pool and the single arena zeroed in
    // `.bss`.
    assert_eq!(
        size(".sram.kws"),
        kws::sram::ARENA_SIZE as u64,
        "the SRAM pool's bytes"
    );
    let zeroed = (kws::psram::ARENA_SIZE + net::ARENA_SIZE) as u64;
    assert!(
        size(".bss") >= zeroed,
        ".bss holds {} bytes, less than the unsized pool and the single arena ({zeroed})",
        size(".bss")
    );
    // Every byte the image stores for writable memory (`.data` and any other initialised,
    // writable section) is bookkeeping: a few flags and pointers, no arena.
    let mut stored = Vec::new();
    for section in file.sections() {
        let writable = match section.flags() {
            SectionFlags::Elf { sh_flags } => sh_flags & u64::from(object::elf::SHF_WRITE) != 0,
            _ => false,
        };
        if writable && section.kind() != SectionKind::UninitializedData && section.size() > 0 {
            stored.push((section.name().unwrap_or("?").to_owned(), section.size()));
        }
    }
    let total: u64 = stored.iter().map(|(_, size)| size).sum();
    assert!(
        total <= 64,
        "initialised writable sections (copied from flash at start) hold {total} bytes: {stored:?}"
    );
}
