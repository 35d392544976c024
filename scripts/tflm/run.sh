#!/usr/bin/env bash
# Builds the TFLM firmware for one .tflite model and one kernel set, runs one inference on QEMU's
# mps2-an386 under -icount shift=6 and prints one line:
#
#   <model> <kernels> instructions=N flash=N ram=N arena=N output_equal=yes|no | <details>
#
# instructions: SysTick ticks over Invoke() * 40 / 2^6 (25 MHz SysTick, 2^6 ns an instruction);
# flash: .vector_table + .text + .rodata + .data; ram: .data + .bss (the arena is in .bss) + the
# peak stack; arena: arena_used_bytes() after AllocateTensors(). The details after `|` give the
# arena actually linked, the stack and the sections.
#
#   ./run.sh MODEL.tflite [cmsis|reference]        (default: cmsis)
#
# Environment:
#   TFLM_DIR    the TFLM tree laid out by setup_tflm.sh (default: target/tflm/tflite-micro)
#   BUILD_ROOT  where objects, ELFs and logs go (default: target/tflm/build, outside the sources:
#               the ELFs contain TFLM code)
#   QEMU_PLUGIN optional instruction-count plugin (memplan's qemu-insn-count); its whole-run count
#               is logged, not printed in the line
#   PYTHON      a python3 with numpy and pillow: TFLM's Makefile runs generate_cc_arrays.py while
#               it parses, even for `microlite` (default: python3 on PATH)
#   VERBOSE=1   also print the firmware's report and the section sizes
#
# The input is <stem>.input.bin beside the model; the reference output <model>.output.bin if it
# exists (the MLPerf Tiny files name LiteRT's output so), else <stem>.output.bin. The arena is
# sized in two passes: a 3 MiB arena reports arena_used_bytes(), then the firmware is rebuilt
# with the smallest arena (a multiple of 16, searched from arena_used_bytes() up) with which
# AllocateTensors() succeeds; that build is the one measured.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MODEL=$(realpath "${1:?usage: run.sh MODEL.tflite [cmsis|reference]}")
KERNELS=${2:-cmsis}
TFLM_DIR=$(realpath "${TFLM_DIR:-$HERE/../../target/tflm/tflite-micro}")
BUILD_ROOT=$(mkdir -p "${BUILD_ROOT:-$HERE/../../target/tflm/build}" && realpath "${BUILD_ROOT:-$HERE/../../target/tflm/build}")
PYTHON=${PYTHON:-python3}
ICOUNT_SHIFT=6
JOBS=${JOBS:-2}

STEM=$(basename "$MODEL" .tflite)
DIR=$(dirname "$MODEL")
INPUT=$DIR/$STEM.input.bin
if [ -f "$MODEL.output.bin" ]; then EXPECTED=$MODEL.output.bin; else EXPECTED=$DIR/$STEM.output.bin; fi
[ -f "$INPUT" ] || { echo "no $INPUT" >&2; exit 1; }
[ -f "$EXPECTED" ] || { echo "no reference output for $MODEL" >&2; exit 1; }

MAKE_ARGS=(TARGET=cortex_m_generic TARGET_ARCH=cortex-m4+fp BUILD_TYPE=release TARGET_TOOLCHAIN_ROOT="$(dirname "$(command -v arm-none-eabi-gcc)")/")
case $KERNELS in
  cmsis) MAKE_ARGS+=(OPTIMIZED_KERNEL_DIR=cmsis_nn); GEN=cortex_m_generic_cortex-m4+fp_release_cmsis_nn_gcc ;;
  reference) GEN=cortex_m_generic_cortex-m4+fp_release_gcc ;;
  *) echo "kernels: cmsis or reference" >&2; exit 1 ;;
esac
LIB=$TFLM_DIR/gen/$GEN/lib/libtensorflow-microlite.a
PYDIR=$(dirname "$(command -v "$PYTHON")")

tflm_make() { (cd "$TFLM_DIR" && PATH="$PYDIR:$PATH" make -f tensorflow/lite/micro/tools/make/Makefile "${MAKE_ARGS[@]}" "$@"); }

