#!/usr/bin/env python3
"""edit_check.py - checks that `ggufkit edit` changed exactly what it was asked to.

usage: edit_check.py BEFORE.json AFTER.json [OP]...
       edit_check.py --batch LIST

BEFORE and AFTER are `ggufkit dump --json --json-array` outputs of a file before
and after an edit. The expected metadata is BEFORE's with the OPs applied in
order; AFTER must equal it: the same keys in the same order, each with the same
type, array_types and value (offsets and indexes aside, as later keys move).
The GGUF.* pseudo keys are skipped except GGUF.tensor_count (must not change)
and GGUF.kv_count (must be the pair count). The tensors must keep their names,
order, shapes and types.

OPs:
  --set KEY=TYPE:JSON     KEY now has dump type TYPE (UINT32, STRING, ARRAY/STRING
                          for an array of strings) and value JSON; a new KEY comes last
  --deleted KEY           KEY is gone
  --renamed OLD=NEW       OLD is called NEW, in the same place
  --padding               a ggufkit.padding pair may appear, change or go (ignored)
  --endian E              AFTER's endian must be E (LITTLE or BIG)

--batch runs one check per line of LIST ("NAME<TAB>ARGS", shell-quoted) and
prints "ok NAME" or "FAIL NAME: problem". Exit 1 on any difference.
Standard library only.
"""
import json
import math
import shlex
import sys

PAD = "ggufkit.padding"


def same(a, b):
    """Exact equality of parsed JSON values (3 != 3.0 only for bools; NaN == NaN)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def entry(v):
    """The parts of a metadata entry that an edit must keep."""
    return {k: v[k] for k in ("type", "array_types", "value") if k in v}


def metadata(doc, padding):
    out = []
    for k, v in doc["metadata"].items():
        if k.startswith("GGUF."):
            continue
        if padding and k == PAD:
            continue
        out.append((k, entry(v)))
    return out


def check(argv):
    files, ops = [], []
    padding = False
    endian = None
    it = iter(argv)
    for a in it:
        if a in ("--set", "--deleted", "--renamed"):
            ops.append((a, next(it)))
        elif a == "--padding":
            padding = True
        elif a == "--endian":
            endian = next(it)
        else:
            files.append(a)
    if len(files) != 2:
        raise ValueError("need BEFORE and AFTER")
    with open(files[0], encoding="utf-8") as f:
        before = json.load(f)
    with open(files[1], encoding="utf-8") as f:
        after = json.load(f)
    want = metadata(before, padding)
    for op, arg in ops:
        keys = [k for k, _ in want]
        if op == "--set":
            key, _, rest = arg.partition("=")
            typ, _, value = rest.partition(":")
            e = {"type": typ.split("/")[0]}
            if "/" in typ:
                e["array_types"] = typ.split("/")[1:]
            e["value"] = json.loads(value)
            if key in keys:
                want[keys.index(key)] = (key, e)
            else:
                want.append((key, e))
        elif op == "--deleted":
            if arg not in keys:
                return f"--deleted {arg}: not in BEFORE"
            del want[keys.index(arg)]
        else:
            old, _, new = arg.partition("=")
            if old not in keys:
                return f"--renamed {old}: not in BEFORE"
            want[keys.index(old)] = (new, want[keys.index(old)][1])
    got = metadata(after, padding)
    got_keys, want_keys = [k for k, _ in got], [k for k, _ in want]
    if got_keys != want_keys:
        extra = [k for k in got_keys if k not in want_keys]
        missing = [k for k in want_keys if k not in got_keys]
        return f"keys differ: unexpected {extra[:5]}, missing {missing[:5]}" if extra or missing else "key order differs"
    for (k, g), (_, w) in zip(got, want):
        if not same(g, w):
            return f"{k}: {json.dumps(g)[:120]} != expected {json.dumps(w)[:120]}"
    m = after["metadata"]
    if m["GGUF.tensor_count"]["value"] != before["metadata"]["GGUF.tensor_count"]["value"]:
        return "tensor count changed"
    n_pairs = len([k for k in m if not k.startswith("GGUF.")])
    if m["GGUF.kv_count"]["value"] != n_pairs:
        return f"GGUF.kv_count {m['GGUF.kv_count']['value']} != {n_pairs} pairs"
    tb, ta = before["tensors"], after["tensors"]
    if list(tb) != list(ta):
        return "tensor names or order changed"
    for name in tb:
        for field in ("shape", "type"):
            if tb[name][field] != ta[name][field]:
                return f"tensor {name}: {field} {ta[name][field]} != {tb[name][field]}"
    if endian and after["endian"] != endian:
        return f"endian {after['endian']} != {endian}"
    return None


def main(argv):
    if len(argv) == 2 and argv[0] == "--batch":
        failures = 0
        with open(argv[1], encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                name, _, args = line.partition("\t")
                try:
                    problem = check(shlex.split(args))
                except (OSError, ValueError, KeyError) as e:
                    problem = f"cannot check: {e!r}"
                if problem:
                    failures += 1
                    print(f"FAIL {name}: {problem}")
                else:
                    print(f"ok {name}")
        return 1 if failures else 0
    try:
        problem = check(argv)
    except (OSError, ValueError, KeyError) as e:
        print(f"edit_check: {e!r}", file=sys.stderr)
        return 2
    if problem:
        print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
