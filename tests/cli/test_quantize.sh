#!/usr/bin/env bash
# test_quantize.sh - `ggufkit quantize` as a drop-in for llama-quantize: golden
# parity of the presets (per-tensor type mixing), of --pure types and of the
# requantize chains; thread-count invariance; every option; refusals (bad type,
# missing input, unwritable or existing output) leave no file behind.
# Usage: test_quantize.sh PATH/TO/ggufkit   (golden data: $GGUFKIT_GOLDEN)
set -uo pipefail

gk=${1:?usage: test_quantize.sh GGUFKIT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GGUFKIT_NO_PROGRESS=1
fails=0
checks=0

pass() { checks=$((checks + 1)); printf 'ok   %s\n' "$1"; }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); printf 'FAIL %s\n' "$1"; }
# expect_status WANT DESCRIPTION CMD... : runs CMD, checks its exit status.
expect_status() {
  local want=$1 what=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [[ $rc -eq $want ]]; then pass "$what (exit $rc)"; else
    fail "$what: exit $rc, wanted $want"; sed 's/^/     | /' "$tmp/err" | head -5; fi
}
# expect_err PATTERN DESCRIPTION : the last command's stderr matches PATTERN.
expect_err() {
  if grep -qiE -- "$1" "$tmp/err"; then pass "$2"; else fail "$2: stderr lacks '$1'"; sed 's/^/     | /' "$tmp/err" | head -3; fi
}
expect_absent() { if [[ -e $1 ]]; then fail "$2: $1 was left behind"; else pass "$2"; fi; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
# tensor_type FILE NAME : the tensor's type as `ggufkit dump --json` reports it.
tensor_type() {
  "$gk" dump --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tensors"][sys.argv[1]]["type"])' "$2"
}
# kv FILE KEY : "TYPE VALUE" of a metadata key, "missing" when absent.
kv() {
  "$gk" dump --json "$1" | python3 -c '
import json, sys
m = json.load(sys.stdin)["metadata"]
e = m.get(sys.argv[1])
print("missing" if e is None else "%s %s" % (e["type"], e["value"]))' "$2"
}
# last_key FILE : the key of the last metadata pair.
last_key() { "$gk" dump --json "$1" | python3 -c 'import json,sys; print(list(json.load(sys.stdin)["metadata"])[-1])'; }
# type_diff A B : names the tensors whose types differ between two files.
type_diff() {
  python3 - "$1" "$2" "$gk" <<'EOF'
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
has_kernels() { "$gk" quantize --list-types | awk -v t="$1" '$1 == t' | grep -qv 'no kernels'; }

golden=${GGUFKIT_GOLDEN:-}
syn=$golden/syn1
have_golden=false
if [[ -n $golden && -f $syn/syn1-f32.gguf ]]; then have_golden=true
else echo "SKIPPED: golden parity (no golden data at ${golden:-(GGUFKIT_GOLDEN unset)})"; fi

# A model of our own for the option tests (and when golden data is absent).
src=$tmp/tiny.gguf
"$gk" synth --preset tiny --seed 3 "$src" >/dev/null 2>&1 || fail "synth tiny model"
deep=$tmp/deep8.gguf
if "$gk" synth --preset tiny --layers 8 --seed 5 "$deep" >/dev/null 2>&1; then pass "synth --layers 8 model"
else fail "synth --layers 8"; fi

# --- golden parity: presets (mixing), --pure types, requantize chains -----------
if $have_golden; then
  for g in "$syn"/syn1-preset-*.gguf; do
    p=${g##*/syn1-preset-}; p=${p%.gguf}
    if ! has_kernels "$p"; then echo "SKIPPED: preset $p (no kernels yet)"; continue; fi
    out=$tmp/preset-$p.gguf
    if "$gk" quantize "$syn/syn1-f32.gguf" "$out" "$p" >"$tmp/out" 2>"$tmp/err"; then
      if [[ $(sha "$out") == $(sha "$g") ]]; then pass "preset $p byte-identical to llama-quantize"
      else fail "preset $p differs from golden: $(type_diff "$out" "$g")"; fi
    else fail "preset $p: quantize failed: $(head -1 "$tmp/err")"; fi
    rm -f "$out"
  done
  for g in "$syn"/syn1-*.gguf; do
    t=${g##*/syn1-}; t=${t%.gguf}
    [[ $t == *.* || $t == preset-* || $t == split-* || $t == f32 || $t == f16 ]] && continue
    if ! has_kernels "$t"; then echo "SKIPPED: --pure $t (no kernels yet)"; continue; fi
    out=$tmp/pure-$t.gguf
    if "$gk" quantize --pure "$syn/syn1-f32.gguf" "$out" "$t" >"$tmp/out" 2>"$tmp/err"; then
      if [[ $(sha "$out") == $(sha "$g") ]]; then pass "--pure $t byte-identical"
      else fail "--pure $t differs from golden: $(type_diff "$out" "$g")"; fi
    else fail "--pure $t: quantize failed: $(head -1 "$tmp/err")"; fi
    rm -f "$out"
  done
  for g in "$syn"/syn1-*.to-*.gguf; do
    base=${g##*/syn1-}; a=${base%%.to-*}; b=${base##*.to-}; b=${b%.gguf}
    if ! has_kernels "$b"; then echo "SKIPPED: chain $a -> $b (no kernels yet)"; continue; fi
    out=$tmp/chain.gguf
    if [[ $a != f16 ]]; then   # F16 is not a quantized type: no permission needed
      expect_status 1 "chain $a -> $b refused without --allow-requantize" \
        "$gk" quantize --pure "$syn/syn1-$a.gguf" "$out" "$b"
      expect_err 'requantiz' "refusal names requantizing"
      expect_absent "$out" "no output after the requantize refusal"
    fi
    if "$gk" quantize --pure --allow-requantize "$syn/syn1-$a.gguf" "$out" "$b" >"$tmp/out" 2>"$tmp/err"; then
      if [[ $(sha "$out") == $(sha "$g") ]]; then pass "chain $a -> $b byte-identical"
      else fail "chain $a -> $b differs: $(type_diff "$out" "$g")"; fi
    else fail "chain $a -> $b failed: $(head -1 "$tmp/err")"; fi
    rm -f "$out"
  done
  # A shard set quantized whole equals the unsplit model's result.
  if has_kernels Q4_K_M; then
    expect_status 0 "quantize a shard set (first shard given)" \
      "$gk" quantize "$syn/syn1-split-t5-00001-of-00005.gguf" "$tmp/merged.gguf" Q4_K_M
    if cmp -s "$tmp/merged.gguf" "$syn/syn1-preset-Q4_K_M.gguf"; then pass "shard set -> one file, identical to golden"
    else fail "shard set quantized whole differs from golden Q4_K_M"; fi
    expect_status 1 "a later shard is refused as input" \
      "$gk" quantize "$syn/syn1-split-t5-00002-of-00005.gguf" "$tmp/bad.gguf" Q4_K_M
    expect_err 'first shard' "refusal asks for the first shard"
    expect_absent "$tmp/bad.gguf" "no output after the refusal"
  fi
fi

# --- the rest runs on our own models ------------------------------------------
has_kernels Q4_K_M || { echo "SKIPPED: option tests (no Q4_K kernels)"; printf '%d passed, %d failed\n' $((checks - fails)) "$fails"; [[ $fails -eq 0 ]]; exit; }

# Mixing on a deeper model: attn_v / ffn_down of 8 layers under Q4_K_M get Q6_K at
# layers 0, 3, 6, 7 (use_more_bits), Q4_K elsewhere; Q4_K_S gives attn_v Q5_K below 4.
plan_types() { # FILE TARGET KIND... : "layer:type" of blk.N.KIND.weight from --dry-run --json
  local f=$1 t=$2 k=$3; shift 3
  "$gk" quantize --dry-run --json "$@" "$f" "$tmp/never.gguf" "$t" | python3 -c '
import json, sys
d = json.load(sys.stdin)
kind = sys.argv[1]
r = [t["name"].split(".")[1] + ":" + t["to"] for t in d["tensors"] if t["name"].endswith("." + kind + ".weight")]
print(" ".join(r))' "$k"
}
want="0:Q6_K 1:Q4_K 2:Q4_K 3:Q6_K 4:Q4_K 5:Q4_K 6:Q6_K 7:Q6_K"
got=$(plan_types "$deep" Q4_K_M attn_v)
if [[ $got == "$want" ]]; then pass "Q4_K_M attn_v by layer (8 layers)"; else fail "Q4_K_M attn_v: $got (want $want)"; fi
got=$(plan_types "$deep" Q4_K_M ffn_down)
if [[ $got == "$want" ]]; then pass "Q4_K_M ffn_down by layer"; else fail "Q4_K_M ffn_down: $got (want $want)"; fi
want="0:Q5_K 1:Q5_K 2:Q5_K 3:Q5_K 4:Q4_K 5:Q4_K 6:Q4_K 7:Q4_K"
got=$(plan_types "$deep" Q4_K_S attn_v)
if [[ $got == "$want" ]]; then pass "Q4_K_S attn_v by layer"; else fail "Q4_K_S attn_v: $got (want $want)"; fi
want="0:Q5_K 1:Q5_K 2:Q4_K 3:Q4_K 4:Q4_K 5:Q4_K 6:Q4_K 7:Q4_K"
got=$(plan_types "$deep" Q3_K_M attn_v)
if [[ $got == "$want" ]]; then pass "Q3_K_M attn_v by layer"; else fail "Q3_K_M attn_v: $got (want $want)"; fi
expect_absent "$tmp/never.gguf" "--dry-run writes nothing"

# Thread-count invariance.
for n in 1 2 7; do
  expect_status 0 "Q4_K_M with $n threads" "$gk" quantize --threads "$n" "$deep" "$tmp/t$n.gguf" Q4_K_M
done
if cmp -s "$tmp/t1.gguf" "$tmp/t2.gguf" && cmp -s "$tmp/t1.gguf" "$tmp/t7.gguf"; then pass "1, 2 and 7 threads give identical files"
else fail "output depends on the thread count"; fi
expect_status 0 "THREADS as the last argument" "$gk" quantize "$deep" "$tmp/t3.gguf" Q4_K_M 3
if cmp -s "$tmp/t1.gguf" "$tmp/t3.gguf"; then pass "positional THREADS same result"; else fail "positional THREADS differs"; fi
expect_status 2 "--threads and THREADS disagree" "$gk" quantize --threads 2 "$deep" "$tmp/t4.gguf" Q4_K_M 3
expect_absent "$tmp/t4.gguf" "no output after the usage error"
rm -f "$tmp"/t?.gguf

# --- refusals: clear message, exit status, no file left -----------------------
out=$tmp/r.gguf
expect_status 2 "unknown TYPE" "$gk" quantize "$src" "$out" Q9_Z
expect_err 'unknown type' "message names the unknown type"
expect_absent "$out" "no output for an unknown TYPE"
expect_status 1 "missing input" "$gk" quantize "$tmp/nope.gguf" "$out" Q4_K_M
expect_err 'nope.gguf' "message names the missing input"
expect_absent "$out" "no output for a missing input"
expect_status 1 "unwritable output (no such folder)" "$gk" quantize "$src" "$tmp/no/such/dir/o.gguf" Q4_K_M
expect_absent "$tmp/no" "nothing created for an unwritable output"
if ls -A "$tmp" | grep -q 'ggufkit-'; then fail "temporary files left: $(ls -A "$tmp")"; else pass "no temporary files left"; fi
echo keep >"$out"
expect_status 1 "existing output without --force" "$gk" quantize "$src" "$out" Q4_K_M
expect_err 'exist' "message says the output exists"
if [[ $(cat "$out") == keep ]]; then pass "existing output untouched"; else fail "existing output modified"; fi
if ls -A "$tmp" | grep -q 'ggufkit-'; then fail "temporary file left after a refusal"; else pass "no temporary file after the refusal"; fi
expect_status 0 "--force replaces it" "$gk" quantize --force "$src" "$out" Q4_K_M
if [[ $(head -c 4 "$out") == GGUF ]]; then pass "--force wrote a GGUF file"; else fail "--force did not write"; fi
expect_status 1 "output = input refused" "$gk" quantize --force "$out" "$out" Q8_0
expect_status 2 "missing arguments" "$gk" quantize "$src"
expect_status 2 "unknown option" "$gk" quantize --frobnicate "$src" "$out" Q4_K_M
expect_status 1 "IQ2_XXS without an importance matrix" "$gk" quantize --dry-run "$src" "$tmp/iq.gguf" IQ2_XXS
expect_err 'importance matrix' "refusal explains the importance matrix"
rm -f "$out"

# --- options -------------------------------------------------------------------
o=$tmp/o.gguf
expect_status 0 "--output-tensor-type Q8_0" "$gk" quantize --output-tensor-type Q8_0 "$src" "$o" Q4_K_M
[[ $(tensor_type "$o" output.weight) == Q8_0 ]] && pass "output.weight is Q8_0" || fail "output.weight not Q8_0"
[[ $(tensor_type "$o" token_embd.weight) == Q4_K ]] && pass "token_embd unaffected" || fail "token_embd changed"
rm -f "$o"
expect_status 0 "--token-embedding-type Q8_0" "$gk" quantize --token-embedding-type q8_0 "$src" "$o" Q4_K_M
[[ $(tensor_type "$o" token_embd.weight) == Q8_0 ]] && pass "token_embd.weight is Q8_0" || fail "token_embd not Q8_0"
rm -f "$o"
expect_status 2 "--output-tensor-type with a bad type" "$gk" quantize --output-tensor-type Q9 "$src" "$o" Q4_K_M
expect_status 0 "--leave-output-tensor" "$gk" quantize --leave-output-tensor "$src" "$o" Q4_K_M
[[ $(tensor_type "$o" output.weight) == F32 ]] && pass "output.weight left F32" || fail "output.weight converted"
rm -f "$o"
expect_status 2 "--leave-output-tensor with --output-tensor-type" \
  "$gk" quantize --leave-output-tensor --output-tensor-type Q8_0 "$src" "$o" Q4_K_M
expect_err 'conflict' "conflict named"
expect_absent "$o" "no output after a conflict"
expect_status 0 "--pure Q4_K_M" "$gk" quantize --pure "$deep" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.0.attn_v.weight) == Q4_K && $(tensor_type "$o" output.weight) == Q4_K ]] \
  && pass "--pure: attn_v and output get the base type" || fail "--pure still mixed types"
[[ $(kv "$o" general.file_type) == "UINT32 15" ]] && pass "general.file_type 15" || fail "file_type $(kv "$o" general.file_type)"
rm -f "$o"
# --allow-requantize
"$gk" quantize "$src" "$tmp/q8.gguf" Q8_0 >/dev/null 2>&1
expect_status 1 "requantizing refused" "$gk" quantize "$tmp/q8.gguf" "$o" Q4_0
expect_err 'allow-requantize' "refusal points to --allow-requantize"
expect_absent "$o" "no output after the refusal"
expect_status 0 "--allow-requantize" "$gk" quantize --allow-requantize "$tmp/q8.gguf" "$o" Q4_0
[[ $(tensor_type "$o" blk.0.attn_q.weight) == Q4_0 ]] && pass "requantized to Q4_0" || fail "requantize result wrong"
rm -f "$o"
# --tensor-type
expect_status 0 "--tensor-type" "$gk" quantize --tensor-type 'attn_(q|k)=q8_0' --tensor-type 'blk\.1\.attn_q=Q5_K' "$deep" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.0.attn_q.weight) == Q8_0 && $(tensor_type "$o" blk.3.attn_k.weight) == Q8_0 ]] \
  && pass "--tensor-type pattern applied" || fail "--tensor-type pattern not applied"
