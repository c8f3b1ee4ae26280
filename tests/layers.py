#!/usr/bin/env python3
"""layers.py - lib/'s folders form a stack, and every arrow points down.

The stack, bottom first (docs/layers.md says why each folder sits where it does):

    util < shared < io < types < meta < format < pipeline < split < hash < verify
         < edit < quant < diff < index < convert < export

A folder may include the headers of, and call the functions of, its own folder
and the folders below it; never one above. The checks:

  includes  every #include "DIR/x.h" in lib/DIR1 has DIR at or below DIR1
            ("ggufkit.h", the public header, is allowed everywhere);
  calls     every symbol an object file of the static library leaves undefined
            and another object of it defines lives at or below the object's folder;
  circles   the folders' actual arrows (includes and calls) have no circle, and
            no header includes itself through others;
  docs      docs/layers.md lists the same stack;
  tools     the small tools at the bottom stay written once: FNV-1a's prime
            only in util/hashmap.h, open addressing only in util/hashmap.c,
            realloc only in util/grow.c (and the capped whole-file read of
            io/inputs.c), little-endian loads and stores only in
            util/byteorder.h (the vector kernels, types/*_avx*.c, are not
            looked at: they are being rewritten from one template).

With --cmd-public (a test of its own, layers_cmd_public): cmd/ includes no
header of lib/ but ggufkit.h, and its object files reference only functions the
shared library exports.

usage: layers.py SOURCE_ROOT LIBGGUFKIT.a
       layers.py --cmd-public SOURCE_ROOT GGUFKIT_EXE LIBGGUFKIT.so
"""
import os
import re
import subprocess
import sys

STACK = ["util", "shared", "io", "types", "meta", "format", "pipeline", "split", "hash",
         "verify", "edit", "quant", "diff", "index", "convert", "export"]
RANK = {d: i for i, d in enumerate(STACK)}

