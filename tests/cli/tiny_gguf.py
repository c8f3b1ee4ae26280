#!/usr/bin/env python3
"""tiny_gguf.py - writes a small GGUF file that uses every metadata value type
(nested arrays, NUL bytes in strings, 64-bit extremes, NaN and infinities
included) and the JSON that `ggufkit dump --json --json-array` must print for it.

usage: tiny_gguf.py OUT.gguf OUT.json [--big-endian] [--version N]
       tiny_gguf.py --all DIR

The JSON follows gguf_dump.py's layout (offsets are where each field starts in
the file) with ggufkit's one difference: arrays of arrays are nested lists.

--all writes every variant into DIR: tiny-{le3,be3,le2,le1,be1}.gguf (byte order
and version), each with .json (dump --json --json-array), .noarr.json (dump
--json: array values left out) and .info.json (the facts `info --json` must
report). Standard library only.
"""
import json
import math
import random
import struct
import sys

from gguf_writer import (U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64,
                         TYPE_NAMES, Writer)


def f32(x):
    """The double a float32 widens to."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def random_floats(fmt, size, count, seed):
    """count finite values of random bit patterns (every exponent, denormals
    included): a test of exact, round-trip number printing."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        v = struct.unpack("<" + fmt, rng.getrandbits(8 * size).to_bytes(size, "little"))[0]
        if math.isfinite(v):
            out.append(v)
    return out


# (key, type, value); arrays are (ARR, (elem_type, [values])), nesting allowed.
KVS = [
    ("general.architecture", STR, "tiny"),
    ("general.name", STR, 'tiny "quoted"\n\tline \\ end'),
    ("general.file_type", U32, 15),
    ("t.u8", U8, 255),
    ("t.i8", I8, -128),
    ("t.u16", U16, 65535),
    ("t.i16", I16, -32768),
    ("t.u32", U32, 4294967295),
    ("t.i32", I32, -2147483648),
    ("t.u64", U64, 2**64 - 1),
    ("t.i64", I64, -2**63),
    ("t.f32", F32, f32(0.1)),
    ("t.f32.denormal", F32, f32(1e-45)),
    ("t.f32.max", F32, f32(3.4028234663852886e38)),
    ("t.f32.nan", F32, math.nan),
    ("t.f64", F64, 1.0 / 3.0),
    ("t.f64.neg_inf", F64, -math.inf),
    ("t.f64.int", F64, 1e300),
    ("t.bool", BOOL, False),
    ("t.str.nul", STR, "a\x00b\x00"),
    ("t.str.ctrl", STR, "\x01\x1f\x7f é 😀"),
    ("t.str.empty", STR, ""),
    # Ill-formed UTF-8 (the reader warns and keeps it; JSON shows U+FFFD the way
    # Python's decode(errors="replace") does).
    ("t.str.bad_utf8", STR, b"ok\xff\xc3(\xe4\xb8 end\xed\xa0\x80\xf4\x90\xf0\x9f\x98"),
    ("t.arr.empty", ARR, (U32, [])),
    ("t.arr.f32", ARR, (F32, [f32(0.1), -2.5, f32(1e-30)])),
    ("t.arr.str", ARR, (STR, ["x", "", "ü", "a\x00", b"\xc0\xaf"])),
    ("t.arr.u64", ARR, (U64, [2**63 + 5, 0])),
    ("t.arr.i64", ARR, (I64, [-2**63, 2**63 - 1])),
    ("t.arr.bool", ARR, (BOOL, [True, False])),
    ("t.arr.nested", ARR, (ARR, [(I32, [1, -2]), (I32, [3])])),
    ("t.arr.nested.empty_first", ARR, (ARR, [(U8, []), (U8, [7])])),
    ("t.arr.deep", ARR, (ARR, [(ARR, [(F64, [0.5])])])),
    ("t.arr.i16", ARR, (I16, list(range(-10, 10)))),
    ("t.arr.f32.random", ARR, (F32, random_floats("f", 4, 500, 1))),
    ("t.arr.f64.random", ARR, (F64, random_floats("d", 8, 500, 2))),
]

