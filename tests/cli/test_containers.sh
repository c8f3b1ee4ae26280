#!/usr/bin/env bash
# test_containers.sh - CLI tests of reading through containers and of the messages
# every reading command gives (issue 21, items 4-7, 13, 14).
#
# usage: test_containers.sh PATH/TO/ggufkit
#
# Checks, for every container (plain .gguf, .gguf.zst, tar, tar.gz, zip):
#  - a model cut short inside its tensor data: `verify` fails naming the data
#    past the end; `repack` and `quantize` fail naming the input, leave no output;
#    the whole container verifies;
#  - `index` gives every cut container (cut early, in its first header, or late,
#    in the tensor data) a row in the documented "which files are broken" query,
#    and none to the whole ones.
# Plus: the index walks folders 300 deep and reports a path longer than PATH_MAX
# as left out (never silently); a .gguf.zst with a window larger than zstd's
# default limit reads, and GGUFKIT_ZSTD_WINDOW_LOG_MAX caps it with a message
# naming the variable; a shard set missing shard 3 (or with a broken shard 3) is
# reported naming shard 3 by quantize, merge, verify, info and dump; info/dump
# fail on misplaced tensor data as their help says; a pipe is refused with a
# message saying a seekable file is needed (info, dump, verify).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

# run_cmd CMD... : common.sh's run, named after the command itself.
run_cmd() { run "$*" "$@"; }
expect_in() {   # NAME FILE FIXED-STRING
    if grep -qF -- "$3" "$2"; then ok; else
        bad "$1: '$3' not in $(basename "$2"): $(head -c 400 "$2")"
    fi
}
expect_not_in() {   # NAME FILE FIXED-STRING
    if grep -qF -- "$3" "$2"; then bad "$1: '$3' in $(basename "$2"): $(head -c 400 "$2")"; else ok; fi
}

for tool in zstd tar gzip python3 sqlite3; do
    command -v "$tool" >/dev/null || { echo "SKIPPED: test_containers needs $tool"; exit 77; }
done

M=$TMP/m
mkdir -p "$M"
"$BIN" synth --seed 2 "$M/b.gguf" >/dev/null || bad "synth"

# ---- item 4: a member cut inside its tensor data -------------------------------
# Each container holds b.gguf whole (WHOLE) and cut at 60% of its bytes (CUT):
# the header survives, most tensor data does not.
W=$TMP/whole C=$TMP/cut
mkdir -p "$W" "$C"
cp "$M/b.gguf" "$W/b.gguf"
zstd -q -o "$W/b.gguf.zst" "$M/b.gguf"
(cd "$M" && tar -cf "$W/b.tar" b.gguf && tar -czf "$W/b.tar.gz" b.gguf)
python3 - "$W/b.zip" "$M/b.gguf" <<'EOF' || bad "zip"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[2], "b.gguf")
EOF
for f in "$W"/*; do
    n=$(stat -c %s "$f")
    head -c $((n * 6 / 10)) "$f" >"$C/${f##*/}"
done
# name DIR FILE: what a command is given for FILE in DIR (archives: the member)
name() {
    case $2 in *.tar | *.tar.gz | *.zip) echo "$1/$2::b.gguf" ;; *) echo "$1/$2" ;; esac
}
for k in b.gguf b.gguf.zst b.tar b.tar.gz b.zip; do
    whole=$(name "$W" "$k") cut=$(name "$C" "$k")
    run_cmd "$BIN" verify "$whole"
    expect_rc "verify whole $k" 0
    run_cmd "$BIN" verify "$cut"
    expect_rc "verify cut $k" 1
    expect_in "verify cut $k" "$TMP/out" "run past the end of the file"
    run_cmd "$BIN" verify --json "$cut"
    expect_in "verify --json cut $k" "$TMP/out" '"data-past-eof"'
    for cmd in repack quantize; do
        rm -f "$TMP/o.gguf"
        if [ $cmd = repack ]; then run_cmd "$BIN" repack "$cut" "$TMP/o.gguf"; else
            run_cmd "$BIN" quantize "$cut" "$TMP/o.gguf" Q8_0
        fi
        expect_rc "$cmd cut $k" 1
        expect_in "$cmd cut $k: names the input" "$TMP/err" "ggufkit: $cut: "
        expect_not_in "$cmd cut $k: names the output" "$TMP/err" "o.gguf"
        if [ -e "$TMP/o.gguf" ]; then bad "$cmd cut $k: left an output"; else ok; fi
    done
