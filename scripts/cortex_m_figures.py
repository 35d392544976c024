#!/usr/bin/env python3
"""The Cortex-M4F figures of networks built with `examples/cortex-m`, as a table.

For each model (a `.tflite` or `.onnx` with `<stem>.input.bin` beside it) and each optimisation
level, builds the firmware exactly as a user would (`MEMPLAN_FIRMWARE_MODEL`, the example's
release profile, the level through `CARGO_PROFILE_RELEASE_OPT_LEVEL`), runs it on QEMU's
`mps2-an386` under `-icount shift=6` and prints:

- instructions of one inference (SysTick ticks of the computation * 40 ns / 2^6 ns: exact to
  an instruction, deterministic);
- flash: `.vector_table + .text + .rodata + .data` of the ELF;
- RAM: `.data + .bss + .uninit` + the peak stack the firmware measured;
- whether the output equals the reference beside the model (`<file>.output.bin` or
  `<stem>.output.bin`: int8 byte for byte, float32 within 1e-4 + 1e-3 |ref|).

Needs `rustup target add thumbv7em-none-eabihf` and `qemu-system-arm`. Run from anywhere:

    python3 scripts/cortex_m_figures.py                     # the shared and fixture models
    python3 scripts/cortex_m_figures.py model.tflite -O s   # one model, one level
    python3 scripts/cortex_m_figures.py model.tflite -O s -b none -b 12000   # RAM budgets

`-b BYTES` builds with `MEMPLAN_FIRMWARE_RAM_BUDGET=BYTES` (`none`: without a budget); a budget
the network cannot meet is printed as the build's refusal (its first line).
"""

import argparse
import os
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATE = ROOT / "examples" / "cortex-m"
TARGET = "thumbv7em-none-eabihf"
FIXTURES = ROOT / "memplan-runner" / "tests" / "fixtures" / "tflite"
SHARED = ROOT.parent / "shared" / "bench" / "tinyml"
DEFAULT_MODELS = [
    SHARED / "kws_ref_model.tflite",
    SHARED / "kws_ref_model_float32.tflite",
    FIXTURES / "mobilenet_like.tflite",
    FIXTURES / "resnet8_like.tflite",
    FIXTURES / "autoencoder_like.tflite",
    FIXTURES / "mobilenet_like_f32.tflite",
    FIXTURES / "resnet8_like_f32.tflite",
    FIXTURES / "autoencoder_like_f32.tflite",
]
ICOUNT_SHIFT = 6


