#!/usr/bin/env bash
# test_inputs.sh - no output is ever one of the command's inputs, --force or not
# (issue 32, item 2), and inputs that are special files are refused at once.
#
# usage: test_inputs.sh PATH/TO/ggufkit
#
# Every subcommand that writes a file (quantize, edit -o, diff --plot, split,
# merge, endian, repack, index's database) is pointed, with --force where it has
# it, at each kind of input it reads: the model itself, a symbolic link to it, a
# hard link to it, another spelling of its path, a shard of the input set, an
# importance matrix (legacy and GGUF), a JSON patch, a template (--set-file), and
# links to those. Each run must exit 1 naming the input, and every input must be
# byte-identical afterwards. A not-yet-existing output and an unrelated existing
# output (with --force) still work. hash writes no file (stdout only), but a
# standard output redirected onto an input (`dump m.gguf >>m.gguf`) is refused.
# Also: info, dump, verify, hash on a FIFO without a writer answer at once (exit
# 1) instead of blocking in open().
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

cd "$TMP" || exit 1
"$BIN" synth --type F16 model.gguf >/dev/null 2>&1 || bad "synth"
"$BIN" quantize model.gguf q8.gguf Q8_0 >/dev/null 2>&1 || bad "quantize q8"
"$BIN" split --split-max-tensors 8 model.gguf set >/dev/null 2>&1 || bad "split"
ls set-0000*-of-0000*.gguf >/dev/null 2>&1 || bad "no shards"
SHARD2=$(ls set-00002-of-*.gguf 2>/dev/null | head -1)
printf '{"set": {"general.name": "patched"}}\n' >p.json
printf '{{ bos_token }}{{ messages }}\n' >t.jinja
IMAT=
if [ -f "$GOLDEN/imatrix/syn1.imatrix" ] && [ -f "$GOLDEN/syn1/syn1-F16.gguf" ]; then
    cp "$GOLDEN/syn1/syn1-F16.gguf" s.gguf
    cp "$GOLDEN/imatrix/syn1.imatrix" m.imatrix
    cp "$GOLDEN/imatrix/syn1.imatrix.gguf" mg.imatrix 2>/dev/null || cp m.imatrix mg.imatrix
    IMAT=1
else
    skip "importance matrix cases (no golden imatrix)"
