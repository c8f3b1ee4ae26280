#!/usr/bin/env python3
"""Rebuilds a Hugging Face BPE tokenizer folder from a vocabulary GGUF's dump.

usage: bpe_from_gguf.py DUMP.json FAMILY OUT_DIR [--pairs] [--weights]

DUMP.json is `gguf_dump.py --json --json-array` (or `ggufkit dump --json
--json-array`) of a vocabulary the reference converter wrote. FAMILY picks the
pre-tokenizer, normalizer and post-processor that family's real tokenizer.json
has. The folder gets tokenizer.json (tokens of type 1 in model.vocab, control
and user-defined ones as added tokens, the merges "a b" or, with --pairs, as
["a", "b"]), tokenizer_config.json and a small Qwen2 config.json carrying the
vocabulary size and special token ids, so that `ggufkit convert --vocab-only`
can be run on it and its tokenizer.* keys compared with the GGUF's. With
--weights the folder also gets model.safetensors for that config (BF16 zeros),
so that a whole conversion (and `ggufkit export` of it) can run.

FAMILY may also name a family without a golden vocabulary (llama-bpe, qwen2):
its structure is put on DUMP's tokens, to compare how two tokenizer.json
files of that structure split the check text (the digest convert reports).
"""
import json
import os
import struct
import sys

BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}


def split(regex):
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


def byte_level(aps, trim, regex):
    return {"type": "ByteLevel", "add_prefix_space": aps, "trim_offsets": trim, "use_regex": regex}


# a post-processor entry: the TemplateProcessing putting the GGUF's BOS first
BOS_TEMPLATE = "bos-template"

LLAMA3_SPLIT = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2_SPLIT = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
               "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


