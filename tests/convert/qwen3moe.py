#!/usr/bin/env python3
"""A small Qwen3-MoE checkpoint from a seeded generator, and the check of what
`ggufkit convert` makes of it (numpy; no golden output exists for Qwen3-MoE).

usage: qwen3moe.py make DIR SEED DTYPE [fused]  (DTYPE: BF16 or F16; fused: the
                                                 experts stacked as transformers 5
                                                 saves them, gate_up_proj and down_proj)
       qwen3moe.py check GGUFKIT OUT.gguf DIR OUTTYPE   (OUTTYPE: f32, f16, bf16;
                                                 f16/bf16 only from the same dtype)

make writes config.json, model.safetensors (tensors in a shuffled order) and a
byte-level tokenizer (bpe_tiny.py; convert it with --vocab-pre). check reads
OUT.gguf and asserts, from the reference's rules (conversion/qwen.py
Qwen2MoeModel/Qwen3MoeModel, TextModel.set_gguf_parameters, the QWEN3MOE tensor
list): every tensor's name, shape, type and bytes (experts stacked into
blk.N.ffn_{gate,down,up}_exps, written down, gate, up after the layer's last
expert; norms and the router F32; the rest in OUTTYPE, bit for bit from the
checkpoint), and the qwen3moe.* keys with their values and order.
"""
import json
import os
import random
import re
import struct
import subprocess
import sys

import numpy as np

H, FF, MOE_FF, L, NH, NKV, HD, E, K, V = 64, 96, 32, 2, 4, 2, 16, 4, 2, 272


def names_shapes(fused=False):
    out = [("model.embed_tokens.weight", (V, H)), ("lm_head.weight", (V, H)), ("model.norm.weight", (H,))]
    for b in range(L):
        p = f"model.layers.{b}."
        out += [(p + "input_layernorm.weight", (H,)), (p + "post_attention_layernorm.weight", (H,)),
                (p + "self_attn.q_proj.weight", (NH * HD, H)), (p + "self_attn.k_proj.weight", (NKV * HD, H)),
                (p + "self_attn.v_proj.weight", (NKV * HD, H)), (p + "self_attn.o_proj.weight", (H, NH * HD)),
                (p + "self_attn.q_norm.weight", (HD,)), (p + "self_attn.k_norm.weight", (HD,)),
                (p + "mlp.gate.weight", (E, H))]
        if fused:
            out += [(p + "mlp.experts.gate_up_proj", (E, 2 * MOE_FF, H)), (p + "mlp.experts.down_proj", (E, H, MOE_FF))]
            continue
        for x in range(E):
            out += [(p + f"mlp.experts.{x}.gate_proj.weight", (MOE_FF, H)),
                    (p + f"mlp.experts.{x}.up_proj.weight", (MOE_FF, H)),
                    (p + f"mlp.experts.{x}.down_proj.weight", (H, MOE_FF))]
    return out


def make(d, seed, dtype, fused=False):
    rng = np.random.default_rng(seed)
    os.makedirs(d, exist_ok=True)
    items = names_shapes(fused)
    random.Random(seed).shuffle(items)
    header, blobs, off = {}, [], 0
    for name, shape in items:
        a = rng.standard_normal(shape).astype(np.float32) * 0.5
        if dtype == "F16":
            raw = a.astype("<f2").tobytes()
        else:  # BF16: the top half of each F32, rounded to nearest even
            u = a.view(np.uint32).astype(np.uint64)
            raw = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2").tobytes()
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    cfg = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "vocab_size": V, "hidden_size": H,
           "intermediate_size": FF, "moe_intermediate_size": MOE_FF, "num_hidden_layers": L,
           "num_attention_heads": NH, "num_key_value_heads": NKV, "head_dim": HD, "num_experts": E,
           "num_experts_per_tok": K, "norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": [],
           "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "max_position_embeddings": 4096,
           "tie_word_embeddings": False, "torch_dtype": dtype.lower().replace("bf16", "bfloat16").replace("f16", "float16")}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "bpe_tiny.py"), d + "/.tok", "--vocab-size", str(V)], check=True)
    for n in ("tokenizer.json", "tokenizer_config.json"):
        os.replace(os.path.join(d, ".tok", n), os.path.join(d, n))
    os.remove(os.path.join(d, ".tok", "config.json"))
    os.rmdir(os.path.join(d, ".tok"))


