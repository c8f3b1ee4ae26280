#!/usr/bin/env python3
"""export_check.py - checks an exported Hugging Face folder against another
folder, with numpy only (no torch): safetensors read from their headers.

usage:
  export_check.py same ORIG_DIR EXPORTED_DIR
      every tensor of ORIG is in EXPORTED with the same dtype, shape and bytes
      (bit for bit), and none more; config.json's hyperparameters agree.
  export_check.py index DIR
      model.safetensors.index.json names every tensor of every shard, each in
      its file, total_size is their bytes, and every shard is listed.
Prints one line per problem; exit 1 when there is any.
"""
import json
import os
import struct
import sys

import numpy as np

ITEM = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1}


def read_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
    head.pop("__metadata__", None)
    return head, 8 + n


def tensors(folder):
    """{name: (dtype, shape, raw bytes as uint8 array, file)}"""
    out = {}
    files = sorted(x for x in os.listdir(folder) if x.endswith(".safetensors"))
    for fn in files:
        path = os.path.join(folder, fn)
        head, start = read_header(path)
        data = np.memmap(path, dtype=np.uint8, mode="r")
        for name, t in head.items():
            a, b = t["data_offsets"]
            if name in out:
                raise SystemExit(f"{folder}: {name} is in two files")
            n = int(np.prod(t["shape"])) if t["shape"] else 1
            if b - a != n * ITEM[t["dtype"]]:
                raise SystemExit(f"{path}: {name}: {b - a} bytes for shape {t['shape']} {t['dtype']}")
            out[name] = (t["dtype"], list(t["shape"]), data[start + a:start + b], fn)
    return out


HYPER = ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
         "num_key_value_heads", "max_position_embeddings", "bos_token_id", "eos_token_id",
         "num_local_experts", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "head_dim"]
FLOATS = ["rms_norm_eps", "rope_theta"]


def f32(x):
    return np.float32(x)


def same(orig, exp):
    bad = []
    a, b = tensors(orig), tensors(exp)
    for name in sorted(set(a) | set(b)):
        if name not in b:
            bad.append(f"{name}: missing from the export")
        elif name not in a:
            bad.append(f"{name}: not in the original")
        else:
            (da, sa, ra, _), (db, sb, rb, _) = a[name], b[name]
            if da != db or sa != sb:
                bad.append(f"{name}: {da} {sa} exported as {db} {sb}")
            elif not np.array_equal(ra, rb):
                diff = int(np.count_nonzero(ra != rb))
                bad.append(f"{name}: {diff} bytes differ")
    ca = json.load(open(os.path.join(orig, "config.json")))
    cb = json.load(open(os.path.join(exp, "config.json")))
    for k in HYPER:   # the original's keys (the export may add ids the GGUF took from elsewhere)
        if k in ca and ca.get(k) != cb.get(k):
            bad.append(f"config.json {k}: {ca.get(k)!r} exported as {cb.get(k)!r}")
    for k in FLOATS:
        if (k in ca) != (k in cb) or (k in ca and f32(ca[k]) != f32(cb[k])):
            bad.append(f"config.json {k}: {ca.get(k)!r} exported as {cb.get(k)!r}")
    if bool(ca.get("tie_word_embeddings", False)) != bool(cb.get("tie_word_embeddings")):
        bad.append("config.json tie_word_embeddings differs")
    ra, rb = ca.get("rope_scaling"), cb.get("rope_scaling")
    if (ra is None) != (rb is None):
        bad.append(f"config.json rope_scaling: {ra!r} exported as {rb!r}")
    elif ra:
        for k, v in ra.items():
            w = rb.get(k if k in rb else "type")
            if isinstance(v, str) and v != w or not isinstance(v, str) and f32(v) != f32(w):
                bad.append(f"config.json rope_scaling.{k}: {v!r} exported as {w!r}")
    # Mistral and Mixtral are Llama to GGUF: a Mistral comes back as a Llama
    cls = {"MistralForCausalLM": "LlamaForCausalLM"}
    arch = ca["architectures"][0]
    if cls.get(arch, arch) != cb["architectures"][0]:
        bad.append(f"config.json architectures: {arch} exported as {cb['architectures'][0]}")
    return bad


def index(folder):
    bad = []
    idx = json.load(open(os.path.join(folder, "model.safetensors.index.json")))
    t = tensors(folder)
    wm = idx["weight_map"]
    if set(wm) != set(t):
        bad.append(f"weight_map names {len(wm)} tensors, the shards hold {len(t)}")
    for name, fn in wm.items():
        if name in t and t[name][3] != fn:
            bad.append(f"{name}: index says {fn}, it is in {t[name][3]}")
    total = sum(len(v[2]) for v in t.values())
    if idx["metadata"].get("total_size") != total:
        bad.append(f"total_size {idx['metadata'].get('total_size')} != {total}")
    shards = sorted(x for x in os.listdir(folder) if x.endswith(".safetensors"))
    if set(shards) != set(wm.values()):
        bad.append(f"shards on disk {shards} != those in the index")
    n = len(shards)
    for k, fn in enumerate(shards):
        if fn != f"model-{k + 1:05d}-of-{n:05d}.safetensors":
            bad.append(f"shard name {fn}")
    return bad


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "same":
        bad = same(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "index":
        bad = index(sys.argv[2])
    else:
        print(__doc__)
        return 2
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