[[ $(tensor_type "$o" blk.1.attn_q.weight) == Q5_K ]] && pass "last matching --tensor-type wins" || fail "last match did not win"
[[ $(tensor_type "$o" blk.1.attn_output.weight) == Q4_K ]] && pass "others untouched" || fail "non-matching tensor changed"
rm -f "$o"
expect_status 2 "--tensor-type bad regex" "$gk" quantize --tensor-type 'attn_(q=Q8_0' "$src" "$o" Q4_K_M
expect_status 2 "--tensor-type bad type" "$gk" quantize --tensor-type 'attn_q=Q9' "$src" "$o" Q4_K_M
expect_status 2 "--tensor-type without =" "$gk" quantize --tensor-type 'attn_q' "$src" "$o" Q4_K_M
expect_status 2 "--tensor-type with --pure" "$gk" quantize --pure --tensor-type 'attn_q=Q8_0' "$src" "$o" Q4_K_M
expect_status 2 "--tensor-type with F16" "$gk" quantize --tensor-type 'attn_q=Q8_0' "$src" "$o" F16
expect_status 2 "COPY with --output-tensor-type" "$gk" quantize --output-tensor-type Q8_0 "$src" "$o" COPY
expect_absent "$o" "no output after option errors"
# --override-kv
expect_status 0 "--override-kv" "$gk" quantize --override-kv 'general.name=str:renamed' \
  --override-kv 'llama.context_length=int:4096' --override-kv 'x.flag=bool:true' --override-kv 'x.f=float:0.5' "$src" "$o" Q8_0