done

# ---- item 5: index files every cut container as broken -------------------------
I=$TMP/ix
mkdir -p "$I/whole" "$I/cut"
cp "$W"/* "$I/whole/"
cp "$C"/* "$I/cut/"
for f in "$W"/*; do   # cut early: inside the container's first header (or the GGUF's)
    b=${f##*/}
    head -c 100 "$f" >"$I/cut/early100-$b"
    head -c 2000 "$f" >"$I/cut/early2000-$b"
done
run_cmd "$BIN" index --db "$TMP/ix.sqlite" "$I"
expect_rc "index of cut containers" 0
# the query of docs/index.md: "Which files are broken, and why?"
sqlite3 "$TMP/ix.sqlite" \
    "SELECT path, member, error_code, error FROM files WHERE error IS NOT NULL ORDER BY path, member;" \
    >"$TMP/broken.txt" || bad "broken-files query"
for f in "$I"/cut/*; do
    if grep -q "^$f|" "$TMP/broken.txt"; then ok; else bad "index: ${f##*/} has no broken row"; fi
done
if grep -q "^$I/whole/" "$TMP/broken.txt"; then bad "index: a whole container has a broken row"; else ok; fi
n_whole=$(sqlite3 "$TMP/ix.sqlite" "SELECT count(*) FROM files WHERE path LIKE '$I/whole/%' AND error IS NULL")
if [ "$n_whole" = 5 ]; then ok; else bad "index: $n_whole good rows for the 5 whole containers"; fi

# ---- item 6: any depth; a path longer than PATH_MAX is reported ----------------
D=$TMP/deep
mkdir -p "$D"
python3 - "$D" "$DATA/good/canonical.gguf" <<'EOF' || bad "deep tree"
import os, sys
root, src = sys.argv[1], open(sys.argv[2], "rb").read()
def put(fd, name):
    f = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(f, src)
    os.close(f)
