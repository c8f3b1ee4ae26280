#!/usr/bin/env python3
"""convert_check_tensor.py - checks that GGUF tensor NAME in FILE holds the F32
widening of safetensors tensor SRC (BF16, F16 or F32) of ST, unpermuted:
exit 0 when equal, 1 otherwise (standard library only).

usage: convert_check_tensor.py FILE NAME ST SRC
"""
import json
import re
import struct
import subprocess
import sys


def gguf_tensor(binary, path, name):
    """(type, bytes) of tensor name, from `ggufkit dump`'s listing (file offset, bytes)."""
    out = subprocess.run([binary, "dump", path], capture_output=True, check=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*\d+\s+(\S+)\s+(\S+)\s+\[[^]]*\]\s+\d+\s+(\d+)\s+(\d+)\s*$", line)
        if m and m.group(1) == name:
            with open(path, "rb") as f:
                f.seek(int(m.group(3)))
                return m.group(2), f.read(int(m.group(4)))
    raise SystemExit(f"no tensor {name} in {path}")


def st_tensor(path, name):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    h = json.loads(data[8:8 + n])[name]
    a, b = h["data_offsets"]
    raw = data[8 + n + a:8 + n + b]
    if h["dtype"] == "F32":
        return raw
    if h["dtype"] == "BF16":
        return b"".join(b"\0\0" + raw[i:i + 2] for i in range(0, len(raw), 2))
    if h["dtype"] == "F16":
        return b"".join(struct.pack("<f", struct.unpack("<e", raw[i:i + 2])[0]) for i in range(0, len(raw), 2))
    raise SystemExit("dtype " + h["dtype"])


def main():
    binary, path, name, st, src = sys.argv[1:6]
    typ, got = gguf_tensor(binary, path, name)
    want = st_tensor(st, src)
    if typ != "F32" or got != want:
        print(f"{name}: {typ}, {len(got)} bytes, not the widened {src} ({len(want)} bytes)")
        sys.exit(1)


if __name__ == "__main__":
    main()