# Objects the build generates, by the folder whose source they come from.
GENERATED = {"spm_model.pb-c": "convert"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

failures = []


def fail(msg):
    failures.append(msg)


def lib_files(root):
    """(folder, path relative to lib/) of every .c and .h under lib/DIR/."""
    lib = os.path.join(root, "lib")
    for d in sorted(os.listdir(lib)):
        full = os.path.join(lib, d)
        if not os.path.isdir(full):
            continue
        for dirpath, _, names in os.walk(full):
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield d, os.path.relpath(os.path.join(dirpath, n), lib)


def check_includes(root, edges):
    """Rule (a); fills edges[(from, to)] with one example each; returns the
    header graph for the circle check."""
    graph = {}
    for d, rel in lib_files(root):
        if d not in RANK:
            fail(f"lib/{d}/ is not in the stack: give it a place in tests/layers.py and docs/layers.md")
            continue
        with open(os.path.join(root, "lib", rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        targets = []
        for inc in INCLUDE.findall(text):
            if inc == "ggufkit.h":
                continue
            if "/" not in inc:
                targets.append(os.path.join(d, inc))   # beside it (generated headers)
                continue
            to = inc.split("/", 1)[0]
            targets.append(inc)
            if to not in RANK:
                fail(f"lib/{rel} includes \"{inc}\": {to}/ is not a folder of the stack")
                continue
            if to != d:
                edges.setdefault((d, to), f"lib/{rel} includes {inc}")
            if RANK[to] > RANK[d]:
                fail(f"upward include: lib/{rel} ({d}) includes \"{inc}\" ({to} sits above {d})")
        graph[rel] = targets
    return graph


def object_folder(member):
    """The lib/ folder of a static library member (meson names them
    lib_DIR_FILE.c.o), or None."""
    base = member[:-2] if member.endswith(".o") else member
    base = base[:-2] if base.endswith(".c") else base
    for gen, folder in GENERATED.items():
        if base.endswith(gen):
            return folder
    m = re.match(r"lib_([a-z0-9]+)_", base)
    return m.group(1) if m else None


def nm_lines(args):
    out = subprocess.run(["nm"] + args, check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def check_calls(archive, edges):
    """Rule (b): symbols undefined in one member and defined in another."""
    defined, undefined = {}, {}
    members = set()
    for line in nm_lines(["-A", archive]):
        # "lib.a:member.o:                 U name" or "lib.a:member.o:0000 T name"
        m = re.match(r"^.*?:([^:]+\.o):\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z?])\s+(\S+)$", line)
        if not m:
            continue
        member, kind, sym = m.groups()
        members.add(member)
        if kind == "U":
            undefined.setdefault(member, set()).add(sym)
        elif kind.isupper() and kind not in "UVW":
            defined[sym] = member
    if len(members) < 10:
        fail(f"{archive}: only {len(members)} object files found (nm output not understood?)")
    for member in sorted(members):
        if object_folder(member) is None:
            fail(f"{archive}: cannot tell the folder of {member}")
    for member, syms in sorted(undefined.items()):
        d = object_folder(member)
        if d is None or d not in RANK:
            continue
        for sym in sorted(syms):
            owner = defined.get(sym)
            if owner is None:
                continue          # the C library, libzstd, ...
            to = object_folder(owner)
            if to is None or to == d:
                continue
            edges.setdefault((d, to), f"{member} calls {sym} ({owner})")
            if to not in RANK:
                fail(f"{member} uses {sym} of {owner}, whose folder {to}/ is not in the stack")
            elif RANK[to] > RANK[d]:
                fail(f"upward call: {member} ({d}) uses {sym}, defined in {owner} ({to} sits above {d})")


def strongly_connected(nodes, succ):
    """Tarjan's components of the graph (nodes, succ: node -> iterable)."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        work = [(v, iter(succ.get(v, ())))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                comps.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return comps


def check_circles(edges, headers):
    """Rule (c): no circle among the folders, none among the headers."""
    succ = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    nodes = sorted(set(succ) | {b for s in succ.values() for b in s})
    for comp in strongly_connected(nodes, {k: sorted(v) for k, v in succ.items()}):
        if len(comp) > 1:
            members = set(comp)
            why = [f"{a} -> {b}: {edges[(a, b)]}" for (a, b) in sorted(edges) if a in members and b in members]
            fail("circle between folders " + ", ".join(sorted(comp)) + ":\n    " + "\n    ".join(why))
    hsucc = {h: [t for t in ts if t.endswith(".h") and t in headers] for h, ts in headers.items() if h.endswith(".h")}
    for comp in strongly_connected(sorted(hsucc), hsucc):
        if len(comp) > 1 or comp[0] in hsucc.get(comp[0], []):
            fail("headers that include each other: " + ", ".join(sorted(comp)))


# Where each tool may be written out, and files that may do it themselves.
TOOLS = [
    ("FNV-1a's prime", re.compile(r"0x100000001b3|1099511628211"), {"util/hashmap.h"}),
    ("an open-addressing table (use util/hashmap.h)", re.compile(r"&\s*\(\s*[\w>.-]*cap\w*\s*-\s*1\s*\)"),
     {"util/hashmap.c"}),
    ("a realloc (use GK_GROW, util/grow.h)", re.compile(r"\brealloc\s*\("), {"util/grow.c", "io/inputs.c"}),
    ("a little-endian load or store (use util/byteorder.h)",
     re.compile(r"\(uint(?:32|64)_t\)\s*\w+\[[1-7]\]\s*<<\s*(?:8|16|24)\b|"
                r"\(uint(?:32|64)_t\)\s*\w+\[\w+\]\s*<<\s*\(\s*8\s*\*|"
                r"\w+\[\w+\]\s*=\s*\(uint8_t\)\s*\([^;\n]*>>\s*\(\s*8\s*\*\s*\w+\s*\)\s*\)|"
                r"static[^;{\n]*\b(?:load|store|get|put|rd|wr)_?(?:u|le)?(?:16|32|64)(?:le)?\s*\(\s*(?:const\s+)?uint8_t\s*\*"),
     {"util/byteorder.h"}),
]


def check_tools(root):
    for d, rel in lib_files(root):
        if "_avx" in os.path.basename(rel):
            continue   # the vector kernels (see the summary above)
        with open(os.path.join(root, "lib", rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for what, pattern, allowed in TOOLS:
            if rel in allowed:
                continue
            m = pattern.search(text)
            if m:
                line = text.count("\n", 0, m.start()) + 1
                fail(f"lib/{rel}:{line}: {what} written out again: {m.group(0)!r}")


def check_docs(root):
    path = os.path.join(root, "docs", "layers.md")
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        fail(f"docs/layers.md: {e}")
        return
    m = re.search(r"^stack:\s*(.+)$", text, re.M)
    listed = [w.strip() for w in m.group(1).split("<")] if m else None
    if listed != STACK:
        fail(f"docs/layers.md's 'stack:' line lists {listed}, tests/layers.py {STACK}")


def check_cmd(root, exe, shared):
    """cmd/ uses only the public header and the exported functions."""
    cmd = os.path.join(root, "cmd")
    for n in sorted(os.listdir(cmd)):
        if not n.endswith((".c", ".h")):
            continue
        text = open(os.path.join(cmd, n), encoding="utf-8", errors="replace").read()
        for inc in INCLUDE.findall(text):
            if os.path.exists(os.path.join(cmd, inc)) or inc == "ggufkit.h":
                continue
            if os.path.exists(os.path.join(root, "lib", inc)):
                fail(f"cmd/{n} includes lib/{inc}, an internal header (only ggufkit.h is public)")
    exported = {line.split()[-1] for line in nm_lines(["-D", "--defined-only", shared]) if line.split()}
    objdir = exe + ".p"
    if not os.path.isdir(objdir):
        fail(f"{objdir}: the command's object files are not where meson puts them")
        return
    for n in sorted(os.listdir(objdir)):
        if not n.endswith(".o"):
            continue
        for line in nm_lines(["--undefined-only", os.path.join(objdir, n)]):
            sym = line.split()[-1]
            if sym.startswith("gk_") and sym not in exported:
                fail(f"{n} uses {sym}, which libggufkit.so does not export")


def main(argv):
    if len(argv) == 5 and argv[1] == "--cmd-public":
        check_cmd(argv[2], argv[3], argv[4])
        what = "cmd/ uses only the public header and exported functions"
    elif len(argv) == 3:
        root, archive = argv[1], argv[2]
        edges = {}
        headers = check_includes(root, edges)
        check_calls(archive, edges)
        check_circles(edges, headers)
        check_docs(root)
        check_tools(root)
        what = (f"lib/'s {len(STACK)} folders form a stack: {len(edges)} folder arrows, all downward, "
                "no circle; the small tools written once")
    else:
        sys.stderr.write(__doc__)
        return 2
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("ok:", what)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