FAMILIES = {
    # openai-community/gpt2
    "gpt-2": dict(pre=BYTE_LEVEL, normalizer=None, post=BYTE_LEVEL, config={}),
    # EleutherAI/gpt-neox-20b and mosaicml/mpt-7b (the same tokenizer)
    "gpt-neox": dict(pre=BYTE_LEVEL, normalizer={"type": "NFC"}, post=BYTE_LEVEL, config={}),
    "mpt": dict(pre=BYTE_LEVEL, normalizer={"type": "NFC"}, post=BYTE_LEVEL, config={}),
    # deepseek-ai/deepseek-coder-6.7b-base
    "deepseek-coder": dict(
        pre={"type": "Sequence", "pretokenizers": [
            split("[\r\n]"), split("\\s?\\p{L}+"), split("\\s?\\p{P}+"), split("[一-龥ࠀ-一가-퟿]+"),
            {"type": "Digits", "individual_digits": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        normalizer={"type": "Sequence", "normalizers": []},
        post={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        config={"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": True, "add_eos_token": False}),
    # meta-llama/Meta-Llama-3-8B
    "llama-bpe": dict(
        pre={"type": "Sequence", "pretokenizers": [split(LLAMA3_SPLIT), byte_level(False, True, False)]},
        normalizer=None,
        post={"type": "Sequence", "processors": [byte_level(True, False, True), BOS_TEMPLATE]}, config={}),
    # Qwen/Qwen2-7B
    "qwen2": dict(
        pre={"type": "Sequence", "pretokenizers": [split(QWEN2_SPLIT), byte_level(False, False, False)]},
        normalizer={"type": "NFC"}, post=byte_level(False, False, False), config={}),
}


def bos_template(bos, bos_id):
    """Llama 3's TemplateProcessing: BOS before each sequence."""
    tok = lambda kind, i, t: {kind: {"id": i, "type_id": t}}
    return {"type": "TemplateProcessing",
            "single": [tok("SpecialToken", bos, 0), tok("Sequence", "A", 0)],
            "pair": [tok("SpecialToken", bos, 0), tok("Sequence", "A", 0), tok("SpecialToken", bos, 1),
                     tok("Sequence", "B", 1)],
            "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}}}


def post_of(fam, tokens, bos_id):
    """The family's post-processor with its BOS template filled in."""
    post = fam["post"]
    if isinstance(post, dict) and BOS_TEMPLATE in post.get("processors", []):
        post = dict(post, processors=[bos_template(tokens[bos_id], bos_id) if p == BOS_TEMPLATE else p
                                      for p in post["processors"]])
    return post


def write_weights(path, cfg):
    """model.safetensors of BF16 zeros for the small Qwen2 config cfg."""
    h, kv, ff, v = cfg["hidden_size"], cfg["hidden_size"] // cfg["num_attention_heads"] * cfg["num_key_value_heads"], \
        cfg["intermediate_size"], cfg["vocab_size"]
    shapes = {"model.embed_tokens.weight": [v, h], "lm_head.weight": [v, h], "model.norm.weight": [h]}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.update({p + "input_layernorm.weight": [h], p + "post_attention_layernorm.weight": [h],
                       p + "self_attn.q_proj.weight": [h, h], p + "self_attn.q_proj.bias": [h],
                       p + "self_attn.k_proj.weight": [kv, h], p + "self_attn.k_proj.bias": [kv],
                       p + "self_attn.v_proj.weight": [kv, h], p + "self_attn.v_proj.bias": [kv],
                       p + "self_attn.o_proj.weight": [h, h], p + "mlp.gate_proj.weight": [ff, h],
                       p + "mlp.up_proj.weight": [ff, h], p + "mlp.down_proj.weight": [h, ff]})
    header, off = {}, 0
    for name in sorted(shapes):
        n = 2
        for d in shapes[name]:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shapes[name], "data_offsets": [off, off + n]}
        off += n
    hb = json.dumps(header).encode()
    hb += b" " * (-len(hb) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)) + hb)
        f.truncate(8 + len(hb) + off)


def value(md, key):
    v = md.get(key)
    return None if v is None else v["value"]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    pairs = "--pairs" in sys.argv
    weights = "--weights" in sys.argv
    dump, family, out = args
    fam = FAMILIES[family]
    md = json.load(open(dump, encoding="utf-8"))["metadata"]
    tokens = value(md, "tokenizer.ggml.tokens")
    types = value(md, "tokenizer.ggml.token_type")
    merges = value(md, "tokenizer.ggml.merges") or []
    vocab, added = {}, []
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty == 1:
            vocab[t] = i
        elif ty in (3, 4):
            added.append({"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": ty == 4, "special": ty == 3})
        # type 5 ([PADn]) stays a gap, filled again from vocab_size
    if pairs:
        merges = [m.split(" ") for m in merges]
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
             "vocab": vocab, "merges": merges}
    tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
           "normalizer": fam["normalizer"], "pre_tokenizer": fam["pre"],
           "post_processor": post_of(fam, tokens, value(md, "tokenizer.ggml.bos_token_id")),
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
           "model": model}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    tc = dict(fam["config"])
    for typ in ("bos", "eos"):
        tid = value(md, f"tokenizer.ggml.{typ}_token_id")
        if tid is not None and tc:
            tc[f"{typ}_token"] = tokens[tid]
    for typ in ("bos", "eos"):
        v = value(md, f"tokenizer.ggml.add_{typ}_token")
        if v is not None:
            tc[f"add_{typ}_token"] = v
    tc.setdefault("model_max_length", 1024)
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tc, f, ensure_ascii=False)
    cfg = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": len(tokens),
           "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "intermediate_size": 128, "max_position_embeddings": 512, "rms_norm_eps": 1e-06,
           "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    for typ, key in (("bos", "bos"), ("eos", "eos"), ("unk", "unknown"), ("sep", "seperator"), ("pad", "padding")):
        tid = value(md, f"tokenizer.ggml.{key}_token_id")
        if tid is not None:
            cfg[f"{typ}_token_id"] = tid
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1)
    if weights:
        write_weights(os.path.join(out, "model.safetensors"), cfg)


if __name__ == "__main__":
    main()
