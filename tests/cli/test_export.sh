#!/usr/bin/env bash
# test_export.sh - CLI tests of `ggufkit export` (a GGUF back to a Hugging Face folder).
#
# usage: test_export.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN   the golden reference folder (convert/ and real/ are used;
#                               without it the script says SKIPPED loudly)
#
# Round trips on golden/convert (every check could fail):
# - each checkpoint, converted to its own dtype and exported with that dtype,
#   gives back every tensor bit for bit and config.json's hyperparameters
#   (tests/export_check.py, numpy only);
# - every golden output NAME-T.gguf (4 checkpoints x f32, f16, bf16, q8_0),
#   exported (--dtype f32 for q8_0, the exact dequantization; auto otherwise)
#   and converted back to T, is byte-identical to NAME-T.gguf. Our converter
#   equals convert_hf_to_gguf.py on these folders, so this stands in for the
#   reference converter run on the exported folder;
# - a 3-shard checkpoint comes back as 3 shards (its GGUF's tensor order is
#   not by name); --max-shard-size cuts more files, with a consistent index;
# - Qwen2 and Qwen3 (llama-gqa with its class changed): tensors and class back,
#   convert(export(G)) == G; Qwen3-MoE (tests/convert/qwen3moe.py) with a BPE
#   tokenizer.json: experts bit for bit, convert(export(G)) == G;
# - every BPE family export writes tokenizer.json for (gpt-2, mpt/olmo,
#   deepseek-coder, llama-bpe, qwen2; golden real vocabularies through
#   tests/convert/bpe_from_gguf.py): convert(export(G)) == G without
#   --vocab-pre where the digest names the family, the real structure spelled
#   back; a family export does not know gets no tokenizer.json and a note;
# - a shard set (any shard) exports as the merged file; a set missing a shard
#   is refused;
# - a big-endian copy exports the same files; a Q4_K model exports (bf16);
# - general.sampling.* through generation_config.json and back; general.* of a
#   model card through README.md's front matter and back (another folder name);
# - SIGINT / SIGKILL mid-export: HF_DIR complete or absent.
# Folder rules: an existing empty folder is used; a non-empty one is refused
# (untouched) unless --force, which replaces it; a folder holding the input is
# refused even with --force; a file as HF_DIR is refused. Bad input: an
# unsupported architecture (the message lists the supported ones), a missing
# key, a full disk (tmpfs, as root): exit 1, nothing left, no temporary folder.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"
PY=/usr/bin/python3
CHECK="$HERE/../export_check.py"

if [ ! -x "$BIN" ]; then echo "FAIL: $BIN is not an executable"; exit 1; fi
G=$GOLDEN/convert
if [ ! -d "$G/llama-gqa" ]; then
    skip "no golden convert/ folder at $G: the export round trips were NOT run"
    finish
fi
has_numpy=1
$PY -c 'import numpy' 2>/dev/null || has_numpy=0

# nothing but the expected entries in folder $2 (no .NAME.ggufkit-* left)
expect_clean() {
    local left
    left=$(cd "$2" && ls -A | grep -v -x -F -f <(printf '%s\n' "${@:3}") || true)
    [ -z "$left" ] && ok "$1" || bad "$1: left behind: $(echo $left)"
}

