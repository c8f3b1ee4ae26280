#!/usr/bin/env bash
# test_quantize.sh - `ggufkit quantize` as a drop-in for llama-quantize: golden
# parity of the presets (per-tensor type mixing), of --pure types and of the
# requantize chains; thread-count invariance; every option; refusals (bad type,
# missing input, unwritable or existing output) leave no file behind.
# Usage: test_quantize.sh PATH/TO/ggufkit   (golden data: $GGUFKIT_GOLDEN)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

# expect_err PATTERN DESCRIPTION : the last command's stderr matches PATTERN.
expect_err() {
  if grep -qiE -- "$1" "$TMP/err"; then ok "$2"; else bad "$2: stderr lacks '$1'"; sed 's/^/     | /' "$TMP/err" | head -3; fi
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
# tensor_type FILE NAME : the tensor's type as `ggufkit dump --json` reports it.
tensor_type() {
  "$BIN" dump --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tensors"][sys.argv[1]]["type"])' "$2"
}
# kv FILE KEY : "TYPE VALUE" of a metadata key, "missing" when absent.
kv() {
  "$BIN" dump --json "$1" | python3 -c '
import json, sys
m = json.load(sys.stdin)["metadata"]
e = m.get(sys.argv[1])
print("missing" if e is None else "%s %s" % (e["type"], e["value"]))' "$2"
}
# last_key FILE : the key of the last metadata pair.
last_key() { "$BIN" dump --json "$1" | python3 -c 'import json,sys; print(list(json.load(sys.stdin)["metadata"])[-1])'; }
# type_diff A B : names the tensors whose types differ between two files.
type_diff() {
  python3 - "$1" "$2" "$BIN" <<'EOF'
import json, subprocess, sys
def types(p):
    d = json.loads(subprocess.run([sys.argv[3], "dump", "--json", p], capture_output=True, text=True).stdout)
    return {n: t["type"] for n, t in d["tensors"].items()}
a, b = types(sys.argv[1]), types(sys.argv[2])
bad = [f"{n}: {a.get(n)} vs golden {b.get(n)}" for n in sorted(set(a) | set(b)) if a.get(n) != b.get(n)]
print("; ".join(bad) if bad else "types agree (tensor bytes or metadata differ)")
EOF
}
# has_kernels TYPE : the type's kernels are in the table (per --list-types).
has_kernels() { "$BIN" quantize --list-types | awk -v t="$1" '$1 == t' | grep -qv 'no kernels'; }

syn=$GOLDEN/syn1
have_golden=false
if [[ -n $GOLDEN && -f $syn/syn1-f32.gguf ]]; then have_golden=true
else echo "SKIPPED: golden parity (no golden data at ${GOLDEN:-(GGUFKIT_GOLDEN unset)})"; fi

# A model of our own for the option tests (and when golden data is absent).
src=$TMP/tiny.gguf
"$BIN" synth --preset tiny --seed 3 "$src" >/dev/null 2>&1 || bad "synth tiny model"
deep=$TMP/deep8.gguf
if "$BIN" synth --preset tiny --layers 8 --seed 5 "$deep" >/dev/null 2>&1; then ok "synth --layers 8 model"
else bad "synth --layers 8"; fi

# --- golden parity: presets (mixing), --pure types, requantize chains -----------
if $have_golden; then
  for g in "$syn"/syn1-preset-*.gguf; do
    p=${g##*/syn1-preset-}; p=${p%.gguf}
    if ! has_kernels "$p"; then echo "SKIPPED: preset $p (no kernels in this build)"; continue; fi
    out=$TMP/preset-$p.gguf
    if "$BIN" quantize "$syn/syn1-f32.gguf" "$out" "$p" >"$TMP/out" 2>"$TMP/err"; then
      if [[ $(sha "$out") == $(sha "$g") ]]; then ok "preset $p byte-identical to llama-quantize"
      else bad "preset $p differs from golden: $(type_diff "$out" "$g")"; fi
    else bad "preset $p: quantize failed: $(head -1 "$TMP/err")"; fi
    rm -f "$out"
  done
  for g in "$syn"/syn1-*.gguf; do
    t=${g##*/syn1-}; t=${t%.gguf}
    [[ $t == *.* || $t == preset-* || $t == split-* || $t == f32 || $t == f16 ]] && continue
    if ! has_kernels "$t"; then echo "SKIPPED: --pure $t (no kernels in this build)"; continue; fi
    out=$TMP/pure-$t.gguf
    if "$BIN" quantize --pure "$syn/syn1-f32.gguf" "$out" "$t" >"$TMP/out" 2>"$TMP/err"; then
      if [[ $(sha "$out") == $(sha "$g") ]]; then ok "--pure $t byte-identical"
      else bad "--pure $t differs from golden: $(type_diff "$out" "$g")"; fi
    else bad "--pure $t: quantize failed: $(head -1 "$TMP/err")"; fi
    rm -f "$out"
  done
  for g in "$syn"/syn1-*.to-*.gguf; do
    base=${g##*/syn1-}; a=${base%%.to-*}; b=${base##*.to-}; b=${b%.gguf}
    if ! has_kernels "$b"; then echo "SKIPPED: chain $a -> $b (no kernels in this build)"; continue; fi
    out=$TMP/chain.gguf
    if [[ $a != f16 ]]; then   # F16 is not a quantized type: no permission needed
      expect_exit 1 "chain $a -> $b refused without --allow-requantize" \
        "$BIN" quantize --pure "$syn/syn1-$a.gguf" "$out" "$b"
      expect_err 'requantiz' "refusal names requantizing"
      expect_absent "no output after the requantize refusal" "$out"
    fi
    if "$BIN" quantize --pure --allow-requantize "$syn/syn1-$a.gguf" "$out" "$b" >"$TMP/out" 2>"$TMP/err"; then
      if [[ $(sha "$out") == $(sha "$g") ]]; then ok "chain $a -> $b byte-identical"
      else bad "chain $a -> $b differs: $(type_diff "$out" "$g")"; fi
    else bad "chain $a -> $b failed: $(head -1 "$TMP/err")"; fi
    rm -f "$out"
  done
  # COPY of a model without general.file_type guesses it from its commonest tensor
  # type, as llama.cpp's loader does (NVFP4 39, Q1_0 40, Q2_0 41), marked guessed (1024).
  for tf in NVFP4:1063 Q1_0:1064 Q2_0:1065; do
    t=${tf%%:*}; want=${tf##*:}
    rm -f "$TMP/nf.gguf" "$TMP/nf-copy.gguf"
    if "$BIN" edit --delete general.file_type -o "$TMP/nf.gguf" "$syn/syn1-$t.gguf" >/dev/null 2>&1 &&
       "$BIN" quantize "$TMP/nf.gguf" "$TMP/nf-copy.gguf" COPY >/dev/null 2>&1; then
      got=$("$BIN" info --json "$TMP/nf-copy.gguf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["file_type"]["id"])')
      [[ $got == "$want" ]] && ok "COPY of $t without general.file_type guesses $want" ||
        bad "COPY of $t without general.file_type: file_type $got, expected $want"
    else bad "COPY of $t without general.file_type failed"; fi
  done
  # A shard set quantized whole equals the unsplit model's result.
  if has_kernels Q4_K_M; then
    expect_exit 0 "quantize a shard set (first shard given)" \
      "$BIN" quantize "$syn/syn1-split-t5-00001-of-00005.gguf" "$TMP/merged.gguf" Q4_K_M
    if cmp -s "$TMP/merged.gguf" "$syn/syn1-preset-Q4_K_M.gguf"; then ok "shard set -> one file, identical to golden"
    else bad "shard set quantized whole differs from golden Q4_K_M"; fi
    expect_exit 1 "a later shard is refused as input" \
      "$BIN" quantize "$syn/syn1-split-t5-00002-of-00005.gguf" "$TMP/bad.gguf" Q4_K_M
    expect_err 'first shard' "refusal asks for the first shard"
    expect_absent "no output after the refusal" "$TMP/bad.gguf"
  fi
fi

# --- the rest runs on our own models ------------------------------------------
has_kernels Q4_K_M || { echo "SKIPPED: option tests (no Q4_K kernels)"; finish; }

# Mixing on a deeper model: attn_v / ffn_down of 8 layers under Q4_K_M get Q6_K at
# layers 0, 3, 6, 7 (use_more_bits), Q4_K elsewhere; Q4_K_S gives attn_v Q5_K below 4.
plan_types() { # FILE TARGET KIND... : "layer:type" of blk.N.KIND.weight from --dry-run --json
  local f=$1 t=$2 k=$3; shift 3
  "$BIN" quantize --dry-run --json "$@" "$f" "$TMP/never.gguf" "$t" | python3 -c '
import json, sys
d = json.load(sys.stdin)
kind = sys.argv[1]
r = [t["name"].split(".")[1] + ":" + t["to"] for t in d["tensors"] if t["name"].endswith("." + kind + ".weight")]
print(" ".join(r))' "$k"
}
want="0:Q6_K 1:Q4_K 2:Q4_K 3:Q6_K 4:Q4_K 5:Q4_K 6:Q6_K 7:Q6_K"
got=$(plan_types "$deep" Q4_K_M attn_v)
if [[ $got == "$want" ]]; then ok "Q4_K_M attn_v by layer (8 layers)"; else bad "Q4_K_M attn_v: $got (want $want)"; fi
got=$(plan_types "$deep" Q4_K_M ffn_down)
if [[ $got == "$want" ]]; then ok "Q4_K_M ffn_down by layer"; else bad "Q4_K_M ffn_down: $got (want $want)"; fi
want="0:Q5_K 1:Q5_K 2:Q5_K 3:Q5_K 4:Q4_K 5:Q4_K 6:Q4_K 7:Q4_K"
got=$(plan_types "$deep" Q4_K_S attn_v)
if [[ $got == "$want" ]]; then ok "Q4_K_S attn_v by layer"; else bad "Q4_K_S attn_v: $got (want $want)"; fi
want="0:Q5_K 1:Q5_K 2:Q4_K 3:Q4_K 4:Q4_K 5:Q4_K 6:Q4_K 7:Q4_K"
got=$(plan_types "$deep" Q3_K_M attn_v)
if [[ $got == "$want" ]]; then ok "Q3_K_M attn_v by layer"; else bad "Q3_K_M attn_v: $got (want $want)"; fi
expect_absent "--dry-run writes nothing" "$TMP/never.gguf"

# Thread-count invariance.
for n in 1 2 7; do
  expect_exit 0 "Q4_K_M with $n threads" "$BIN" quantize --threads "$n" "$deep" "$TMP/t$n.gguf" Q4_K_M
done
if cmp -s "$TMP/t1.gguf" "$TMP/t2.gguf" && cmp -s "$TMP/t1.gguf" "$TMP/t7.gguf"; then ok "1, 2 and 7 threads give identical files"
else bad "output depends on the thread count"; fi
expect_exit 0 "THREADS as the last argument" "$BIN" quantize "$deep" "$TMP/t3.gguf" Q4_K_M 3
if cmp -s "$TMP/t1.gguf" "$TMP/t3.gguf"; then ok "positional THREADS same result"; else bad "positional THREADS differs"; fi
expect_exit 2 "--threads and THREADS disagree" "$BIN" quantize --threads 2 "$deep" "$TMP/t4.gguf" Q4_K_M 3
expect_absent "no output after the usage error" "$TMP/t4.gguf"
rm -f "$TMP"/t?.gguf

# F16 rows quantized straight to the legacy types (no F32 copy at the vector
# levels): every kernel level the processor has writes the scalar path's bytes,
# also from a big-endian F16 file, and under --pure and a preset (Q4_0's sends
# output.weight to Q6_K).
f16=$TMP/f16.gguf f16be=$TMP/f16be.gguf
"$BIN" synth --preset tiny --type F16 --layers 3 --seed 9 "$f16" >/dev/null 2>&1 || bad "synth F16 model"
"$BIN" synth --preset tiny --type F16 --layers 3 --seed 9 --big-endian "$f16be" >/dev/null 2>&1 || bad "synth big-endian F16 model"
for level in avx2 avx512; do
  if [[ $(GGUFKIT_KERNELS=$level "$BIN" --version) != *"kernels: $level"* ]]; then
    echo "SKIPPED: F16 -> legacy types at $level (this processor has no $level)"; continue
  fi
  for job in "Q8_0" "--pure Q4_0" "Q4_0" "--pure Q4_1" "--pure Q5_0" "--pure Q5_1" "--pure Q8_0 be" "--pure Q5_1 be"; do
    read -r -a words <<<"$job"
    in=$f16; [[ ${words[-1]} == be ]] && { in=$f16be; unset 'words[-1]'; }
    GGUFKIT_KERNELS=scalar "$BIN" quantize "${words[@]:0:${#words[@]}-1}" "$in" "$TMP/fs.gguf" "${words[-1]}" >/dev/null 2>&1
    GGUFKIT_KERNELS=$level "$BIN" quantize --threads 2 "${words[@]:0:${#words[@]}-1}" "$in" "$TMP/fv.gguf" "${words[-1]}" >/dev/null 2>&1
    if [[ -s $TMP/fs.gguf ]] && cmp -s "$TMP/fs.gguf" "$TMP/fv.gguf"; then ok "F16 -> $job at $level: the scalar path's bytes"
    else bad "F16 -> $job at $level differs from the scalar path"; fi
    rm -f "$TMP/fs.gguf" "$TMP/fv.gguf"
  done
done

# --- refusals: clear message, exit status, no file left -----------------------
out=$TMP/r.gguf
expect_exit 2 "unknown TYPE" "$BIN" quantize "$src" "$out" Q9_Z
expect_err 'unknown type' "message names the unknown type"
expect_absent "no output for an unknown TYPE" "$out"
expect_exit 1 "missing input" "$BIN" quantize "$TMP/nope.gguf" "$out" Q4_K_M
expect_err 'nope.gguf' "message names the missing input"
expect_absent "no output for a missing input" "$out"
expect_exit 1 "unwritable output (no such folder)" "$BIN" quantize "$src" "$TMP/no/such/dir/o.gguf" Q4_K_M
expect_absent "nothing created for an unwritable output" "$TMP/no"
if ls -A "$TMP" | grep -q 'ggufkit-'; then bad "temporary files left: $(ls -A "$TMP")"; else ok "no temporary files left"; fi
echo keep >"$out"
expect_exit 1 "existing output without --force" "$BIN" quantize "$src" "$out" Q4_K_M
expect_err 'exist' "message says the output exists"
if [[ $(cat "$out") == keep ]]; then ok "existing output untouched"; else bad "existing output modified"; fi
if ls -A "$TMP" | grep -q 'ggufkit-'; then bad "temporary file left after a refusal"; else ok "no temporary file after the refusal"; fi
expect_exit 0 "--force replaces it" "$BIN" quantize --force "$src" "$out" Q4_K_M
if [[ $(head -c 4 "$out") == GGUF ]]; then ok "--force wrote a GGUF file"; else bad "--force did not write"; fi
expect_exit 1 "output = input refused" "$BIN" quantize --force "$out" "$out" Q8_0
expect_exit 2 "missing arguments" "$BIN" quantize "$src"
expect_exit 2 "unknown option" "$BIN" quantize --frobnicate "$src" "$out" Q4_K_M
expect_exit 1 "IQ2_XXS without an importance matrix" "$BIN" quantize --dry-run "$src" "$TMP/iq.gguf" IQ2_XXS
expect_err 'importance matrix' "refusal explains the importance matrix"
rm -f "$out"

# --- options -------------------------------------------------------------------
o=$TMP/o.gguf
expect_exit 0 "--output-tensor-type Q8_0" "$BIN" quantize --output-tensor-type Q8_0 "$src" "$o" Q4_K_M
[[ $(tensor_type "$o" output.weight) == Q8_0 ]] && ok "output.weight is Q8_0" || bad "output.weight not Q8_0"
[[ $(tensor_type "$o" token_embd.weight) == Q4_K ]] && ok "token_embd unaffected" || bad "token_embd changed"
rm -f "$o"
expect_exit 0 "--token-embedding-type Q8_0" "$BIN" quantize --token-embedding-type q8_0 "$src" "$o" Q4_K_M
[[ $(tensor_type "$o" token_embd.weight) == Q8_0 ]] && ok "token_embd.weight is Q8_0" || bad "token_embd not Q8_0"
rm -f "$o"
expect_exit 2 "--output-tensor-type with a bad type" "$BIN" quantize --output-tensor-type Q9 "$src" "$o" Q4_K_M
expect_exit 0 "--leave-output-tensor" "$BIN" quantize --leave-output-tensor "$src" "$o" Q4_K_M
[[ $(tensor_type "$o" output.weight) == F32 ]] && ok "output.weight left F32" || bad "output.weight converted"
rm -f "$o"
expect_exit 2 "--leave-output-tensor with --output-tensor-type" \
  "$BIN" quantize --leave-output-tensor --output-tensor-type Q8_0 "$src" "$o" Q4_K_M
expect_err 'conflict' "conflict named"
expect_absent "no output after a conflict" "$o"
expect_exit 0 "--pure Q4_K_M" "$BIN" quantize --pure "$deep" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.0.attn_v.weight) == Q4_K && $(tensor_type "$o" output.weight) == Q4_K ]] \
  && ok "--pure: attn_v and output get the base type" || bad "--pure still mixed types"
[[ $(kv "$o" general.file_type) == "UINT32 15" ]] && ok "general.file_type 15" || bad "file_type $(kv "$o" general.file_type)"
rm -f "$o"
# --allow-requantize
"$BIN" quantize "$src" "$TMP/q8.gguf" Q8_0 >/dev/null 2>&1
expect_exit 1 "requantizing refused" "$BIN" quantize "$TMP/q8.gguf" "$o" Q4_0
expect_err 'allow-requantize' "refusal points to --allow-requantize"
expect_absent "no output after the refusal" "$o"
expect_exit 0 "--allow-requantize" "$BIN" quantize --allow-requantize "$TMP/q8.gguf" "$o" Q4_0
[[ $(tensor_type "$o" blk.0.attn_q.weight) == Q4_0 ]] && ok "requantized to Q4_0" || bad "requantize result wrong"
rm -f "$o"
# --tensor-type
expect_exit 0 "--tensor-type" "$BIN" quantize --tensor-type 'attn_(q|k)=q8_0' --tensor-type 'blk\.1\.attn_q=Q5_K' "$deep" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.0.attn_q.weight) == Q8_0 && $(tensor_type "$o" blk.3.attn_k.weight) == Q8_0 ]] \
  && ok "--tensor-type pattern applied" || bad "--tensor-type pattern not applied"
