#!/usr/bin/env bash
# test_convert_bpe.sh - CLI tests of `ggufkit convert` with a Hugging Face
# tokenizer.json BPE vocabulary.
#
# usage: test_convert_bpe.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN   the golden reference folder (real/ and convert/
#                               are used; without it the script says SKIPPED)
#
# Parity: tokenizer.json folders rebuilt from the reference converter's real
# vocabulary files (gpt-2, mpt, gpt-neox, deepseek-coder; tests/convert/
# bpe_from_gguf.py, merges as "a b" and as pairs) convert with --vocab-only to
# the same tokenizer.* keys, tokenizer.ggml.pre found by the check-text digest
# (tests/convert/bpe_compare.py). A small tokenizer (tests/convert/bpe_tiny.py):
# --vocab-pre, padding to vocab_size, a whole Llama conversion with it.
# Refusals, each exit 1 naming tokenizer.json and the key, no output left:
# a model that is not BPE, merges naming unknown tokens or of a bad form or of
# mixed forms, bad token ids, a tokenizer larger than vocab_size, a
# pre-tokenizer that cannot be identified (the message names --vocab-pre),
# bytes that are not UTF-8, no tokenizer at all.
# Llama with a SentencePiece-style tokenizer.json (tests/convert/llamahf_gen.py):
# seeded folders checked key by key against the reference's LlamaHfVocab rules;
# refusals (larger than vocab_size, an id without a token, a bad
# added_tokens_decoder key); without byte fallback the GPT-2 route.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

if [ ! -x "$BIN" ]; then echo "FAIL: $BIN is not an executable"; exit 1; fi
R=$GOLDEN/real
C=$GOLDEN/convert
if [ ! -f "$R/ggml-vocab-gpt-2.dump.json" ] || [ ! -d "$C/llama-gqa" ]; then
    skip "no golden real/ or convert/ folder under $GOLDEN: the BPE convert parity suite was NOT run"
    finish
fi
# expect_egrep NAME FILE REGEX: FILE has a line matching the extended REGEX.
expect_egrep() {
    if grep -qE -- "$3" "$2"; then ok "$1"; else bad "$1: no /$3/ in $(basename "$2")"; fi
}
GEN=$HERE/../convert/bpe_from_gguf.py
TINY=$HERE/../convert/bpe_tiny.py
CMP=$HERE/../convert/bpe_compare.py
TABLE=$HERE/../../lib/convert/bpe_pre_table.c

# ------------------------------------------------------------ real vocabularies
for fam in gpt-2 mpt gpt-neox deepseek-coder; do
    for form in strings pairs; do
        [ "$form" = pairs ] && [ "$fam" != gpt-2 ] && [ "$fam" != deepseek-coder ] && continue
        d=$TMP/$fam-$form
        python3 "$GEN" "$R/ggml-vocab-$fam.dump.json" "$fam" "$d" $([ "$form" = pairs ] && echo --pairs)
        expect_exit 0 "$fam ($form merges): convert --vocab-only" "$BIN" convert --vocab-only "$d" "$TMP/$fam.gguf" f16
        "$BIN" dump --json --json-array "$TMP/$fam.gguf" > "$TMP/$fam.json"
        expect_exit 0 "$fam ($form merges): tokenizer keys equal the reference's" \
            python3 "$CMP" "$R/ggml-vocab-$fam.dump.json" "$TMP/$fam.json" "$TABLE"
        rm -f "$TMP/$fam.gguf"
    done