# ----------------------------------------------------- round trip: tensors
for x in llama-gqa:bf16 mixtral:f16 llama-shards:f32 mistral-l3:bf16; do
    n=${x%:*} t=${x#*:}
    W="$TMP/rt-$n"
    mkdir -p "$W"
    expect_exit 0 "convert $n $t" "$BIN" convert "$G/$n" "$W/m.gguf" "$t"
    expect_exit 0 "export $n --dtype $t" "$BIN" export --dtype "$t" "$W/m.gguf" "$W/$n"
    if [ "$has_numpy" = 1 ]; then
        $PY "$CHECK" same "$G/$n" "$W/$n" >"$TMP/chk" 2>&1 && ok "$n: every tensor bit for bit, config.json agrees" ||
            { bad "$n: round trip differs"; sed 's/^/    /' "$TMP/chk" | head -5; }
    else
        skip "$n: tensor comparison (no numpy for /usr/bin/python3)"
    fi
    rm -rf "$W"
done

# ------------------------------------- convert(export(G)) == G, 16 outputs
for n in llama-gqa llama-shards mistral-l3 mixtral; do
    for t in f32 f16 bf16 q8_0; do
        W="$TMP/cv-$n-$t"
        mkdir -p "$W"
        d=auto
        [ "$t" = q8_0 ] && d=f32
        expect_exit 0 "export $n-$t.gguf --dtype $d" "$BIN" export --dtype "$d" "$G/$n-$t.gguf" "$W/$n"
        expect_exit 0 "convert the export of $n-$t back to $t" "$BIN" convert "$W/$n" "$W/back.gguf" "$t"
        expect_same_file "convert(export($n-$t.gguf)) == $n-$t.gguf" "$W/back.gguf" "$G/$n-$t.gguf"
        if [ "$n" = llama-shards ]; then
            c=$(ls "$W/$n" | grep -c '\.safetensors$')
            [ "$c" = 3 ] && ok "llama-shards-$t: 3 shards (the GGUF's order)" || bad "llama-shards-$t: $c shards, expected 3"
        fi
        expect_clean "$n-$t: only the folder in its parent" "$W" "$n" back.gguf
        rm -rf "$W"
    done
done

# ----------------------------------------- Qwen2 / Qwen3 (no permutation)
# llama-gqa's folder with its class changed: convert reads it as Qwen2 / Qwen3
# (no Q/K permutation); the export gives back its tensors and class.
for cls in Qwen2ForCausalLM Qwen3ForCausalLM; do
    W="$TMP/qwen"
    mkdir -p "$W/out"
    cp -r "$G/llama-gqa" "$W/src"
    chmod -R u+w "$W/src"
    sed -i "s/\"LlamaForCausalLM\"/\"$cls\"/" "$W/src/config.json"
    expect_exit 0 "convert as $cls" "$BIN" convert "$W/src" "$W/a.gguf" bf16
    expect_exit 0 "export the $cls GGUF" "$BIN" export --dtype bf16 "$W/a.gguf" "$W/out/src"
    if [ "$has_numpy" = 1 ]; then
        $PY "$CHECK" same "$W/src" "$W/out/src" >"$TMP/chk" 2>&1 && ok "$cls: every tensor bit for bit, the class back" ||
            { bad "$cls: round trip differs"; sed 's/^/    /' "$TMP/chk" | head -5; }
    fi
    expect_exit 0 "convert the $cls export" "$BIN" convert "$W/out/src" "$W/b.gguf" bf16
    expect_same_file "$cls: convert(export(G)) == G" "$W/b.gguf" "$W/a.gguf"
    rm -rf "$W"
done

# ------------------------------------- generation_config.json (sampling)
W="$TMP/gen"
mkdir -p "$W/out"
cp -r "$G/llama-gqa" "$W/llama-gqa"
chmod -R u+w "$W/llama-gqa"
printf '{"top_k": 40, "top_p": 0.95, "temperature": 0.7, "repetition_penalty": 1.1}\n' >"$W/llama-gqa/generation_config.json"
expect_exit 0 "convert with generation_config.json" "$BIN" convert "$W/llama-gqa" "$W/a.gguf" bf16
expect_exit 0 "export it" "$BIN" export "$W/a.gguf" "$W/out/llama-gqa"
expect_grep "generation_config.json: repetition_penalty" "$W/out/llama-gqa/generation_config.json" "repetition_penalty"
expect_exit 0 "convert the export" "$BIN" convert "$W/out/llama-gqa" "$W/b.gguf" bf16
expect_same_file "sampling keys: convert(export(G)) == G" "$W/b.gguf" "$W/a.gguf"
expect_exit 0 "export a GGUF without sampling keys" "$BIN" export "$G/llama-gqa-bf16.gguf" "$W/plain"
[ -s "$W/plain/config.json" ] && [ ! -e "$W/plain/generation_config.json" ] && ok "no sampling keys: no generation_config.json" ||
    bad "no sampling keys: generation_config.json written (or no export)"
rm -rf "$W"

# ---------------------------------- Qwen3-MoE with a BPE tokenizer.json
# tests/convert/qwen3moe.py's seeded checkpoint (experts per tensor, a
# tokenizer.json): the export gives back every expert bit for bit, and its
# tokenizer.json converts to the same tokenizer keys (--vocab-pre: the toy
# vocabulary is no known family's, as for the original).
QM="$HERE/../convert/qwen3moe.py"
if [ "$has_numpy" = 1 ] && [ -f "$QM" ]; then
    W="$TMP/q3"
    mkdir -p "$W/out"
    $PY "$QM" make "$W/Qwen3-Tiny-MoE" 7 BF16 >/dev/null 2>&1 || bad "qwen3moe.py make"
    expect_exit 0 "convert Qwen3-MoE" "$BIN" convert --vocab-pre qwen2 "$W/Qwen3-Tiny-MoE" "$W/a.gguf" bf16
    expect_exit 0 "export Qwen3-MoE" "$BIN" export --dtype bf16 "$W/a.gguf" "$W/out/Qwen3-Tiny-MoE"
    [ -s "$W/out/Qwen3-Tiny-MoE/tokenizer.json" ] && ok "Qwen3-MoE: tokenizer.json" || bad "Qwen3-MoE: no tokenizer.json"
    $PY "$CHECK" same "$W/Qwen3-Tiny-MoE" "$W/out/Qwen3-Tiny-MoE" >"$TMP/chk" 2>&1 && ok "Qwen3-MoE: every expert bit for bit" ||
        { bad "Qwen3-MoE: round trip differs"; sed 's/^/    /' "$TMP/chk" | head -5; }
    expect_exit 0 "convert the Qwen3-MoE export" "$BIN" convert --vocab-pre qwen2 "$W/out/Qwen3-Tiny-MoE" "$W/b.gguf" bf16
    expect_same_file "Qwen3-MoE (BPE tokenizer): convert(export(G)) == G" "$W/b.gguf" "$W/a.gguf"
    rm -rf "$W"
else
    skip "Qwen3-MoE round trip (needs numpy and tests/convert/qwen3moe.py)"
fi

# ----------------------------------------- BPE families: tokenizer.json back
# For each BPE family export knows, a folder whose tokenizer.json spells the
# family's real normalizer, pre-tokenizer and post-processor
# (tests/convert/bpe_from_gguf.py on a golden real vocabulary, with BF16 zero
# weights for a small Qwen2) converts to G; G exported and converted again
# (with no --vocab-pre where the digest names the family) gives G byte for
# byte, and the exported tokenizer.json spells the same structure as the real
# one. gpt-2, mpt and gpt-neox (named "olmo" by the digest) and deepseek-coder
# on their own vocabularies; llama-bpe and qwen2, whose vocabularies are not
# golden, on gpt-2's (BOS and EOS the same token) and deepseek-coder's: the
# check-text digest convert reports for the exported folder (or the name it
# finds for it: llama-bpe's split on deepseek-coder's vocabulary happens to
# give deepseek-coder's digest) equals the real structure's. A family export does not know gets no tokenizer.json and a note.
R=$GOLDEN/real
GEN="$HERE/../convert/bpe_from_gguf.py"
if [ -f "$R/ggml-vocab-gpt-2.dump.json" ]; then
    W="$TMP/bpefam"
    mkdir -p "$W/out"
    # ident_of DIR: how convert names DIR's tokenizer: "name NAME" when the
    # check-text digest is in the reference's table, else "digest HEX"
    ident_of() {
        rm -f "$W/id.gguf"
        if "$BIN" convert --vocab-only "$1" "$W/id.gguf" bf16 2>"$W/id.err"; then
            "$BIN" dump --json "$W/id.gguf" | $PY -c 'import json, sys; print("name", json.load(sys.stdin)["metadata"]["tokenizer.ggml.pre"]["value"])'
        else
            sed -n 's/.*check-text digest \([0-9a-f]*\).*/digest \1/p' "$W/id.err"
        fi
    }
    for x in gpt-2:gpt-2:gpt-2 mpt:mpt:olmo gpt-neox:gpt-neox:olmo deepseek-coder:deepseek-coder:deepseek-coder \
             llama-bpe:gpt-2: llama-bpe:deepseek-coder: qwen2:gpt-2: qwen2:deepseek-coder:; do
        IFS=: read -r fam voc name <<<"$x"
        t="$fam on $voc's vocabulary"
        src="$W/$fam-$voc" exp="$W/out/$fam-$voc"
        $PY "$GEN" "$R/ggml-vocab-$voc.dump.json" "$fam" "$src" --weights || bad "$t: bpe_from_gguf.py"
        pre=() && [ -z "$name" ] && pre=(--vocab-pre "$fam")
        expect_exit 0 "$t: convert" "$BIN" convert "${pre[@]}" "$src" "$W/a.gguf" bf16
        [ -n "$name" ] && "$BIN" dump "$W/a.gguf" | grep -qE "tokenizer.ggml.pre .*\"$name\"" &&
            ok "$t: the digest names $name" || { [ -z "$name" ] || bad "$t: tokenizer.ggml.pre is not $name"; }
        expect_exit 0 "$t: export" "$BIN" export --json "$W/a.gguf" "$exp"
        expect_grep "$t: the summary names tokenizer.json" "$TMP/out" '"tokenizer.json, tokenizer_config.json"'
        expect_exit 0 "$t: convert the export" "$BIN" convert "${pre[@]}" "$exp" "$W/b.gguf" bf16
        expect_same_file "$t: convert(export(G)) == G" "$W/b.gguf" "$W/a.gguf"
        # the post-processor is compared too, but for a BOS template on a
        # vocabulary whose EOS is its BOS: its pair part is left out there
        post=1 && [ "$fam" = llama-bpe ] && [ "$voc" = gpt-2 ] && post=0
        expect_exit 0 "$t: normalizer, pre_tokenizer$([ $post = 1 ] && echo ', post_processor') as the real tokenizer.json" \
            $PY - "$GEN" "$src/tokenizer.json" "$exp/tokenizer.json" "$post" <<'PY'
import json, sys
real, ours = (json.load(open(p, encoding="utf-8")) for p in sys.argv[2:4])
keys = ["normalizer", "pre_tokenizer"] + (["post_processor"] if sys.argv[4] == "1" else [])
bad = [k for k in keys if real[k] != ours[k]]
for k in bad:
    print(f"{k}: real {json.dumps(real[k])}\n   ours {json.dumps(ours[k])}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
        if [ -z "$name" ]; then
            d1=$(ident_of "$src") d2=$(ident_of "$exp")
            [ -n "$d1" ] && [ "$d1" = "$d2" ] && ok "$t: the export encodes the check text as the real structure ($d1)" ||
                bad "$t: the check text encodes otherwise: real '$d1', export '$d2'"
        fi
        rm -rf "$src" "$exp" "$W/a.gguf" "$W/b.gguf"
    done
    # a family whose structure export does not know: no tokenizer.json, a note
    $PY "$GEN" "$R/ggml-vocab-gpt-2.dump.json" gpt-2 "$W/src" --weights
    "$BIN" convert --vocab-pre falcon "$W/src" "$W/a.gguf" bf16 2>/dev/null
    expect_exit 0 "unknown family (falcon): export" "$BIN" export --json "$W/a.gguf" "$W/out/falcon"
    expect_absent "unknown family: no tokenizer.json" "$W/out/falcon/tokenizer.json"
    [ -s "$W/out/falcon/tokenizer_config.json" ] && ok "unknown family: tokenizer_config.json" ||
        bad "unknown family: no tokenizer_config.json"
    expect_grep "unknown family: the summary says why" "$TMP/out" "no tokenizer.json: its pre-tokenizer is not one export knows"
    # no tokenizer.ggml.pre at all ("default", which llama.cpp splits with
    # regexes of its own, not GPT-2's): no tokenizer.json either
    expect_exit 0 "no pre key: edit" "$BIN" edit --delete tokenizer.ggml.pre -o "$W/nopre.gguf" "$W/a.gguf"
    expect_exit 0 "no pre key: export" "$BIN" export "$W/nopre.gguf" "$W/out/nopre"
    expect_absent "no pre key: no tokenizer.json" "$W/out/nopre/tokenizer.json"
    rm -rf "$W"
else
    skip "no golden real/ folder at $R: the BPE family round trips were NOT run"
fi

# ----------------------------------------------- README.md (model card)
# general.* from a model card come back as front matter; the name comes from
# the card, so the round trip holds in a folder of another name too.
W="$TMP/card"
mkdir -p "$W/out"
cp -r "$G/llama-gqa" "$W/src"
chmod -R u+w "$W/src"
printf -- '---\nlicense: apache-2.0\ntags:\n- text-generation\n- "no"\nlanguage:\n- en\n- fr\nbase_model: meta-llama/Llama-3.1-8B\ndatasets:\n- HuggingFaceFW/fineweb\n- https://example.com/data\n---\n\n# A card\n' >"$W/src/README.md"
expect_exit 0 "convert with a model card" "$BIN" convert "$W/src" "$W/a.gguf" bf16
expect_exit 0 "export it into a folder of another name" "$BIN" export "$W/a.gguf" "$W/out/other"
expect_grep "README.md: the license" "$W/out/other/README.md" 'license: "apache-2.0"'
expect_grep "README.md: a tag that YAML would read as a bool stays a string" "$W/out/other/README.md" '- "no"'
expect_exit 0 "convert the export" "$BIN" convert "$W/out/other" "$W/b.gguf" bf16
expect_same_file "model card keys: convert(export(G)) == G" "$W/b.gguf" "$W/a.gguf"
rm -rf "$W"

# ------------------------------------------------------------- sharding
W="$TMP/shard"
mkdir -p "$W"
expect_exit 0 "export --max-shard-size 50K" "$BIN" export --max-shard-size 50K "$G/mixtral-bf16.gguf" "$W/mixtral"
c=$(ls "$W/mixtral" | grep -c '\.safetensors$')
[ "$c" -gt 3 ] && ok "--max-shard-size 50K: $c files" || bad "--max-shard-size 50K: only $c files"
big=0
for f in "$W"/mixtral/*.safetensors; do
    sz=$(stat -c %s "$f")
    hd=$($PY -c 'import struct,sys; print(8+struct.unpack("<Q",open(sys.argv[1],"rb").read(8))[0])' "$f")
    [ $((sz - hd)) -gt 50000 ] && big=1
done
[ "$big" = 0 ] && ok "no shard holds more than 50K of tensors" || bad "a shard holds more than 50K of tensors"
if [ "$has_numpy" = 1 ]; then
    $PY "$CHECK" index "$W/mixtral" >"$TMP/chk" 2>&1 && ok "the index names every tensor in its shard, total_size right" ||
        { bad "index inconsistent"; sed 's/^/    /' "$TMP/chk" | head -5; }
fi
expect_exit 0 "convert the sharded export" "$BIN" convert "$W/mixtral" "$W/back.gguf" bf16
expect_same_file "sharded export converts back to mixtral-bf16.gguf" "$W/back.gguf" "$G/mixtral-bf16.gguf"
expect_exit 0 "one file: no index" "$BIN" export "$G/llama-gqa-bf16.gguf" "$W/one"
expect_absent "one file: no model.safetensors.index.json" "$W/one/model.safetensors.index.json"

# --json
expect_exit 0 "export --json" "$BIN" export --json "$G/llama-shards-f32.gguf" "$W/js"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["safetensors_files"]==3 and d["tensors"]==29 and d["architecture"]=="LlamaForCausalLM" and d["torch_dtype"]=="float32" and "tokenizer.model" in d["tokenizer"]' "$TMP/out" &&
    ok "--json: files, tensors, class, dtype, tokenizer" || bad "--json summary wrong: $(cat "$TMP/out")"
grep -q '"tie_word_embeddings":[[:space:]]*true' "$W/js/config.json" && ok "tied embeddings: tie_word_embeddings true" ||
    bad "llama-shards: tie_word_embeddings not true"
[ ! -e "$W/js/model.safetensors.index.json" ] || grep -q lm_head "$W/js/model.safetensors.index.json" &&
    bad "tied embeddings: lm_head written" || ok "tied embeddings: no lm_head"
grep -q '"rope_type":[[:space:]]*"llama3"' <("$BIN" export "$G/mistral-l3-f32.gguf" "$W/l3" && cat "$W/l3/config.json") &&
    ok "llama3 rope scaling found back" || bad "mistral-l3: no llama3 rope_scaling"
rm -rf "$W"

# ------------------------------------------------------ other input kinds
W="$TMP/kinds"
mkdir -p "$W"
expect_exit 0 "endian --to big" "$BIN" endian --to big "$G/llama-gqa-f16.gguf" "$W/be.gguf"
expect_exit 0 "export a big-endian file" "$BIN" export "$W/be.gguf" "$W/be"
expect_exit 0 "export its little-endian twin" "$BIN" export "$G/llama-gqa-f16.gguf" "$W/le"
expect_same_file "big-endian: the same model.safetensors" "$W/be/model.safetensors" "$W/le/model.safetensors"
expect_same_file "big-endian: the same tokenizer.model" "$W/be/tokenizer.model" "$W/le/tokenizer.model"
expect_exit 0 "endian --to big (Q8_0)" "$BIN" endian --to big "$G/mixtral-q8_0.gguf" "$W/beq.gguf"
expect_exit 0 "export a big-endian Q8_0 file" "$BIN" export --dtype f32 "$W/beq.gguf" "$W/beq"
expect_exit 0 "export its little-endian twin" "$BIN" export --dtype f32 "$G/mixtral-q8_0.gguf" "$W/leq"
d=$(diff -r "$W/beq" "$W/leq" 2>&1)
[ -z "$d" ] && ok "big-endian Q8_0: the same files (blocks swapped back)" || bad "big-endian Q8_0 differs: $(echo $d | head -c 200)"
expect_exit 0 "quantize Q4_K_M" "$BIN" quantize "$G/llama-gqa-f32.gguf" "$W/q4.gguf" Q4_K_M
expect_exit 0 "export a Q4_K_M model (auto: bf16)" "$BIN" export --json "$W/q4.gguf" "$W/q4"
grep -q '"torch_dtype":[[:space:]]*"bfloat16"' "$TMP/out" && ok "quantized: torch_dtype bfloat16" || bad "quantized: not bfloat16"
expect_exit 0 "convert the Q4_K_M export back" "$BIN" convert "$W/q4" "$W/q4back.gguf" f32
# a shard set: the merged model, from any shard
expect_exit 0 "split mixtral-bf16 in 3" "$BIN" split --split-max-tensors 8 "$G/mixtral-bf16.gguf" "$W/sh"
expect_exit 0 "export shard 2 of 3 (the set)" "$BIN" export "$W/sh-00002-of-00003.gguf" "$W/set"
expect_exit 0 "export the whole file" "$BIN" export "$G/mixtral-bf16.gguf" "$W/whole"
d=$(diff -r "$W/set" "$W/whole" 2>&1)
[ -z "$d" ] && ok "a shard set exports as the merged file" || bad "shard set export differs: $(echo $d | head -c 200)"
mkdir -p "$W/holder"
cp "$W"/sh-0000*.gguf "$W/holder/"
expect_exit 1 "--force into the folder holding the set" "$BIN" export --force "$W/holder/sh-00002-of-00003.gguf" "$W/holder"
expect_grep "names the shard" "$TMP/err" "holds the input"
[ "$(ls "$W/holder" | wc -l)" = 3 ] && ok "the shards are kept" || bad "shards removed"
rm "$W"/sh-0000*.gguf
rm "$W/holder/sh-00003-of-00003.gguf"
expect_exit 1 "a set missing a shard" "$BIN" export "$W/holder/sh-00001-of-00003.gguf" "$W/miss"
expect_absent "missing shard: nothing written" "$W/miss"
# a GGUF laid out layer by layer (no converter's order): one file, by name
expect_exit 0 "synth --layers 3" "$BIN" synth --layers 3 "$W/syn.gguf"
expect_exit 0 "export a synthetic model" "$BIN" export "$W/syn.gguf" "$W/syn"
c=$(ls "$W/syn" | grep -c '\.safetensors$')
[ "$c" = 1 ] && ok "layer-by-layer order: one file, sorted by name" || bad "layer-by-layer order: $c files"
expect_exit 0 "convert the synthetic export back" "$BIN" convert "$W/syn" "$W/synback.gguf" f32
# Added tokens that replace pieces of the SentencePiece model (the GGUF no
# longer holds those pieces): one over a byte piece, two with one text. The
# exported tokenizer.model must still hold 256 byte pieces and unique pieces,
# and converting the export gives the same GGUF.
mkdir -p "$W/added/Added-Over"
cp "$G/llama-gqa"/* "$W/added/Added-Over/" && chmod u+w "$W/added/Added-Over"/*
python3 - "$W/added/Added-Over/tokenizer_config.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["added_tokens_decoder"] = {
    "10": {"content": "<|im_end|>", "special": True},      # a byte piece's id (<0x07>)
    "300": {"content": "<|im_end|>", "special": True},     # the same text again
    "301": {"content": "hello", "special": False},
}
json.dump(c, open(p, "w"))
PY
expect_exit 0 "added over pieces: convert" "$BIN" convert "$W/added/Added-Over" "$W/added.gguf" bf16
mkdir -p "$W/added2"
expect_exit 0 "added over pieces: export" "$BIN" export "$W/added.gguf" "$W/added2/Added-Over"
expect_exit 0 "added over pieces: convert the export" "$BIN" convert "$W/added2/Added-Over" "$W/added-again.gguf" bf16
expect_same_file "added over pieces: convert(export(G)) == G" "$W/added-again.gguf" "$W/added.gguf"
python3 - "$W/added2/Added-Over/tokenizer.model" <<'PY' && ok "added over pieces: tokenizer.model has 256 byte pieces and no piece twice" || bad "added over pieces: tokenizer.model would not load"
import sys
data = open(sys.argv[1], "rb").read()
def varint(b, i):
    v = s = 0
    while True:
        x = b[i]; i += 1; v |= (x & 0x7f) << s; s += 7
        if x < 0x80: return v, i
pieces, i = [], 0
while i < len(data):   # top level: field 1 (pieces) are length-delimited messages
    key, i = varint(data, i)
    if key & 7 == 2:
        n, i = varint(data, i)
        body, i = data[i:i + n], i + n
        if key >> 3 == 1:
            j, text = 0, None
            while j < len(body):
                k, j = varint(body, j)
                if k & 7 == 2:
                    m, j = varint(body, j); v = body[j:j + m]; j += m
                    if k >> 3 == 1: text = v
                elif k & 7 == 0: _, j = varint(body, j)
                elif k & 7 == 5: j += 4
                else: sys.exit(2)
            pieces.append(text)
    elif key & 7 == 0: _, i = varint(data, i)
    elif key & 7 == 5: i += 4
    else: sys.exit(2)
byte = {p for p in pieces if p and len(p) == 6 and p.startswith(b"<0x") and p.endswith(b">")}
sys.exit(0 if len(byte) == 256 and len(set(pieces)) == len(pieces) else 1)
PY
expect_exit 0 "synth --layers 1" "$BIN" synth --layers 1 "$W/syn1.gguf"
expect_exit 0 "export a one-layer synthetic model" "$BIN" export "$W/syn1.gguf" "$W/syn1"
c=$(ls "$W/syn1" | grep -c '\.safetensors$')
[ "$c" = 1 ] && ok "one layer laid out in order: one file" || bad "one layer laid out in order: $c files"
# A small checkpoint in more files than it has layers (2 layers, 3 files cut
# in the model's own order, a file ending inside each layer, and a converter
# reads each file's tensors sorted by name): its GGUF's order is still a
# converter's (three runs, each sorted), and
# the export gives it back, so converting the export gives the same GGUF.
mkdir -p "$W/split3/Small-Split"
cp "$G/llama-gqa"/config.json "$G/llama-gqa"/tokenizer* "$W/split3/Small-Split/"
python3 - "$G/llama-gqa/model.safetensors" "$W/split3/Small-Split" <<'PY'
import json, struct, sys
src, out = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    h = json.loads(f.read(n))
    base = 8 + n
    data = {k: (v, f.seek(base + v["data_offsets"][0]) and f.read(v["data_offsets"][1] - v["data_offsets"][0]))
            for k, v in h.items() if k != "__metadata__"}
# the model's own order, as a checkpoint is cut into files: embeddings,
# layer by layer, then the final norm and the head
within = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
          "mlp.up_proj", "mlp.down_proj", "input_layernorm", "post_attention_layernorm"]
def key(nm):
    if nm.startswith("model.layers."):
        layer, rest = nm[len("model.layers."):].split(".", 1)
        return (1, int(layer), [w in rest for w in within].index(True))
    return ({"model.embed_tokens.weight": 0, "model.norm.weight": 2}.get(nm, 3), 0, 0)
names = sorted(data, key=key)
cuts = [0, 6, 13, len(names)]
wmap = {}
for k in range(3):
    part, hdr, off = names[cuts[k]:cuts[k + 1]], {}, 0
    fn = "model-%05d-of-00003.safetensors" % (k + 1)
    for nm in reversed(part):   # stored out of name order: the converter sorts
        v, b = data[nm]
        hdr[nm] = {"dtype": v["dtype"], "shape": v["shape"], "data_offsets": [off, off + len(b)]}
        off += len(b)
        wmap[nm] = fn
    hj = json.dumps(hdr).encode()
    hj += b" " * (-len(hj) % 8)
    with open(out + "/" + fn, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(data[nm][1] for nm in reversed(part)))
json.dump({"metadata": {}, "weight_map": wmap}, open(out + "/model.safetensors.index.json", "w"))
PY
expect_exit 0 "3-file checkpoint: convert" "$BIN" convert "$W/split3/Small-Split" "$W/split3.gguf" bf16
mkdir -p "$W/split3b"
expect_exit 0 "3-file checkpoint: export" "$BIN" export "$W/split3.gguf" "$W/split3b/Small-Split"
c=$(ls "$W/split3b/Small-Split" | grep -c '\.safetensors$')
[ "$c" -ge 2 ] && ok "3-file checkpoint: the GGUF's order kept ($c files)" || bad "3-file checkpoint: $c file(s), order lost"
expect_exit 0 "3-file checkpoint: convert the export" "$BIN" convert "$W/split3b/Small-Split" "$W/split3-again.gguf" bf16
expect_same_file "3-file checkpoint: convert(export(G)) == G" "$W/split3-again.gguf" "$W/split3.gguf"
rm -rf "$W"

# ------------------------------------------------------------ interrupted
# SIGINT stops the export cleanly: HF_DIR is complete (it had finished) or
# absent with nothing left beside it. SIGKILL: complete or absent (a hidden
# temporary folder may stay: a kill cannot clean up).
W="$TMP/intr"
mkdir -p "$W"
"$BIN" synth --layers 40 "$W/big.gguf" >/dev/null 2>&1 || bad "synth --layers 40"
complete() { [ -s "$1/config.json" ] && [ -s "$1/model.safetensors" ] && [ -s "$1/tokenizer.model" ]; }
for sig in INT KILL; do
    # SIGKILL: the command itself must be the process killed (REAL_BIN, not the
    # zygote's client, whose command would outlive the kill by a moment)
    bin=$BIN; [ $sig = KILL ] && bin=$REAL_BIN
    for t in 0.02 0.08; do
        timeout -s $sig $t "$bin" export "$W/big.gguf" "$W/o" >/dev/null 2>&1
        if [ -e "$W/o" ]; then
            complete "$W/o" && ok "SIG$sig after ${t}s: HF_DIR complete" || bad "SIG$sig after ${t}s: HF_DIR incomplete"
        elif [ $sig = INT ]; then
            expect_clean "SIG$sig after ${t}s: nothing left" "$W" big.gguf
        else
            expect_clean "SIG$sig after ${t}s: no HF_DIR" "$W" big.gguf "$(cd "$W" && ls -A | grep '^\.o\.ggufkit-' || echo big.gguf)"
        fi
        rm -rf "$W/o" "$W"/.o.ggufkit-*
    done
done
rm -rf "$W"

# ---------------------------------------------------------- the folder
W="$TMP/dest"
mkdir -p "$W/empty" "$W/full"
echo keep >"$W/full/mine.txt"
expect_exit 0 "an existing empty folder is used" "$BIN" export "$G/llama-gqa-bf16.gguf" "$W/empty"
[ -s "$W/empty/model.safetensors" ] && ok "empty folder filled" || bad "empty folder: no model.safetensors"
expect_exit 1 "a non-empty folder is refused" "$BIN" export "$G/llama-gqa-bf16.gguf" "$W/full"
expect_grep "the refusal names the folder and --force" "$TMP/err" "--force"
[ "$(ls "$W/full")" = mine.txt ] && ok "refused: the folder is untouched" || bad "refused: the folder changed"
expect_exit 0 "--force replaces a non-empty folder" "$BIN" export --force "$G/llama-gqa-bf16.gguf" "$W/full"
[ ! -e "$W/full/mine.txt" ] && [ -s "$W/full/config.json" ] && ok "--force: the old files are gone, the new ones there" ||
    bad "--force: not replaced"
expect_clean "--force: no temporary or old folder left" "$W" empty full
cp "$G/llama-gqa-bf16.gguf" "$W/full/in.gguf"
expect_exit 1 "--force into the folder holding the input" "$BIN" export --force "$W/full/in.gguf" "$W/full"
expect_grep "names the input" "$TMP/err" "holds the input"
[ -s "$W/full/in.gguf" ] && ok "the input is kept" || bad "the input was removed"
expect_exit 1 "HF_DIR is the input file" "$BIN" export --force "$W/full/in.gguf" "$W/full/in.gguf"
expect_grep "not a folder" "$TMP/err" "not a folder"
expect_exit 1 "HF_DIR inside a file" "$BIN" export "$W/full/in.gguf" "$W/full/in.gguf/x"
expect_exit 1 "HF_DIR's parent missing" "$BIN" export "$G/llama-gqa-bf16.gguf" "$W/no/such/dir"
expect_clean "refusals leave nothing" "$W" empty full
rm -rf "$W"

# ------------------------------------------------------------- bad input
W="$TMP/bad"
mkdir -p "$W"
"$BIN" edit --set general.architecture=gpt2 -o "$W/gpt2.gguf" "$G/llama-gqa-bf16.gguf" >/dev/null 2>&1 || bad "make gpt2.gguf"
expect_exit 1 "an unsupported architecture" "$BIN" export "$W/gpt2.gguf" "$W/out"
expect_grep "the refusal lists what is supported" "$TMP/err" "supported: llama"
expect_absent "unsupported: nothing written" "$W/out"
"$BIN" edit --delete llama.attention.head_count -o "$W/nohead.gguf" "$G/llama-gqa-bf16.gguf" >/dev/null 2>&1 || bad "make nohead.gguf"
expect_exit 1 "a missing key" "$BIN" export "$W/nohead.gguf" "$W/out"
expect_grep "names the key" "$TMP/err" "llama.attention.head_count"
"$BIN" edit --delete llama.block_count -o "$W/noblocks.gguf" "$G/llama-gqa-bf16.gguf" >/dev/null 2>&1 || bad "make noblocks.gguf"
expect_exit 1 "no block_count" "$BIN" export "$W/noblocks.gguf" "$W/out"
expect_grep "names block_count" "$TMP/err" "llama.block_count"
head -c 100000 "$G/llama-gqa-bf16.gguf" >"$W/cut.gguf"
expect_exit 1 "a GGUF cut short" "$BIN" export "$W/cut.gguf" "$W/out"
expect_absent "cut short: nothing written" "$W/out"
expect_exit 2 "no HF_DIR: usage error" "$BIN" export "$G/llama-gqa-bf16.gguf"
expect_exit 2 "--dtype q4_0: usage error" "$BIN" export --dtype q4_0 "$G/llama-gqa-bf16.gguf" "$W/out"
expect_exit 2 "--max-shard-size 0: usage error" "$BIN" export --max-shard-size 0 "$G/llama-gqa-bf16.gguf" "$W/out"
expect_clean "bad input leaves nothing" "$W" gpt2.gguf nohead.gguf noblocks.gguf cut.gguf
rm -rf "$W"

# ------------------------------------------------------- a full disk (root)
M="$TMP/full"
mkdir -p "$M"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m tmpfs "$M" 2>/dev/null; then
    expect_exit 1 "disk full (1 MB tmpfs)" "$BIN" export --dtype f32 "$G/mistral-l3-f32.gguf" "$M/out"
    grep -qiE "no space|write failed" "$TMP/err" && ok "disk full: the message says so" || bad "disk full: $(head -1 "$TMP/err")"
    [ -z "$(ls -A "$M")" ] && ok "disk full: nothing left (no temporary folder)" || bad "disk full: left $(ls -A "$M")"
    umount "$M" || bad "umount $M"
else
    skip "disk-full test (needs root and a tmpfs mount)"
fi

finish