[[ $(kv "$o" general.name) == "STRING renamed" ]] && pass "str override" || fail "str override: $(kv "$o" general.name)"
[[ $(kv "$o" llama.context_length) == "UINT32 4096" ]] && pass "int override keeps u32" || fail "int override: $(kv "$o" llama.context_length)"
[[ $(kv "$o" x.flag) == "BOOL True" || $(kv "$o" x.flag) == "BOOL true" ]] && pass "bool override added" || fail "bool override: $(kv "$o" x.flag)"
[[ $(kv "$o" x.f) == "FLOAT32 0.5" ]] && pass "float override added as f32" || fail "float override: $(kv "$o" x.f)"
[[ $(last_key "$o") == x.f ]] && pass "overridden keys end up last, in order" || fail "override order: last is $(last_key "$o")"
rm -f "$o"
expect_status 2 "--override-kv bad kind" "$gk" quantize --override-kv 'a=double:1' "$src" "$o" Q8_0
expect_status 2 "--override-kv bad bool" "$gk" quantize --override-kv 'a=bool:maybe' "$src" "$o" Q8_0
expect_status 1 "--override-kv out of range for a u32 key" "$gk" quantize --override-kv 'llama.block_count=int:-2' "$src" "$o" Q8_0
expect_absent "$o" "no output after a bad override"
# --keep-split
"$gk" split --help >/dev/null 2>&1 && have_split=true || have_split=false
if $have_golden; then set_in=$syn/syn1-split-t5-00001-of-00005.gguf; n=5
elif $have_split && "$gk" split --split-max-tensors 8 "$src" "$tmp/s" >/dev/null 2>&1; then
  set_in=$tmp/s-00001-of-00003.gguf; n=3
