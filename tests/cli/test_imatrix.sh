#!/usr/bin/env bash
# test_imatrix.sh - `ggufkit quantize --imatrix`: every file of golden/imatrix/
# reproduced byte for byte from syn1-f32.gguf and syn1.imatrix (run from a copy of
# that folder with the relative name `syn1.imatrix`, which the metadata records);
# thread-count invariance; --include-weights / --exclude-weights; the refusals
# (no matrix for a very low-bit target, tensors the matrix lacks, a matrix for
# another model, a truncated matrix), also with --dry-run.
# Usage: test_imatrix.sh PATH/TO/ggufkit   (golden data: $GGUFKIT_GOLDEN)
set -uo pipefail

gk=${1:?usage: test_imatrix.sh GGUFKIT}
gk=$(cd "$(dirname "$gk")" && pwd)/$(basename "$gk")
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
  if grep -qE -- "$1" "$tmp/err"; then pass "$2"; else fail "$2: stderr lacks '$1'"; sed 's/^/     | /' "$tmp/err" | head -3; fi
}
expect_absent() { if [[ -e $1 ]]; then fail "$2: $1 was left behind"; else pass "$2"; fi; }
# kv FILE KEY : "TYPE VALUE" of a metadata key, "missing" when absent.
kv() {
  "$gk" dump --json "$1" | python3 -c '
import json, sys
m = json.load(sys.stdin)["metadata"]
k = sys.argv[1]
if k not in m: print("missing")
else:
    v = m[k]
    print(v.get("type", "?"), v.get("value", v)) if isinstance(v, dict) else print(v)' "$2"
}

golden=${GGUFKIT_GOLDEN:-}
if [[ -z $golden || ! -f $golden/imatrix/syn1.imatrix || ! -f $golden/syn1/syn1-f32.gguf ]]; then
  echo "SKIPPED: golden parity (no golden data at ${golden:-(GGUFKIT_GOLDEN unset)}): imatrix CLI tests need golden/imatrix and golden/syn1"
  exit 0
fi

# A private copy of the golden folder: the tool runs there with the relative name.
work=$tmp/imatrix
cp -r "$golden/imatrix" "$work" && chmod -R u+w "$work"
cp "$golden/syn1/syn1-f32.gguf" "$work/src-f32.gguf"
cd "$work" || exit 1
mkdir out

