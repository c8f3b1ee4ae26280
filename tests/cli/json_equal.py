#!/usr/bin/env python3
"""json_equal.py - compares two JSON documents as parsed values.

usage: json_equal.py [--ignore KEY]... [--expect KEY=JSON]... [--subset] ACTUAL EXPECTED
       json_equal.py --batch LIST

Objects compare by key set and values (key order aside), lists element by
element, numbers by value (3 equals 3.0; integers exactly, however large; NaN
equals NaN), booleans only with booleans. --ignore drops a top-level key from
both sides; --expect checks a top-level key of ACTUAL against a JSON value;
--subset ignores top-level keys of ACTUAL that EXPECTED does not have.
Prints the first difference as a path and exits 1; exits 0 when equal, 2 on
usage or parse errors.

--batch runs one comparison per line of LIST, each line "NAME<TAB>ARGS" with
ARGS as above (shell-quoted), and prints "ok NAME" or "FAIL NAME: difference"
per line (one process for many comparisons). Standard library only.
"""
import json
import math
import shlex
import sys


def describe(v):
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def numbers_equal(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(b, float) and math.isnan(b):
        return False
    # int == float in Python compares the exact values, so a float that only
    # approximates a 64-bit integer does not pass for it.
    return a == b


def first_difference(a, b, path):
    """Returns a message for the first difference, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in b:
            if k not in a:
                return f"{path}: key {json.dumps(k)} missing from actual"
        for k in a:
            if k not in b:
                return f"{path}: unexpected key {json.dumps(k)} in actual"
        for k in b:
            d = first_difference(a[k], b[k], f"{path}[{json.dumps(k, ensure_ascii=False)}]")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path}: actual has {len(a)} elements, expected {len(b)}"
        return None
    if is_number(a) and is_number(b):
        if numbers_equal(a, b):
            return None
        return f"{path}: actual {a!r} != expected {b!r}"
    if type(a) is type(b) and a == b:
        return None
    return f"{path}: actual {describe(a)} != expected {describe(b)}"


class Unreadable(Exception):
    pass


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Unreadable(f"{path}: {e}") from e


def compare(argv):
    """Runs one comparison. @return: None when equal, else the difference."""
    ignore, expect, files = [], [], []
    subset = False
    it = iter(argv)
    for arg in it:
        if arg == "--ignore":
            ignore.append(next(it, None))
        elif arg == "--expect":
            key, sep, value = (next(it, None) or "").partition("=")
            if not sep:
                raise ValueError("--expect needs KEY=JSON")
            expect.append((key, json.loads(value)))
        elif arg == "--subset":
            subset = True
        else:
            files.append(arg)
    if len(files) != 2 or None in ignore:
        raise ValueError("need ACTUAL and EXPECTED")
    actual, expected = load(files[0]), load(files[1])
    for key, value in expect:
        if not isinstance(actual, dict) or key not in actual:
            return f"$: key {json.dumps(key)} missing from actual"
        d = first_difference(actual[key], value, f"$[{json.dumps(key)}]")
        if d:
            return d
    if subset and isinstance(actual, dict) and isinstance(expected, dict):
        ignore += [k for k in actual if k not in expected]
    for key in ignore:
        for doc in (actual, expected):
            if isinstance(doc, dict):
                doc.pop(key, None)
    return first_difference(actual, expected, "$")


def run_batch(path):
    failures = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            name, _, args = line.partition("\t")
            try:
                d = compare(shlex.split(args))
            except (ValueError, Unreadable) as e:
                d = f"cannot compare: {e}"
            if d:
                failures += 1
                print(f"FAIL {name}: {d}")
            else:
                print(f"ok {name}")
    return 1 if failures else 0


def main(argv):
    if len(argv) == 2 and argv[0] == "--batch":
        return run_batch(argv[1])
    try:
        d = compare(argv)
    except ValueError as e:
        print(f"json_equal: {e}\n{__doc__}", file=sys.stderr)
        return 2
    except Unreadable as e:
        print(f"json_equal: {e}", file=sys.stderr)
        return 2
    if d:
        print(d)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
