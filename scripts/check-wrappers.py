#!/usr/bin/env python3
"""The R wrappers match the Rust functions the bridge exports (issue 42).

The bridge (rust/mcplite-r/src) exports the `#[extendr]` functions listed in
its `extendr_module!` blocks; R reaches each one through `.Call(wrap__<name>,
...)`, written by hand in R/bridge-wrappers.R (a few hot paths elsewhere, listed
in OWN_CALLERS). This checks, from the sources alone, that
  - every exported function has exactly one `.Call()` in R, in
    R/bridge-wrappers.R or the file OWN_CALLERS names for it;
  - every `.Call(wrap__...)` in R names an exported function;
  - each `.Call()` passes as many arguments as the Rust function takes;
  - every wrapper in R/bridge-wrappers.R returns through bridge_value()
    except those in NO_BRIDGE_VALUE.
Prints one line per problem and exits 1 if there is any.
Usage: python3 scripts/check-wrappers.py [repository root]
"""
import os
import re
import sys

# Entry points R calls outside R/bridge-wrappers.R, and where.
OWN_CALLERS = {"engine_trace_context": "R/trace.R"}
# Wrappers whose entry point cannot fail, called without bridge_value().
NO_BRIDGE_VALUE = {"json_flavor_impl"}

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)


def top_level_args(text):
    """Split `text` (between the parentheses of a call) at commas outside
    brackets; returns the non-empty parts."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def balanced(text, start):
    """The text between the parenthesis at `start` and its match."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    raise ValueError("unbalanced parentheses")


# Rust: the functions of every extendr_module!, and their parameter counts.
exported = {}
params = {}
for d, _, files in os.walk("rust/mcplite-r/src"):
    for f in files:
        if not f.endswith(".rs"):
            continue
        path = os.path.join(d, f)
        src = open(path, encoding="utf-8").read()
        for block in re.findall(r"extendr_module!\s*\{(.*?)\}", src, re.S):
            for name in re.findall(r"^\s*fn\s+(\w+)\s*;", block, re.M):
                exported[name] = path
        for m in re.finditer(r"#\[(?:extendr_api::)?extendr\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?fn\s+(\w+)\s*(?:<[^>]*>)?\s*\(", src):
            params[m.group(1)] = len(top_level_args(balanced(src, m.end() - 1)))

# R: every .Call(wrap__...) and the wrapper around it.
calls = {}
problems = []
for f in sorted(os.listdir("R")):
    if not f.endswith(".R"):
        continue
    path = "R/" + f
    src = open(path, encoding="utf-8").read()
    for m in re.finditer(r"\.Call\(\s*wrap__(\w+)", src):
        name = m.group(1)
        args = top_level_args(balanced(src, m.start() + len(".Call")))[1:]
        calls.setdefault(name, []).append((path, len(args), m.start(), src))

for name, path in sorted(exported.items()):
    if name not in calls:
        problems.append(f"{name} ({path}) is exported by the bridge but no R code calls it")
for name, sites in sorted(calls.items()):
    if name not in exported:
        for path, _, _, _ in sites:
            problems.append(f"{path} calls wrap__{name}, which the bridge does not export (extendr_module!)")
        continue
    if len(sites) > 1:
        problems.append(f"wrap__{name} is called {len(sites)} times ({', '.join(s[0] for s in sites)}): one wrapper each")
    want = OWN_CALLERS.get(name, "R/bridge-wrappers.R")
    for path, n, pos, src in sites:
        if path != want:
            problems.append(f"wrap__{name} is called in {path}; its wrapper belongs in {want}")
        if name not in params:
            problems.append(f"no #[extendr] fn {name} found in rust/mcplite-r/src")
        elif n != params[name]:
            problems.append(f"{path}: .Call(wrap__{name}) passes {n} arguments; the Rust function takes {params[name]}")
        if path == "R/bridge-wrappers.R" and name not in NO_BRIDGE_VALUE:
            if not re.search(r"bridge_value\(\s*$", src[:pos]):
                problems.append(f"{path}: the wrapper of {name} does not return through bridge_value()")

for p in problems:
    print(p)
print(f"{len(exported)} exported functions, {sum(len(s) for s in calls.values())} .Call() sites in R, "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
