#!/usr/bin/env python3
"""convert_vocab_variants.py - writes llama-gqa variants whose tokenizer.json and
tokenizer_config.json exercise gguf.SpecialVocab (post-processors, normalizers,
special token overrides) for test_convert.sh; the other files are links to the
golden folder (argv[2]). usage: convert_vocab_variants.py OUT_ROOT GOLDEN_LLAMA_GQA"""
import json, os, sys
G = sys.argv[2]
root = sys.argv[1]
def tok(i, c, special=True): return {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": special}
def at(c): return {"__type": "AddedToken", "content": c, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False}
ST = lambda i: {"SpecialToken": {"id": i, "type_id": 0}}
SQ = lambda i: {"Sequence": {"id": i, "type_id": 0}}
added = [tok(0, "<unk>"), tok(1, "<s>"), tok(2, "</s>"), tok(5, "<|eot|>")]
variants = {
 "llama2": ({"added_tokens": added[:3], "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"}, {"type": "Replace"}]},
             "post_processor": {"type": "TemplateProcessing", "single": [ST("<s>"), SQ("A")], "pair": [ST("<s>"), SQ("A"), ST("<s>"), SQ("B")]}},
            {"add_bos_token": True, "add_eos_token": False, "bos_token": at("<s>"), "eos_token": at("</s>"), "unk_token": at("<unk>"), "pad_token": None}),
 "roberta": ({"added_tokens": added[:3], "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1]}},
             {"bos_token": "<s>", "eos_token": "</s>", "chat_template": "T"}),
 "eot": ({"added_tokens": added, "post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "TemplateProcessing", "single": [ST("<s>"), SQ("A"), ST("<|eot|>")],
             "pair": [ST("<s>"), SQ("A"), ST("<|eot|>"), ST("<s>"), SQ("B"), ST("<|eot|>")]}]}},
         {"bos_token": "<s>", "eos_token": "</s>", "add_eos_token": True}),
 "sep": ({"added_tokens": added[:3], "post_processor": {"type": "TemplateProcessing", "single": [ST("<s>"), SQ("A")], "pair": [ST("<s>"), SQ("A"), ST("</s>"), ST("</s>"), SQ("B")]}},
         {"bos_token": "<s>", "eos_token": "</s>"}),
 "bert": ({"added_tokens": added[:3], "normalizer": {"type": "BertNormalizer", "lowercase": True, "strip_accents": False}}, {}),
 "lower": ({"added_tokens": added[:3], "normalizer": {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "StripAccents"}]}},
           {"cls_token": "<s>", "sep_token": "</s>", "unk_token": "<unk>", "mask_token": "<unk>", "pad_token": "</s>"}),
 "notc": ({"added_tokens": added[:3], "post_processor": {"type": "TemplateProcessing", "single": [ST("<s>"), SQ("A"), ST("</s>")], "pair": []}}, None),
}
for name, (tj, tc) in variants.items():
    d = os.path.join(root, name, "llama-gqa")
    os.makedirs(d, exist_ok=True)
    for f in ("config.json", "model.safetensors", "tokenizer.model"):
        if not os.path.exists(os.path.join(d, f)): os.symlink(os.path.join(G, f), os.path.join(d, f))
    json.dump(tj, open(os.path.join(d, "tokenizer.json"), "w"))
    if tc is not None: json.dump(tc, open(os.path.join(d, "tokenizer_config.json"), "w"))
