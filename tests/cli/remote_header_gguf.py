#!/usr/bin/env python3
"""remote_header_gguf.py - writes a GGUF file whose header is about BYTES long:
a vocabulary (tokens of 2 to 24 bytes, scores, types) as the bulk, a long chat
template, 300 tensors in the directory, and their data (3.7 MB of zeros) after
it, so that the header is only the front of the file. For test_remote.sh's
request and byte counts.

Usage: remote_header_gguf.py OUT BYTES
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_writer as g  # noqa: E402

out, target = sys.argv[1], int(sys.argv[2])
N_TENSORS, ELEMS = 300, 3072
template = ("{% for m in messages %}{{ m.content }}{% endfor %}" * 400).encode()
fixed = 2000 + len(template) + N_TENSORS * 40   # all but the vocabulary, about
per_token = 8 + 13 + 4 + 4                       # length, bytes (13 on average), score, type
n = max(1, (target - fixed) // per_token)
lens = [2 + (i * 7919) % 23 for i in range(n)]
tokens = b"".join(struct.pack("<Q", k) + (b"t%d_" % i + b"x" * k)[:k] for i, k in enumerate(lens))

w = g.Writer()
w.header(N_TENSORS, 6)
w.kv("general.architecture", g.STR, "llama")
w.kv("general.alignment", g.U32, 32)
w.kv("tokenizer.chat_template", g.STR, template)
w.kv_raw("tokenizer.ggml.tokens", g.ARR, struct.pack("<IQ", g.STR, n) + tokens)
w.kv_raw("tokenizer.ggml.scores", g.ARR, struct.pack("<IQ", g.F32, n) + bytes(4 * n))
w.kv_raw("tokenizer.ggml.token_type", g.ARR, struct.pack("<IQ", g.I32, n) + struct.pack("<i", 1) * n)
for t in range(N_TENSORS):
    w.tensor_info("blk.%d.weight" % t, [ELEMS], 0, t * ELEMS * 4)
w.pad(32)
with open(out + ".tmp", "wb") as f:
    f.write(w.buf)
    f.write(bytes(N_TENSORS * ELEMS * 4))
os.rename(out + ".tmp", out)
