#!/usr/bin/env python3
"""Rebuilds a Hugging Face BPE tokenizer folder from a vocabulary GGUF's dump.

usage: bpe_from_gguf.py DUMP.json FAMILY OUT_DIR [--pairs]

DUMP.json is `gguf_dump.py --json --json-array` (or `ggufkit dump --json
--json-array`) of a vocabulary the reference converter wrote. FAMILY picks the
pre-tokenizer, normalizer and post-processor that family's real tokenizer.json
has. The folder gets tokenizer.json (tokens of type 1 in model.vocab, control
and user-defined ones as added tokens, the merges "a b" or, with --pairs, as
["a", "b"]), tokenizer_config.json and a small Qwen2 config.json carrying the
vocabulary size and special token ids, so that `ggufkit convert --vocab-only`
can be run on it and its tokenizer.* keys compared with the GGUF's.
"""
import json
import os
import sys

BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}


def split(regex):
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


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
}


def value(md, key):
    v = md.get(key)
    return None if v is None else v["value"]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    pairs = "--pairs" in sys.argv
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
           "normalizer": fam["normalizer"], "pre_tokenizer": fam["pre"], "post_processor": fam["post"],
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


if __name__ == "__main__":
    main()
