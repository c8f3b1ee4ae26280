#!/usr/bin/env python3
"""st_edit.py - rewrites a safetensors file with one more tensor, for the
refusal tests of `ggufkit convert` (standard library only).

usage: st_edit.py IN OUT NAME DTYPE SHAPE
  adds tensor NAME (dtype DTYPE, e.g. F32 or I32; SHAPE like 2x3) of zero bytes
  after IN's tensors and writes OUT.
"""
import json
import struct
import sys

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1}


def main():
    src, dst, name, dtype, shape = sys.argv[1:6]
    dims = [int(d) for d in shape.split("x")]
    with open(src, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    count = 1
    for d in dims:
        count *= d
    nbytes = count * SIZES[dtype]
    header[name] = {"dtype": dtype, "shape": dims, "data_offsets": [len(body), len(body) + nbytes]}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + body + bytes(nbytes))


if __name__ == "__main__":
    main()