[[ $(tensor_type "$o" blk.1.attn_q.weight) == Q5_K ]] && ok "last matching --tensor-type wins" || bad "last match did not win"
[[ $(tensor_type "$o" blk.1.attn_output.weight) == Q4_K ]] && ok "others untouched" || bad "non-matching tensor changed"
rm -f "$o"
expect_exit 2 "--tensor-type bad regex" "$BIN" quantize --tensor-type 'attn_(q=Q8_0' "$src" "$o" Q4_K_M
expect_exit 2 "--tensor-type bad type" "$BIN" quantize --tensor-type 'attn_q=Q9' "$src" "$o" Q4_K_M
expect_exit 2 "--tensor-type without =" "$BIN" quantize --tensor-type 'attn_q' "$src" "$o" Q4_K_M
expect_exit 2 "--tensor-type with --pure" "$BIN" quantize --pure --tensor-type 'attn_q=Q8_0' "$src" "$o" Q4_K_M
expect_exit 2 "--tensor-type with F16" "$BIN" quantize --tensor-type 'attn_q=Q8_0' "$src" "$o" F16
expect_exit 2 "COPY with --output-tensor-type" "$BIN" quantize --output-tensor-type Q8_0 "$src" "$o" COPY
expect_absent "no output after option errors" "$o"
# --override-kv
expect_exit 0 "--override-kv" "$BIN" quantize --override-kv 'general.name=str:renamed' \
  --override-kv 'llama.context_length=int:4096' --override-kv 'x.flag=bool:true' --override-kv 'x.f=float:0.5' "$src" "$o" Q8_0
