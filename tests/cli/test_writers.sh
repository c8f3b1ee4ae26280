#!/usr/bin/env bash
# test_writers.sh - rules every writing subcommand shares (quantize, repack, split,
# merge, endian, edit, synth), checked on each of them:
# - every output is laid out as ggml's reader takes it: the last tensor padded to
#   the alignment whatever the alignment and whatever the input's end looked like
#   (tests/cli/ggml_layout.py checks that independently of ggufkit), and `verify`
#   accepts it;
# - layout keys with a wrong type or value are refused before anything is written
#   (--override-kv, edit even with --force), so no command publishes a file its own
#   verify rejects;
# - a destination that is a symbolic link: the file it names is written, the link
#   stays a link; a link to nothing is refused;
# - split writes v3 shards whatever the input's version (as llama-gguf-split);
#   split then merge gives the file back byte for byte when it ended padded, and
#   otherwise the same bytes followed by the zero padding of its last tensor.
#
# usage: test_writers.sh PATH/TO/ggufkit
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"
LAYOUT="python3 $HERE/ggml_layout.py"

# loads NAME FILE... : ggml's reader takes each FILE's data section, and verify accepts it.
loads() {
    local name=$1
    shift
    local f
    for f in "$@"; do
        if [ ! -f "$f" ]; then
            bad "$name: ${f##*/} missing"
            continue
        fi
        local why
        if why=$($LAYOUT check "$f"); then ok; else bad "$name: not as ggml reads it: $why"; fi
        if "$BIN" verify "$f" >"$TMP/verify" 2>&1; then ok; else bad "$name: verify refuses ${f##*/}: $(head -2 "$TMP/verify")"; fi
    done
}

version_of() { od -An -tu4 -j4 -N4 "$1" | tr -d ' '; }

# ---------------------------------------------------------------------------
# Fixtures: T (synth, alignment 32, tensors ending 32-aligned), U (the last tensor
# 12 bytes, the file ending right after it: no end padding), E (the last tensor
# 32 bytes: ends 32-aligned, so padded and unpadded at once), V2 (T as GGUF v2).
T=$TMP/t.gguf
U=$TMP/u.gguf
E=$TMP/e.gguf
V2=$TMP/v2.gguf
"$BIN" synth --preset tiny --layers 1 "$T" >/dev/null 2>&1 || bad "synth fixture"
$LAYOUT unpadded "$U" || bad "unpadded fixture"
$LAYOUT unpadded "$E" 8 || bad "32-aligned end fixture"
cp "$T" "$V2" && printf '\002' | dd of="$V2" bs=1 seek=4 conv=notrunc status=none
[ "$(version_of "$V2")" = 2 ] && ok || bad "v2 fixture"
loads "fixtures T and E" "$T" "$E"
if "$BIN" verify "$U" >/dev/null 2>&1 && ! $LAYOUT check "$U" >/dev/null; then ok; else bad "fixture U: valid but without end padding"; fi

# ---------------------------------------------------------------------------
# Every writer pads the last tensor, whatever the alignment and the input's end.
for a in 32 64 4096 65536; do
    expect_exit 0 "repack --alignment $a of T" "$BIN" repack --alignment "$a" "$T" "$TMP/r$a.gguf"
    expect_exit 0 "repack --alignment $a of U" "$BIN" repack --alignment "$a" "$U" "$TMP/ru$a.gguf"
    expect_exit 0 "repack --alignment $a of E" "$BIN" repack --alignment "$a" "$E" "$TMP/re$a.gguf"
    loads "repack --alignment $a" "$TMP/r$a.gguf" "$TMP/ru$a.gguf" "$TMP/re$a.gguf"