fi
ln -s model.gguf link.gguf
ln model.gguf hard.gguf
mkdir -p sub
ln -s ../p.json sub/plink.json
ln -s t.jinja tlink
ln -s "$SHARD2" shardlink.gguf
sha256sum ./*.gguf ./*.json ./*.jinja ./*.imatrix 2>/dev/null | grep -v ' ./out' >sums.before

# refused NAME CMD... : CMD exits 1 saying it refuses an input; no input changed.
refused() {
    local name=$1
    shift
    expect_exit 1 "$name" "$@"
    if grep -q "input" "$TMP/err"; then ok; else bad "$name: the message names no input: $(head -1 "$TMP/err")"; fi
    if sha256sum --quiet -c sums.before >/dev/null 2>&1; then ok; else
        bad "$name: an input changed"
        sha256sum --quiet -c sums.before 2>&1 | head -3
        sha256sum ./*.gguf ./*.json ./*.jinja ./*.imatrix 2>/dev/null | grep -v ' ./out' >sums.before
    fi
}

MODEL_ALIASES="model.gguf link.gguf hard.gguf ./sub/../model.gguf $PWD/model.gguf"

# --- quantize ---------------------------------------------------------------
for out in $MODEL_ALIASES; do
    refused "quantize --force over the model as $out" "$BIN" quantize --force model.gguf "$out" Q8_0
done
if [ -n "$IMAT" ]; then
    for out in m.imatrix mg.imatrix; do
        refused "quantize --force over --imatrix $out" "$BIN" quantize --force --imatrix "$out" s.gguf "$out" Q4_K_M
    done
    ln -s m.imatrix ilink
    refused "quantize --force over a link to the matrix" "$BIN" quantize --force --imatrix m.imatrix s.gguf ilink Q4_K_M
    rm -f ilink
fi
refused "quantize --force over its own first shard" "$BIN" quantize --force set-00001-of-*.gguf set-00001-of-*.gguf Q8_0
refused "quantize --force over another shard of the input set" "$BIN" quantize --force set-00001-of-*.gguf "$SHARD2" Q8_0
for out in set.gguf set; do
    refused "quantize --keep-split --force onto its own set ($out)" \
        "$BIN" quantize --force --keep-split set-00001-of-*.gguf "$out" Q8_0
done
expect_exit 0 "quantize --force over an unrelated file" "$BIN" quantize --force model.gguf q8.gguf Q8_0

# --- edit -o ----------------------------------------------------------------
for out in $MODEL_ALIASES; do
    refused "edit -o --force over the model as $out" "$BIN" edit --force --set general.name=x -o "$out" model.gguf
done
for out in p.json sub/plink.json; do
    refused "edit --patch p.json -o $out --force" "$BIN" edit --force --patch p.json -o "$out" model.gguf
done
refused "edit --patch via a link, -o the patch" "$BIN" edit --force --patch sub/plink.json -o p.json model.gguf
for out in t.jinja tlink; do
    refused "edit --set-file t.jinja -o $out --force" \
        "$BIN" edit --force --set-file tokenizer.chat_template=t.jinja -o "$out" model.gguf
done
refused "edit --patch - <p.json -o p.json" sh -c "\"$BIN\" edit --force --patch - -o p.json model.gguf <p.json"
expect_exit 0 "edit -o a new file" "$BIN" edit --patch p.json -o out-edit.gguf model.gguf
cp model.gguf own.gguf
expect_exit 0 "edit --in-place=auto still replaces its own file" \
    "$BIN" edit --in-place=auto --reserve 0 --set general.name=a-much-longer-name-than-the-slack-allows-for-sure-yes own.gguf

# --- diff --plot --------------------------------------------------------------
# --plot takes .png and .svg names only: the inputs are reached through links.
ln -s model.gguf pl.png
ln model.gguf hpl.png
ln -s q8.gguf q.svg
ln -s "$SHARD2" sh.png
ln -s ./sub/../model.gguf sp.svg
sha256sum ./*.gguf ./*.json ./*.jinja ./*.imatrix 2>/dev/null | grep -v ' ./out' >sums.before
for out in pl.png hpl.png q.svg sp.svg; do
    refused "diff --plot $out --force" "$BIN" diff --force --plot "$out" model.gguf q8.gguf
done
refused "diff --plot over a shard of a compared set" "$BIN" diff --force --plot sh.png set-00001-of-*.gguf model.gguf
if "$BIN" diff --plot out.png model.gguf q8.gguf >/dev/null 2>&1; then ok; else
    case $? in 1) ok ;; *) bad "diff --plot to a new file failed" ;; esac
fi

# --- split ----------------------------------------------------------------------
# A shard name that is the input (its own prefix) or a link to it.
cp model.gguf sp.gguf
ln -sf sp.gguf sp2-00001-of-00003.gguf
sha256sum ./*.gguf ./*.json ./*.jinja ./*.imatrix 2>/dev/null | grep -v ' ./out' >sums.before
refused "split onto a link to its input" "$BIN" split --split-max-tensors 8 sp.gguf sp2
rm -f sp2-00001-of-00003.gguf
ln model.gguf hsp-00002-of-00003.gguf
sha256sum ./*.gguf ./*.json ./*.jinja ./*.imatrix 2>/dev/null | grep -v ' ./out' >sums.before
refused "split onto a hard link to its input" "$BIN" split --split-max-tensors 8 model.gguf hsp
rm -f hsp-00002-of-00003.gguf
sha256sum ./*.gguf ./*.json ./*.jinja ./*.imatrix 2>/dev/null | grep -v ' ./out' >sums.before

# --- merge ----------------------------------------------------------------------
for out in "$SHARD2" shardlink.gguf set-00001-of-*.gguf; do
    refused "merge --force over a shard of its set ($out)" "$BIN" merge --force set-00001-of-*.gguf "$out"
done
expect_exit 0 "merge to a new file" "$BIN" merge set-00001-of-*.gguf out-merged.gguf

# --- endian, repack -----------------------------------------------------------
for out in $MODEL_ALIASES; do
    refused "endian --force over the input as $out" "$BIN" endian --force --to big model.gguf "$out"
    refused "repack --force over the input as $out" "$BIN" repack --force model.gguf "$out"
done
expect_exit 0 "repack --force over an unrelated file" "$BIN" repack --force model.gguf q8.gguf
sha256sum ./*.gguf ./*.json ./*.jinja ./*.imatrix 2>/dev/null | grep -v ' ./out' >sums.before

# --- index ------------------------------------------------------------------------
mkdir -p tree
cp model.gguf tree/
sha256sum ./*.gguf ./*.json ./*.jinja ./*.imatrix tree/* 2>/dev/null | grep -v ' ./out' >sums.before
refused "index --db the model given" "$BIN" index --db model.gguf model.gguf
refused "index --db a link to the model given" "$BIN" index --db link.gguf model.gguf
expect_exit 1 "index --db a GGUF file in the tree" "$BIN" index --db tree/model.gguf tree
expect_grep "index --db a GGUF file: says so" "$TMP/err" "not a database"
sha256sum --quiet -c sums.before >/dev/null 2>&1 && ok || bad "index wrote over a model"
expect_exit 0 "index --db a new database" "$BIN" index --db out.sqlite tree

# --- standard output redirected onto an input ------------------------------------------
cp model.gguf so.gguf
cp so.gguf so.before
for c in "dump so.gguf" "info so.gguf" "hash so.gguf" "verify so.gguf"; do
    # shellcheck disable=SC2086
    "$BIN" $c >>so.gguf 2>"$TMP/err"
    [ $? -eq 1 ] && ok || bad "$c >>so.gguf: not refused"
    expect_same_file "$c >>so.gguf: the model untouched" so.before so.gguf
    expect_grep "$c >>so.gguf: says why" "$TMP/err" "standard output"
done
"$BIN" verify --json model.gguf so.gguf >>so.gguf 2>/dev/null && bad "verify --json M F >>F: not refused" || ok
expect_same_file "verify --json M F >>F: nothing written into F" so.before so.gguf
"$BIN" edit --patch so.json -o out-so.gguf model.gguf >so.json 2>/dev/null && bad "edit --patch F >F: not refused" || ok
"$BIN" dump model.gguf >out-dump.txt 2>/dev/null && ok || bad "dump to a file"

# --- special files ----------------------------------------------------------------
mkfifo fifo.gguf
for c in info dump verify hash; do
    run "$c on a FIFO" timeout 10 "$BIN" $c fifo.gguf
    expect_rc "$c on a FIFO answers at once" 1
    if grep -q "pipe" "$TMP/err" "$TMP/out"; then ok; else bad "$c on a FIFO: no word of a pipe: $(cat "$TMP/err" "$TMP/out" | head -2)"; fi
done
run "quantize from a FIFO" timeout 10 "$BIN" quantize fifo.gguf out-fifo.gguf Q8_0
expect_rc "quantize from a FIFO answers at once" 1
run "info on a FIFO archive member" timeout 10 "$BIN" info fifo.gguf::x.gguf
expect_rc "info on a FIFO archive member answers at once" 1
run "diff with a FIFO" timeout 10 "$BIN" diff model.gguf fifo.gguf
expect_rc "diff with a FIFO answers at once" 1
rm -f fifo.gguf
mkfifo fifo.gguf.zst
run "info on a FIFO .zst" timeout 10 "$BIN" info fifo.gguf.zst
expect_rc "info on a FIFO .zst answers at once" 1

finish
