#!/usr/bin/env python3
"""hf_fetch_sim.py - how many bytes @huggingface/gguf fetches to read a GGUF header.

Usage: hf_fetch_sim.py FILE  ->  prints "REQUESTS BYTES HEADER_END" (the
header's last byte + 1: where the tensor directory ends)

A model of that library's rule, walked over the same file: it fetches the file
in aligned chunks of 2,000,000 bytes (chunk k: bytes k*2000000 to
(k+1)*2000000-1, the last one cut at the file's end), the first one before
anything else. Before each key/value pair and each tensor's directory entry it
fetches the next chunk when fewer than 500,000 bytes are left after the read
position in what it holds, and inside a value it fetches the next chunk
whenever a read runs past what it holds. tests/cli/test_remote.sh compares
ggufkit's --stats with this figure: ggufkit must never fetch more.
"""
import struct
import sys

CHUNK = 2000000
MARGIN = 500000
FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}   # GGUF value types -> bytes


class Walker:
    def __init__(self, path):
        self.f = open(path, "rb")
        self.f.seek(0, 2)
        self.size = self.f.tell()
        self.held = 0          # bytes [0, held) fetched
        self.requests = 0
        self.fetched = 0
        self.pos = 0
        self.more()

    def more(self):
        if self.held >= self.size:
            raise EOFError("read past the end at %d" % self.pos)
        end = min(self.held + CHUNK, self.size)
        self.requests += 1
        self.fetched += end - self.held
        self.held = end

    def take(self, n):
        while self.pos + n > self.held:
            self.more()
        self.f.seek(self.pos)
        b = self.f.read(n)
        self.pos += n
        return b

    def before_item(self):
        if self.held - self.pos < MARGIN and self.held < self.size:
            self.more()

    def u32(self):
        return struct.unpack(self.order + "I", self.take(4))[0]

    def count(self):
        return self.u32() if self.version == 1 else struct.unpack(self.order + "Q", self.take(8))[0]

    def string(self):
        self.take(self.count())

    def value(self, t):
        if t == 8:
            self.string()
        elif t == 9:
            et, n = self.u32(), self.count()
            for _ in range(n):
                self.value(et)
        else:
            self.take(FIXED[t])

    def walk(self):
        magic = self.take(4)
        self.order = "<"
        v = struct.unpack("<I", self.take(4))[0]
        if magic == b"FUGG" or v & 0xFFFF == 0:
            self.order = ">"
            v = struct.unpack(">I", struct.pack("<I", v))[0]
        self.version = v
        n_tensors, n_kv = self.count(), self.count()
        for _ in range(n_kv):
            self.before_item()
            self.string()
            self.value(self.u32())
        for _ in range(n_tensors):
            self.before_item()
            self.string()
            dims = self.u32()
            for _ in range(dims):
                self.count()
            self.take(4 + 8)
        return self.requests, self.fetched, self.pos


if __name__ == "__main__":
    print("%d %d %d" % Walker(sys.argv[1]).walk())