else set_in=""; echo "SKIPPED: --keep-split (no shard set available)"; fi
if [[ -n $set_in ]]; then
  expect_status 0 "--keep-split" "$gk" quantize --keep-split "$set_in" "$tmp/ks" Q4_K_M
  ok=true
  for ((k = 1; k <= n; k++)); do
    f=$(printf '%s/ks-%05d-of-%05d.gguf' "$tmp" "$k" "$n")
    [[ -f $f ]] || { ok=false; continue; }
    [[ $(kv "$f" split.no) == "UINT16 $((k - 1))" && $(kv "$f" split.count) == "UINT16 $n" ]] || ok=false
  done
  $ok && pass "--keep-split wrote $n shards with split.no / split.count" || fail "--keep-split shards wrong"
  f2=$(printf '%s/ks-%05d-of-%05d.gguf' "$tmp" 2 "$n")
  [[ $(kv "$f2" general.architecture) == missing ]] && pass "later shards carry only split keys" || fail "later shard has model metadata"
  expect_status 1 "--keep-split refuses existing shards" "$gk" quantize --keep-split "$set_in" "$tmp/ks" Q4_K_M
  expect_err 'exist' "keep-split refusal says exists"
  rm -f "$tmp"/ks-*.gguf
  touch "$(printf '%s/ks-%05d-of-%05d.gguf' "$tmp" "$n" "$n")"
  expect_status 1 "--keep-split: one existing shard stops all" "$gk" quantize --keep-split "$set_in" "$tmp/ks" Q4_K_M
  expect_absent "$(printf '%s/ks-%05d-of-%05d.gguf' "$tmp" 1 "$n")" "no shard written when one exists"
  rm -f "$tmp"/ks-*.gguf
  # OUT ending in .gguf: llama-quantize drops it (ks-00001-of-0000N.gguf, not ks.gguf-00001-...)
  expect_status 0 "--keep-split OUT.gguf" "$gk" quantize --keep-split "$set_in" "$tmp/ks.gguf" Q4_K_M
  all=true
  for ((k = 1; k <= n; k++)); do [[ -f $(printf '%s/ks-%05d-of-%05d.gguf' "$tmp" "$k" "$n") ]] || all=false; done
  $all && pass "--keep-split OUT.gguf names shards OUT-0000k-of-0000N.gguf" || fail "--keep-split OUT.gguf: shards not named as llama-quantize names them: $(cd "$tmp" && ls ks*)"
  [[ -z $(ls "$tmp" | grep -F 'ks.gguf-') ]] && pass "--keep-split OUT.gguf: no OUT.gguf-0000k names" || fail "--keep-split kept .gguf in the prefix"
  rm -f "$tmp"/ks-*.gguf "$tmp"/ks.gguf-*
