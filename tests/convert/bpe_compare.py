#!/usr/bin/env python3
"""Compares the tokenizer.* keys of two GGUF dumps (`dump --json --json-array`).

usage: bpe_compare.py REFERENCE.dump.json OURS.dump.json TABLE.c

Every tokenizer.* key of the reference must be in ours with the same type and
value, and ours must have no other tokenizer.* key. tokenizer.ggml.pre is
checked apart: when the reference lacks it (written before the key existed) any
name passes; when the names differ they must share one digest in TABLE.c (the
reference converter's table, where a later name of a digest wins), so the pick
was by digest all the same. tokenizer.ggml.token_type may differ in one way:
a token the reference's file has as user-defined (4) that ours has as control
(3) passes when the reference's does_token_look_special rule holds for it (the
vocabulary files predate that rule, which the reference applies today). Prints
one line per key; exit 1 on a difference.
"""
import json
import re
import sys


def looks_special(t):
    """The reference's does_token_look_special."""
    return (t in ("<pad>", "<mask>", "<2mass>", "[@BOS@]") or (t.startswith("<|") and t.endswith("|>"))
            or (t.startswith("<\uff5c") and t.endswith("\uff5c>")) or (t.startswith("<unused") and t.endswith(">")))


def keys(path):
    md = json.load(open(path, encoding="utf-8"))["metadata"]
    return {k: v for k, v in md.items() if k.startswith("tokenizer.")}


def main():
    ref, ours, table = keys(sys.argv[1]), keys(sys.argv[2]), open(sys.argv[3], encoding="utf-8").read()
    digests = {}
    for d, name in re.findall(r'\{ "([0-9a-f]{64})", "([^"]+)" \}', table):
        digests.setdefault(name, set()).add(d)
    bad = 0
    for k in sorted(set(ref) | set(ours)):
        a, b = ref.get(k), ours.get(k)
        if k == "tokenizer.ggml.pre":
            if b is None:
                ok, why = False, "missing"
            elif a is None:
                ok, why = True, f"reference has none, ours {b['value']!r}"
            elif a["value"] == b["value"]:
                ok, why = True, b["value"]
            else:
                shared = digests.get(a["value"], set()) & digests.get(b["value"], set())
                ok, why = bool(shared), f"reference {a['value']!r}, ours {b['value']!r}, shared digest: {sorted(shared)}"
        elif a is None or b is None:
            ok, why = False, "only in " + ("ours" if a is None else "reference")
        else:
            ok = a["type"] == b["type"] and a["value"] == b["value"] and a.get("array_types") == b.get("array_types")
            why = "equal" if ok else f"{a['type']} vs {b['type']}"
            if not ok and k == "tokenizer.ggml.token_type" and len(a["value"]) == len(b["value"]):
                toks = ref["tokenizer.ggml.tokens"]["value"]
                diff = [i for i, (x, y) in enumerate(zip(a["value"], b["value"])) if x != y]
                if all(a["value"][i] == 4 and b["value"][i] == 3 and looks_special(toks[i]) for i in diff):
                    ok, why = True, f"equal but {len(diff)} user-defined tokens the reference's rule makes control now"
            if not ok and isinstance(a["value"], list) and isinstance(b["value"], list):
                n = next((i for i, (x, y) in enumerate(zip(a["value"], b["value"])) if x != y), None)
                why += f"; lengths {len(a['value'])}/{len(b['value'])}, first difference at {n}"
                if n is not None:
                    why += f": {a['value'][n]!r} vs {b['value'][n]!r}"
            elif not ok:
                why += f"; {a['value']!r} vs {b['value']!r}"
        print(("ok   " if ok else "DIFF ") + k + ": " + why)
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
