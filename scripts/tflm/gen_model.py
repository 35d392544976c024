#!/usr/bin/env python3
"""Writes the model-specific inputs of the harness for one .tflite file:

  model_data.S  the model, its input and its reference output as flash arrays (.incbin)
  model_ops.h   HARNESS_NUM_OPS and HARNESS_REGISTER_OPS(r): one MicroMutableOpResolver Add
                call per distinct builtin operator of the model

usage: gen_model.py MODEL.tflite INPUT.bin EXPECTED.bin OUT_DIR TFLM_DIR

The operator codes are read from the flatbuffer directly (no tflite package); their names come
from TFLM's schema_generated.h and the Add methods from micro_mutable_op_resolver.h, matched by
name with underscores removed, case ignored (CONV_2D -> AddConv2D).
"""
import re
import struct
import sys
from pathlib import Path


def table_field(buf, table, index):
    """Absolute offset of field `index` of the table at `table`, or None if absent."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    vsize, = struct.unpack_from("<H", buf, vtable)
    if 4 + 2 * index >= vsize:
        return None
    off, = struct.unpack_from("<H", buf, vtable + 4 + 2 * index)
    return table + off if off else None


def vector_of_tables(buf, field):
    vec = field + struct.unpack_from("<I", buf, field)[0]
    n, = struct.unpack_from("<I", buf, vec)
    return [vec + 4 + 4 * i + struct.unpack_from("<I", buf, vec + 4 + 4 * i)[0] for i in range(n)]


def op_codes(model: Path):
    buf = model.read_bytes()
    root, = struct.unpack_from("<I", buf, 0)
    codes = []
    for oc in vector_of_tables(buf, table_field(buf, root, 1)):   # Model.operator_codes
        f0 = table_field(buf, oc, 0)                               # deprecated_builtin_code: byte
        f3 = table_field(buf, oc, 3)                               # builtin_code: int32
        dep = struct.unpack_from("<b", buf, f0)[0] if f0 else 0
        new = struct.unpack_from("<i", buf, f3)[0] if f3 else 0
        if table_field(buf, oc, 1):                                # custom_code
            raise SystemExit(f"{model}: custom operators are not supported by this harness")
        codes.append(max(dep, new))
    return codes


def main():
    model, inp, expected, out_dir, tflm = map(Path, sys.argv[1:6])
    schema = (tflm / "tensorflow/lite/schema/schema_generated.h").read_text()
    names = {int(v): n for n, v in re.findall(r"^\s*BuiltinOperator_([A-Z0-9_]+) = (\d+),?$",
                                              schema, re.M)}
    resolver = (tflm / "tensorflow/lite/micro/micro_mutable_op_resolver.h").read_text()
    adds = {m.lower(): m for m in re.findall(r"TfLiteStatus Add([A-Za-z0-9]+)\(", resolver)}
    calls = []
    for code in sorted(set(op_codes(model))):
        name = names[code]
        method = adds.get(name.replace("_", "").lower())
        if method is None:
            raise SystemExit(f"{model}: no MicroMutableOpResolver::Add for {name}")
        calls.append((name, method))
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"#define HARNESS_NUM_OPS {len(calls)}",
             f"#define HARNESS_OP_NAMES \"{' '.join(n for n, _ in calls)}\"",
             "#define HARNESS_REGISTER_OPS(r, ok) do { ok = true; \\"]
    lines += [f"  if ((r).Add{m}() != kTfLiteOk) ok = false; \\" for _, m in calls]
    lines += ["} while (0)", ""]
    (out_dir / "model_ops.h").write_text("\n".join(lines))

    def blob(sym, path, section, align):
        return (f"  .section {section},\"a\"\n  .balign {align}\n  .global {sym}\n{sym}:\n"
                f"  .incbin \"{path.resolve()}\"\n{sym}_end:\n"
                f"  .section .rodata.{sym}_len,\"a\"\n  .balign 4\n  .global {sym}_len\n"
                f"{sym}_len:\n  .word {sym}_end - {sym}\n")
    (out_dir / "model_data.S").write_text(
        blob("g_model", model, ".rodata.g_model", 16)
        + blob("g_input", inp, ".rodata.g_input", 16)
        # The reference output is only for the check: its own section, left out of the flash figure.
        + blob("g_expected", expected, ".reference", 4).replace(
            ".section .rodata.g_expected_len", ".section .reference.len"))
    print(" ".join(n for n, _ in calls))


if __name__ == "__main__":
    main()