fi
# --dry-run text and --json
expect_status 0 "--dry-run" "$gk" quantize --dry-run "$src" "$o" Q4_K_M
expect_absent "$o" "--dry-run wrote nothing"
if grep -q 'blk.1.attn_v.weight.*F32 *-> Q6_K' "$tmp/out" && grep -q 'bits per weight' "$tmp/out"; then
  pass "--dry-run lists types before/after and bits per weight"; else fail "--dry-run output incomplete"; fi
expect_status 0 "--dry-run --json" "$gk" quantize --dry-run --json "$src" "$o" Q4_K_M
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["tensors"])==21 and d["totals"]["bytes_out"]>0 and "fallback" in d["tensors"][0]' "$tmp/out"; then
  pass "--json plan parses, 21 tensors, totals"; else fail "--json plan malformed"; fi
expect_status 2 "--json without --dry-run" "$gk" quantize --json "$src" "$o" Q4_K_M
expect_absent "$o" "no output for --json alone"
# --no-fallback: syn1-shaped rows fit, so it changes nothing here.
expect_status 0 "--no-fallback with fitting rows" "$gk" quantize --no-fallback --dry-run "$src" "$o" Q4_K_M
# Rows of 320 (whole 32-blocks, not 256-blocks) and of 100 (neither): fallbacks.
python3 - "$tmp/odd.gguf" <<'PY'
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
expect_status 0 "--dry-run with rows that are not whole blocks" "$gk" quantize --dry-run "$tmp/odd.gguf" "$o" Q4_K_M
if grep -q 'attn_q.weight.*-> Q5_0.*FALLBACK' "$tmp/out" && grep -q 'attn_k.weight.*-> F16.*FALLBACK' "$tmp/out" \
   && grep -q '2 fallbacks' "$tmp/out"; then pass "--dry-run shows each fallback (Q4_K -> Q5_0, -> F16)"
