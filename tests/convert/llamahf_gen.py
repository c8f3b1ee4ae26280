#!/usr/bin/env python3
"""A seeded SentencePiece-style tokenizer.json for a Llama checkpoint, and the
check of what `ggufkit convert --vocab-only` wrote for it.

usage: llamahf_gen.py make SRC OUT_DIR [--seed N] [--break KIND]
       llamahf_gen.py check OUT_DIR DUMP.json

make: OUT_DIR gets SRC's config.json, tokenizer_config.json and safetensors
(linked) without its tokenizer.model, and a tokenizer.json with a BPE model
(byte_fallback true, a Sequence decoder): <unk> <s> </s>, the byte tokens
<0x00>..<0xFF>, a seeded number of "▁" tokens, in a shuffled JSON order; the
added tokens <unk> <s> </s> (special), "<tool>" (special), "<|im_end|>" (not
flagged, but an additional_special_tokens entry of tokenizer_config.json),
"▁user tok" (not special), and "<extra>" only in tokenizer_config.json's
added_tokens_decoder. One seeded base token is listed in
additional_special_tokens too. KIND breaks one thing:
  small         config.json's vocab_size one below the token count
  no-fallback   model.byte_fallback false (the GPT-2 route then)
  llama3        ignore_merges true, byte_fallback false (GPT-2 route)
  gap           one id of the base vocabulary has no token
  dup-added     "<tool>" twice in added_tokens, first with an id past all
                others (the later one wins; converts; a fuzz find)
  dup-id        two texts of the base vocabulary share the last id (a fuzz find)
  decoder-key   an added_tokens_decoder key that is not an id
  far-id        a token of the base vocabulary with id 1,000,000,000 (a fuzz
                find: the id sized a table of 9 GB)

check: computes the tokenizer.* keys from the rules of the reference's
LlamaHfVocab and SpecialVocab, written here apart from the converter, and
compares them with the dump (ggufkit dump --json --json-array); exit 1 on any
difference.
"""
import json
import os
import random
import re
import sys

SPACE = "\u2581"


def make(src, out, seed, brk):
    rnd = random.Random(seed)
    os.makedirs(out)
    config = json.load(open(os.path.join(src, "config.json")))
    tc = json.load(open(os.path.join(src, "tokenizer_config.json")))
    os.symlink(os.path.abspath(os.path.join(src, "model.safetensors")), os.path.join(out, "model.safetensors"))
    base = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    letters = "abcdefghij"
    words = set()
    n_words = rnd.randint(20, 40)
    while len(words) < n_words:
        w = "".join(rnd.choice(letters) for _ in range(rnd.randint(1, 4)))
        words.add((SPACE + w) if rnd.random() < 0.5 else w)
    base += sorted(words)
    vocab = list(enumerate(base))
    if brk == "gap":
        vocab = [(i, t) for i, t in vocab if i != len(base) - 5]
        vocab.append((len(base) + 7, "zzzz"))
    if brk == "dup-id":
        vocab[-1] = (len(base) - 2, vocab[-1][1])
    if brk == "far-id":
        vocab[-1] = (1000000000, vocab[-1][1])
    rnd.shuffle(vocab)
    n = len(base)
    added = [
        {"id": 0, "content": "<unk>", "special": True},
        {"id": 1, "content": "<s>", "special": True},
        {"id": 2, "content": "</s>", "special": True},
        {"id": n, "content": "<tool>", "special": True},
        {"id": n + 1, "content": "<|im_end|>", "special": False},
        {"id": n + 2, "content": SPACE + "user tok", "special": False},
    ]
    if brk == "dup-added":
        added.insert(0, {"id": n + 50, "content": "<tool>", "special": False})
    for a in added:
        a.update({"single_word": False, "lstrip": False, "rstrip": False, "normalized": not a["special"]})
    model = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True,
             "ignore_merges": False, "vocab": {t: i for i, t in vocab}, "merges": []}
    if brk == "no-fallback":
        model["byte_fallback"] = False
    if brk == "llama3":
        model["byte_fallback"] = False
        model["ignore_merges"] = True
    tok = {
        "version": "1.0",
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False},
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": model,
    }
    dec = {str(a["id"]): {k: v for k, v in a.items() if k != "id"} for a in added}
    dec[str(n + 3)] = {"content": "<extra>", "special": False, "single_word": False, "lstrip": False,
                       "rstrip": False, "normalized": True}
    if brk == "decoder-key":
        dec["x1"] = dec.pop(str(n + 3))
    tc["added_tokens_decoder"] = dec
    tc["additional_special_tokens"] = ["<|im_end|>", rnd.choice(sorted(words))]
    config["vocab_size"] = n + 4 + rnd.randint(0, 3)
    if brk == "small":
        config["vocab_size"] = n + 3
    json.dump(tok, open(os.path.join(out, "tokenizer.json"), "w"), ensure_ascii=False, indent=1)
    json.dump(tc, open(os.path.join(out, "tokenizer_config.json"), "w"), ensure_ascii=False, indent=1)
    json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=1)


