#!/usr/bin/env bash
# test_convert.sh - CLI tests of `ggufkit convert` (Hugging Face checkpoint to GGUF).
#
# usage: test_convert.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN   the golden reference folder (convert/ is used;
#                               without it the script says SKIPPED loudly)
#
# Golden: every convert/NAME-T.gguf (4 checkpoints x f32, f16, bf16, q8_0) equal
# byte for byte to what convert_hf_to_gguf.py wrote; the same bytes at 1 and 3
# threads; Q4_K_M, IQ4_XS, Q6_K equal `quantize` of the f32 conversion; a chat template from chat_template.jinja (CRLF lines) equal to the one
# in tokenizer_config.json; model cards (README.md front matter); --ignore-model-card.
# Variants: --vocab-only,
# generation_config.json's sampling keys. Refusals, each exit 1 naming the
# file (and tensor and offset where there is one) with no output left: an
# unsupported architecture (the message lists the supported ones), missing
# config keys, a tokenizer larger than vocab_size, a vocab_size other than the
# embedding's rows, a missing shard, a safetensors file cut short or with a
# broken header, a tensor without a GGUF name, an integer tensor, a model card
# value the reference cannot write or YAML that does not parse, an existing
# OUT; usage errors exit 2.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

if [ ! -x "$BIN" ]; then echo "FAIL: $BIN is not an executable"; exit 1; fi
G=$GOLDEN/convert
if [ ! -d "$G/llama-gqa" ]; then
    skip "no golden convert/ folder at $G: the convert parity suite was NOT run"
    finish
fi

# ------------------------------------------------------------ golden parity
for name in llama-gqa llama-shards mistral-l3 mixtral; do
    for t in f32 f16 bf16 q8_0; do
        expect_exit 0 "convert $name $t" "$BIN" convert "$G/$name" "$TMP/$name-$t.gguf" "$t"
        expect_same_file "$name-$t.gguf byte-identical" "$TMP/$name-$t.gguf" "$G/$name-$t.gguf"
        rm -f "$TMP/$name-$t.gguf"
    done
done
# the same bytes at the lower kernel levels (the F16, BF16 and Q8_0 conversions
# have vector kernels; the best level ran above)
for level in scalar avx2; do
    if [[ $(GGUFKIT_KERNELS=$level "$BIN" --version) != *"kernels: $level"* ]]; then
        skip "convert parity at $level (this processor has no $level)"; continue
    fi
    for name in llama-gqa mixtral; do
        for t in f16 bf16 q8_0; do
            GGUFKIT_KERNELS=$level "$BIN" convert "$G/$name" "$TMP/lv.gguf" "$t" >/dev/null 2>&1
            expect_same_file "$name-$t.gguf at $level" "$TMP/lv.gguf" "$G/$name-$t.gguf"
            rm -f "$TMP/lv.gguf"
        done
    done
done
for th in 1 3; do
    expect_exit 0 "mixtral q8_0 --threads $th" "$BIN" convert --threads "$th" "$G/mixtral" "$TMP/m$th.gguf" Q8_0
    expect_same_file "mixtral q8_0 at $th threads" "$TMP/m$th.gguf" "$G/mixtral-q8_0.gguf"
done

# convert_is_quantize NAME TYPE BASE WHAT : convert of golden checkpoint NAME to
# TYPE gives the same bytes as `quantize` of the GGUF file BASE (described as WHAT).
convert_is_quantize() {
    expect_exit 0 "convert $1 $2" "$BIN" convert "$G/$1" "$TMP/c.gguf" "$2"
    expect_exit 0 "quantize $4 $2" "$BIN" quantize "$3" "$TMP/q.gguf" "$2"
    expect_same_file "convert $1 $2 = quantize of $4" "$TMP/c.gguf" "$TMP/q.gguf"
    rm -f "$TMP/c.gguf" "$TMP/q.gguf"
}

# Other types: the f32 conversion quantized on the way out, the same bytes as
# `quantize` of the f32 output (llama-quantize's parity is cli_quantize's).
for name in llama-gqa mixtral; do
    expect_exit 0 "$name f32 for quantize" "$BIN" convert "$G/$name" "$TMP/$name-f32.gguf" f32
    for t in Q4_K_M IQ4_XS Q6_K; do
        convert_is_quantize "$name" "$t" "$TMP/$name-f32.gguf" "the f32 conversion of $name"
    done
