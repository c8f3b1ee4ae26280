#!/usr/bin/env bash
# test_imatrix.sh - `ggufkit quantize --imatrix`: every file of golden/imatrix/
# reproduced byte for byte from syn1-f32.gguf and syn1.imatrix, or syn1.imatrix.gguf
# for the syn1-gimat-* files (run from a copy of that folder with the relative
# name, which the metadata records);
# thread-count invariance; --include-weights / --exclude-weights; the refusals
# (no matrix for a very low-bit target, tensors the matrix lacks, a matrix for
# another model, a truncated matrix), also with --dry-run.
# Usage: test_imatrix.sh PATH/TO/ggufkit   (golden data: $GGUFKIT_GOLDEN)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"   # BIN is absolute: the tests run in a copy of golden/imatrix

# expect_err PATTERN DESCRIPTION : the last command's stderr matches PATTERN.
expect_err() {
  if grep -qE -- "$1" "$TMP/err"; then ok "$2"; else bad "$2: stderr lacks '$1'"; sed 's/^/     | /' "$TMP/err" | head -3; fi
}
# kv FILE KEY : "TYPE VALUE" of a metadata key, "missing" when absent.
kv() {
  "$BIN" dump --json "$1" | python3 -c '
import json, sys
m = json.load(sys.stdin)["metadata"]
k = sys.argv[1]
if k not in m: print("missing")
else:
    v = m[k]
    print(v.get("type", "?"), v.get("value", v)) if isinstance(v, dict) else print(v)' "$2"
}

if [[ -z $GOLDEN || ! -f $GOLDEN/imatrix/syn1.imatrix || ! -f $GOLDEN/syn1/syn1-f32.gguf ]]; then
  echo "SKIPPED: golden parity (no golden data at ${GOLDEN:-(GGUFKIT_GOLDEN unset)}): imatrix CLI tests need golden/imatrix and golden/syn1"
  exit 0
fi

# A private copy of the golden folder: the tool runs there with the relative name.
work=$TMP/imatrix
cp -r "$GOLDEN/imatrix" "$work" && chmod -R u+w "$work"
cp "$GOLDEN/syn1/syn1-f32.gguf" "$work/src-f32.gguf"
cd "$work" || exit 1
mkdir out

