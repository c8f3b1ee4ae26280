#!/usr/bin/env python3
"""Writes a small byte-level BPE tokenizer folder, whole or broken one way.

usage: bpe_tiny.py OUT_DIR [--arch A] [--vocab-size N] [--break KIND]

The tokenizer: the 256 byte-alphabet tokens, a few merges, two special added
tokens and one plain added token; GPT-2's pre-tokenizer. config.json names
architecture A (Qwen2ForCausalLM by default) and vocab_size N (the token
count by default). KIND breaks one thing:
  wordpiece     model.type is WordPiece
  merge-unknown a merge joins tokens model.vocab lacks
  merge-form    a merge that is not two tokens parted by one space
  merge-mixed   a pair among string merges
  vocab-id      a token with a negative id
  added-id      an added token without an id
  pre-unknown   a pre-tokenizer step the digest cannot run (Metaspace)
  pre-other     a pre-tokenizer that runs but that the reference's table lacks
  llama-hf      byte fallback and a Sequence decoder (SentencePiece-style)
  not-object    tokenizer.json is a JSON list
  bad-utf8      an added token's text holds a byte that is not UTF-8 (the
                reference's json.load refuses the file)
"""
import json
import os
import sys


def byte_alphabet():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for _, c in sorted(zip(bs, cs))]


def main():
    out = sys.argv[1]
    opts = dict(zip(sys.argv[2::2], sys.argv[3::2]))
    kind = opts.get("--break", "")
    vocab = {c: i for i, c in enumerate(byte_alphabet())}
    merges = []
    for a, b in [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("a", "n"), ("Ġ", "a")]:
        merges.append(f"{a} {b}")
        vocab[a + b] = len(vocab)
    added = []
    for content, special in [("<|endoftext|>", True), ("<|im_start|>", True), ("<extra one>", False)]:
        added.append({"id": len(vocab), "content": content, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": not special, "special": special})
        vocab[content] = len(vocab)
    n_tokens = len(vocab)
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
             "vocab": vocab, "merges": merges}
    pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    decoder = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    if kind == "wordpiece":
        model["type"] = "WordPiece"
    elif kind == "merge-unknown":
        merges.append("Ġ zz")
    elif kind == "merge-form":
        merges.insert(1, "a b c")
    elif kind == "merge-mixed":
        merges.insert(2, ["a", "n"])
    elif kind == "vocab-id":
        vocab["Ġt"] = -3
    elif kind == "added-id":
        del added[1]["id"]
    elif kind == "pre-unknown":
        pre = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    elif kind == "pre-other":
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\p{N}"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    elif kind == "llama-hf":
        model["byte_fallback"] = True
        decoder = {"type": "Sequence", "decoders": []}
    tok = {"version": "1.0", "added_tokens": added, "normalizer": None, "pre_tokenizer": pre,
           "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
           "decoder": decoder, "model": model}
    os.makedirs(out, exist_ok=True)
    text = json.dumps([tok] if kind == "not-object" else tok, ensure_ascii=False).encode()
    if kind == "bad-utf8":
        text = text.replace(b"<extra one>", b"<extra\x92one\xe2>")
    with open(os.path.join(out, "tokenizer.json"), "wb") as f:
        f.write(text)
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"eos_token": "<|endoftext|>", "chat_template": "{{ messages }}", "add_bos_token": False}, f)
    cfg = {"architectures": [opts.get("--arch", "Qwen2ForCausalLM")], "vocab_size": int(opts.get("--vocab-size", n_tokens)),
           "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "intermediate_size": 128, "max_position_embeddings": 512, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
           "tie_word_embeddings": False, "torch_dtype": "bfloat16", "bos_token_id": n_tokens - 2}
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1)


if __name__ == "__main__":
    main()