done
expect_exit 0 "quantize T Q4_0" "$BIN" quantize "$T" "$TMP/q.gguf" Q4_0
expect_exit 0 "quantize 64-aligned Q4_0" "$BIN" quantize "$TMP/r64.gguf" "$TMP/q64.gguf" Q4_0
expect_exit 0 "quantize U COPY" "$BIN" quantize "$U" "$TMP/qu.gguf" COPY
loads "quantize" "$TMP/q.gguf" "$TMP/q64.gguf" "$TMP/qu.gguf"
expect_exit 0 "split U" "$BIN" split --split-max-tensors 1 "$U" "$TMP/su"
expect_exit 0 "split 65536-aligned T" "$BIN" split --split-max-tensors 4 "$TMP/r65536.gguf" "$TMP/s64k"
loads "split" "$TMP"/su-*.gguf "$TMP"/s64k-*.gguf
expect_exit 0 "merge U's shards" "$BIN" merge "$TMP/su-00001-of-00002.gguf" "$TMP/mu.gguf"
expect_exit 0 "merge 65536-aligned shards" "$BIN" merge "$TMP/s64k-00001-of-00003.gguf" "$TMP/m64k.gguf"
loads "merge" "$TMP/mu.gguf" "$TMP/m64k.gguf"
expect_exit 0 "endian U" "$BIN" endian --to big "$U" "$TMP/ube.gguf"
expect_exit 0 "endian of E repacked to 4096" "$BIN" endian --to big "$TMP/re4096.gguf" "$TMP/ebe.gguf"
expect_exit 0 "endian 65536-aligned T" "$BIN" endian --to big "$TMP/r65536.gguf" "$TMP/tbe.gguf"
loads "endian" "$TMP/ube.gguf" "$TMP/tbe.gguf" "$TMP/ebe.gguf"
expect_exit 0 "edit -o U" "$BIN" edit --set general.name=u -o "$TMP/eu.gguf" "$U"
expect_exit 0 "edit -o E, alignment 64" "$BIN" edit --force --set general.alignment:u32=64 -o "$TMP/ee.gguf" "$E"
cp "$U" "$TMP/eu2.gguf"
expect_exit 0 "edit --in-place=auto U (rewrite)" "$BIN" edit --in-place=auto --set "general.description=$(printf 'd%.0s' {1..200})" "$TMP/eu2.gguf"
expect_grep "edit --in-place=auto U rewrote" "$TMP/out" "rewritten"
loads "edit" "$TMP/eu.gguf" "$TMP/eu2.gguf" "$TMP/ee.gguf"
expect_exit 0 "synth --alignment 65536" "$BIN" synth --preset tiny --layers 1 --alignment 65536 "$TMP/syn64k.gguf"
loads "synth" "$TMP/syn64k.gguf"

# ---------------------------------------------------------------------------
# Layout keys: a wrong type or value is refused, nothing is written (an int
# override is UINT32 as the release writes it, so int:64 would be a valid alignment).
for kv in general.alignment=float:64 general.alignment=str:x general.alignment=int:48 split.count=int:3 \
    split.no=str:x; do
    expect_exit 1 "quantize --override-kv $kv" "$BIN" quantize --override-kv "$kv" "$T" "$TMP/bad.gguf" Q8_0
    expect_absent "quantize --override-kv $kv" "$TMP/bad.gguf"
done
expect_exit 1 "quantize --keep-split --override-kv split.count=int:9" \
    "$BIN" quantize --keep-split --override-kv split.count=int:9 "$TMP/su-00001-of-00002.gguf" "$TMP/ksbad" COPY
expect_absent "keep-split with a bad split.count" "$TMP/ksbad-00001-of-00002.gguf"
for set in general.alignment:i32=64 general.alignment:u32=48 general.alignment:str=x split.count:str=x split.tensors.count:u64=3; do
    expect_exit 1 "edit --force --set $set" "$BIN" edit --force --set "$set" -o "$TMP/bad.gguf" "$T"
    expect_absent "edit --force --set $set" "$TMP/bad.gguf"
done
# A valid override of a layout key still works, and the result is laid out for it.
expect_exit 0 "edit --force general.alignment=u32 64" "$BIN" edit --force --set general.alignment:u32=64 -o "$TMP/a64.gguf" "$T"
loads "edit --force general.alignment 64" "$TMP/a64.gguf"