[[ $(kv "$o" general.name) == "STRING renamed" ]] && ok "str override" || bad "str override: $(kv "$o" general.name)"
[[ $(kv "$o" llama.context_length) == "UINT32 4096" ]] && ok "int override keeps u32" || bad "int override: $(kv "$o" llama.context_length)"
[[ $(kv "$o" x.flag) == "BOOL True" || $(kv "$o" x.flag) == "BOOL true" ]] && ok "bool override added" || bad "bool override: $(kv "$o" x.flag)"
[[ $(kv "$o" x.f) == "FLOAT32 0.5" ]] && ok "float override added as f32" || bad "float override: $(kv "$o" x.f)"
[[ $(last_key "$o") == x.f ]] && ok "overridden keys end up last, in order" || bad "override order: last is $(last_key "$o")"
rm -f "$o"
expect_exit 2 "--override-kv bad kind" "$BIN" quantize --override-kv 'a=double:1' "$src" "$o" Q8_0
expect_exit 2 "--override-kv bad bool" "$BIN" quantize --override-kv 'a=bool:maybe' "$src" "$o" Q8_0
expect_exit 1 "--override-kv out of range for a u32 key" "$BIN" quantize --override-kv 'llama.block_count=int:-2' "$src" "$o" Q8_0
expect_absent "no output after a bad override" "$o"
# --keep-split
"$BIN" split --help >/dev/null 2>&1 && have_split=true || have_split=false
if $have_golden; then set_in=$syn/syn1-split-t5-00001-of-00005.gguf; n=5
elif $have_split && "$BIN" split --split-max-tensors 8 "$src" "$TMP/s" >/dev/null 2>&1; then
  set_in=$TMP/s-00001-of-00003.gguf; n=3