def descend(fd, name):
    os.mkdir(name, dir_fd=fd)
    n = os.open(name, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    return n
fd = os.open(root, os.O_RDONLY)
for _ in range(300):
    fd = descend(fd, "d")
put(fd, "deep300.gguf")           # 300 folders down, path well under PATH_MAX
os.close(fd)
fd = os.open(root, os.O_RDONLY)
for _ in range(22):
    fd = descend(fd, "L" * 200)
put(fd, "long.gguf")              # a path of more than 4400 bytes
os.close(fd)
EOF
run_cmd "$BIN" index --json --db "$TMP/deep.sqlite" "$D"
expect_rc "index of a deep tree" 0
n=$(sqlite3 "$TMP/deep.sqlite" "SELECT count(*) FROM files WHERE path LIKE '%/deep300.gguf' AND error IS NULL")
if [ "$n" = 1 ]; then ok; else bad "index: the file 300 folders deep is missing"; fi
expect_in "index: long path reported" "$TMP/err" "/long.gguf: left out: its path is"
expect_in "index: left_out counted" "$TMP/out" '"left_out":	1'

# ---- item 7: a zstd window above the default 2^27 limit ------------------------
# From a pipe zstd records no size, so the frame declares the whole 2^28 window.
cat "$DATA/good/canonical.gguf" | zstd -q --long=28 -c >"$TMP/long.gguf.zst" || bad "zstd --long"
run_cmd "$BIN" info "$TMP/long.gguf.zst"
expect_rc "info of a --long=28 .zst" 0
run_cmd "$BIN" verify "$TMP/long.gguf.zst"
expect_rc "verify of a --long=28 .zst" 0
GGUFKIT_ZSTD_WINDOW_LOG_MAX=27 run_cmd "$BIN" info "$TMP/long.gguf.zst"
expect_rc "info, window capped at 2^27" 1
expect_in "info, window capped at 2^27" "$TMP/err" "GGUFKIT_ZSTD_WINDOW_LOG_MAX"
for cmd in info dump verify; do
    run_cmd "$BIN" $cmd --help
    expect_in "$cmd --help: window" "$TMP/out" "GGUFKIT_ZSTD_WINDOW_LOG_MAX"
done

# ---- item 13: one message naming the missing (or broken) shard -----------------
S=$TMP/set
mkdir -p "$S"
"$BIN" split --split-max-tensors 5 "$M/b.gguf" "$S/s" >/dev/null || bad "split"
first=$S/s-00001-of-00005.gguf third=$S/s-00003-of-00005.gguf
mv "$third" "$TMP/third.gguf"
for damage in missing broken; do
    if [ $damage = missing ]; then want="$third: shard 3 of 5 is missing"; else
        head -c 200 "$TMP/third.gguf" >"$third"
        want="$third: offset"
    fi
    run_cmd "$BIN" quantize "$first" "$TMP/q.gguf" Q8_0
    expect_rc "quantize, shard 3 $damage" 1
    expect_in "quantize, shard 3 $damage" "$TMP/err" "ggufkit: $want"
    run_cmd "$BIN" merge "$first" "$TMP/merged.gguf"
    expect_rc "merge, shard 3 $damage" 1
    expect_in "merge, shard 3 $damage" "$TMP/err" "ggufkit: $want"
    run_cmd "$BIN" verify "$S/s-00002-of-00005.gguf"
    expect_rc "verify, shard 3 $damage" 1
    expect_in "verify, shard 3 $damage" "$TMP/out" "shard set: $want"
    run_cmd "$BIN" info "$S/s-00002-of-00005.gguf"
    expect_in "info, shard 3 $damage" "$TMP/out" "INCOMPLETE OR INCONSISTENT: $want"
    run_cmd "$BIN" info --json "$S/s-00002-of-00005.gguf"
    expect_in "info --json, shard 3 $damage" "$TMP/out" "\"error\":	\"$want"
    run_cmd "$BIN" dump "$first"
    expect_in "dump, shard 3 $damage" "$TMP/out" "INCOMPLETE OR INCONSISTENT: $want"
done

# ---- issue 32, item 6: shard sets stored compressed ------------------------------
# A set whose shards are .gguf.zst (all of them, or some) is the same set as the
# plain one for every command that takes a set: index (complete), verify, info,
# merge (the same bytes), diff (identical), hash --set (the same digest),
# quantize (the same bytes; --keep-split too). A compressed shard that is
# missing is named with the set's tail.
Z=$TMP/zset
mkdir -p "$Z/plain" "$Z/zst" "$Z/mixed" "$Z/out"
"$BIN" split --split-max-tensors 4 "$M/b.gguf" "$Z/plain/z" >/dev/null || bad "split for zset"
n_sh=$(ls "$Z/plain" | wc -l)
for f in "$Z"/plain/*.gguf; do
    zstd -q -o "$Z/zst/${f##*/}.zst" "$f"
