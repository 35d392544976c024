#!/usr/bin/env python3
"""Import circles between the files of one crate: file A names an item of file B's module and B
names one of A's, directly or through other files (every strongly connected group of files).

    python3 scripts/import_circles.py            # every crate of the workspace (run at its root)
    python3 scripts/import_circles.py memplan-core

A file names another through `use` and through paths in code (`crate::solve::auto::f`,
`super::search::Budget`). A name re-exported by a `mod.rs` or `lib.rs` (`pub use items::generate`)
is followed to the file that defines it; `mod` declarations and the re-exports themselves are
not uses, nor are a module file's relative paths into its own children (`auto::solve(..)` in
`solve/mod.rs`: a parent dispatching to its parts, which use its vocabulary). Test modules
(`#[cfg(test)] mod tests { .. }` to the end of the file) do not count.
Prints one line per circle, its files joined by ` <-> `, or `no import circles`. Exits 0.
"""

import os
import re
import sys

# The workspace: the folder it is run from.
ROOT = os.getcwd()

CRATES = [
    ".",
    "memplan-core",
    "memplan-cli",
    "memplan-macro",
    "memplan-onnx",
    "memplan-tflite",
    "memplan-runner",
    "memplan-kernels",
    "memplan-build",
    "memplan-output",
]

PATH = re.compile(r"\b(crate|super|self)((?:::\w+)+)")
USE_GROUP = re.compile(r"\buse\s+((?:crate|super|self)(?:::\w+)*)::\{([^;]*)\};", re.S)


def strip(text):
    """The text without comments, strings and the test module."""
    cut = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod \w+\s*\{", text)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def modules(src):
    """Module path (tuple) -> file, for every .rs file below `src`."""
    out = {}
    for dirpath, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            out[tuple(rel)] = path
    return out


def reexports(mods):
    """(module, name) -> module defining it, for `pub use child::{..}` in a module file."""
    out = {}
    for mod, path in mods.items():
        text = strip(open(path, encoding="utf-8").read())
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([\w:]+?)(?:::\{([^;]*)\}|::(\w+));", text):
            base = m.group(1).split("::")
            if base[0] == "crate":
                target = tuple(base[1:])
            elif base[0] == "self":
                target = mod + tuple(base[1:])
            elif base[0] == "super":
                target = mod[:-1] + tuple(base[1:])
            else:
                target = mod + tuple(base)
            names = m.group(2).split(",") if m.group(2) else [m.group(3)]
            for name in names:
                name = name.strip().split(" as ")[-1].strip()
                if name and name.isidentifier():
                    out[(mod, name)] = target
    return out


def resolve(mods, exports, segments):
    """The file a path's segments (from the crate root) name an item of."""
    for k in range(len(segments), 0, -1):
        mod = tuple(segments[:k])
        if mod in mods:
            if k < len(segments) and (mod, segments[k]) in exports:
                target = exports[(mod, segments[k])]
                if target in mods:
                    return mods[target]
            return mods[mod]
    return mods.get(())


def edges(src):
    mods = modules(src)
    exports = reexports(mods)
    graph = {path: set() for path in mods.values()}
    for mod, path in mods.items():
        text = strip(open(path, encoding="utf-8").read())
        # A module file's own re-exports are its interface, not a use.
        text = re.sub(r"\bpub(?:\([^)]*\))?\s+use\s+[^;]*;", "", text)
        paths = []
        for m in USE_GROUP.finditer(text):
            for name in re.split(r"[,\s{}]+", m.group(2)):
                if name and name not in ("self", "as") and name[0].isalpha():
                    paths.append(m.group(1) + "::" + name)
        paths += [m.group(0) for m in PATH.finditer(text)]
        for p in paths:
            parts = p.split("::")
            if parts[0] == "crate":
                segs = parts[1:]
            elif parts[0] == "super":
                up = mod
                while parts and parts[0] == "super":
                    up, parts = up[:-1], parts[1:]
                segs = list(up) + parts
            else:  # self
                segs = list(mod) + parts[1:]
            target = resolve(mods, exports, segs)
            if target and target != path:
                graph[path].add(target)
    return graph


def circles(graph):
    """Strongly connected groups of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    crates = sys.argv[1:] or CRATES
    found = 0
    for crate in crates:
        src = os.path.join(ROOT, crate, "src")
        if not os.path.isdir(src):
            continue
        for group in circles(edges(src)):
            found += 1
            print(" <-> ".join(os.path.relpath(p, ROOT) for p in group))
    if not found:
        print("no import circles")


if __name__ == "__main__":
    main()