done

# The issue's own form of it: the same bytes as `quantize` of the reference
# converter's lossless output in the checkpoint's dtype (bf16, f32, f16).
for pair in llama-gqa:bf16 llama-shards:f32 mistral-l3:bf16 mixtral:f16; do
    name=${pair%%:*} lossless=${pair#*:}
    for t in Q4_K_M Q5_K_S; do
        convert_is_quantize "$name" "$t" "$G/$name-$lossless.gguf" "the reference's $name-$lossless"
    done
done

# A fresh writable copy of golden folder $1 at $TMP/$2.
copy() { rm -rf "${TMP:?}/$2"; mkdir -p "$(dirname "$TMP/$2")"; cp -r "$G/$1" "$TMP/$2"; chmod -R u+w "$TMP/$2"; }
# refuse NAME DIR TEXT...: convert DIR fails with status 1, stderr holding each
# TEXT, and leaves no output.
refuse() {
    local name=$1 dir=$2
    shift 2
    rm -f "$TMP/out.gguf"
    expect_exit 1 "$name: exit 1" "$BIN" convert "$dir" "$TMP/out.gguf" f16
    for text in "$@"; do expect_grep "$name: message" "$TMP/err" "$text"; done
    expect_absent "$name: no output" "$TMP/out.gguf"
}

# The chat template from chat_template.jinja gives the same file; its CRLF line
# ends are read as LF (Python's text mode).
copy llama-gqa jinja/llama-gqa
python3 - "$TMP/jinja/llama-gqa" <<'PY'
import json, sys
d = sys.argv[1]
tc = json.load(open(d + "/tokenizer_config.json"))
tmpl = tc.pop("chat_template")
json.dump(tc, open(d + "/tokenizer_config.json", "w"))
open(d + "/chat_template.jinja", "wb").write(tmpl.encode())
PY
expect_exit 0 "chat_template.jinja" "$BIN" convert "$TMP/jinja/llama-gqa" "$TMP/jinja.gguf" f16
expect_same_file "chat_template.jinja: same bytes" "$TMP/jinja.gguf" "$G/llama-gqa-f16.gguf"
printf 'line one\r\nline two\rend' > "$TMP/jinja/llama-gqa/chat_template.jinja"
expect_exit 0 "chat_template.jinja with CRLF" "$BIN" convert "$TMP/jinja/llama-gqa" "$TMP/jinja2.gguf" f16
"$BIN" dump "$TMP/jinja2.gguf" > "$TMP/jinja.txt"
expect_grep "jinja template read with LF lines" "$TMP/jinja.txt" '"line one\nline two\nend"'

# gguf.SpecialVocab over tokenizer.json post-processors (TemplateProcessing,
# RobertaProcessing, a Sequence of them), normalizers and tokenizer_config.json
# overrides: the tokenizer keys after token_type, in order, as the reference's
# SpecialVocab gives them (convert_vocab_variants.expected was checked against
# that Python code run on the same folders).
python3 "$HERE/convert_vocab_variants.py" "$TMP/variants" "$G/llama-gqa"
: > "$TMP/variants.txt"
for v in llama2 roberta eot sep bert lower notc; do
    echo "$v" >> "$TMP/variants.txt"
    expect_exit 0 "vocab variant $v" "$BIN" convert --vocab-only "$TMP/variants/$v/llama-gqa" "$TMP/v.gguf" f16
    "$BIN" dump "$TMP/v.gguf" | awk '/token_type/ { p = 1; next } p && $2 ~ /tokenizer/ { print $2, $4 }' >> "$TMP/variants.txt"
    rm -f "$TMP/v.gguf"
done
expect_same_file "special vocabularies as SpecialVocab makes them" "$TMP/variants.txt" "$HERE/convert_vocab_variants.expected"
# A vocab_size of 32016 (CodeLlama): LlamaModel's second SpecialVocab (eot
# 32010 unless the files say otherwise, add_* again from the post-processor).
: > "$TMP/variants32016.txt"
for v in llama2 roberta eot notc; do
    echo "$v" >> "$TMP/variants32016.txt"
    sed -i 's/"vocab_size": 320,/"vocab_size": 32016,/' "$TMP/variants/$v/llama-gqa/config.json" 2>/dev/null ||
        { rm "$TMP/variants/$v/llama-gqa/config.json"
          sed 's/"vocab_size": 320,/"vocab_size": 32016,/' "$G/llama-gqa/config.json" > "$TMP/variants/$v/llama-gqa/config.json"; }
    expect_exit 0 "vocab variant $v, 32016" "$BIN" convert --vocab-only "$TMP/variants/$v/llama-gqa" "$TMP/v.gguf" f16
    "$BIN" dump "$TMP/v.gguf" | awk '/token_type/ { p = 1; next } p && $2 ~ /tokenizer/ { print $2, $4 }' >> "$TMP/variants32016.txt"
    rm -f "$TMP/v.gguf"
done
expect_same_file "CodeLlama's second SpecialVocab" "$TMP/variants32016.txt" "$HERE/convert_vocab_variants_32016.expected"

# README.md: the model card's front matter gives general.* keys as the
# reference's Metadata.load makes them (convert_card_variants.expected was
# checked against that Python code run on the same folders); a value written
# as a string that is not one, and YAML that does not parse, are refused;
# --ignore-model-card leaves the card out.
# shellcheck source=convert_card_variants.sh
. "$HERE/convert_card_variants.sh"
card_variants "$TMP/cards" "$G/llama-gqa"
: > "$TMP/cards.txt"
for v in $CARD_VARIANTS; do
    echo "$v" >> "$TMP/cards.txt"
    expect_exit 0 "model card $v" "$BIN" convert "$TMP/cards/$v" "$TMP/card.gguf" f16
    "$BIN" dump --json --json-array "$TMP/card.gguf" | python3 -c '
import json, sys
skip = ("general.architecture", "general.type", "general.file_type", "general.quantization_version")
for k, v in json.load(sys.stdin)["metadata"].items():
    if k.startswith("general.") and k not in skip:
        print(k, json.dumps(v["value"]))' >> "$TMP/cards.txt"
    rm -f "$TMP/card.gguf"
done
expect_same_file "model cards as Metadata.load reads them" "$TMP/cards.txt" "$HERE/convert_card_variants.expected"
copy llama-gqa card/llama-gqa
printf -- '---\nlicense: mit\nversion: 1.0\n---\n# card\n' > "$TMP/card/llama-gqa/README.md"
refuse "model card: a version that is not a string" "$TMP/card/llama-gqa" "llama-gqa/README.md" "general.version" "--ignore-model-card"
expect_exit 0 "--ignore-model-card" "$BIN" convert --ignore-model-card "$TMP/card/llama-gqa" "$TMP/card.gguf" bf16
expect_same_file "--ignore-model-card: same bytes" "$TMP/card.gguf" "$G/llama-gqa-bf16.gguf"
printf -- '---\nlicense: [mit\n---\n' > "$TMP/card/llama-gqa/README.md"
refuse "model card: broken YAML" "$TMP/card/llama-gqa" "llama-gqa/README.md" "line"
printf '# no front matter\n' > "$TMP/card/llama-gqa/README.md"
expect_exit 0 "README.md without front matter" "$BIN" convert "$TMP/card/llama-gqa" "$TMP/card2.gguf" bf16
expect_same_file "README.md without front matter: same bytes" "$TMP/card2.gguf" "$G/llama-gqa-bf16.gguf"

# --vocab-only: the metadata without tensors (and without a size label: no
# parameters were counted).
expect_exit 0 "--vocab-only" "$BIN" convert --vocab-only "$G/llama-gqa" "$TMP/vocab.gguf" f16
"$BIN" dump "$TMP/vocab.gguf" > "$TMP/vocab.txt"
expect_grep "--vocab-only: no tensors" "$TMP/vocab.txt" "tensors (0)"
expect_grep "--vocab-only: the tokens" "$TMP/vocab.txt" "320 elements"
if grep -q size_label "$TMP/vocab.txt"; then bad "--vocab-only wrote a size label"; else ok; fi

# generation_config.json: general.sampling.* right after general.type.
copy llama-gqa gen
printf '{"temperature": 0.6, "top_p": 0.9, "top_k": 40}\n' > "$TMP/gen/generation_config.json"
expect_exit 0 "generation_config.json" "$BIN" convert "$TMP/gen" "$TMP/gen.gguf" f32
"$BIN" dump "$TMP/gen.gguf" > "$TMP/gen.txt"
if awk '$2 ~ /^general\./ { print $2 }' "$TMP/gen.txt" | head -5 | tr '\n' ' ' |
    grep -q "general.architecture general.type general.sampling.top_k general.sampling.top_p general.sampling.temp"; then
    ok; else bad "sampling keys not in the reference's order"; fi

# Qwen2 and Qwen3 (no golden output: the rules of conversion/qwen.py, read):
# TextModel's keys only (no {arch}.vocab_size nor rope.dimension_count), head_dim
# as key/value lengths, Q/K not permuted, q/k norms and biases F32, yarn
# scaling from rope_scaling's "type"; a Qwen3 reranker is refused.
mkdir -p "$TMP/qwen/qwen3-tiny" "$TMP/qwen/qwen2-tiny"
for d in qwen3-tiny qwen2-tiny; do cp "$G/llama-gqa/tokenizer.model" "$G/llama-gqa/tokenizer_config.json" "$TMP/qwen/$d/"; done
python3 - "$G/llama-gqa" "$TMP/qwen" <<'PY'
import json, sys
g, t = sys.argv[1:3]
c = json.load(open(g + "/config.json"))
json.dump(dict(c, architectures=["Qwen3ForCausalLM"], model_type="qwen3", head_dim=16),
          open(t + "/qwen3-tiny/config.json", "w"))
json.dump(dict(c, architectures=["Qwen2ForCausalLM"], model_type="qwen2",
               rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 128}),
          open(t + "/qwen2-tiny/config.json", "w"))
