#!/usr/bin/env python3
"""ggml_layout.py - checks a GGUF file the way ggml's own reader (gguf.cpp) takes
it when it loads the tensor data, independently of ggufkit; and writes the small
fixtures the writer tests need.

usage: ggml_layout.py check FILE...
       ggml_layout.py gaps FILE (prints "START END" for every run of alignment padding
                                 after a tensor, as absolute file offsets)
       ggml_layout.py unpadded OUT [N] (v3, two F32 tensors, the last one of N elements
                                        (default 3), the file ending right after it)

check exits 1 naming the first rule FILE breaks:
- general.alignment, when present, is a UINT32 power of two (ggml aborts on
  another type and refuses other values);
- tensor i's offset is the sum of the earlier tensors' sizes, each padded to
  the alignment (ggml refuses any other offset);
- the file holds data offset + that sum over every tensor, the last one padded
  too (ggml reads the whole padded data section: "failed to read tensor data
  binary blob" otherwise).
Both byte orders are read (the version's low 16 bits decide). Standard library only.
"""
import struct
import sys

from gguf_writer import STR, Writer

# type id: (elements per block, bytes per block) for the types the tests write.
TYPES = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24),
         8: (32, 34), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
         14: (256, 210), 30: (1, 2)}
SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


class Reader:
    def __init__(self, data):
        self.d, self.p = data, 4
        v = struct.unpack_from("<I", data, 4)[0]
        self.e = ">" if v & 0xFFFF == 0 else "<"

    def get(self, fmt):
        vals = struct.unpack_from(self.e + fmt, self.d, self.p)
        self.p += struct.calcsize(self.e + fmt)
        return vals[0]

    def string(self):
        n = self.get("Q")
        s = self.d[self.p:self.p + n]
        self.p += n
        return s.decode("utf-8", "replace")

    def value(self, t):
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.get("I"), self.get("Q")
            return [self.value(et) for _ in range(n)]
        return self.get(SCALAR[t])


def check(path, spans=None):
    data = open(path, "rb").read()
    if data[:4] != b"GGUF":
        return "not a GGUF file"
    r = Reader(data)
    version = r.get("I")
    n_tensors, n_kv = r.get("Q"), r.get("Q")
    align = 32
    for _ in range(n_kv):
        key, t = r.string(), r.get("I")
        v = r.value(t)
        if key == "general.alignment":
            if t != 4:
                return "general.alignment has type %d, not UINT32" % t
            if v == 0 or v & (v - 1):
                return "general.alignment %d is not a power of two" % v
            align = v
    expected = 0
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.get("Q") for _ in range(r.get("I"))]
        t, off = r.get("I"), r.get("Q")
        if t not in TYPES:
            return "%s: type %d unknown to this checker" % (name, t)
        elems = 1
        for d in dims:
            elems *= d
        blk, size = TYPES[t]
        if off != expected:
            return "tensor %s has offset %d, expected %d" % (name, off, expected)
        if spans is not None:
            spans.append((off, elems // blk * size))
        expected += (elems // blk * size + align - 1) // align * align
    data_offset = (r.p + align - 1) // align * align
    if spans is not None:
        spans[:] = [(data_offset + o, data_offset + o + n,
                     data_offset + (o + n + align - 1) // align * align) for o, n in spans]
    if n_tensors and len(data) < data_offset + expected:
        return ("failed to read tensor data binary blob: v%d file of %d bytes, the padded data "
                "section ends at %d" % (version, len(data), data_offset + expected))
    return None


def unpadded(out, n):
    w = Writer()
    w.header(2, 1)
    w.kv("general.architecture", STR, "llama")
    w.tensor_info("a.weight", [8], 0, 0)
    w.tensor_info("b.weight", [n], 0, 32)
    w.pad(32)
    data = struct.pack("<8f", *range(8)) + struct.pack("<%df" % n, *[i + 0.5 for i in range(n)])
    with open(out, "wb") as f:
        f.write(w.buf + data)


def gaps(path):
    spans = []
    why = check(path, spans)
    if why:
        print("%s: %s" % (path, why))
        return 1
    for _, end, padded in spans:
        if padded > end:
            print(end, padded)
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "gaps":
        return gaps(argv[2])
    if len(argv) in (3, 4) and argv[1] == "unpadded":
        unpadded(argv[2], int(argv[3]) if len(argv) == 4 else 3)
        return 0
    if len(argv) < 3 or argv[1] != "check":
        sys.stderr.write(__doc__)
        return 2
    rc = 0
    for path in argv[2:]:
        why = check(path)
        if why:
            print("%s: %s" % (path, why))
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