else set_in=""; echo "SKIPPED: --keep-split (no shard set available)"; fi
if [[ -n $set_in ]]; then
  expect_exit 0 "--keep-split" "$BIN" quantize --keep-split "$set_in" "$TMP/ks" Q4_K_M
  ok=true
  for ((k = 1; k <= n; k++)); do
    f=$(printf '%s/ks-%05d-of-%05d.gguf' "$TMP" "$k" "$n")
    [[ -f $f ]] || { ok=false; continue; }
    [[ $(kv "$f" split.no) == "UINT16 $((k - 1))" && $(kv "$f" split.count) == "UINT16 $n" ]] || ok=false
  done
  $ok && ok "--keep-split wrote $n shards with split.no / split.count" || bad "--keep-split shards wrong"
  f2=$(printf '%s/ks-%05d-of-%05d.gguf' "$TMP" 2 "$n")
  [[ $(kv "$f2" general.architecture) == missing ]] && ok "later shards carry only split keys" || bad "later shard has model metadata"
  expect_exit 1 "--keep-split refuses existing shards" "$BIN" quantize --keep-split "$set_in" "$TMP/ks" Q4_K_M
  expect_err 'exist' "keep-split refusal says exists"
  rm -f "$TMP"/ks-*.gguf
  touch "$(printf '%s/ks-%05d-of-%05d.gguf' "$TMP" "$n" "$n")"
  expect_exit 1 "--keep-split: one existing shard stops all" "$BIN" quantize --keep-split "$set_in" "$TMP/ks" Q4_K_M
  expect_absent "no shard written when one exists" "$(printf '%s/ks-%05d-of-%05d.gguf' "$TMP" 1 "$n")"
  rm -f "$TMP"/ks-*.gguf
  # OUT ending in .gguf: llama-quantize drops it (ks-00001-of-0000N.gguf, not ks.gguf-00001-...)
  expect_exit 0 "--keep-split OUT.gguf" "$BIN" quantize --keep-split "$set_in" "$TMP/ks.gguf" Q4_K_M
  all=true
  for ((k = 1; k <= n; k++)); do [[ -f $(printf '%s/ks-%05d-of-%05d.gguf' "$TMP" "$k" "$n") ]] || all=false; done
  $all && ok "--keep-split OUT.gguf names shards OUT-0000k-of-0000N.gguf" || bad "--keep-split OUT.gguf: shards not named as llama-quantize names them: $(cd "$TMP" && ls ks*)"
  [[ -z $(ls "$TMP" | grep -F 'ks.gguf-') ]] && ok "--keep-split OUT.gguf: no OUT.gguf-0000k names" || bad "--keep-split kept .gguf in the prefix"
  rm -f "$TMP"/ks-*.gguf "$TMP"/ks.gguf-*