# (name, ggml type id, type name, ne, element size)
TENSORS = [
    ("w", 0, "F32", [4, 2], 4),
    ("blk.0.b", 1, "F16", [4], 2),
    ("x.3d", 0, "F32", [2, 1, 3], 4),
]


def json_value(t, v):
    if t == ARR:
        return [json_value(v[0], item) for item in v[1]]
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    return v


def array_types(v):
    """gguf_dump.py's array_types: the chain of first elements' types."""
    out = []
    while True:
        elem, items = v
        if not items:
            return out
        out.append(TYPE_NAMES[elem])
        if elem != ARR:
            return out
        v = items[0]


def build(big, version, out_gguf):
    """Writes the file; @return: (dump document, info facts)."""
    w = Writer(big, version)
    count_type = "UINT32" if version == 1 else "UINT64"
    count_size = 4 if version == 1 else 8
    metadata = {
        "GGUF.version": {"index": 0, "type": "UINT32", "offset": 4, "value": version},
        "GGUF.tensor_count": {"index": 1, "type": count_type, "offset": 8, "value": len(TENSORS)},
        "GGUF.kv_count": {"index": 2, "type": count_type, "offset": 8 + count_size,
                          "value": len(KVS)},
    }
    w.header(len(TENSORS), len(KVS))
    for i, (key, t, v) in enumerate(KVS):
        entry = {"index": i + 3, "type": TYPE_NAMES[t], "offset": len(w.buf)}
        if t == ARR:
            entry["array_types"] = array_types(v)
        entry["value"] = json_value(t, v)
        metadata[key] = entry
        w.kv(key, t, v)
    tensors = {}
    offset = 0
    params = 0
    by_type = {}
    for i, (name, tid, tname, ne, esize) in enumerate(TENSORS):
        tensors[name] = {"index": i, "shape": ne, "type": tname, "offset": len(w.buf)}
        w.tensor_info(name, ne, tid, offset)
        n = 1
        for d in ne:
            n *= d
        params += n
        count, nbytes = by_type.get(tname, (0, 0))
        by_type[tname] = (count + 1, nbytes + n * esize)
        offset += (n * esize + 31) // 32 * 32
    w.pad(32)
    data_offset = len(w.buf)
    w.buf += bytes(range(256)) * (offset // 256) + bytes(range(offset % 256))
    with open(out_gguf, "wb") as f:
        f.write(w.buf)
    doc = {"filename": out_gguf, "endian": "BIG" if big else "LITTLE",
           "metadata": metadata, "tensors": tensors}
    total = sum(b for _, b in by_type.values())
    info = {
        "file": out_gguf, "version": version, "endian": doc["endian"], "alignment": 32,
        "kv_count": len(KVS), "tensor_count": len(TENSORS), "data_offset": data_offset,
        "file_size": len(w.buf), "architecture": "tiny", "name": KVS[1][2],
        "file_type": {"id": 15, "name": "Q4_K_M"}, "parameters": params,
        "tensor_bytes": total,
        "tensor_types": [{"type": t, "tensors": c, "bytes": b, "share": b / total}
                         for t, (c, b) in sorted(by_type.items(), key=lambda kv: -kv[1][1])],
    }
    return doc, info


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--all":
        for name, big, version in [("le3", False, 3), ("be3", True, 3), ("le2", False, 2),
                                   ("le1", False, 1), ("be1", True, 1)]:
            base = f"{args[1]}/tiny-{name}"
            doc, info = build(big, version, base + ".gguf")
            write_json(base + ".json", doc)
            for v in doc["metadata"].values():
                if v["type"] == "ARRAY":
                    del v["value"]
            write_json(base + ".noarr.json", doc)
            write_json(base + ".info.json", info)
        return
    big = "--big-endian" in args
    version = 3
    if "--version" in args:
        version = int(args[args.index("--version") + 1])
    paths = [a for a in args if a.endswith(".gguf") or a.endswith(".json")]
    if len(paths) != 2:
        sys.exit(__doc__)
    doc, _ = build(big, version, paths[0])
    write_json(paths[1], doc)


if __name__ == "__main__":
    main()