# --- every golden file reproduced byte for byte ----------------------------
n_golden=0
for f in syn1-imat-*.gguf; do
  p=${f#syn1-imat-}; p=${p%.gguf}
  if [[ $p == pure-* ]]; then t=${p#pure-}; extra=(--pure --token-embedding-type Q8_0); else t=$p; extra=(); fi
  n_golden=$((n_golden + 1))
  expect_status 0 "quantize ${extra[*]} --imatrix syn1.imatrix $t" \
    "$gk" quantize "${extra[@]}" --imatrix syn1.imatrix src-f32.gguf "out/$f" "$t"
  if cmp -s "out/$f" "$f"; then pass "$f reproduced byte for byte"; else fail "$f differs from the reference"; fi
done
if (( n_golden >= 18 )); then pass "$n_golden golden imatrix files compared"; else fail "only $n_golden golden files found"; fi

# --- metadata as llama-quantize writes it ----------------------------------
f=out/syn1-imat-IQ2_XXS.gguf
[[ $(kv "$f" quantize.imatrix.file) == *syn1.imatrix* ]] && pass "quantize.imatrix.file is the path as given" || fail "quantize.imatrix.file: $(kv "$f" quantize.imatrix.file)"
[[ $(kv "$f" quantize.imatrix.dataset) == *text.txt* ]] && pass "quantize.imatrix.dataset recorded" || fail "quantize.imatrix.dataset: $(kv "$f" quantize.imatrix.dataset)"
[[ $(kv "$f" quantize.imatrix.entries_count) == *15* ]] && pass "entries_count 15" || fail "entries_count: $(kv "$f" quantize.imatrix.entries_count)"
[[ $(kv "$f" quantize.imatrix.chunks_count) == *8* ]] && pass "chunks_count 8" || fail "chunks_count: $(kv "$f" quantize.imatrix.chunks_count)"

# --- threads do not change the bytes ---------------------------------------
expect_status 0 "IQ2_XXS with 1 thread" "$gk" quantize --imatrix syn1.imatrix src-f32.gguf out/t1.gguf IQ2_XXS 1
expect_status 0 "IQ2_XXS with 2 threads" "$gk" quantize --imatrix syn1.imatrix src-f32.gguf out/t2.gguf IQ2_XXS 2
cmp -s out/t1.gguf syn1-imat-IQ2_XXS.gguf && cmp -s out/t2.gguf syn1-imat-IQ2_XXS.gguf \
  && pass "1 and 2 threads give the reference bytes" || fail "thread count changed the output"

# --- include / exclude -----------------------------------------------------
expect_status 0 "Q4_K_M --include-weights blk.0." \
  "$gk" quantize --imatrix syn1.imatrix --include-weights blk.0. src-f32.gguf out/inc.gguf Q4_K_M
[[ $(kv out/inc.gguf quantize.imatrix.entries_count) == *7* ]] && pass "--include-weights keeps 7 entries" \
  || fail "--include-weights entries_count: $(kv out/inc.gguf quantize.imatrix.entries_count)"
expect_status 0 "Q4_K_M --exclude-weights ffn (twice)" \
  "$gk" quantize --imatrix syn1.imatrix --exclude-weights ffn --exclude-weights output src-f32.gguf out/exc.gguf Q4_K_M
[[ $(kv out/exc.gguf quantize.imatrix.entries_count) == *6* ]] && pass "--exclude-weights leaves 6 entries" \
  || fail "--exclude-weights entries_count: $(kv out/exc.gguf quantize.imatrix.entries_count)"
cmp -s out/exc.gguf syn1-imat-Q4_K_M.gguf && fail "excluding entries did not change the output" \
  || pass "excluding entries changes the quantized bytes"
expect_status 2 "--include-weights with --exclude-weights refused" \
  "$gk" quantize --imatrix syn1.imatrix --include-weights a --exclude-weights b src-f32.gguf out/ie.gguf Q4_0
expect_absent out/ie.gguf "no output after the usage error"
expect_status 0 "filters that leave nothing: quantized without a matrix" \
  "$gk" quantize --imatrix syn1.imatrix --include-weights no-such-tensor src-f32.gguf out/none.gguf Q4_0
[[ $(kv out/none.gguf quantize.imatrix.file) == missing ]] && pass "no quantize.imatrix.* keys then" || fail "metadata written for an empty matrix"

# --- refusals (also with --dry-run), nothing written -----------------------
for t in IQ2_XXS IQ2_XS IQ2_S IQ1_S IQ1_M Q2_K_S; do
  expect_status 1 "$t without --imatrix refused" "$gk" quantize src-f32.gguf out/r.gguf "$t"
  expect_err "needs an importance matrix" "$t: the refusal says why"
done
expect_status 1 "--dry-run IQ2_XS without --imatrix refused" "$gk" quantize --dry-run src-f32.gguf out/r.gguf IQ2_XS
expect_status 1 "IQ2_XXS with tensors excluded from the matrix refused" \
  "$gk" quantize --imatrix syn1.imatrix --exclude-weights attn_q src-f32.gguf out/r.gguf IQ2_XXS
expect_err "blk\.0\.attn_q\.weight.*blk\.1\.attn_q\.weight" "the refusal names the tensors lacking weights"
expect_status 1 "same with --dry-run" \
  "$gk" quantize --dry-run --imatrix syn1.imatrix --exclude-weights attn_q src-f32.gguf out/r.gguf IQ2_XXS
expect_err "blk\.0\.attn_q\.weight" "--dry-run names them too"
expect_status 1 "--token-embedding-type IQ1_S (no weights for token_embd) refused" \
  "$gk" quantize --imatrix syn1.imatrix --token-embedding-type IQ1_S src-f32.gguf out/r.gguf Q4_K_M
expect_err "token_embd\.weight" "the refusal names token_embd.weight"
expect_status 0 "IQ1_M exempts token_embd (no weights for it) as llama-quantize does" \
  "$gk" quantize --dry-run --pure --imatrix syn1.imatrix src-f32.gguf out/r.gguf IQ1_M
expect_absent out/r.gguf "no output left by the refusals"

# A matrix for another model: entries renamed / resized.
python3 - syn1.imatrix other.imatrix short.imatrix <<'EOF'
import struct, sys
src, other, short = sys.argv[1:4]
b = open(src, 'rb').read()
# rename the first entry (same length) -> a name the model lacks
n = struct.unpack_from('<i', b, 0)[0]
l = struct.unpack_from('<i', b, 4)[0]
name = b[8:8 + l]
bad = b'x' * l
open(other, 'wb').write(b[:8] + bad + b[8 + l:])
open(short, 'wb').write(b[:len(b) // 2])
EOF
expect_status 1 "a matrix naming tensors the model lacks is refused" \
  "$gk" quantize --imatrix other.imatrix src-f32.gguf out/r.gguf Q4_K_M
expect_err "names no tensor" "the refusal names the foreign entry"
expect_status 1 "a truncated matrix is refused" "$gk" quantize --dry-run --imatrix short.imatrix src-f32.gguf out/r.gguf Q4_K_M
expect_err "ends inside" "the refusal says where the file ends"
expect_status 1 "a missing matrix file is refused" "$gk" quantize --imatrix nope.imatrix src-f32.gguf out/r.gguf Q4_K_M
expect_absent out/r.gguf "no output left by a bad matrix"

echo "$checks checks, $fails failures"
(( fails == 0 ))
