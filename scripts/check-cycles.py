#!/usr/bin/env python3
"""No import cycle between the files of the engine (issue 42).

Reads every `.rs` file of rust/engine/src (without its `#[cfg(test)] mod
tests`), finds the files each one names through `crate::` and `super::`
paths (in `use` items and in code), and reports every group of files that
reach one another. A parent module file (`mod.rs`, `lib.rs`) and the files of
its own directory are not counted as a cycle: the parent declares and
re-exports its children, which use the items it defines.
Prints the cycles and exits 1 if there is any.
Usage: python3 scripts/check-cycles.py [repository root]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
src_dir = os.path.join(root, "rust", "engine", "src")

files = {}
for d, _, names in os.walk(src_dir):
    for f in names:
        if f.endswith(".rs"):
            path = os.path.join(d, f)
            files[os.path.relpath(path, src_dir)] = open(path, encoding="utf-8").read()


def module_path(rel):
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


modules = {module_path(rel): rel for rel in files}


def file_of(path):
    """The file that defines the longest module prefix of `path`."""
    for n in range(len(path), -1, -1):
        if tuple(path[:n]) in modules:
            return modules[tuple(path[:n])]
    return None


def is_parent(a, b):
    """Is `a` the mod.rs/lib.rs whose directory holds `b`?"""
    if not (a.endswith("mod.rs") or a == "lib.rs"):
        return False
    return b.startswith(os.path.dirname(a))


edges = {}
for rel, text in files.items():
    text = re.split(r"\n#\[cfg\(test\)\]\s*\nmod tests", text)[0]
    text = re.sub(r"//.*", "", text)
    me = list(module_path(rel))
    targets = set()
    for m in re.finditer(r"\b((?:crate|super)(?:::\w+)+)", text):
        toks = m.group(1).split("::")
        if toks[0] == "crate":
            base, toks = [], toks[1:]
        else:
            base = me[:]
            while toks and toks[0] == "super":
                base, toks = base[:-1], toks[1:]
        targets.add(file_of(base + toks))
    for m in re.finditer(r"\b(crate|super)::\{([^}]*)\}", text):
        base = [] if m.group(1) == "crate" else me[:-1]
        for name in re.split(r"[,\s]+", m.group(2)):
            name = name.split("::")[0]
            if name and name != "self":
                targets.add(file_of(base + [name]))
    targets.discard(None)
    targets.discard(rel)
    edges[rel] = {t for t in targets if not is_parent(rel, t) and not is_parent(t, rel)}

# Tarjan's strongly connected components.
index, low, stack, on_stack, cycles = {}, {}, [], set(), []
counter = [0]
sys.setrecursionlimit(10000)


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on_stack.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on_stack.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            cycles.append(sorted(comp))


for v in sorted(edges):
    if v not in index:
        visit(v)
for c in cycles:
    print("import cycle: " + " -> ".join(c))
print(f"{len(files)} engine files, {len(cycles)} import cycles")
sys.exit(1 if cycles else 0)