if [ ! -f "$LIB" ]; then
  echo "building $LIB (make -j$JOBS microlite)" >&2
  tflm_make -j"$JOBS" microlite >&2
fi

# TFLM's own compile flags and include paths for this configuration (cached).
FLAGS=$BUILD_ROOT/flags-$KERNELS.sh
if [ ! -f "$FLAGS" ]; then
  {
    for v in CXXFLAGS CCFLAGS INCLUDES CORE_OPTIMIZATION_LEVEL; do
      val=$(tflm_make -s print-$v 2>/dev/null | sed -n "s/^$v=//p")
      printf '%s=(%s)\n' "TFLM_$v" "$val"
    done
  } > "$FLAGS.tmp" && mv "$FLAGS.tmp" "$FLAGS"
fi
# shellcheck disable=SC1090
source "$FLAGS"
CPU_FLAGS=()
for f in "${TFLM_CXXFLAGS[@]}"; do
  case $f in -mcpu=*|-mfpu=*|-mfloat-abi=*|-mthumb|-mlittle-endian) CPU_FLAGS+=("$f") ;; esac
done

OUT=$BUILD_ROOT/$STEM-$KERNELS
mkdir -p "$OUT"
"$PYTHON" "$HERE/gen_model.py" "$MODEL" "$INPUT" "$EXPECTED" "$OUT" "$TFLM_DIR" > "$OUT/ops.txt"

CC=arm-none-eabi-gcc
CXX=arm-none-eabi-g++
# The harness's own files: startup, semihosting, the model data.
$CC "${CPU_FLAGS[@]}" -Os -ffunction-sections -fdata-sections -Wall -c "$HERE/startup.c" -o "$OUT/startup.o"
$CC "${CPU_FLAGS[@]}" -Os -ffunction-sections -fdata-sections -Wall -c "$HERE/semihost.c" -o "$OUT/semihost.o"
$CC "${CPU_FLAGS[@]}" -c "$OUT/model_data.S" -o "$OUT/model_data.o"

build() {  # arena_size -> $OUT/firmware-<arena>.elf
  local arena=$1 elf=$OUT/firmware-$1.elf
  # main.cc with exactly TFLM's flags (the defines change struct layouts) at the core's -Os.
  (cd "$TFLM_DIR" && $CXX "${TFLM_CXXFLAGS[@]}" "${TFLM_CORE_OPTIMIZATION_LEVEL[@]}" \
     "${TFLM_INCLUDES[@]}" -I"$OUT" -I"$HERE" -DARENA_SIZE="${arena}u" \
     -DMODEL_NAME="\"$(basename "$MODEL")\"" -c "$HERE/main.cc" -o "$OUT/main-$arena.o" -MF /dev/null)
  $CXX "${CPU_FLAGS[@]}" -nostartfiles -T "$HERE/link.ld" --specs=nano.specs --specs=nosys.specs \
    -Wl,--gc-sections -Wl,-Map="$elf.map" -o "$elf" \
    "$OUT/startup.o" "$OUT/semihost.o" "$OUT/model_data.o" "$OUT/main-$arena.o" "$LIB" -lm
  echo "$elf"
}

run() {  # elf -> the firmware's semihosting output (QEMU 7.2 sends SYS_WRITE0 to stderr)
  local plugin=()
  [ -n "${QEMU_PLUGIN:-}" ] && plugin=(-plugin "$QEMU_PLUGIN" -d plugin -D "$1.plugin.log")
  timeout 600 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic \
    -semihosting-config enable=on,target=native -icount shift=$ICOUNT_SHIFT \
    "${plugin[@]}" -kernel "$1" 2>&1 || true
}

field() { sed -n "s/^$1 //p" "$2" | head -1; }

# Pass 1: a large arena, to learn arena_used_bytes().
BIG=$((3 * 1024 * 1024))
ELF=$(build $BIG)
run "$ELF" > "$ELF.out"
USED=$(field arena_used "$ELF.out")
if [ -z "$USED" ]; then
  # TFLM's release build strips its error strings: the firmware says which call failed.
  echo "$(basename "$MODEL") $KERNELS FAILED: $(head -1 "$ELF.out") (arena $BIG)"
  exit 2