done
# the names the digests gave
for pair in gpt-2:gpt-2 deepseek-coder:deepseek-coder mpt:olmo; do
    fam=${pair%%:*} name=${pair#*:}
    python3 "$GEN" "$R/ggml-vocab-$fam.dump.json" "$fam" "$TMP/n-$fam"
    "$BIN" convert --vocab-only "$TMP/n-$fam" "$TMP/n.gguf" f16 2>"$TMP/err"
    "$BIN" dump "$TMP/n.gguf" > "$TMP/n.txt"
    expect_egrep "$fam: tokenizer.ggml.pre is $name" "$TMP/n.txt" "tokenizer.ggml.pre.*\"$name\""
    rm -f "$TMP/n.gguf"
done
# --vocab-pre overrides the digest
expect_exit 0 "--vocab-pre" "$BIN" convert --vocab-only --vocab-pre llama-bpe "$TMP/n-gpt-2" "$TMP/vp.gguf" f16
"$BIN" dump "$TMP/vp.gguf" > "$TMP/vp.txt"
expect_egrep "--vocab-pre: the name given" "$TMP/vp.txt" 'tokenizer.ggml.pre.*"llama-bpe"'
expect_exit 2 "--vocab-pre without a name" "$BIN" convert --vocab-only --vocab-pre "" "$TMP/n-gpt-2" "$TMP/vp2.gguf" f16

# ------------------------------------------------------------ a small tokenizer
python3 "$TINY" "$TMP/tiny" --vocab-size 270
expect_exit 0 "tiny tokenizer padded to vocab_size" "$BIN" convert --vocab-only --vocab-pre gpt-2 "$TMP/tiny" "$TMP/tiny.gguf" f16
"$BIN" dump --json --json-array "$TMP/tiny.gguf" > "$TMP/tiny.json"
expect_exit 0 "tiny: tokens, types, merges, special tokens" python3 - "$TMP/tiny.json" <<'PY'
import json, sys
md = json.load(open(sys.argv[1]))["metadata"]
v = lambda k: md[k]["value"]
assert len(v("tokenizer.ggml.tokens")) == 270, len(v("tokenizer.ggml.tokens"))
assert v("tokenizer.ggml.tokens")[262:] == ["<|endoftext|>", "<|im_start|>", "<extra one>"] + [f"[PAD{i}]" for i in range(265, 270)]
assert v("tokenizer.ggml.token_type")[256:] == [1] * 6 + [3, 3, 4] + [5] * 5, v("tokenizer.ggml.token_type")[256:]
assert v("tokenizer.ggml.merges") == ["Ġ t", "h e", "Ġt he", "i n", "a n", "Ġ a"]
assert v("tokenizer.ggml.model") == "gpt2" and v("tokenizer.ggml.pre") == "gpt-2"
assert v("tokenizer.ggml.eos_token_id") == 262 and v("tokenizer.ggml.bos_token_id") == 263 and v("tokenizer.chat_template") == "{{ messages }}"
keys = [k for k in md if k.startswith("tokenizer.")]
# the reference's order: model, pre, tokens, types, then SpecialVocab (merges first)
assert keys[:5] == ["tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
                    "tokenizer.ggml.token_type", "tokenizer.ggml.merges"], keys
PY
# a whole conversion: llama-gqa (vocab_size 320) with the tokenizer.json in
# place of its tokenizer.model
rm -rf "$TMP/lbpe"; cp -r "$C/llama-gqa" "$TMP/lbpe"; chmod -R u+w "$TMP/lbpe"
rm "$TMP/lbpe/tokenizer.model" "$TMP/lbpe/tokenizer_config.json"
python3 "$TINY" "$TMP/tiny320" --vocab-size 320
cp "$TMP/tiny320/tokenizer.json" "$TMP/tiny320/tokenizer_config.json" "$TMP/lbpe/"
expect_exit 0 "llama with tokenizer.json: f16" "$BIN" convert --vocab-pre gpt-2 "$TMP/lbpe" "$TMP/lbpe.gguf" f16
"$BIN" dump "$TMP/lbpe.gguf" > "$TMP/lbpe.txt"
expect_egrep "llama with tokenizer.json: gpt2 tokenizer" "$TMP/lbpe.txt" 'tokenizer.ggml.model.*"gpt2"'
expect_grep "llama with tokenizer.json: tensors written" "$TMP/lbpe.txt" 'token_embd.weight'

# ------------------------------------------------------------ refusals
# refuse NAME KIND TEXT... [-- ARGS]: the tiny tokenizer broken as KIND fails
# with status 1, stderr naming tokenizer.json and each TEXT, no output left.
refuse() {
    local name=$1 kind=$2
    shift 2
    rm -rf "$TMP/bad" "$TMP/out.gguf"
    python3 "$TINY" "$TMP/bad" --break "$kind"
    expect_exit 1 "$name: exit 1" "$BIN" convert --vocab-only "$TMP/bad" "$TMP/out.gguf" f16
    expect_grep "$name: names the file" "$TMP/err" "bad/tokenizer.json"
    for text in "$@"; do expect_grep "$name: message" "$TMP/err" "$text"; done
    expect_absent "$name: no output" "$TMP/out.gguf"
}
refuse "not BPE" wordpiece "model.type is 'WordPiece'"
refuse "merge of unknown tokens" merge-unknown "model.merges[6]" "model.vocab lacks"
refuse "merge of three parts" merge-form "model.merges[1]" "two tokens parted by one space"
refuse "merges of mixed forms" merge-mixed "model.merges[2]"
refuse "negative token id" vocab-id "model.vocab: token 'Ġt'"
refuse "added token without id" added-id "added_tokens[1]"
refuse "unknown pre-tokenizer step" pre-unknown "Metaspace" "--vocab-pre"
refuse "pre-tokenizer not in the table" pre-other "check-text digest" "--vocab-pre"
refuse "tokenizer.json not an object" not-object "not a JSON object"
refuse "tokenizer.json not UTF-8 (a fuzz find)" bad-utf8 "not valid UTF-8"
# with --vocab-pre the unidentified ones convert
python3 "$TINY" "$TMP/other" --break pre-unknown
expect_exit 0 "unknown pre-tokenizer step with --vocab-pre" "$BIN" convert --vocab-only --vocab-pre gpt-2 "$TMP/other" "$TMP/o.gguf" f16
# larger than vocab_size
rm -rf "$TMP/big" "$TMP/out.gguf"; python3 "$TINY" "$TMP/big" --vocab-size 200
expect_exit 1 "tokenizer larger than vocab_size: exit 1" "$BIN" convert --vocab-only --vocab-pre gpt-2 "$TMP/big" "$TMP/out.gguf" f16
expect_egrep "larger than vocab_size: message" "$TMP/err" "big/tokenizer.json.*token id 264 is not below .* vocab_size"
expect_absent "larger than vocab_size: no output" "$TMP/out.gguf"
# Llama with a SentencePiece-style tokenizer.json (the reference's LlamaHfVocab):
# seeded folders from llama-gqa without tokenizer.model, every tokenizer.* key
# checked against the reference's rules (tests/convert/llamahf_gen.py)
LHF=$HERE/../convert/llamahf_gen.py
for seed in 1 2 3; do
    rm -rf "$TMP/lhf$seed" "$TMP/lhf.gguf"
    python3 "$LHF" make "$C/llama-gqa" "$TMP/lhf$seed" --seed "$seed"
    expect_exit 0 "LlamaHfVocab seed $seed: converts" "$BIN" convert --vocab-only "$TMP/lhf$seed" "$TMP/lhf.gguf" f16
    "$BIN" dump --json --json-array "$TMP/lhf.gguf" >"$TMP/lhf.json" 2>"$TMP/err"
    expect_exit 0 "LlamaHfVocab seed $seed: tokenizer keys as the reference's rules give" python3 "$LHF" check "$TMP/lhf$seed" "$TMP/lhf.json"
done
# an added text twice, the first with an id past every other (a fuzz find)
rm -rf "$TMP/lhfd" "$TMP/lhf.gguf"
python3 "$LHF" make "$C/llama-gqa" "$TMP/lhfd" --break dup-added
expect_exit 0 "LlamaHfVocab added text twice: converts" "$BIN" convert --vocab-only "$TMP/lhfd" "$TMP/lhf.gguf" f16
"$BIN" dump --json --json-array "$TMP/lhf.gguf" >"$TMP/lhf.json" 2>"$TMP/err"
expect_exit 0 "LlamaHfVocab added text twice: the later id wins" python3 "$LHF" check "$TMP/lhfd" "$TMP/lhf.json"
# byte-level tokens with byte fallback and a Sequence decoder take the same route
rm -rf "$TMP/lhf" "$TMP/out.gguf"; python3 "$TINY" "$TMP/lhf" --arch LlamaForCausalLM --break llama-hf
expect_exit 0 "LlamaHfVocab byte-level tokens: converts" "$BIN" convert --vocab-only "$TMP/lhf" "$TMP/out.gguf" f16
# model_is FILE NAME: FILE's tokenizer.ggml.model is NAME
model_is() {
    "$BIN" dump --json "$1" | python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["metadata"]["tokenizer.ggml.model"]["value"] != sys.argv[1])' "$2"
}
expect_exit 0 "LlamaHfVocab byte-level tokens: model llama" model_is "$TMP/out.gguf" llama
# lhf_refuse NAME KIND TEXT: a broken folder, exit 1, TEXT in the message, no output
lhf_refuse() {
    rm -rf "$TMP/lbad" "$TMP/out.gguf"
    python3 "$LHF" make "$C/llama-gqa" "$TMP/lbad" --break "$2"
    expect_exit 1 "LlamaHfVocab $1: exit 1" "$BIN" convert --vocab-only "$TMP/lbad" "$TMP/out.gguf" f16
    expect_egrep "LlamaHfVocab $1: message" "$TMP/err" "$3"
    expect_absent "LlamaHfVocab $1: no output" "$TMP/out.gguf"
}
lhf_refuse "larger than vocab_size" small "lbad/tokenizer.json: the tokenizer has [0-9]+ tokens, more than config.json's vocab_size"
lhf_refuse "an id without a token" gap "lbad/tokenizer.json: model.vocab: no token has id"
lhf_refuse "two tokens of one id (a fuzz find)" dup-id "lbad/tokenizer.json: model.vocab: no token has id"
lhf_refuse "an id far past every count (a fuzz find)" far-id "lbad/tokenizer.json: token id 1000000000 is far past"
lhf_refuse "bad added_tokens_decoder key" decoder-key "lbad/tokenizer_config.json: added_tokens_decoder\\['x1'\\]"
# without byte fallback (Llama 3 style or not) it is the GPT-2 route: a
# Metaspace pre-tokenizer is not identified there, and with --vocab-pre it converts as gpt2
for k in no-fallback llama3; do
    lhf_refuse "$k (GPT-2 route)" "$k" "lbad/tokenizer.json: the pre-tokenizer cannot be identified.*--vocab-pre"
    expect_exit 0 "LlamaHfVocab $k with --vocab-pre: converts" "$BIN" convert --vocab-only --vocab-pre default "$TMP/lbad" "$TMP/out.gguf" f16
    expect_exit 0 "LlamaHfVocab $k with --vocab-pre: model gpt2" model_is "$TMP/out.gguf" gpt2
done

finish