else fail "--dry-run fallbacks not shown"; sed 's/^/     | /' "$tmp/out"; fi
expect_status 1 "--no-fallback refuses rows that do not fit" "$gk" quantize --no-fallback "$tmp/odd.gguf" "$o" Q4_K_M
expect_err 'no-fallback' "refusal names --no-fallback"
expect_absent "$o" "no output after the --no-fallback refusal"
expect_status 0 "fallbacks written" "$gk" quantize "$tmp/odd.gguf" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.0.attn_q.weight) == Q5_0 && $(tensor_type "$o" blk.0.attn_k.weight) == F16 ]] \
  && pass "fallback types in the file" || fail "fallback types wrong in the file"
expect_err 'using Q5_0' "fallback warned on stderr"
rm -f "$o"
# OUT left out: ggml-model-TYPE.gguf beside IN.
cp "$src" "$tmp/d.gguf"
expect_status 0 "OUT left out" "$gk" quantize "$tmp/d.gguf" Q8_0
[[ -f $tmp/ggml-model-Q8_0.gguf ]] && pass "default output name ggml-model-Q8_0.gguf" || fail "default output missing"
# --list-types
expect_status 0 "--list-types" "$gk" quantize --list-types
grep -q '^Q4_K_M' "$tmp/out" && pass "--list-types lists Q4_K_M" || fail "--list-types lacks Q4_K_M"

printf '%d passed, %d failed\n' $((checks - fails)) "$fails"
[[ $fails -eq 0 ]]