fi
# --dry-run text and --json
expect_exit 0 "--dry-run" "$BIN" quantize --dry-run "$src" "$o" Q4_K_M
expect_absent "--dry-run wrote nothing" "$o"
if grep -q 'blk.1.attn_v.weight.*F32 *-> Q6_K' "$TMP/out" && grep -q 'bits per weight' "$TMP/out"; then
  ok "--dry-run lists types before/after and bits per weight"; else bad "--dry-run output incomplete"; fi
expect_exit 0 "--dry-run --json" "$BIN" quantize --dry-run --json "$src" "$o" Q4_K_M
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["tensors"])==21 and d["totals"]["bytes_out"]>0 and "fallback" in d["tensors"][0]' "$TMP/out"; then
  ok "--json plan parses, 21 tensors, totals"; else bad "--json plan malformed"; fi
expect_exit 2 "--json without --dry-run" "$BIN" quantize --json "$src" "$o" Q4_K_M
expect_absent "no output for --json alone" "$o"
# --no-fallback: syn1-shaped rows fit, so it changes nothing here.
expect_exit 0 "--no-fallback with fitting rows" "$BIN" quantize --no-fallback --dry-run "$src" "$o" Q4_K_M
# Rows of 320 (whole 32-blocks, not 256-blocks) and of 100 (neither): fallbacks.
python3 - "$TMP/odd.gguf" <<'PY'
import struct, sys
def s(x): b = x.encode(); return struct.pack("<Q", len(b)) + b
kv = [("general.architecture", 8, s("llama")), ("llama.block_count", 4, struct.pack("<I", 1))]
tensors = [("blk.0.attn_q.weight", 320, 4), ("blk.0.attn_k.weight", 100, 4)]
head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
for k, t, v in kv: head += s(k) + struct.pack("<I", t) + v
off, data = 0, b""
for name, ne0, ne1 in tensors:
    head += s(name) + struct.pack("<IQQIQ", 2, ne0, ne1, 0, off)
    blob = struct.pack("<%df" % (ne0 * ne1), *[((i * 37) % 17 - 8) / 8.0 for i in range(ne0 * ne1)])
    blob += b"\0" * (-len(blob) % 32)
    data += blob; off += len(blob)
