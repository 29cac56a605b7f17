#!/usr/bin/env bash
# Check that every rule reference in the repository resolves inside it.
#
#   bash scripts/check-refs.sh          # check; prints problems as file:line
#   bash scripts/check-refs.sh --list   # also print every id cited and where
#
# Over every tracked text file (lock files, fuzz seeds and this script aside)
# it fails on:
#   - a citation of the old, external rules document (the upper-case word that
#     was used before RULES.md existed) or of the external engine notes;
#   - "RULES <id>" (also "RULES P1–P3", "RULES J1.1/J2", "RULES R5.2 3-5",
#     "RULES section 8", "RULES sections 3–6", "RULES 10") whose id has no
#     heading or anchor in RULES.md;
#   - a dotted rule id written on its own (e.g. "(W1.3)", "R1.2.1") that has
#     none either;
#   - an id defined twice in RULES.md.
# Ids are defined in RULES.md by headings that start with the id ("#### R1.2
# ...", "### L2 ..."), by `<a id="R1.2.1"></a>` anchors, and by section
# headings ("## 6. ..."). Undotted ids without "RULES" (P1, S3, W2) are not
# checked: too many other things look like them (S3 classes, benchmark
# workloads).
#
# The last line is "N passed, N failed" (one per reference), so this runs as a
# test suite; the exit status is non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import os
import re
import subprocess
import sys

LIST = "--list" in sys.argv[1:]
RULES_FILE = "RULES.md"

# Spelled in pieces so that this file never contains the words it looks for.
OLD_DOC = re.compile(r"\b" + "SP" + r"EC\b")
NOTES = re.compile("ENGINE" + r"[- _]" + "NOTES")
SELF = "scripts/check-refs.sh"

ID = r"[A-Z][0-9]+(?:\.[0-9]+)*"
SEP = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*/\s*|\s*[–-]\s*)"
STEPS = r"(?:\s+[0-9]+(?:\s*[–-]\s*[0-9]+)?(?![0-9.]))"
ID_ITEM = re.compile(r"(" + ID + r")(" + STEPS + r")?")
ID_LIST = re.compile(r"\s+(" + ID + STEPS + r"?(?:" + SEP + ID + STEPS + r"?)*)")
SECTION_LIST = re.compile(r"\s+[Ss]ections?\s+([0-9]+(?:" + SEP + r"[0-9]+)*)")
BARE_SECTION = re.compile(r"\s+([0-9]+)(?![0-9.])")
RULES_WORD = re.compile(r"\bRULES\b(?!\\?\.md)")
DOTTED = re.compile(r"(?<![\w.\-#])([RJWLMPSTE][0-9]{1,2}(?:\.[0-9]+)+)(?![\w]|\.[0-9])")
COMMENT_LEAD = re.compile(r"^\s*(?://[!/]?|#'?|\*|--|;+|\"\"\")?\s*")

passed = 0
failed = 0
cited = {}


def fail(where, msg):
    global failed
    failed += 1
    print(f"{where}: {msg}")


def ok(ident, where):
    global passed
    passed += 1
    cited.setdefault(ident, []).append(where)


def defined_ids():
    ids = {}
    try:
        lines = open(RULES_FILE, encoding="utf-8").read().split("\n")
    except OSError:
        fail(RULES_FILE, "missing: rule references cannot resolve")
        return {}
    in_code = False
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        found = []
        m = re.match(r"^##\s+([0-9]+)\.\s", line)
        if m:
            found.append("section " + m.group(1))
        m = re.match(r"^#{2,6}\s+(" + ID + r")(?![\w.])", line)
        if m:
            found.append(m.group(1))
        found += re.findall(r'<a id="([^"]+)"></a>', line)
        for f in found:
            if f in ids:
                fail(f"{RULES_FILE}:{n}", f"`{f}` is defined twice (first on line {ids[f]})")
            else:
                ids[f] = n
    return ids


def tracked_files():
    out = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in out.decode("utf-8", "replace").split("\0"):
        if not name or name.endswith(".lock") or name.endswith("package-lock.json"):
            continue
        if name == SELF or name.startswith("fuzz/seeds/") or not os.path.isfile(name):
            continue
        yield name


def read_text(name):
    with open(name, "rb") as fh:
        data = fh.read()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def resolve(ident, ids, where):
    if ident in ids:
        ok(ident, where)
    else:
        fail(where, f"`{ident}` has no heading or anchor in {RULES_FILE}")


def check_rules_citation(tail, ids, where):
    """`tail` is the text after the word RULES."""
    m = SECTION_LIST.match(tail)
    if m:
        for num in re.findall(r"[0-9]+", m.group(1)):
            resolve("section " + num, ids, where)
        return
    m = ID_LIST.match(tail)
    if m:
        for item in ID_ITEM.finditer(m.group(1)):
            base, steps = item.group(1), item.group(2)
            resolve(base, ids, where)
            if steps:
                for step in re.findall(r"[0-9]+", steps):
                    resolve(f"{base}.{step}", ids, where)
        return
    m = BARE_SECTION.match(tail)
    if m:
        resolve("section " + m.group(1), ids, where)
        return
    fail(where, "`RULES` without a rule id or section (cite an id, or name the file RULES.md)")


def main():
    ids = defined_ids()
    for name in tracked_files():
        text = read_text(name)
        if text is None:
            continue
        lines = text.split("\n")
        for i, line in enumerate(lines):
            where = f"{name}:{i + 1}"
            if OLD_DOC.search(line):
                fail(where, "cites the old external rules document: cite RULES.md ids instead")
            if NOTES.search(line):
                fail(where, "cites the external engine notes: point to ARCHITECTURE.md or explain in place")
            for m in RULES_WORD.finditer(line):
                tail = line[m.end():]
                if not tail.strip() and i + 1 < len(lines):
                    tail = " " + COMMENT_LEAD.sub("", lines[i + 1], count=1)
                check_rules_citation(tail, ids, where)
            for m in DOTTED.finditer(line):
                start = m.start()
                before = line[max(0, start - 6):start]
                if re.search(r"RULES\s+$", before):
                    continue  # already checked as a RULES citation
                resolve(m.group(1), ids, where)
    if LIST:
        def key(k):
            return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", k)]
        for ident in sorted(cited, key=key):
            places = cited[ident]
            print(f"{ident}\t{len(places)}\t{', '.join(places[:3])}{' ...' if len(places) > 3 else ''}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


sys.exit(main())
PY
