#!/usr/bin/env python3
"""The dependency graph of the library's top-level modules, and its cycles.

Reads every source file of crates/tempi/src and records an edge A -> B whenever the code of
module A names `crate::B` (a path, a `use`, or a name the crate root re-exports from B). Comments
and doc comments are skipped, and so are test and loom modules: they may use any layer.
Prints the groups of modules that reach each other. `--check` fails when an edge in a cycle is
not listed in `.ci/module_deps.allowed`, or a listed edge no longer closes one: that list of
known debts only shrinks. `--list` prints every edge with the first file that makes it.
"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(__file__), "..", "crates", "tempi", "src")
# `runtime_run` is the second half of `runtime` (one module split in two files for size).
SAME = {"runtime_run": "runtime"}

# Edges that still close a cycle today. Each is a known debt; remove an entry when its edge
# goes, and never add one.
ALLOWED = set()
ALLOWED_FILE = os.path.join(os.path.dirname(__file__), "module_deps.allowed")
if os.path.exists(ALLOWED_FILE):
    for line in open(ALLOWED_FILE):
        line = line.split("#", 1)[0].strip()
        if line:
            a, b = (x.strip() for x in line.split("->"))
            ALLOWED.add((a, b))


def top_module(path):
    rel = os.path.relpath(path, SRC)
    first = rel.split(os.sep)[0]
    name = first[:-3] if first.endswith(".rs") else first
    return SAME.get(name, name)


def root_reexports():
    """The names lib.rs re-exports at the crate root, each with the module it comes from."""
    text = open(os.path.join(SRC, "lib.rs"), encoding="utf-8").read()
    names = {}
    for m in re.finditer(r"^pub use ([a-z_]+)::(\{[^;]*\}|[A-Za-z_0-9]+);", text, re.M):
        for item in m.group(2).strip("{}").split(","):
            item = item.strip().split(" as ")[-1].strip()
            if item:
                names[item] = SAME.get(m.group(1), m.group(1))
    return names


def library_lines(text):
    """The lines of a file that build the library: no comments, no test or loom modules."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"\s*#\[cfg\(.*\b(test|loom)\b.*\)\]\s*$", line):
            j = i + 1
            while j < len(lines) and lines[j].lstrip().startswith("#["):
                j += 1
            m = re.match(r"(\s*)(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{\s*$", lines[j]) if j < len(lines) else None
            if m:
                end = m.group(1) + "}"
                k = j + 1
                while k < len(lines) and lines[k] != end:
                    k += 1
                i = k + 1
                continue
        if not line.lstrip().startswith("//"):
            yield line
        i += 1


def edges():
    found = {}
    reexported = root_reexports()
    path_re = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
    group_re = re.compile(r"\buse\s+crate::\{([^;]*)\}", re.S)
    for root, _, files in os.walk(SRC):
        for f in files:
            if not f.endswith(".rs"):
                continue
            p = os.path.join(root, f)
            a = top_module(p)
            if a == "lib":
                continue
            text = open(p, encoding="utf-8").read()
            code = "\n".join(library_lines(text))
            names = set(path_re.findall(code))
            names |= {
                reexported[n] for n in re.findall(r"\bcrate::([A-Z][A-Za-z0-9_]*)", code) if n in reexported
            }
            for g in group_re.findall(code):
                for item in re.split(r",(?![^{]*\})", g):
                    item = item.strip()
                    if item:
                        head = re.split(r"::|\s", item)[0]
                        names.add(reexported.get(head, head))
            for b in names:
                b = SAME.get(b, b)
                is_module = os.path.isdir(os.path.join(SRC, b)) or os.path.exists(os.path.join(SRC, b + ".rs"))
                if b != a and is_module:
                    found.setdefault((a, b), p)
    return found


def sccs(nodes, adj):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    found = edges()
    nodes = {a for a, _ in found} | {b for _, b in found}
    adj = {}
    for a, b in found:
        adj.setdefault(a, set()).add(b)
    comps = [c for c in sccs(nodes, adj) if len(c) > 1]
    cyclic = set()
    for c in comps:
        cs = set(c)
        for a, b in found:
            if a in cs and b in cs:
                cyclic.add((a, b))
    if "--list" in sys.argv:
        for a, b in sorted(found):
            print(f"{a} -> {b}    ({os.path.relpath(found[(a, b)], SRC)})")
        return 0
    for c in comps:
        print("cycle through: " + ", ".join(c))
    new = sorted(cyclic - ALLOWED)
    gone = sorted(ALLOWED - cyclic)
    for a, b in gone:
        print(f"no longer in a cycle (remove it from .ci/module_deps.allowed): {a} -> {b}")
    for a, b in new:
        print(f"NEW edge in a cycle: {a} -> {b}  (first in {os.path.relpath(found[(a, b)], SRC)})")
    if "--check" in sys.argv and (new or gone):
        return 1
    if not comps:
        print("no import cycle among the top-level modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
