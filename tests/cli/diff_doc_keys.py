#!/usr/bin/env python3
"""diff_doc_keys.py - holds `ggufkit diff --json` to its documented schema.

usage: diff_doc_keys.py docs/diff.md OUT.json...

Collects every object key of the JSON documents (recursively) and every key the
`--json` section of docs/diff.md names (the backquoted lower-case names of its
tables and lists, the keys of its example, and the tensor statuses, which are
the keys of `summary`). Fails, naming them, when a key the code writes is not
documented, or a documented key appears in none of the documents (so the
documents given must between them hold every key: a metadata change of each
kind, a long array, a layout difference, tensors of every status, a ranking).
Standard library only.
"""
import json
import re
import sys

# Backquoted words of the section that are not keys.
NOT_KEYS = {"null", "ne", "dump"}


def doc_keys(path):
    text = open(path, encoding="utf-8").read()
    start = text.index("## `--json`")
    end = text.index("\n## ", start + 1)
    section = text[start:end]
    keys = set(re.findall(r"`([a-z][a-z0-9_]*)`", section))
    keys |= set(re.findall(r'"([a-z][a-z0-9_]*)":', section))
    status_row = next(line for line in section.splitlines() if line.startswith("| `status` |"))
    statuses = set(re.findall(r'"([a-z][a-z-]*)"', status_row))
    return keys - NOT_KEYS, statuses


def json_keys(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            json_keys(v, out)
    elif isinstance(value, list):
        for v in value:
            json_keys(v, out)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    documented, statuses = doc_keys(argv[1])
    written = set()
    for path in argv[2:]:
        json_keys(json.load(open(path, encoding="utf-8")), written)
    undocumented = sorted(written - documented - statuses)
    unwritten = sorted(documented - written)
    missing_status = sorted(statuses - written)
    ok = True
    if undocumented:
        print("written but not documented in %s: %s" % (argv[1], ", ".join(undocumented)))
        ok = False
    if unwritten:
        print("documented but never written: %s" % ", ".join(unwritten))
        ok = False
    if missing_status:
        print("statuses missing from summary: %s" % ", ".join(missing_status))
        ok = False
    if ok:
        print("%d keys, each written and documented" % len(written))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