done
cp "$Z"/plain/*.gguf "$Z/mixed/"
for k in 1 3; do
    g=$(printf '%s/mixed/z-%05d-of-%05d.gguf' "$Z" "$k" "$n_sh")
    zstd -q --rm "$g"
done
"$BIN" merge "$Z/plain/z-00001-of-$(printf %05d "$n_sh").gguf" "$Z/out/plain-merged.gguf" >/dev/null
"$BIN" quantize --pure "$Z/plain/z-00001-of-$(printf %05d "$n_sh").gguf" "$Z/out/plain-q8.gguf" Q8_0 >/dev/null 2>&1
"$BIN" hash --set "$Z/plain/z-00001-of-$(printf %05d "$n_sh").gguf" | awk '{print $2}' >"$Z/out/plain.hash"
for kind in zst mixed; do
    D=$Z/$kind
    first=$(ls "$D" | sort | head -1) second=$(ls "$D" | sort | sed -n 2p)
    run_cmd "$BIN" merge "$D/$first" "$Z/out/$kind-merged.gguf"
    expect_rc "merge $kind set" 0
    expect_same_file "merge $kind set: the plain set's bytes" "$Z/out/plain-merged.gguf" "$Z/out/$kind-merged.gguf"
    for sh in "$D"/*; do
        run_cmd "$BIN" verify "$sh"
        expect_rc "verify $kind ${sh##*/}" 0
        expect_in "verify $kind ${sh##*/}" "$TMP/out" "shard set $D/z: complete, $n_sh shards"
    done
    run_cmd "$BIN" info "$D/$second"
    expect_rc "info $kind shard" 0
    expect_not_in "info $kind shard" "$TMP/out" "INCOMPLETE"
    run_cmd "$BIN" diff "$M/b.gguf" "$D/$second"
    expect_rc "diff $kind set against the model" 0
    expect_in "diff $kind set" "$TMP/out" ": identical"
    run_cmd "$BIN" hash --set "$D/$first"
    expect_rc "hash --set $kind" 0
    if [ "$(awk '{print $2}' "$TMP/out")" = "$(cat "$Z/out/plain.hash")" ]; then ok; else bad "hash --set $kind: another digest"; fi
    run_cmd "$BIN" quantize --pure "$D/$first" "$Z/out/$kind-q8.gguf" Q8_0
    expect_rc "quantize $kind set" 0
    expect_same_file "quantize $kind set: the plain set's output" "$Z/out/plain-q8.gguf" "$Z/out/$kind-q8.gguf"
    run_cmd "$BIN" quantize --pure --keep-split "$D/$first" "$Z/out/$kind-ks.gguf" Q8_0
    expect_rc "quantize --keep-split $kind set" 0
    run_cmd "$BIN" index --db "$Z/out/$kind.db" "$D"
    expect_rc "index $kind set" 0
done
# a compressed shard missing: named with the set's tail
mv "$Z/zst/$(printf 'z-00002-of-%05d.gguf.zst' "$n_sh")" "$TMP/gone.zst"
run_cmd "$BIN" merge "$Z/zst/$(printf 'z-00001-of-%05d.gguf.zst' "$n_sh")" "$Z/out/none.gguf"
expect_rc "merge, a compressed shard missing" 1
expect_in "merge, a compressed shard missing" "$TMP/err" "$(printf 'z-00002-of-%05d.gguf.zst: shard 2 of %d is missing' "$n_sh" "$n_sh")"
mv "$TMP/gone.zst" "$Z/zst/$(printf 'z-00002-of-%05d.gguf.zst' "$n_sh")"

# ---- item 14: misplaced data fails info/dump, as their help says; pipes ---------
for cmd in info dump; do
    run_cmd "$BIN" $cmd --help
    expect_not_in "$cmd --help" "$TMP/out" "past the end of the file) are listed too; they do not fail"
    expect_not_in "$cmd --help" "$TMP/out" "past the end of the file) go to stderr and do not fail"
    expect_in "$cmd --help" "$TMP/out" "misplaced (past the"
    run_cmd "$BIN" $cmd "$C/b.gguf"
    expect_rc "$cmd of a cut file" 1
    expect_in "$cmd of a cut file: still listed" "$TMP/out" "b.gguf"
    expect_in "$cmd of a cut file: reported" "$TMP/err" "run past the end of the file"