def sections(elf: Path) -> dict:
    """Section sizes of a 32-bit little-endian ELF, by name."""
    data = elf.read_bytes()
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)
    headers = [struct.unpack_from("<10I", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    out = {}
    for h in headers:
        start = names + h[0]
        name = data[start:data.index(b"\0", start)].decode()
        out[name] = h[5]
    return out


def plugin() -> Path:
    """Builds the instruction-counting QEMU plugin for the host and returns its path."""
    host = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    tuple_ = next(line[6:] for line in host.splitlines() if line.startswith("host: "))
    subprocess.run(["cargo", "build", "--release", "--locked", "--target", tuple_, "-q"],
                   cwd=CRATE / "qemu-insn-count", check=True)
    return CRATE / "qemu-insn-count" / "target" / tuple_ / "release" / "libmemplan_qemu_insn_count.so"


def reference(model: Path):
    for candidate in (model.with_name(model.name + ".output.bin"),
                      model.with_name(model.stem + ".output.bin")):
        if candidate.is_file():
            return candidate.read_bytes()
    return None


def matches(output: bytes, want, float_output: bool) -> str:
    if want is None:
        return "no reference"
    if output == want:
        return "equal"
    if not float_output:
        differ = sum(a != b for a, b in zip(output, want)) + abs(len(output) - len(want))
        return "equal" if differ == 0 else f"{differ} bytes differ"
    got = struct.unpack(f"<{len(output) // 4}f", output)
    ref = struct.unpack(f"<{len(want) // 4}f", want)
    worst = max((abs(a - b) for a, b in zip(got, ref)), default=0.0)
    ok = len(got) == len(ref) and all(abs(a - b) <= 1e-4 + 1e-3 * abs(b) for a, b in zip(got, ref))
    return f"{'within' if ok else 'OUTSIDE'} tolerance (max abs diff {worst:.1e})"


def measure(model: Path, level: str, plugin_path: Path, budget: str = "none") -> dict:
    env = dict(os.environ, MEMPLAN_FIRMWARE_MODEL=str(model), CARGO_PROFILE_RELEASE_OPT_LEVEL=level,
               MEMPLAN_FIRMWARE_RAM_BUDGET="" if budget == "none" else budget)
    for var in ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "CARGO_BUILD_TARGET"):
        env.pop(var, None)
    build = subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=CRATE, env=env,
                           capture_output=True, text=True)
    if build.returncode != 0:
        refusal = next((line for line in build.stderr.splitlines() if "RAM budget" in line), None)
        if budget != "none" and refusal:
            return {"refused": refusal.strip()}
        raise SystemExit(f"{model.name}: the firmware does not build:\n{build.stderr}")
    elf = CRATE / "target" / TARGET / "release" / "memplan-cortex-m-example"
    run = subprocess.run(
        ["qemu-system-arm", "-machine", "mps2-an386", "-cpu", "cortex-m4", "-nographic",
         "-semihosting-config", "enable=on,target=native", "-icount", f"shift={ICOUNT_SHIFT}",
         "-plugin", str(plugin_path), "-d", "plugin", "-kernel", str(elf)],
        capture_output=True, text=True, timeout=300)
    fields = dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
    if run.returncode != 0 or "systick_ticks" not in fields:
        raise SystemExit(f"{model.name}: the firmware failed:\n{run.stdout}\n{run.stderr}")
    size = sections(elf)
    flash = sum(size.get(s, 0) for s in (".vector_table", ".text", ".rodata", ".data"))
    ram = sum(size.get(s, 0) for s in (".data", ".bss", ".uninit")) + int(fields["stack_peak"])
    output = bytes.fromhex(fields["output"])
    # A .tflite file's output is float32 when its name says so; an ONNX network's, unless int8.
    float_output = model.stem.endswith(("_f32", "_float32")) or (
        model.suffix == ".onnx" and not model.stem.endswith(("_int8", "_qdq")))
    return {
        "instructions": int(fields["systick_ticks"]) * 40 // (1 << ICOUNT_SHIFT),
        "flash": flash,
        "text": size.get(".text", 0),
        "ram": ram,
        "arena": int(fields["arena"]),
        "check": matches(output, reference(model), float_output),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("-O", "--opt-level", action="append", choices=["s", "z", "1", "2", "3"])
    parser.add_argument("-b", "--ram-budget", action="append",
                        help="MEMPLAN_FIRMWARE_RAM_BUDGET in bytes, or `none` (default)")
    args = parser.parse_args()
    models = [m.resolve() for m in args.models] or [m for m in DEFAULT_MODELS if m.is_file()]
    levels = args.opt_level or ["s", "3"]
    budgets = args.ram_budget or ["none"]
    plugin_path = plugin()
    print("| model | opt-level | RAM budget | instructions | flash | .text | RAM | arena | output |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for model in models:
        for level in levels:
            for budget in budgets:
                f = measure(model, level, plugin_path, budget)
                if "refused" in f:
                    print(f"| {model.name} | {level} | {budget} | refused: {f['refused']} |||||",
                          flush=True)
                    continue
                print(f"| {model.name} | {level} | {budget} | {f['instructions']:,} | "
                      f"{f['flash']:,} | {f['text']:,} | {f['ram']:,} | {f['arena']:,} | "
                      f"{f['check']} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