PY
python3 "$HERE/st_edit.py" "$G/llama-gqa/model.safetensors" "$TMP/qwen/a.st" model.layers.0.self_attn.q_norm.weight BF16 16
python3 "$HERE/st_edit.py" "$TMP/qwen/a.st" "$TMP/qwen/qwen3-tiny/model.safetensors" model.layers.0.self_attn.k_norm.weight BF16 16
python3 "$HERE/st_edit.py" "$G/llama-gqa/model.safetensors" "$TMP/qwen/b.st" model.layers.0.self_attn.q_proj.bias BF16 64
python3 "$HERE/st_edit.py" "$TMP/qwen/b.st" "$TMP/qwen/qwen2-tiny/model.safetensors" model.layers.0.self_attn.k_proj.bias BF16 32
for d in qwen3-tiny qwen2-tiny; do
    arch=${d%-tiny}
    expect_exit 0 "$d f32" "$BIN" convert "$TMP/qwen/$d" "$TMP/$d.gguf" f32
    for w in q k; do
        if python3 "$HERE/convert_check_tensor.py" "$BIN" "$TMP/$d.gguf" "blk.0.attn_$w.weight" \
            "$TMP/qwen/$d/model.safetensors" "model.layers.0.self_attn.${w}_proj.weight"; then ok; else bad "$d: attn_$w permuted"; fi
    done
    expect_exit 0 "$d q8_0" "$BIN" convert "$TMP/qwen/$d" "$TMP/$d-q8.gguf" q8_0
    "$BIN" dump "$TMP/$d-q8.gguf" > "$TMP/$d.txt"
    expect_grep "$d: architecture" "$TMP/$d.txt" "\"$arch\""
    if grep -qE "vocab_size|rope.dimension_count" "$TMP/$d.txt"; then bad "$d: LlamaModel keys written"; else ok; fi