def st_tensors(d):
    with open(os.path.join(d, "model.safetensors"), "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    h = json.loads(data[8:8 + n])
    return {k: (v["dtype"], v["shape"], data[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]) for k, v in h.items()}


def widen(dtype, raw):
    if dtype == "F16":
        return np.frombuffer(raw, "<f2").astype(np.float32).tobytes()
    u = np.frombuffer(raw, "<u2").astype(np.uint32) << 16
    return u.astype("<u4").tobytes()


def gguf(binary, path):
    """[(name, type, ne, bytes)] in file order and the metadata, from ggufkit dump."""
    out = subprocess.run([binary, "dump", path], capture_output=True, check=True, text=True).stdout
    tensors = []
    with open(path, "rb") as f:
        for line in out.splitlines():
            m = re.match(r"\s*\d+\s+(\S+)\s+(\S+)\s+\[([^]]*)\]\s+\d+\s+(\d+)\s+(\d+)\s*$", line)
            if m:
                f.seek(int(m.group(4)))
                ne = [int(x) for x in m.group(3).replace(",", " ").split()]
                tensors.append((m.group(1), m.group(2), ne, f.read(int(m.group(5)))))
    js = subprocess.run([binary, "dump", "--json", "--json-array", path], capture_output=True, check=True, text=True).stdout
    return tensors, json.loads(js)["metadata"]


def check(binary, path, d, outtype):
    st = st_tensors(d)
    tensors, md = gguf(binary, path)
    want_type = {"f32": "F32", "f16": "F16", "bf16": "BF16"}[outtype]
    by_name = {t[0]: t for t in tensors}
    expect = {"token_embd.weight": "model.embed_tokens.weight", "output.weight": "lm_head.weight",
              "output_norm.weight": "model.norm.weight"}
    for b in range(L):
        p, q = f"model.layers.{b}.", f"blk.{b}."
        expect.update({q + "attn_norm.weight": p + "input_layernorm.weight",
                       q + "ffn_norm.weight": p + "post_attention_layernorm.weight",
                       q + "attn_q.weight": p + "self_attn.q_proj.weight", q + "attn_k.weight": p + "self_attn.k_proj.weight",
                       q + "attn_v.weight": p + "self_attn.v_proj.weight", q + "attn_output.weight": p + "self_attn.o_proj.weight",
                       q + "attn_q_norm.weight": p + "self_attn.q_norm.weight", q + "attn_k_norm.weight": p + "self_attn.k_norm.weight",
                       q + "ffn_gate_inp.weight": p + "mlp.gate.weight"})
        for w, hf in (("gate", "gate_proj"), ("down", "down_proj"), ("up", "up_proj")):
            expect[q + f"ffn_{w}_exps.weight"] = [p + f"mlp.experts.{x}.{hf}.weight" for x in range(E)]
    fused = "model.layers.0.mlp.experts.gate_up_proj" in st
    if fused:   # the per-expert slices the stacked tensors hold
        for b in range(L):
            p = f"model.layers.{b}."
            dtype, shape, raw = st[p + "mlp.experts.gate_up_proj"]
            half = MOE_FF * H * 2
            for x in range(E):
                blk = raw[x * 2 * half:(x + 1) * 2 * half]
                st[p + f"mlp.experts.{x}.gate_proj.weight"] = (dtype, [MOE_FF, H], blk[:half])
                st[p + f"mlp.experts.{x}.up_proj.weight"] = (dtype, [MOE_FF, H], blk[half:])
            dtype, shape, raw = st[p + "mlp.experts.down_proj"]
            n = H * MOE_FF * 2
            for x in range(E):
                st[p + f"mlp.experts.{x}.down_proj.weight"] = (dtype, [H, MOE_FF], raw[x * n:(x + 1) * n])
    assert sorted(by_name) == sorted(expect), (sorted(set(by_name) ^ set(expect)))
    for gname, src in expect.items():
        _, typ, ne, raw = by_name[gname]
        srcs = src if isinstance(src, list) else [src]
        dtype, shape, _ = st[srcs[0]]
        want_ne = list(reversed(shape)) + ([E] if isinstance(src, list) else [])
        f32 = len(shape) == 1 or gname.endswith("_norm.weight") or gname.endswith("ffn_gate_inp.weight")
        t = "F32" if f32 else want_type
        assert ne == want_ne, (gname, ne, want_ne)
        assert typ == t, (gname, typ, t)
        body = b"".join(st[s][2] if t == dtype else widen(dtype, st[s][2]) for s in srcs)
        assert raw == body, gname + ": data differs"
    order = [t[0] for t in tensors]
    for b in range(L):
        if fused:   # gate and up come from one tensor, in that order
            i = order.index(f"blk.{b}.ffn_gate_exps.weight")
            assert order[i + 1] == f"blk.{b}.ffn_up_exps.weight", order[i:i + 2]
            continue
        i = order.index(f"blk.{b}.ffn_down_exps.weight")
        assert order[i:i + 3] == [f"blk.{b}.ffn_{w}_exps.weight" for w in ("down", "gate", "up")], order[i:i + 3]
    keys = [k for k in md if k.startswith("qwen3moe.")]
    want = [("block_count", L), ("context_length", 4096), ("embedding_length", H), ("feed_forward_length", FF),
            ("attention.head_count", NH), ("attention.head_count_kv", NKV), ("rope.freq_base", 1000000.0),
            ("attention.layer_norm_rms_epsilon", 1e-06), ("expert_count", E), ("expert_used_count", K),
            ("attention.key_length", HD), ("attention.value_length", HD), ("expert_feed_forward_length", MOE_FF)]
    assert keys == ["qwen3moe." + k for k, _ in want], keys
    for k, v in want:
        got = md["qwen3moe." + k]["value"]
        assert abs(got - v) <= 1e-6 * abs(v), (k, got, v)
    assert md["general.architecture"]["value"] == "qwen3moe"
    assert md["tokenizer.ggml.model"]["value"] == "gpt2"
    ks = list(md)
    assert ks.index("general.file_type") < ks.index("qwen3moe.expert_feed_forward_length") < ks.index("general.quantization_version")
    print(f"{len(tensors)} tensors and {len(keys)} qwen3moe keys as the reference's rules say")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:] == ["fused"])
    else:
        check(*sys.argv[2:6])
