#!/usr/bin/env bash
# test_synth.sh - `ggufkit synth`: determinism, seeds, option errors, refusing to
# overwrite. Usage: test_synth.sh PATH/TO/ggufkit
set -uo pipefail

gk=${1:?usage: test_synth.sh GGUFKIT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
    fail "$what: exit $rc, wanted $want"; sed 's/^/     | /' "$tmp/err"; fi
}
# u32 at byte offset $2 of file $1, little-endian.
u32_at() { od -An -t u4 -j "$2" -N 4 --endian=little "$1" | tr -d ' '; }
has() { "$gk" "$1" --help >/dev/null 2>&1; }

a=$tmp/a.gguf b=$tmp/b.gguf c=$tmp/c.gguf

# --- writes a GGUF v3 file -------------------------------------------------
expect_status 0 "synth tiny seed 7" "$gk" synth --preset tiny --seed 7 "$a"
if [[ -f $a && $(head -c 4 "$a") == GGUF && $(u32_at "$a" 4) == 3 ]]; then
  pass "output starts with GGUF, version 3"
else
  fail "output is not a GGUF v3 file"
fi
size=$(stat -c %s "$a" 2>/dev/null || echo 0)
# tiny F32: 21 tensors, ~6.3 MB of data
if [[ $size -gt 6000000 && $size -lt 7000000 ]]; then pass "tiny F32 size plausible ($size bytes)"
else fail "tiny F32 size $size not in 6..7 MB"; fi
if (( size % 32 == 0 )); then pass "file ends on the alignment"; else fail "size $size not a multiple of 32"; fi
if ls "$tmp" | grep -qv '^a.gguf$\|^out$\|^err$'; then fail "temporary files left behind: $(ls "$tmp")"
else pass "no temporary files left behind"; fi

# --- determinism ---------------------------------------------------------
expect_status 0 "synth tiny seed 7 again" "$gk" synth --preset tiny --seed 7 "$b"
if cmp -s "$a" "$b"; then pass "same seed gives identical files"; else fail "same seed, files differ"; fi
expect_status 0 "synth tiny seed 8" "$gk" synth --preset tiny --seed=8 "$c"
if [[ -f $c ]] && ! cmp -s "$a" "$c" && [[ $(stat -c %s "$c") == "$size" ]]; then
  pass "different seed gives different data, same layout"
else
  fail "different seed did not change the data (or changed the size)"
fi

# --- F16, layers, alignment ----------------------------------------------
expect_status 0 "synth --type F16 --layers 1" "$gk" synth --type F16 --layers 1 "$tmp/h.gguf"
h=$(stat -c %s "$tmp/h.gguf" 2>/dev/null || echo 0)
if [[ $h -gt 1000000 && $h -lt 2500000 ]]; then pass "F16 1-layer size plausible ($h bytes)"
else fail "F16 1-layer size $h implausible"; fi
expect_status 0 "synth --alignment 4096" "$gk" synth --alignment 4096 "$tmp/al.gguf"
al=$(stat -c %s "$tmp/al.gguf" 2>/dev/null || echo 1)
if (( al % 4096 == 0 )); then pass "alignment 4096: size is a multiple of 4096"
else fail "alignment 4096: size $al"; fi
if grep -q general.alignment "$tmp/al.gguf"; then pass "general.alignment written"
else fail "general.alignment missing"; fi

# --- other subcommands read it -------------------------------------------
if has info; then
  expect_status 0 "ggufkit info reads the synthetic model" "$gk" info "$a"
  if grep -q llama "$tmp/out"; then pass "info names the llama architecture"
  else fail "info output does not mention llama"; fi
else
  printf 'skip info (not in this build)\n'
fi
if has verify; then
  expect_status 0 "ggufkit verify accepts the synthetic model" "$gk" verify "$a"
  expect_status 0 "ggufkit verify accepts the F16 model" "$gk" verify "$tmp/h.gguf"
  expect_status 0 "ggufkit verify accepts the 4096-aligned model" "$gk" verify "$tmp/al.gguf"
fi
if has repack; then
  expect_status 0 "ggufkit repack" "$gk" repack "$a" "$tmp/r.gguf"
  if cmp -s "$a" "$tmp/r.gguf"; then pass "repack of synth output is byte-identical"
  else fail "repack changed the synth output"; fi
  expect_status 0 "ggufkit repack (alignment 4096)" "$gk" repack "$tmp/al.gguf" "$tmp/ral.gguf"
  if cmp -s "$tmp/al.gguf" "$tmp/ral.gguf"; then pass "repack of 4096-aligned synth output is byte-identical"
  else fail "repack changed the 4096-aligned synth output"; fi
fi

# --- usage errors exit 2 --------------------------------------------------
expect_status 2 "no output path" "$gk" synth
expect_status 2 "unknown option" "$gk" synth --bogus "$tmp/x.gguf"
expect_status 2 "unknown preset" "$gk" synth --preset huge "$tmp/x.gguf"
expect_status 2 "bad type" "$gk" synth --type Q4_0 "$tmp/x.gguf"
expect_status 2 "bad seed" "$gk" synth --seed -1 "$tmp/x.gguf"
expect_status 2 "missing option value" "$gk" synth "$tmp/x.gguf" --seed
expect_status 2 "zero layers" "$gk" synth --layers 0 "$tmp/x.gguf"
expect_status 2 "alignment not a power of two" "$gk" synth --alignment 48 "$tmp/x.gguf"
expect_status 2 "two outputs" "$gk" synth "$tmp/x.gguf" "$tmp/y.gguf"
if [[ ! -e $tmp/x.gguf && ! -e $tmp/y.gguf ]]; then pass "usage errors wrote nothing"
else fail "a usage error created an output file"; fi
expect_status 0 "--help" "$gk" synth --help
if grep -q -- '--preset' "$tmp/out"; then pass "--help describes --preset"; else fail "--help lacks --preset"; fi

# --- existing output refused, untouched; --force replaces -------------------
sum_before=$(sha256sum "$c" | cut -d' ' -f1)
expect_status 1 "existing output refused" "$gk" synth --seed 7 "$c"
if grep -qi 'exist' "$tmp/err"; then pass "refusal says the file exists"; else fail "refusal message unclear"; fi
if [[ $(sha256sum "$c" | cut -d' ' -f1) == "$sum_before" ]]; then pass "existing file untouched"
else fail "existing file was modified"; fi
expect_status 0 "--force replaces it" "$gk" synth --seed 7 --force "$c"
if cmp -s "$a" "$c"; then pass "--force wrote the new contents"; else fail "--force output differs from seed 7"; fi

printf '%d checks, %d failed\n' "$checks" "$fails"
[[ $fails -eq 0 ]]