# ---------------------------------------------------------------------------
# A destination that is a symbolic link: the named file is written, the link stays.
for cmd in repack quantize edit endian; do
    target=$TMP/target-$cmd.gguf
    link=$TMP/link-$cmd.gguf
    cp "$U" "$target"
    ln -s "${target##*/}" "$link"
    case $cmd in
    repack) expect_exit 0 "repack onto a link" "$BIN" repack --force --alignment 64 "$T" "$link" ;;
    quantize) expect_exit 0 "quantize onto a link" "$BIN" quantize --force "$T" "$link" Q8_0 ;;
    edit) expect_exit 0 "edit -o onto a link" "$BIN" edit --force --set general.name=via-link -o "$link" "$T" ;;
    endian) expect_exit 0 "endian onto a link" "$BIN" endian --force --to big "$T" "$link" ;;
    esac
    [ -L "$link" ] && [ "$(readlink "$link")" = "${target##*/}" ] && ok || bad "$cmd onto a link: the link was replaced"
    [ -f "$target" ] && ! cmp -s "$target" "$U" && ok || bad "$cmd onto a link: the file it names was not written"
    loads "$cmd onto a link" "$target"
    ls -a "$TMP" | grep -q '^\..*ggufkit' && bad "$cmd onto a link: temporary file left" || ok
done
ln -s nothing-there.gguf "$TMP/dangling.gguf"
expect_exit 1 "repack onto a link to nothing" "$BIN" repack --force "$T" "$TMP/dangling.gguf"
expect_grep "link to nothing named" "$TMP/err" "symbolic link to nothing"
[ -L "$TMP/dangling.gguf" ] && [ ! -e "$TMP/nothing-there.gguf" ] && ok || bad "link to nothing: something was written"

# ---------------------------------------------------------------------------
# split writes v3 (as llama-gguf-split), whatever the input's version; merge too.
expect_exit 0 "split a v2 file" "$BIN" split --split-max-tensors 4 "$V2" "$TMP/v2s"
for f in "$TMP"/v2s-*.gguf; do
    [ "$(version_of "$f")" = 3 ] && ok || bad "split of v2: ${f##*/} is v$(version_of "$f")"
done
expect_exit 0 "merge the v2 file's shards" "$BIN" merge "$TMP/v2s-00001-of-00003.gguf" "$TMP/v2m.gguf"
[ "$(version_of "$TMP/v2m.gguf")" = 3 ] && ok || bad "merge of v2's shards: not v3"
cmp -s <(tail -c +9 "$TMP/v2m.gguf") <(tail -c +9 "$V2") && ok || bad "merge of v2's shards: other bytes than the version"
"$BIN" split --help | grep -q "v2 input gives v3" && ok || bad "split --help does not say what a v2 input becomes"

# ---------------------------------------------------------------------------
# split then merge: byte for byte when the file ended padded; else the same bytes
# and the zero padding of the last tensor, exactly as merge --help and the README say.
expect_exit 0 "split T" "$BIN" split --split-max-tensors 3 "$T" "$TMP/st"
expect_exit 0 "merge T's shards" "$BIN" merge "$TMP/st-00001-of-00004.gguf" "$TMP/mt.gguf"
cmp -s "$T" "$TMP/mt.gguf" && ok || bad "split + merge of a padded canonical file is not byte for byte"
usize=$(stat -c %s "$U")
msize=$(stat -c %s "$TMP/mu.gguf")
[ "$msize" -eq $(((usize + 31) / 32 * 32)) ] && [ "$msize" -gt "$usize" ] && ok || bad "merge of U: $msize bytes, expected $usize padded to 32"
cmp -s "$U" <(head -c "$usize" "$TMP/mu.gguf") && ok || bad "merge of U: the first $usize bytes differ from U"
[ -z "$(tail -c +$((usize + 1)) "$TMP/mu.gguf" | tr -d '\0')" ] && ok || bad "merge of U: the padding is not zeros"
"$BIN" merge --help | grep -q "padded with zeros" && ok || bad "merge --help does not say what comes back of an unpadded file"
grep -q "padded with zeros" "$HERE/../../README.md" && ok || bad "README does not say what merge gives back of an unpadded file"

finish
