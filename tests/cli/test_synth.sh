#!/usr/bin/env bash
# test_synth.sh - `ggufkit synth`: determinism, seeds, option errors, refusing to
# overwrite. Usage: test_synth.sh PATH/TO/ggufkit
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

# u32 at byte offset $2 of file $1, little-endian.
u32_at() { od -An -t u4 -j "$2" -N 4 --endian=little "$1" | tr -d ' '; }
has() { "$BIN" "$1" --help >/dev/null 2>&1; }

a=$TMP/a.gguf b=$TMP/b.gguf c=$TMP/c.gguf

# --- writes a GGUF v3 file -------------------------------------------------
expect_exit 0 "synth tiny seed 7" "$BIN" synth --preset tiny --seed 7 "$a"
if [[ -f $a && $(head -c 4 "$a") == GGUF && $(u32_at "$a" 4) == 3 ]]; then
  ok "output starts with GGUF, version 3"
else
  bad "output is not a GGUF v3 file"
fi
size=$(stat -c %s "$a" 2>/dev/null || echo 0)
# tiny F32: 21 tensors, ~6.3 MB of data
if [[ $size -gt 6000000 && $size -lt 7000000 ]]; then ok "tiny F32 size plausible ($size bytes)"
else bad "tiny F32 size $size not in 6..7 MB"; fi
if (( size % 32 == 0 )); then ok "file ends on the alignment"; else bad "size $size not a multiple of 32"; fi
if ls "$TMP" | grep -qv '^a.gguf$\|^out$\|^err$'; then bad "temporary files left behind: $(ls "$TMP")"
else ok "no temporary files left behind"; fi

# --- determinism ---------------------------------------------------------
expect_exit 0 "synth tiny seed 7 again" "$BIN" synth --preset tiny --seed 7 "$b"
if cmp -s "$a" "$b"; then ok "same seed gives identical files"; else bad "same seed, files differ"; fi
expect_exit 0 "synth tiny seed 8" "$BIN" synth --preset tiny --seed=8 "$c"
if [[ -f $c ]] && ! cmp -s "$a" "$c" && [[ $(stat -c %s "$c") == "$size" ]]; then
  ok "different seed gives different data, same layout"
else
  bad "different seed did not change the data (or changed the size)"
fi

# --- F16, layers, alignment ----------------------------------------------
expect_exit 0 "synth --type F16 --layers 1" "$BIN" synth --type F16 --layers 1 "$TMP/h.gguf"
h=$(stat -c %s "$TMP/h.gguf" 2>/dev/null || echo 0)
if [[ $h -gt 1000000 && $h -lt 2500000 ]]; then ok "F16 1-layer size plausible ($h bytes)"
else bad "F16 1-layer size $h implausible"; fi
expect_exit 0 "synth --alignment 4096" "$BIN" synth --alignment 4096 "$TMP/al.gguf"
al=$(stat -c %s "$TMP/al.gguf" 2>/dev/null || echo 1)
if (( al % 4096 == 0 )); then ok "alignment 4096: size is a multiple of 4096"
else bad "alignment 4096: size $al"; fi
if grep -q general.alignment "$TMP/al.gguf"; then ok "general.alignment written"
else bad "general.alignment missing"; fi

# --- other subcommands read it -------------------------------------------
if has info; then
  expect_exit 0 "ggufkit info reads the synthetic model" "$BIN" info "$a"
  if grep -q llama "$TMP/out"; then ok "info names the llama architecture"
  else bad "info output does not mention llama"; fi
else
  printf 'skip info (not in this build)\n'
fi
if has verify; then
  expect_exit 0 "ggufkit verify accepts the synthetic model" "$BIN" verify "$a"
  expect_exit 0 "ggufkit verify accepts the F16 model" "$BIN" verify "$TMP/h.gguf"
  expect_exit 0 "ggufkit verify accepts the 4096-aligned model" "$BIN" verify "$TMP/al.gguf"
fi
if has repack; then
  expect_exit 0 "ggufkit repack" "$BIN" repack "$a" "$TMP/r.gguf"
  if cmp -s "$a" "$TMP/r.gguf"; then ok "repack of synth output is byte-identical"
  else bad "repack changed the synth output"; fi
  expect_exit 0 "ggufkit repack (alignment 4096)" "$BIN" repack "$TMP/al.gguf" "$TMP/ral.gguf"
  if cmp -s "$TMP/al.gguf" "$TMP/ral.gguf"; then ok "repack of 4096-aligned synth output is byte-identical"
  else bad "repack changed the 4096-aligned synth output"; fi
fi

# --- usage errors exit 2 --------------------------------------------------
expect_exit 2 "no output path" "$BIN" synth
expect_exit 2 "unknown option" "$BIN" synth --bogus "$TMP/x.gguf"
expect_exit 2 "unknown preset" "$BIN" synth --preset huge "$TMP/x.gguf"
expect_exit 2 "bad type" "$BIN" synth --type Q4_0 "$TMP/x.gguf"
expect_exit 2 "bad seed" "$BIN" synth --seed -1 "$TMP/x.gguf"
expect_exit 2 "missing option value" "$BIN" synth "$TMP/x.gguf" --seed
expect_exit 2 "zero layers" "$BIN" synth --layers 0 "$TMP/x.gguf"
expect_exit 2 "alignment not a power of two" "$BIN" synth --alignment 48 "$TMP/x.gguf"
expect_exit 2 "two outputs" "$BIN" synth "$TMP/x.gguf" "$TMP/y.gguf"
if [[ ! -e $TMP/x.gguf && ! -e $TMP/y.gguf ]]; then ok "usage errors wrote nothing"
else bad "a usage error created an output file"; fi
expect_exit 0 "--help" "$BIN" synth --help
if grep -q -- '--preset' "$TMP/out"; then ok "--help describes --preset"; else bad "--help lacks --preset"; fi

# --- existing output refused, untouched; --force replaces -------------------
sum_before=$(sha256sum "$c" | cut -d' ' -f1)
expect_exit 1 "existing output refused" "$BIN" synth --seed 7 "$c"
if grep -qi 'exist' "$TMP/err"; then ok "refusal says the file exists"; else bad "refusal message unclear"; fi
if [[ $(sha256sum "$c" | cut -d' ' -f1) == "$sum_before" ]]; then ok "existing file untouched"
else bad "existing file was modified"; fi
expect_exit 0 "--force replaces it" "$BIN" synth --seed 7 --force "$c"
if cmp -s "$a" "$c"; then ok "--force wrote the new contents"; else bad "--force output differs from seed 7"; fi

finish