done
# ... and so does a partial download inside any container (issue 32, item 5): the
# header reads, the tensor data ends early. Every container ggufkit reads, cut at
# several points inside the data, fails info and dump (text and JSON) as the cut
# plain file does; the whole ones pass. A tar without its last 200 bytes only
# loses end-of-archive blocks (the member is whole): that one passes.
# The model here is a 1-layer F16 one (1.8 MB, 12 tensors): every cut still
# lands in its tensor data, past a header of 13 kB, and it still spans
# several bzip2 blocks (see below) and zstd blocks; reading the containers 14 times each
# (bzip2 and xz above all) was half of this script's time with the 6 MB one.
P=$TMP/partial
mkdir -p "$P/whole" "$P/cut" "$M/llama"
"$BIN" synth --seed 2 --layers 1 --type F16 "$M/p.gguf" >/dev/null || bad "synth (1 layer)"
cp "$M/p.gguf" "$M/llama/tiny.gguf"
cp "$M/p.gguf" "$P/whole/b.gguf"
zstd -q -o "$P/whole/b.gguf.zst" "$M/p.gguf"
zstd -q --no-content-size <"$M/p.gguf" >"$P/whole/b-nosize.gguf.zst"
(cd "$M" && tar -cf "$P/whole/b.tar" llama/tiny.gguf && tar -czf "$P/whole/b.tar.gz" llama/tiny.gguf)
if command -v xz >/dev/null; then (cd "$M" && tar -cJf "$P/whole/b.tar.xz" llama/tiny.gguf); fi
# bzip2 -1: 100 kB blocks, so even the cut at 35% has whole blocks (the
# header's) before it, as the default 900 kB blocks had in the 6 MB model.
if command -v bzip2 >/dev/null; then (cd "$M" && tar -cf - llama/tiny.gguf | bzip2 -1 >"$P/whole/b.tar.bz2"); fi
(cd "$M" && tar -cf - llama/tiny.gguf | zstd -q -o "$P/whole/b.tar.zst")
python3 - "$P/whole" "$M/p.gguf" <<'EOF' || bad "zip"
import sys, zipfile
for name, how in (("b.zip", zipfile.ZIP_DEFLATED), ("b-stored.zip", zipfile.ZIP_STORED)):
    with zipfile.ZipFile(sys.argv[1] + "/" + name, "w", how) as z:
        z.write(sys.argv[2], "llama/tiny.gguf")
EOF
member() {   # FILE: what a command is given for FILE (archives: the member)
    case $1 in *.tar | *.tar.* | *.zip) echo "$1::llama/tiny.gguf" ;; *) echo "$1" ;; esac
}
for f in "$P"/whole/*; do
    k=${f##*/}
    n=$(stat -c %s "$f")
    for cmd in info dump; do
        run_cmd "$BIN" $cmd "$(member "$f")"
        expect_rc "$cmd whole $k" 0
    done
    for pct in 35 70 95; do
        cut=$P/cut/$pct-$k
        head -c $((n * pct / 100)) "$f" >"$cut"
        for cmd in info "info --json" dump "dump --json"; do
            # shellcheck disable=SC2086
            run_cmd "$BIN" $cmd "$(member "$cut")"
            expect_rc "$cmd $k cut at $pct%" 1
            expect_in "$cmd $k cut at $pct%: reported" "$TMP/err" "run past the end of the file"
        done
    done
    case $k in *.tar)
        head -c $((n - 200)) "$f" >"$P/cut/trailer-$k"
        run_cmd "$BIN" info "$(member "$P/cut/trailer-$k")"
        expect_rc "info $k without its last 200 bytes (end-of-archive blocks only)" 0 ;;
    esac
done

for cmd in info dump verify; do
    cat "$M/b.gguf" | "$BIN" $cmd /dev/stdin >"$TMP/out" 2>"$TMP/err"
    rc=$?
    expect_rc "$cmd of a pipe" 1
    cat "$TMP/out" "$TMP/err" >"$TMP/all"   # verify reports on stdout
    expect_in "$cmd of a pipe" "$TMP/all" "ggufkit reads seekable files"
done

finish