# --- every golden file reproduced byte for byte ----------------------------
n_golden=0
for f in syn1-imat-*.gguf; do
  p=${f#syn1-imat-}; p=${p%.gguf}
  if [[ $p == pure-* ]]; then t=${p#pure-}; extra=(--pure --token-embedding-type Q8_0); else t=$p; extra=(); fi
  if "$BIN" quantize --list-types | grep -qE "^tensor types without kernels:.* $t( |\(|$)"; then
    echo "SKIPPED (type $t has no kernel): $f"; continue; fi
  n_golden=$((n_golden + 1))
  expect_exit 0 "quantize ${extra[*]} --imatrix syn1.imatrix $t" \
    "$BIN" quantize "${extra[@]}" --imatrix syn1.imatrix src-f32.gguf "out/$f" "$t"
  if cmp -s "out/$f" "$f"; then ok "$f reproduced byte for byte"; else bad "$f differs from the reference"; fi
done
if (( n_golden >= 18 )); then ok "$n_golden golden imatrix files compared"; else bad "only $n_golden golden files found"; fi

# the same from the GGUF-format matrix today's llama-imatrix writes
n_gguf=0
for f in syn1-gimat-*.gguf; do
  [[ -e $f ]] || continue
  t=${f#syn1-gimat-}; t=${t%.gguf}
  n_gguf=$((n_gguf + 1))
  expect_exit 0 "quantize --imatrix syn1.imatrix.gguf $t" \
    "$BIN" quantize --imatrix syn1.imatrix.gguf src-f32.gguf "out/$f" "$t"
  if cmp -s "out/$f" "$f"; then ok "$f reproduced byte for byte"; else bad "$f differs from the reference"; fi
done
if (( n_gguf >= 3 )); then ok "$n_gguf golden GGUF-matrix files compared"; else bad "only $n_gguf GGUF-matrix golden files found"; fi

# --- metadata as llama-quantize writes it ----------------------------------
f=out/syn1-imat-IQ2_XXS.gguf
[[ $(kv "$f" quantize.imatrix.file) == *syn1.imatrix* ]] && ok "quantize.imatrix.file is the path as given" || bad "quantize.imatrix.file: $(kv "$f" quantize.imatrix.file)"
[[ $(kv "$f" quantize.imatrix.dataset) == *text.txt* ]] && ok "quantize.imatrix.dataset recorded" || bad "quantize.imatrix.dataset: $(kv "$f" quantize.imatrix.dataset)"
# the counts are UINT32, as today's release writes them (INT32 before mid 2025)
[[ $(kv "$f" quantize.imatrix.entries_count) == "UINT32 15" ]] && ok "entries_count UINT32 15" || bad "entries_count: $(kv "$f" quantize.imatrix.entries_count)"
[[ $(kv "$f" quantize.imatrix.chunks_count) == "UINT32 8" ]] && ok "chunks_count UINT32 8" || bad "chunks_count: $(kv "$f" quantize.imatrix.chunks_count)"

# --- threads do not change the bytes ---------------------------------------
expect_exit 0 "IQ2_XXS with 1 thread" "$BIN" quantize --imatrix syn1.imatrix src-f32.gguf out/t1.gguf IQ2_XXS 1
expect_exit 0 "IQ2_XXS with 2 threads" "$BIN" quantize --imatrix syn1.imatrix src-f32.gguf out/t2.gguf IQ2_XXS 2
cmp -s out/t1.gguf syn1-imat-IQ2_XXS.gguf && cmp -s out/t2.gguf syn1-imat-IQ2_XXS.gguf \
  && ok "1 and 2 threads give the reference bytes" || bad "thread count changed the output"

# --- include / exclude -----------------------------------------------------
expect_exit 0 "Q4_K_M --include-weights blk.0." \
  "$BIN" quantize --imatrix syn1.imatrix --include-weights blk.0. src-f32.gguf out/inc.gguf Q4_K_M
[[ $(kv out/inc.gguf quantize.imatrix.entries_count) == *7* ]] && ok "--include-weights keeps 7 entries" \
  || bad "--include-weights entries_count: $(kv out/inc.gguf quantize.imatrix.entries_count)"
expect_exit 0 "Q4_K_M --exclude-weights ffn (twice)" \
  "$BIN" quantize --imatrix syn1.imatrix --exclude-weights ffn --exclude-weights output src-f32.gguf out/exc.gguf Q4_K_M
[[ $(kv out/exc.gguf quantize.imatrix.entries_count) == *6* ]] && ok "--exclude-weights leaves 6 entries" \
  || bad "--exclude-weights entries_count: $(kv out/exc.gguf quantize.imatrix.entries_count)"
cmp -s out/exc.gguf syn1-imat-Q4_K_M.gguf && bad "excluding entries did not change the output" \
  || ok "excluding entries changes the quantized bytes"
expect_exit 2 "--include-weights with --exclude-weights refused" \
  "$BIN" quantize --imatrix syn1.imatrix --include-weights a --exclude-weights b src-f32.gguf out/ie.gguf Q4_0
expect_absent "no output after the usage error" out/ie.gguf
expect_exit 0 "filters that leave nothing: quantized without a matrix" \
  "$BIN" quantize --imatrix syn1.imatrix --include-weights no-such-tensor src-f32.gguf out/none.gguf Q4_0
[[ $(kv out/none.gguf quantize.imatrix.file) == missing ]] && ok "no quantize.imatrix.* keys then" || bad "metadata written for an empty matrix"

# --- refusals (also with --dry-run), nothing written -----------------------
for t in IQ2_XXS IQ2_XS IQ2_S IQ1_S IQ1_M Q2_K_S; do
  expect_exit 1 "$t without --imatrix refused" "$BIN" quantize src-f32.gguf out/r.gguf "$t"
  expect_err "needs an importance matrix" "$t: the refusal says why"
done
# --dry-run (as the September 2026 release) only warns that the real run would need a matrix
expect_exit 0 "--dry-run IQ2_XS without --imatrix" "$BIN" quantize --dry-run src-f32.gguf out/r.gguf IQ2_XS
grep -q "will require an importance matrix" "$TMP/out" && ok "--dry-run IQ2_XS warns" || bad "--dry-run IQ2_XS: no warning"
expect_exit 1 "IQ2_XXS with tensors excluded from the matrix refused" \
  "$BIN" quantize --imatrix syn1.imatrix --exclude-weights attn_q src-f32.gguf out/r.gguf IQ2_XXS
expect_err "blk\.0\.attn_q\.weight.*blk\.1\.attn_q\.weight" "the refusal names the tensors lacking weights"
expect_exit 0 "same with --dry-run: a warning" \
  "$BIN" quantize --dry-run --imatrix syn1.imatrix --exclude-weights attn_q src-f32.gguf out/r.gguf IQ2_XXS
grep -q "WARNING: .*blk\.0\.attn_q\.weight" "$TMP/out" && ok "--dry-run names them too" || bad "--dry-run does not name them"
expect_exit 1 "--token-embedding-type IQ1_S (no weights for token_embd) refused" \
  "$BIN" quantize --imatrix syn1.imatrix --token-embedding-type IQ1_S src-f32.gguf out/r.gguf Q4_K_M
expect_err "token_embd\.weight" "the refusal names token_embd.weight"
expect_exit 0 "IQ1_M exempts token_embd (no weights for it) as llama-quantize does" \
  "$BIN" quantize --dry-run --pure --imatrix syn1.imatrix src-f32.gguf out/r.gguf IQ1_M
expect_absent "no output left by the refusals" out/r.gguf

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
expect_exit 1 "a matrix naming tensors the model lacks is refused" \
  "$BIN" quantize --imatrix other.imatrix src-f32.gguf out/r.gguf Q4_K_M
expect_err "names no tensor" "the refusal names the foreign entry"
expect_exit 1 "a truncated matrix is refused" "$BIN" quantize --dry-run --imatrix short.imatrix src-f32.gguf out/r.gguf Q4_K_M
expect_err "ends inside" "the refusal says where the file ends"
expect_exit 1 "a missing matrix file is refused" "$BIN" quantize --imatrix nope.imatrix src-f32.gguf out/r.gguf Q4_K_M
expect_absent "no output left by a bad matrix" out/r.gguf

finish