def text_of(v):
    return v if isinstance(v, str) else v.get("content") if isinstance(v, dict) else None


def expected(d):
    tok = json.load(open(os.path.join(d, "tokenizer.json")))
    tc = json.load(open(os.path.join(d, "tokenizer_config.json")))
    config = json.load(open(os.path.join(d, "config.json")))
    mvocab = tok["model"]["vocab"]
    base = len(mvocab)
    # get_added_vocab: tokenizer.json's added tokens, then the config's new texts
    added = {a["content"]: (a["id"], a.get("special", False)) for a in tok["added_tokens"]}
    for k, a in tc.get("added_tokens_decoder", {}).items():
        added.setdefault(a["content"], (int(k), a.get("special", False)))
    vocab = dict(mvocab)
    vocab.update({t: i for t, (i, _) in added.items()})
    names = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]
    special_texts = [text_of(tc.get(k)) for k in names] + [text_of(t) for t in tc.get("additional_special_tokens", [])]
    special_texts += [t for t, (_, sp) in added.items() if sp]
    special_ids = {vocab[t] for t in special_texts if t in vocab}
    rev = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(base):
        t = rev[i]
        tokens.append(t)
        types.append(6 if re.fullmatch(r"<0x[0-9A-Fa-f]{2}>", t) else 3 if i in special_ids else 1)
    for t, (i, _) in sorted(added.items(), key=lambda x: x[1][0]):
        if i >= base:
            tokens.append(t)
            types.append(3 if i in special_ids else 4)
    exp = {
        "tokenizer.ggml.model": "llama", "tokenizer.ggml.pre": "default",
        "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.scores": [-1000.0] * len(tokens),
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.add_bos_token": tc["add_bos_token"], "tokenizer.ggml.add_eos_token": tc["add_eos_token"],
        "tokenizer.chat_template": tc["chat_template"],
    }
    # SpecialVocab: the tokenizer_config.json names found among the added tokens,
    # then config.json's *_token_id where none was found
    ids = {}
    for typ in ["bos", "eos", "unk", "sep", "pad", "mask"]:
        t = text_of(tc.get(typ + "_token"))
        for a in tok["added_tokens"]:
            if t is not None and a["content"] == t:
                ids[typ] = a["id"]
                break
        if typ not in ids and isinstance(config.get(typ + "_token_id"), int):
            ids[typ] = config[typ + "_token_id"]
    keys = {"bos": "bos_token_id", "eos": "eos_token_id", "unk": "unknown_token_id", "sep": "seperator_token_id",
            "pad": "padding_token_id", "mask": "mask_token_id"}
    for typ, i in ids.items():
        exp["tokenizer.ggml." + keys[typ]] = i
    return exp


def check(d, dump):
    meta = json.load(open(dump))["metadata"]
    got = {k: v["value"] for k, v in meta.items() if k.startswith("tokenizer.")}
    exp = expected(d)
    bad = 0
    for k in sorted(set(got) | set(exp)):
        if got.get(k) != exp.get(k):
            print("differs: %s: got %r, expected %r" % (k, str(got.get(k))[:200], str(exp.get(k))[:200]))
            bad += 1
    print("%d tokenizer keys, %d tokens, %d differ" % (len(exp), len(exp["tokenizer.ggml.tokens"]), bad))
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "make":
        seed, brk = 1, None
        rest = argv[4:]
        while rest:
            if rest[0] == "--seed" and len(rest) > 1:
                seed, rest = int(rest[1]), rest[2:]
            elif rest[0] == "--break" and len(rest) > 1:
                brk, rest = rest[1], rest[2:]
            else:
                sys.exit(__doc__)
        make(argv[2], argv[3], seed, brk)
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
