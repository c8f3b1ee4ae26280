#!/usr/bin/env bash
# test_quantize.sh - `ggufkit quantize` as a drop-in for llama-quantize (its
# September 2026 release): golden parity of the presets (per-tensor type mixing)
# on syn1, on rows that are not whole blocks (odd/) and on a MoE model (moe/), of
# --pure types, of the requantize chains and of the options (options/COMMANDS,
# byte for byte; --dry-run against dry-run-Q4_K_M.txt); what the release refused
# (REFERENCE-FAILED); thread-count invariance; every option; refusals (bad type,
# missing input, unwritable or existing output) leave no file behind. A golden
# file needing a type this build has no kernel for is SKIPPED, loudly, by name.
# Usage: test_quantize.sh PATH/TO/ggufkit   (golden data: $GGUFKIT_GOLDEN)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

# expect_err PATTERN DESCRIPTION : the last command's stderr matches PATTERN.
expect_err() {
  if grep -qiE -- "$1" "$TMP/err"; then ok "$2"; else bad "$2: stderr lacks '$1'"; sed 's/^/     | /' "$TMP/err" | head -3; fi
}
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
has_kernels() {
  "$BIN" quantize --list-types >"$TMP/types" 2>&1
  if grep -q "^tensor types without kernels:.* $1\( \|(\|$\)" "$TMP/types"; then return 1; fi
  ! awk -v t="$1" '$1 == t' "$TMP/types" | grep -q 'no kernels'
}
# kernel_gap QUANTIZE-ARGS... : the first type the command's plan (--dry-run --json)
# needs a kernel for that this build lacks, or nothing.
kernel_gap() {
  "$BIN" quantize --dry-run --json "$@" 2>/dev/null | python3 -c '
import json, sys
try: d = json.load(sys.stdin)
except Exception: sys.exit(0)
gap = [t["to"] for t in d["tensors"] if not t["kernel"]]
print(gap[0] if gap else "")'
}
# golden_case FOLDER GOLDEN-FILE QUANTIZE-ARGS-WITH-OUT... : runs `quantize ARGS` in
# FOLDER (the word OUT stands for the output) and compares the result byte for byte.
# A case whose plan needs a type this build has no kernel for is SKIPPED; the
# plan is asked for (a dry run and a python) only when the output is not the
# golden file, since an identical output needed no missing kernel.
golden_case() {
  local dir=$1 want=$2; shift 2
  local out=$TMP/golden-case.gguf args=() a gap
  for a in "$@"; do [[ $a == OUT ]] && args+=("$out") || args+=("$a"); done
  rm -f "$out"
  if (cd "$dir" && "$BIN" quantize "${args[@]}" >"$TMP/out" 2>"$TMP/err") && cmp -s "$out" "$want"; then
    ok "${want##*/} byte-identical to llama-quantize"
    rm -f "$out"
    return
  fi
  local why
  if [[ -f $out ]]; then why="differs from golden: $(type_diff "$out" "$want")"
  else why="quantize failed: $(tail -1 "$TMP/err")"; fi
  rm -f "$out"
  gap=$(cd "$dir" && kernel_gap "${args[@]}")
  if [[ -n $gap ]]; then echo "SKIPPED (type $gap has no kernel): ${want##*/}"
  else bad "${want##*/} $why"; fi
}

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
    golden_case "$syn" "$g" syn1-f32.gguf OUT "$p"
  done
  # rows that are not whole blocks: the release's fallbacks
  for g in "$GOLDEN"/odd/odd-preset-*.gguf; do
    p=${g##*/odd-preset-}; p=${p%.gguf}
    golden_case "$GOLDEN/odd" "$g" odd-f16.gguf OUT "$p"
  done
  # a mixture-of-experts model: presets, MXFP4_MOE, --pure MXFP4_MOE
  for g in "$GOLDEN"/moe/moe-preset-*.gguf; do
    p=${g##*/moe-preset-}; p=${p%.gguf}
    golden_case "$GOLDEN/moe" "$g" moe-f16.gguf OUT "$p"
  done
  for g in "$GOLDEN"/moe/moe-pure-*.gguf; do
    p=${g##*/moe-pure-}; p=${p%.gguf}
    golden_case "$GOLDEN/moe" "$g" --pure moe-f16.gguf OUT "$p"
  done
  # the options, as options/COMMANDS gives them (run in options/, syn1 beside it)
  while read -r want rest; do
    [[ -z $want ]] && continue
    read -r -a words <<<"$rest"
    for i in "${!words[@]}"; do [[ ${words[$i]} == syn1-f32.gguf ]] && words[$i]=../syn1/syn1-f32.gguf; done
    golden_case "$GOLDEN/options" "$GOLDEN/options/$want" "${words[@]}"
  done <"$GOLDEN/options/COMMANDS"
  # odd/, moe/ and options/ again at the lower kernel levels (syn1's tensors are
  # compared at every level by check_kernels_golden; the best level ran above)
  for level in scalar avx2; do
    if [[ $(GGUFKIT_KERNELS=$level "$BIN" --version) != *"kernels: $level"* ]]; then
      echo "SKIPPED: odd/moe/options parity at $level (this processor has no $level)"; continue
    fi
    export GGUFKIT_KERNELS=$level
    for g in "$GOLDEN"/odd/odd-preset-*.gguf; do
      p=${g##*/odd-preset-}; p=${p%.gguf}; golden_case "$GOLDEN/odd" "$g" odd-f16.gguf OUT "$p"
    done
    for g in "$GOLDEN"/moe/moe-preset-*.gguf; do
      p=${g##*/moe-preset-}; p=${p%.gguf}; golden_case "$GOLDEN/moe" "$g" moe-f16.gguf OUT "$p"
    done
    while read -r want rest; do
      [[ -z $want ]] && continue
      read -r -a words <<<"$rest"
      for i in "${!words[@]}"; do [[ ${words[$i]} == syn1-f32.gguf ]] && words[$i]=../syn1/syn1-f32.gguf; done
      golden_case "$GOLDEN/options" "$GOLDEN/options/$want" "${words[@]}"
    done <"$GOLDEN/options/COMMANDS"
    unset GGUFKIT_KERNELS
  done
  n_opt=$(grep -c . "$GOLDEN/options/COMMANDS")
  [[ $n_opt -ge 8 ]] && ok "options/COMMANDS: $n_opt command lines run" || bad "options/COMMANDS has $n_opt lines"
  # what the release refused (REFERENCE-FAILED), refused here, the tensor named
  expect_exit 1 "odd/ Q1_0 refused (Q1_0 has no fallback)" "$BIN" quantize "$GOLDEN/odd/odd-f16.gguf" "$TMP/rf.gguf" Q1_0
  expect_err 'extra\.odd_rows\.weight.*no fallback' "refusal names the tensor and the missing fallback"
  expect_absent "no output after the Q1_0 refusal" "$TMP/rf.gguf"
  for p in IQ3_XXS IQ3_XS; do
    expect_exit 1 "syn1 $p without an importance matrix refused" "$BIN" quantize "$syn/syn1-f32.gguf" "$TMP/rf.gguf" "$p"
    expect_err 'blk\.0\.attn_k\.weight.*importance matrix' "$p refusal names the tensor"
    expect_absent "no output after the $p refusal" "$TMP/rf.gguf"
  done
  # --dry-run: the release's plan (dry-run-Q4_K_M.txt): per-tensor types and totals
  if (cd "$syn" && "$BIN" quantize --dry-run --json syn1-f32.gguf Q4_K_M >"$TMP/plan.json" 2>"$TMP/err") &&
     (cd "$syn" && "$BIN" quantize --dry-run syn1-f32.gguf Q4_K_M >"$TMP/plan.txt" 2>>"$TMP/err"); then
    if python3 - "$GOLDEN/options/dry-run-Q4_K_M.txt" "$TMP/plan.json" "$TMP/plan.txt" <<'PY'
import json, re, sys
ref = open(sys.argv[1]).read()
want = {}
for m in re.finditer(r"\] (\S+) +- \[.*type = +(\w+), size = .*?(?:\((\w+)\))?$", ref, re.M):
    want[m.group(1)] = (m.group(3) or m.group(2)).upper()
got = {t["name"]: t["to"].upper() for t in json.load(open(sys.argv[2]))["tensors"]}
assert want and got == want, (got, want)
model = re.search(r"model size += +([\d.]+) MiB \(([\d.]+) BPW\)", ref).groups()
quant = re.search(r"quant size += +([\d.]+) MiB \(([\d.]+) BPW\)", ref).groups()
text = open(sys.argv[3]).read()
line = "tensor data: %s MiB -> %s MiB (%s -> %s bits per weight)" % (model[0], quant[0], model[1], quant[1])
assert line in text, (line, text)
assert "importance matrix: not needed" in text
PY
    then ok "--dry-run Q4_K_M: per-tensor types and totals as dry-run-Q4_K_M.txt"
    else bad "--dry-run Q4_K_M differs from dry-run-Q4_K_M.txt"; fi
  else bad "--dry-run on syn1 failed: $(tail -1 "$TMP/err")"; fi
  expect_absent "--dry-run without OUT writes no ggml-model file" "$syn/ggml-model-Q4_K_M.gguf"
  for g in "$syn"/syn1-*.gguf; do
    t=${g##*/syn1-}; t=${t%.gguf}
    [[ $t == *.* || $t == preset-* || $t == split-* || $t == f32 || $t == f16 ]] && continue
    if [[ $t == MXFP4 || $t == NVFP4 ]]; then   # no llama-quantize name: made through --tensor-type
      golden_case "$syn" "$g" --pure --tensor-type "weight=${t,,}" syn1-f32.gguf OUT Q8_0
    else
      golden_case "$syn" "$g" --pure syn1-f32.gguf OUT "$t"
    fi
  done
  for g in "$syn"/syn1-*.to-*.gguf; do
    base=${g##*/syn1-}; a=${base%%.to-*}; b=${base##*.to-}; b=${b%.gguf}
    if ! has_kernels "$b"; then echo "SKIPPED (type $b has no kernel): chain $a -> $b"; continue; fi
    if [[ $a != f16 ]] && ! has_kernels "$a"; then echo "SKIPPED (type $a has no kernel): chain $a -> $b"; continue; fi
    out=$TMP/chain.gguf
    if [[ $a != f16 ]]; then   # F16 is not a quantized type: no permission needed
      expect_exit 1 "chain $a -> $b refused without --allow-requantize" \
        "$BIN" quantize --pure "$syn/syn1-$a.gguf" "$out" "$b"
      expect_err 'requantiz' "refusal names requantizing"
      expect_absent "no output after the requantize refusal" "$out"
    fi
    if "$BIN" quantize --pure --allow-requantize "$syn/syn1-$a.gguf" "$out" "$b" >"$TMP/out" 2>"$TMP/err"; then
      if cmp -s "$out" "$g"; then ok "chain $a -> $b byte-identical"
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
# THREADS as the release reads it: 0 (or less) = all cores, large counts accepted
expect_exit 0 "THREADS 0 (all cores)" "$BIN" quantize "$deep" "$TMP/t5.gguf" Q4_K_M 0
expect_exit 0 "THREADS 1000" "$BIN" quantize "$deep" "$TMP/t6.gguf" Q4_K_M 1000
expect_exit 0 "THREADS -1" "$BIN" quantize "$deep" "$TMP/t8.gguf" Q4_K_M -1
if cmp -s "$TMP/t1.gguf" "$TMP/t5.gguf" && cmp -s "$TMP/t1.gguf" "$TMP/t6.gguf" && cmp -s "$TMP/t1.gguf" "$TMP/t8.gguf"; then
  ok "THREADS 0, 1000 and -1: same bytes"; else bad "THREADS 0 / 1000 / -1 changed the output"; fi
expect_exit 0 "--max-buffer-size 1 (accepted, same bytes)" "$BIN" quantize --max-buffer-size 1 "$deep" "$TMP/tb.gguf" Q4_K_M
cmp -s "$TMP/t1.gguf" "$TMP/tb.gguf" && ok "--max-buffer-size changes nothing" || bad "--max-buffer-size changed the output"
expect_exit 2 "--max-buffer-size 0 refused" "$BIN" quantize --max-buffer-size 0 "$deep" "$TMP/t9.gguf" Q4_K_M
expect_exit 2 "THREADS not a number" "$BIN" quantize "$deep" "$TMP/t9.gguf" Q4_K_M four
expect_absent "no output after a bad THREADS" "$TMP/t9.gguf"
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
# Without a matrix the release refuses tensor by tensor (naming the first);
# --dry-run only warns that the real run would need one.
expect_exit 1 "IQ2_XXS without an importance matrix" "$BIN" quantize "$src" "$TMP/iq.gguf" IQ2_XXS
expect_err 'blk\.0\..*importance matrix' "refusal names the tensor and explains the importance matrix"
expect_absent "no output after the IQ2_XXS refusal" "$TMP/iq.gguf"
expect_exit 0 "--dry-run IQ2_XXS without a matrix" "$BIN" quantize --dry-run "$src" "$TMP/iq.gguf" IQ2_XXS
grep -q 'WARNING: quantizing for real will require an importance matrix' "$TMP/out" \
  && ok "--dry-run warns that a matrix would be needed" || bad "--dry-run IQ2_XXS: no importance-matrix warning"
grep -q 'NEEDS AN IMPORTANCE MATRIX' "$TMP/out" && ok "--dry-run marks the tensors" || bad "--dry-run marks no tensor"
expect_absent "--dry-run IQ2_XXS wrote nothing" "$TMP/iq.gguf"
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
[[ $(tensor_type "$o" blk.1.attn_q.weight) == Q8_0 ]] && ok "first matching --tensor-type wins" || bad "first match did not win"
[[ $(tensor_type "$o" blk.1.attn_output.weight) == Q4_K ]] && ok "others untouched" || bad "non-matching tensor changed"
rm -f "$o"
expect_exit 2 "--tensor-type bad regex" "$BIN" quantize --tensor-type 'attn_(q=Q8_0' "$src" "$o" Q4_K_M
expect_exit 2 "--tensor-type bad type" "$BIN" quantize --tensor-type 'attn_q=Q9' "$src" "$o" Q4_K_M
expect_exit 2 "--tensor-type without =" "$BIN" quantize --tensor-type 'attn_q' "$src" "$o" Q4_K_M
expect_exit 0 "--tensor-type with --pure" "$BIN" quantize --pure --tensor-type 'attn_q=Q8_0' "$src" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.0.attn_q.weight) == Q8_0 && $(tensor_type "$o" blk.0.attn_v.weight) == Q4_K ]] \
  && ok "--tensor-type applies under --pure" || bad "--tensor-type under --pure"
rm -f "$o"
# a tensor a pattern sets does not advance the mixing counters
expect_exit 0 "--tensor-type on layer 0's attn_v" "$BIN" quantize --tensor-type 'blk\.0\.attn_v=q8_0' "$deep" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.1.attn_v.weight) == Q6_K ]] && ok "layer 1's attn_v counts as the first (Q6_K)" \
  || bad "counters advanced by a --tensor-type tensor: blk.1.attn_v is $(tensor_type "$o" blk.1.attn_v.weight)"
rm -f "$o"
# --tensor-type-file: words separated by spaces or newlines, first match wins
printf 'attn_q=q8_0  ffn_up=q5_k\nattn=q6_k\n' >"$TMP/types.txt"
expect_exit 0 "--tensor-type-file" "$BIN" quantize --tensor-type-file "$TMP/types.txt" "$src" "$o" Q4_K_M
[[ $(tensor_type "$o" blk.0.attn_q.weight) == Q8_0 && $(tensor_type "$o" blk.0.ffn_up.weight) == Q5_K && \
   $(tensor_type "$o" blk.0.attn_k.weight) == Q6_K ]] && ok "--tensor-type-file rules applied in order" \
  || bad "--tensor-type-file rules not applied"
rm -f "$o"
expect_exit 2 "--tensor-type-file missing" "$BIN" quantize --tensor-type-file "$TMP/none.txt" "$src" "$o" Q4_K_M
expect_err 'none.txt' "missing rules file named"
printf 'attn_q\n' >"$TMP/bad-types.txt"
expect_exit 2 "--tensor-type-file with a word without =" "$BIN" quantize --tensor-type-file "$TMP/bad-types.txt" "$src" "$o" Q4_K_M
# --prune-layers
expect_exit 0 "--prune-layers 3,1,3" "$BIN" quantize --prune-layers 3,1,3 "$deep" "$o" Q8_0
[[ $(kv "$o" llama.block_count) == "UINT32 6" ]] && ok "--prune-layers: block count 6" || bad "block count $(kv "$o" llama.block_count)"
"$BIN" dump --json "$o" | python3 -c '
import json, sys
t = json.load(sys.stdin)["tensors"]
layers = sorted({int(n.split(".")[1]) for n in t if n.startswith("blk.")})
sys.exit(0 if layers == list(range(6)) else 1)' && ok "--prune-layers: layers renumbered 0..5" || bad "--prune-layers: layers not renumbered"
rm -f "$o"
expect_exit 2 "--prune-layers with a bad id" "$BIN" quantize --prune-layers 1,x "$deep" "$o" Q8_0
expect_err "invalid layer id 'x'" "bad layer id named"
expect_exit 2 "--prune-layers with a negative id" "$BIN" quantize --prune-layers -1 "$deep" "$o" Q8_0
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
# every int override is UINT32 of its magnitude, every float FLOAT32, as the release writes them
expect_exit 0 "--override-kv negative int" "$BIN" quantize --override-kv 'llama.block_count=int:-2' \
  --override-kv 'llama.rope.freq_base=float:20000' --override-kv 'x.i=int:-7' "$src" "$o" Q8_0
[[ $(kv "$o" llama.block_count) == "UINT32 2" ]] && ok "negative int override: its magnitude" || bad "negative int override: $(kv "$o" llama.block_count)"
[[ $(kv "$o" x.i) == "UINT32 7" ]] && ok "new int key: UINT32" || bad "new int key: $(kv "$o" x.i)"
[[ $(kv "$o" llama.rope.freq_base) == "FLOAT32 20000.0" ]] && ok "float override: FLOAT32" || bad "float override: $(kv "$o" llama.rope.freq_base)"
rm -f "$o"
expect_exit 1 "--override-kv of a layout key is checked" "$BIN" quantize --override-kv 'general.alignment=int:48' "$src" "$o" Q8_0
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
# a file type number names the first row of llama-quantize's list with it (12: the alias Q3_K)
expect_exit 0 "OUT left out, TYPE 12" "$BIN" quantize "$TMP/d.gguf" 12
[[ -f $TMP/ggml-model-Q3_K.gguf ]] && ok "TYPE 12 writes ggml-model-Q3_K.gguf" || bad "TYPE 12: $(cd "$TMP" && ls ggml-model-*)"
[[ $(kv "$TMP/ggml-model-Q3_K.gguf" general.file_type) == "UINT32 12" ]] && ok "TYPE 12 is file type 12" || bad "TYPE 12 file type"
# --list-types
expect_exit 0 "--list-types" "$BIN" quantize --list-types
grep -q '^Q4_K_M' "$TMP/out" && ok "--list-types lists Q4_K_M" || bad "--list-types lacks Q4_K_M"
for p in Q1_0 Q2_0 MXFP4_MOE; do
  grep -q "^$p " "$TMP/out" && ok "--list-types lists $p" || bad "--list-types lacks $p"
done
grep -q '^MXFP4_MOE 38  MXFP4' "$TMP/out" && ok "MXFP4_MOE is file type 38, base MXFP4" || bad "MXFP4_MOE row wrong"
grep -q '^Q1_0 *40 ' "$TMP/out" && grep -q '^Q2_0 *41 ' "$TMP/out" && ok "Q1_0 = 40, Q2_0 = 41" || bad "Q1_0/Q2_0 numbers wrong"

finish
