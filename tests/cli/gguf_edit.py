#!/usr/bin/env python3
"""gguf_edit.py - rewrites a little-endian GGUF v2/v3 file with small edits, for
crafting broken shard sets in tests. The data section is re-laid canonically
(each tensor at the next multiple of the alignment, zero padding after the last
tensor as ggml's writer does); tensor bytes are copied unchanged.

usage: gguf_edit.py IN OUT [EDIT...]
  --del KEY            remove a key (a missing key is an error)
  --del-prefix P       remove every key starting with P
  --set KEY TYPE VAL   set an integer key (TYPE u8 i8 u16 i16 u32 i32 u64 i64),
                       in place if it exists, appended otherwise
  --rename-tensor OLD NEW
Standard library only.
"""
import struct
import sys

from gguf_writer import Writer

SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}
TYPE_IDS = {"u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "u64": 10, "i64": 11}
# ggml type id -> (block elements, block bytes)
TYPES = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
         9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
         15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18),
         21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8),
         28: (1, 8), 29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66), 39: (32, 17)}


class Reader:
    def __init__(self, data):
        self.d = data
        self.p = 0

    def take(self, n):
        b = self.d[self.p:self.p + n]
        if len(b) != n:
            raise SystemExit("truncated")
        self.p += n
        return b

    def num(self, fmt):
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self):
        return self.take(self.num("Q"))


def raw_value(r, t):
    """The bytes of one value of type t (kept as stored)."""
    start = r.p
    if t in SCALAR:
        r.take(struct.calcsize(SCALAR[t]))
    elif t == 8:
        r.string()
    elif t == 9:
        et = r.num("I")
        n = r.num("Q")
        for _ in range(n):
            raw_value(r, et)
    else:
        raise SystemExit("unknown value type %d" % t)
    return r.d[start:r.p]


def align_up(x, a):
    return (x + a - 1) // a * a


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    src, dst, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    data = open(src, "rb").read()
    r = Reader(data)
    if r.take(4) != b"GGUF":
        raise SystemExit("not GGUF")
    version = r.num("I")
    if version not in (2, 3):
        raise SystemExit("only little-endian v2/v3")
    n_tensors, n_kv = r.num("Q"), r.num("Q")
    kvs = []  # [key bytes, type, raw value bytes]
    for _ in range(n_kv):
        k = r.string()
        t = r.num("I")
        kvs.append([k, t, raw_value(r, t)])
    tensors = []  # [name, ne list, type, offset]
    for _ in range(n_tensors):
        name = r.string()
        nd = r.num("I")
        ne = [r.num("Q") for _ in range(nd)]
        tensors.append([name, ne, r.num("I"), r.num("Q")])
    align = 32
    for k, t, v in kvs:
        if k == b"general.alignment":
            align = struct.unpack("<I", v)[0]
    data_start = align_up(r.p, align)

    i = 0
    while i < len(args):
        a = args[i]
        if a == "--del":
            key = args[i + 1].encode()
            before = len(kvs)
            kvs = [kv for kv in kvs if kv[0] != key]
            if len(kvs) == before:
                raise SystemExit("no key " + args[i + 1])
            i += 2
        elif a == "--del-prefix":
            p = args[i + 1].encode()
            kvs = [kv for kv in kvs if not kv[0].startswith(p)]
            i += 2
        elif a == "--set":
            key, t = args[i + 1].encode(), TYPE_IDS[args[i + 2]]
            raw = struct.pack("<" + SCALAR[t], int(args[i + 3]))
            for kv in kvs:
                if kv[0] == key:
                    kv[1], kv[2] = t, raw
                    break
            else:
                kvs.append([key, t, raw])
            i += 4
        elif a == "--rename-tensor":
            old, new = args[i + 1].encode(), args[i + 2].encode()
            hits = [t for t in tensors if t[0] == old]
            if not hits:
                raise SystemExit("no tensor " + args[i + 1])
            hits[0][0] = new
            i += 3
        else:
            raise SystemExit("unknown edit " + a)

    def nbytes(t):
        elems, size = TYPES[t[2]]
        n = t[1][0] // elems * size
        for d in t[1][1:]:
            n *= d
        return n

    w = Writer(version=version)
    w.header(len(tensors), len(kvs))
    for k, t, v in kvs:
        w.kv_raw(k, t, v)
    off = 0
    placed = []
    for t in tensors:
        off = align_up(off, align)
        placed.append(off)
        off += nbytes(t)
    for t, o in zip(tensors, placed):
        w.tensor_info(t[0], t[1], t[2], o)
    w.pad(align)
    out = w.buf
    base = len(out)
    for t, o in zip(tensors, placed):
        out += bytes(base + o - len(out))
        out += data[data_start + t[3]:data_start + t[3] + nbytes(t)]
    if tensors:
        out += bytes(align_up(len(out), align) - len(out))
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