head += b"\0" * (-len(head) % 32)
open(sys.argv[1], "wb").write(head + data)
PY
expect_exit 0 "--dry-run with rows that are not whole blocks" "$BIN" quantize --dry-run "$TMP/odd.gguf" "$o" Q4_K_M
if grep -q 'attn_q.weight.*-> Q5_0.*FALLBACK' "$TMP/out" && grep -q 'attn_k.weight.*-> F16.*FALLBACK' "$TMP/out" \
   && grep -q '2 fallbacks' "$TMP/out"; then ok "--dry-run shows each fallback (Q4_K -> Q5_0, -> F16)"
else bad "--dry-run fallbacks not shown"; sed 's/^/     | /' "$TMP/out"; fi
expect_exit 1 "--no-fallback refuses rows that do not fit" "$BIN" quantize --no-fallback "$TMP/odd.gguf" "$o" Q4_K_M
expect_err 'no-fallback' "refusal names --no-fallback"
expect_absent "no output after the --no-fallback refusal" "$o"
expect_exit 0 "fallbacks written" "$BIN" quantize "$TMP/odd.gguf" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.0.attn_q.weight) == Q5_0 && $(tensor_type "$o" blk.0.attn_k.weight) == F16 ]] \
  && ok "fallback types in the file" || bad "fallback types wrong in the file"
expect_err 'using Q5_0' "fallback warned on stderr"
rm -f "$o"
# OUT left out: ggml-model-TYPE.gguf beside IN.
cp "$src" "$TMP/d.gguf"
expect_exit 0 "OUT left out" "$BIN" quantize "$TMP/d.gguf" Q8_0
[[ -f $TMP/ggml-model-Q8_0.gguf ]] && ok "default output name ggml-model-Q8_0.gguf" || bad "default output missing"
# --list-types
expect_exit 0 "--list-types" "$BIN" quantize --list-types
grep -q '^Q4_K_M' "$TMP/out" && ok "--list-types lists Q4_K_M" || bad "--list-types lacks Q4_K_M"

finish