fi
# Pass 2: the smallest arena (a multiple of 16) from arena_used_bytes() up with which
# AllocateTensors() succeeds. AllocateTensors may need more than it reports as used afterwards
# (temporary allocations during Prepare), so: grow the step until one works, then bisect.
try() {  # arena -> 0 if the firmware ran with it
  local elf
  elf=$(build "$1")
  run "$elf" > "$elf.out"
  grep -q '^systick_ticks ' "$elf.out" && return 0
  grep -q '^error AllocateTensors' "$elf.out" || { echo "run failed:" >&2; cat "$elf.out" >&2; exit 1; }
  return 1
}
LO=$(( (USED + 15) / 16 * 16 - 16 ))   # LO: known (or assumed) to fail; HI: known to work
HI=
STEP=16
while [ -z "$HI" ]; do
  if [ $((LO + STEP)) -ge $BIG ]; then HI=$BIG; break; fi
  if try $((LO + STEP)); then HI=$((LO + STEP)); else LO=$((LO + STEP)); STEP=$((STEP * 2)); fi
done
while [ $((HI - LO)) -gt 16 ]; do
  MID=$(( (LO + HI) / 32 * 16 ))
  if try $MID; then HI=$MID; else LO=$MID; fi
done
ARENA=$HI
ELF=$OUT/firmware-$ARENA.elf
grep -q '^systick_ticks ' "$ELF.out" || { echo "no arena size worked" >&2; exit 1; }

"$PYTHON" - "$ELF" "$ELF.out" "$EXPECTED" "$(basename "$MODEL")" "$KERNELS" "$ICOUNT_SHIFT" "$ARENA" "${VERBOSE:-0}" <<'PY'
import struct, subprocess, sys
elf, out, expected, name, kernels, shift, arena_size, verbose = sys.argv[1:9]
fields = dict(l.split(" ", 1) for l in open(out).read().splitlines() if " " in l)
sizes = {}
for line in subprocess.run(["arm-none-eabi-size", "-A", elf], capture_output=True, text=True,
                           check=True).stdout.splitlines()[2:]:
    parts = line.split()
    if len(parts) == 3 and parts[1].isdigit():
        sizes[parts[0]] = int(parts[1])
flash = sum(sizes.get(s, 0) for s in (".vector_table", ".text", ".rodata", ".data"))
ram = sum(sizes.get(s, 0) for s in (".data", ".bss")) + int(fields["stack_peak"])
instructions = int(fields["systick_ticks"]) * 40 // (1 << int(shift))
# Host-side check of the output bytes, as memplan's cortex_m_figures.py does.
got, want = bytes.fromhex(fields["output"]), open(expected, "rb").read()
is_float = name.endswith(("_f32.tflite", "_float32.tflite"))
if not is_float:
    host_equal = got == want
else:
    g = struct.unpack(f"<{len(got)//4}f", got); w = struct.unpack(f"<{len(want)//4}f", want)
    host_equal = len(g) == len(w) and all(abs(a - b) <= 1e-4 + 1e-3 * abs(b) for a, b in zip(g, w))
device_equal = fields["output_equal"] == "yes"
equal = "yes" if (host_equal and device_equal) else ("no" if host_equal == device_equal else "DISAGREE")
if verbose == "1":
    print(open(out).read(), end="", file=sys.stderr)
    print({k: v for k, v in sizes.items() if not k.startswith((".debug", ".comment", ".ARM.attr"))},
          file=sys.stderr)
print(f"{name} {kernels} instructions={instructions} flash={flash} ram={ram} "
      f"arena={fields['arena_used']} output_equal={equal} | arena_linked={arena_size} "
      f"stack={fields['stack_peak']} text={sizes.get('.text', 0)} rodata={sizes.get('.rodata', 0)} "
      f"data={sizes.get('.data', 0)} bss={sizes.get('.bss', 0)} "
      f"vector_table={sizes.get('.vector_table', 0)} systick_ticks={fields['systick_ticks']}")
PY