done
expect_grep "qwen3: key length" "$TMP/qwen3-tiny.txt" "qwen3.attention.key_length              UINT32     16"
expect_grep "qwen3: q norm F32" "$TMP/qwen3-tiny.txt" "blk.0.attn_q_norm.weight  F32"
expect_grep "qwen2: yarn" "$TMP/qwen2-tiny.txt" "qwen2.rope.scaling.original_context_length  UINT32     128"
expect_grep "qwen2: q bias F32" "$TMP/qwen2-tiny.txt" "blk.0.attn_q.bias         F32"
sed -i 's|^{|{"_name_or_path": "Qwen/Qwen3-Reranker-0.6B", |' "$TMP/qwen/qwen3-tiny/config.json"
refuse "Qwen3 reranker" "$TMP/qwen/qwen3-tiny" "reranker"

# ------------------------------------------------------------ refusals
copy llama-gqa arch
sed -i 's/"LlamaForCausalLM"/"GPT2LMHeadModel"/' "$TMP/arch/config.json"
refuse "unsupported architecture" "$TMP/arch" "arch/config.json" "GPT2LMHeadModel" "LlamaForCausalLM" "MixtralForCausalLM"

copy llama-gqa nokv
sed -i '/num_key_value_heads/d' "$TMP/nokv/config.json"
refuse "missing num_key_value_heads" "$TMP/nokv" "nokv/config.json" "'num_key_value_heads'"
copy llama-gqa novocab
sed -i '/"vocab_size"/d' "$TMP/novocab/config.json"
refuse "missing vocab_size" "$TMP/novocab" "novocab/config.json" "'vocab_size'"
copy llama-gqa nolayers
sed -i '/num_hidden_layers/d' "$TMP/nolayers/config.json"
refuse "missing num_hidden_layers" "$TMP/nolayers" "'num_hidden_layers'"
copy llama-gqa badjson
printf '{"architectures": ["LlamaForCausalLM"],' > "$TMP/badjson/config.json"
refuse "broken config.json" "$TMP/badjson" "badjson/config.json" "not valid JSON"

copy llama-gqa small
sed -i 's/"vocab_size": 320/"vocab_size": 300/' "$TMP/small/config.json"
refuse "tokenizer larger than vocab_size" "$TMP/small" "small/tokenizer.model" "320 pieces" "300"
copy llama-gqa big
sed -i 's/"vocab_size": 320/"vocab_size": 400/' "$TMP/big/config.json"
refuse "vocab_size unlike the embedding" "$TMP/big" "big/config.json" "400 tokens" "320 rows"

copy llama-shards shard
rm "$TMP/shard/model-00002-of-00003.safetensors"
refuse "missing shard" "$TMP/shard" "model-00002-of-00003.safetensors" "missing"

copy llama-gqa cut
truncate -s 200000 "$TMP/cut/model.safetensors"
refuse "safetensors cut short" "$TMP/cut" "cut/model.safetensors" "offset" "model.layers.1.mlp.up_proj.weight"
copy llama-gqa hdr
printf '@' | dd of="$TMP/hdr/model.safetensors" bs=1 seek=8 conv=notrunc 2>/dev/null
refuse "broken safetensors header" "$TMP/hdr" "hdr/model.safetensors" "offset"

copy llama-gqa extra
python3 "$HERE/st_edit.py" "$G/llama-gqa/model.safetensors" "$TMP/extra/model.safetensors" model.foo.weight F32 2x2
refuse "unmappable tensor" "$TMP/extra" "extra/model.safetensors" "model.foo.weight" "offset"
copy llama-gqa int
python3 "$HERE/st_edit.py" "$G/llama-gqa/model.safetensors" "$TMP/int/model.safetensors" \
    model.layers.0.self_attn.q_proj.bias I32 64
refuse "integer tensor" "$TMP/int" "int/model.safetensors" "model.layers.0.self_attn.q_proj.bias" "I32"

copy llama-gqa notok
rm "$TMP/notok/tokenizer.model"
refuse "no tokenizer" "$TMP/notok" "neither tokenizer.model nor tokenizer.json"

# An existing OUT stays as it was without --force.
printf 'keep' > "$TMP/keep.gguf"
expect_exit 1 "existing OUT" "$BIN" convert "$G/llama-gqa" "$TMP/keep.gguf" f16
if [ "$(cat "$TMP/keep.gguf")" = keep ]; then ok; else bad "existing OUT was changed"; fi
expect_exit 0 "--force" "$BIN" convert --force "$G/llama-gqa" "$TMP/keep.gguf" f16
expect_same_file "--force: the golden bytes" "$TMP/keep.gguf" "$G/llama-gqa-f16.gguf"

# An input is never the output, even with --force.
copy llama-gqa self
for f in model.safetensors config.json tokenizer.model; do
    expect_exit 1 "OUT = $f refused" "$BIN" convert --force "$TMP/self" "$TMP/self/$f" f16
    expect_grep "OUT = $f: message" "$TMP/err" "is an input of this command: refusing to overwrite it"
    expect_same_file "OUT = $f: input unchanged" "$TMP/self/$f" "$G/llama-gqa/$f"
done

# NaNs in a BF16 checkpoint (signalling and quiet, either sign): the bf16
# conversion quiets the signalling ones as the reference's BF16 rounding does
# (0x7F81 -> 0x7FC1), the f32 one keeps the value exactly as widened
# (0x7F81 -> 0x7F810000). F16 and BF16 tensors are
# handed to the pipeline as stored where that gives the same bytes: this pins
# where it would not.
mkdir -p "$TMP/nan"
cp "$G/llama-gqa"/* "$TMP/nan/" && chmod u+w "$TMP/nan"/*
python3 - "$TMP/nan/model.safetensors" <<'PY'
import json, struct, sys
path = sys.argv[1]
with open(path, "r+b") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    h = json.loads(f.read(n))
    t = h["model.layers.0.mlp.down_proj.weight"]
    assert t["dtype"] == "BF16", t
    f.seek(8 + n + t["data_offsets"][0])
    f.write(struct.pack("<4H", 0x7F81, 0xFF81, 0x7FC3, 0x3F80))
PY
# nan_values FILE TENSOR FMT N : the first N values of TENSOR in FILE (hex)
nan_values() {
    local off
    off=$("$BIN" dump "$1" | awk -v t="$2" '$2 == t { print $(NF - 1); exit }')
    python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(int(sys.argv[2])); n=int(sys.argv[4]); fmt="<%d%s"%(n,sys.argv[3]); print(" ".join("%x"%v for v in struct.unpack(fmt,f.read(struct.calcsize(fmt)))))' "$1" "$off" "$3" "$4"
}
expect_exit 0 "NaNs: convert bf16" "$BIN" convert "$TMP/nan" "$TMP/nan-bf16.gguf" bf16
[ "$(nan_values "$TMP/nan-bf16.gguf" blk.0.ffn_down.weight H 4)" = "7fc1 ffc1 7fc3 3f80" ] && ok "NaNs: bf16 quiets signalling NaNs" ||
    bad "NaNs: bf16 gives $(nan_values "$TMP/nan-bf16.gguf" blk.0.ffn_down.weight H 4), not 7fc1 ffc1 7fc3 3f80"
expect_exit 0 "NaNs: convert f32" "$BIN" convert "$TMP/nan" "$TMP/nan-f32.gguf" f32
[ "$(nan_values "$TMP/nan-f32.gguf" blk.0.ffn_down.weight I 4)" = "7f810000 ff810000 7fc30000 3f800000" ] &&
    ok "NaNs: f32 widens exactly" ||
    bad "NaNs: f32 gives $(nan_values "$TMP/nan-f32.gguf" blk.0.ffn_down.weight I 4), not 7f810000 ff810000 7fc30000 3f800000"

# Usage errors.
expect_exit 2 "unknown TYPE" "$BIN" convert "$G/llama-gqa" "$TMP/u.gguf" q4_z
expect_exit 2 "--vocab-only with a quantized TYPE" "$BIN" convert --vocab-only "$G/llama-gqa" "$TMP/u.gguf" Q4_K_M
expect_exit 2 "missing TYPE" "$BIN" convert "$G/llama-gqa" "$TMP/u.gguf"
expect_exit 2 "unknown option" "$BIN" convert --bogus "$G/llama-gqa" "$TMP/u.gguf" f16
expect_exit 2 "bad --threads" "$BIN" convert --threads 0 "$G/llama-gqa" "$TMP/u.gguf" f16
expect_exit 0 "--help" "$BIN" convert --help
expect_grep "--help lists the architectures" "$TMP/out" "MistralForCausalLM"
expect_absent "usage errors: no output" "$TMP/u.gguf"

finish
