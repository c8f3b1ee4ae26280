#!/usr/bin/env bash
# test_clone.sh - zero-copy rewrites: on filesystems that share blocks (XFS made
# with reflink, btrfs) the rewriting commands clone the unchanged tensor bytes;
# on the others (ext4, tmpfs) their outputs are byte for byte the --no-clone ones.
#
# usage: test_clone.sh PATH/TO/ggufkit [PATH/TO/fault_preload.so]
# Needs root (it makes sparse images in a temporary folder, formats them and
# loop-mounts them; everything is unmounted, detached and removed on exit).
# Without root, the mkfs tools or a loop device it prints a SKIPPED banner and
# exits 77 (meson's SKIP).
#
# On XFS and btrfs, for a 127 MB model (synth tiny, 48 layers, 435 tensors;
# large enough that a copy would take 7 times the space bound, while
# scripts/bench --clone measures the 2.2 GB tinyllama model): edit -o
# with a 3 kB chat template added, repack, split --clone, merge of that set, and
# edit --in-place=auto that does not fit. Each output must verify, hold the
# input's tensor bytes (its `hash` digests, file names aside), take less
# than 16 MiB of the filesystem's free space and say it cloned. Each must also
# finish in under CLONE_MAX_SECONDS (default 2: a loose bound, since the machine's
# load is not the test's business; the figures are printed, and the goal is
# 0.2 s). Copy-on-write: an in-place edit of an output, and bytes written into
# its tensor data, leave the input's bytes unchanged, and the other way round.
# The unchanged data section clones as one run: repack copies no more than the
# header (to the end of its block) and one block. An input with stray bytes in its alignment padding
# gives the --no-clone output (zeros there) all the same. So do an output on
# another filesystem than its input (EXDEV) and, with the fault shim, a
# filesystem that takes the probe's clone and refuses the next ones.
set -u

: "${1:?usage: test_clone.sh PATH/TO/ggufkit}"
HERE=$(cd "$(dirname "$0")" && pwd)
MAX_SECONDS=${CLONE_MAX_SECONDS:-2}
SHIM=${2:-}
[ -n "$SHIM" ] && [ -f "$SHIM" ] && SHIM=$(realpath "$SHIM") || SHIM=""

skip_all() {
    echo "=================================================================="
    echo "SKIPPED: clone tests ($*)"
    echo "=================================================================="
    exit 77
}

[ "$(id -u)" -eq 0 ] || skip_all "not root: cannot make and mount filesystems"
for tool in mkfs.xfs mkfs.btrfs mkfs.ext4 losetup mount umount; do
    command -v "$tool" >/dev/null 2>&1 || PATH=$PATH:/sbin:/usr/sbin
    command -v "$tool" >/dev/null 2>&1 || skip_all "$tool is missing (scripts/setup installs xfsprogs, btrfs-progs)"
done

# shellcheck source=common.sh
. "$HERE/common.sh"
MOUNTS=()
# run at exit by common.sh, before it removes $TMP
test_cleanup() {
    local m
    for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
    for m in "$TMP"/*.img; do   # mount -o loop detaches at umount; make sure
        [ -e "$m" ] && losetup -j "$m" 2>/dev/null | cut -d: -f1 | xargs -r -n1 losetup -d 2>/dev/null
    done
}

# mount_fs KIND DIR SIZE : a sparse image of SIZE formatted as KIND, loop-mounted at DIR.
mount_fs() {
    local kind=$1 dir=$2 size=$3 img="$TMP/$1.img"
    mkdir -p "$dir"
    if [ "$kind" = tmpfs ]; then
        mount -t tmpfs -o size="$size" tmpfs "$dir" 2>"$TMP/mount.err" || return 1
        MOUNTS+=("$dir")
        return 0
    fi
    truncate -s "$size" "$img" || return 1
    case "$kind" in
    xfs) mkfs.xfs -q -f -m reflink=1 "$img" >"$TMP/mkfs.err" 2>&1 ;;
    btrfs) mkfs.btrfs -q -f "$img" >"$TMP/mkfs.err" 2>&1 ;;
    ext4) mkfs.ext4 -q -F "$img" >"$TMP/mkfs.err" 2>&1 ;;
    esac || return 1
    modprobe loop 2>/dev/null
    mount -o loop "$img" "$dir" 2>"$TMP/mount.err" || return 1
    MOUNTS+=("$dir")   # mount -o loop detaches the loop device at umount
}

avail() { df -B1 --output=avail "$1" | tail -1 | tr -d ' '; }
now() { date +%s.%N; }

FIGURES="$TMP/figures"
: >"$FIGURES"

# timed FS NAME MOUNT CMD... : runs CMD, then checks its exit, time and the space it took.
timed() {
    local fs=$1 name=$2 mnt=$3
    shift 3
    sync -f "$mnt/."
    local before t0 t1 after
    before=$(avail "$mnt")
    t0=$(now)
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    t1=$(now)
    sync -f "$mnt/."
    after=$(avail "$mnt")
    local secs used
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    used=$(( (before - after) / 1024 ))
    printf '%-6s %-28s %7s s %8s KiB\n' "$fs" "$name" "$secs" "$used" >>"$FIGURES"
    if [ "$rc" -ne 0 ]; then
        bad "$fs $name: exit $rc"
        sed 's/^/    stderr: /' "$TMP/err" | head -5
        return
    fi
    ok
    if [ "$used" -lt $((16 * 1024)) ]; then ok; else bad "$fs $name: took $used KiB of free space (16 MiB allowed)"; fi
    if awk -v s="$secs" -v m="$MAX_SECONDS" 'BEGIN { exit !(s < m) }'; then ok; else bad "$fs $name: took $secs s (bound $MAX_SECONDS s)"; fi
    expect_grep "$fs $name says it cloned" "$TMP/err" "cloned "
}

# digests FILE... : `hash` of FILE (a shard set with --set FILE) without the file
# names: "xxh64 HEX TENSOR" per tensor, "xxh64 HEX MODEL" for all of them.
digests() {
    "$BIN" hash "$@" | awk '{ n = $3; i = index(n, ":"); print $1, $2, (i ? substr(n, i + 1) : "MODEL") }'
}

# same_tensors NAME DIGESTS FILE... : FILE's tensors hash as in DIGESTS (from digests).
same_tensors() {
    local name=$1 want=$2
    shift 2
    digests "$@" >"$TMP/got.txt" 2>&1
    if [ -s "$TMP/got.txt" ] && cmp -s "$want" "$TMP/got.txt"; then ok; else
        bad "$name: tensor bytes differ from the input's"
        diff "$want" "$TMP/got.txt" | head -3 | sed 's/^/    /'
    fi
}

verifies() { if "$BIN" verify "$2" >/dev/null 2>&1; then ok; else bad "$1: verify fails"; fi; }

# A 3 kB chat template, and the 127 MB model (made once, copied onto each filesystem).
head -c 3000 /dev/zero | tr '\0' 'x' | fold -w 72 >"$TMP/t.jinja"
printf '{%% for m in messages %%}{{ m.content }}{%% endfor %%}\n' >>"$TMP/t.jinja"
tmpl_bytes=$(wc -c <"$TMP/t.jinja")
[ "$tmpl_bytes" -ge 3000 ] || bad "template of $tmpl_bytes bytes"

clone_suite() {
    local fs=$1 mnt=$2
    local M="$mnt/m.gguf"
    cp "$TMP/big.gguf" "$M" || { bad "$fs: copy of the model"; return; }
    digests "$M" >"$mnt/m.txt"

    timed "$fs" "edit -o (+3 kB template)" "$mnt" \
        "$BIN" edit --set-file tokenizer.chat_template="$TMP/t.jinja" -o "$mnt/e.gguf" "$M"
    verifies "$fs edit -o" "$mnt/e.gguf"
    same_tensors "$fs edit -o" "$mnt/m.txt" "$mnt/e.gguf"
    "$BIN" dump "$mnt/e.gguf" | grep -q tokenizer.chat_template && ok || bad "$fs edit -o: no template"

    timed "$fs" "repack" "$mnt" "$BIN" repack "$M" "$mnt/r.gguf"
    verifies "$fs repack" "$mnt/r.gguf"
    same_tensors "$fs repack" "$mnt/m.txt" "$mnt/r.gguf"
    expect_same_file "$fs repack of a canonical file gives it back" "$M" "$mnt/r.gguf"
    # The data section is one clone run (the padding between tensors equals the
    # input's): only the header (up to the end of the block it ends in) and the
    # partial block at the end are copied.
    local copied data_at
    copied=$(sed -n 's/.*copied \([0-9]*\) bytes.*/\1/p' "$TMP/err" | head -1)
    data_at=$("$BIN" info --json "$M" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["data_offset"])' 2>/dev/null)
    if [ -n "$copied" ] && [ -n "$data_at" ] && [ "$copied" -le $(( (data_at + 4095) / 4096 * 4096 + 4096 )) ]; then ok; else
        bad "$fs repack: copied ${copied:-?} bytes, more than the header (${data_at:-?}, to its block's end) and one block"
    fi

    timed "$fs" "split --clone" "$mnt" "$BIN" split --clone --split-max-size 50M "$M" "$mnt/s"
    local first
    first=$(ls "$mnt"/s-00001-of-*.gguf 2>/dev/null | head -1)
    [ -n "$first" ] && [ "$(ls "$mnt"/s-*.gguf | wc -l)" -ge 2 ] && ok || bad "$fs split --clone: expected 2 shards or more ($(ls "$mnt" | tr '\n' ' '))"
    for f in "$mnt"/s-*.gguf; do verifies "$fs split --clone ${f##*/}" "$f"; done
    same_tensors "$fs split --clone (the set)" "$mnt/m.txt" --set "$first"

    timed "$fs" "merge (of the split --clone set)" "$mnt" "$BIN" merge "$first" "$mnt/mm.gguf"
    verifies "$fs merge" "$mnt/mm.gguf"
    same_tensors "$fs merge" "$mnt/m.txt" "$mnt/mm.gguf"

    cp --reflink=always "$M" "$mnt/ip.gguf" || bad "$fs: cp --reflink=always"
    timed "$fs" "edit --in-place=auto (no fit)" "$mnt" \
        "$BIN" edit --in-place=auto --set-file tokenizer.chat_template="$TMP/t.jinja" "$mnt/ip.gguf"
    expect_grep "$fs --in-place=auto rewrote the file" "$TMP/out" "rewritten"
    verifies "$fs --in-place=auto" "$mnt/ip.gguf"
    same_tensors "$fs --in-place=auto" "$mnt/m.txt" "$mnt/ip.gguf"

    # Copy-on-write: changes to an output never show in the input, and back.
    digests "$mnt/e.gguf" >"$mnt/e.txt"
    expect_exit 0 "$fs in-place edit of the output" "$BIN" edit --in-place --set general.name=changed "$mnt/e.gguf"
    local data
    data=$("$BIN" info --json "$mnt/e.gguf" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["data_offset"])' 2>/dev/null)
    if [ -n "$data" ]; then
        head -c 65536 /dev/urandom | dd of="$mnt/e.gguf" bs=4096 seek=$(( (data + 8192) / 4096 )) conv=notrunc,fsync status=none
        ok
    else
        bad "$fs: no data_offset in info --json"
    fi
    same_tensors "$fs input unchanged after writes to the output" "$mnt/m.txt" "$M"
    if digests "$mnt/e.gguf" | cmp -s "$mnt/e.txt" -; then
        bad "$fs: the bytes written into the output's tensors did not land"
    else ok; fi
    expect_exit 0 "$fs in-place edit of the input" "$BIN" edit --in-place --set general.name=other "$M"
    head -c 65536 /dev/urandom | dd of="$M" bs=4096 seek=$(( (data + 1048576) / 4096 )) conv=notrunc,fsync status=none
    same_tensors "$fs merge output unchanged after writes to the input" "$mnt/m.txt" "$mnt/mm.gguf"
    same_tensors "$fs repack output unchanged after writes to the input" "$mnt/m.txt" "$mnt/r.gguf"
}

# padding_suite FS MOUNT: an input whose alignment padding holds stray bytes
# (the format leaves padding unread): the clone run must stop there, so the
# output's padding is zeros as with --no-clone, and the rest still clones.
padding_suite() {
    local fs=$1 mnt=$2
    local P="$mnt/p.gguf"
    "$BIN" synth --preset tiny --layers 3 --alignment 4096 "$P" >/dev/null 2>&1 || { bad "$fs: synth"; return; }
    python3 "$HERE/ggml_layout.py" gaps "$P" >"$TMP/gaps" || { bad "$fs: gaps of the padded model"; return; }
    local n=0 start end
    while read -r start end; do
        n=$((n + 1))
        [ $((n % 2)) -eq 1 ] || continue   # every other gap: runs both stop and go on
        printf 'stray' | dd of="$P" bs=1 seek=$(( (start + end) / 2 )) conv=notrunc status=none
    done <"$TMP/gaps"
    [ "$n" -ge 4 ] && ok || bad "$fs: only $n padding gaps in the padded model"
    expect_exit 0 "$fs repack of stray padding" "$BIN" repack "$P" "$mnt/p1.gguf"
    expect_grep "$fs repack of stray padding cloned" "$TMP/err" "cloned "
    expect_exit 0 "$fs repack --no-clone of stray padding" "$BIN" repack --no-clone "$P" "$mnt/p0.gguf"
    expect_same_file "$fs stray padding: repack = --no-clone" "$mnt/p1.gguf" "$mnt/p0.gguf"
    if cmp -s "$P" "$mnt/p0.gguf"; then bad "$fs: the stray bytes were not in the padding"; else ok; fi
    expect_exit 0 "$fs edit -o of stray padding" "$BIN" edit --set general.name=x -o "$mnt/p2.gguf" "$P"
    expect_exit 0 "$fs edit -o --no-clone of stray padding" "$BIN" edit --no-clone --set general.name=x -o "$mnt/p3.gguf" "$P"
    expect_same_file "$fs stray padding: edit -o = --no-clone" "$mnt/p2.gguf" "$mnt/p3.gguf"
    # split --clone --dry-run: llama-gguf-split's sizes, and it says so; the shards
    # written are larger by at most a block and the padding pair.
    local Q="$mnt/pd.gguf"
    "$BIN" synth --preset tiny --layers 3 "$Q" >/dev/null 2>&1 || bad "$fs: synth (alignment 32)"
    expect_exit 0 "$fs split --clone --dry-run" "$BIN" split --clone --dry-run --split-max-tensors 9 "$Q" "$mnt/pd"
    expect_grep "$fs split --clone --dry-run names the padding" "$TMP/out" "ggufkit.padding"
    cp "$TMP/out" "$TMP/plan"
    expect_exit 0 "$fs split --clone" "$BIN" split --clone --split-max-tensors 9 "$Q" "$mnt/pd"
    local name planned real
    while read -r name _ _ planned _; do
        real=$(stat -c %s "$name" 2>/dev/null || echo -1)
        if [ "$real" -ge "$planned" ] && [ "$real" -le $((planned + 4096 + 64)) ]; then ok; else
            bad "$fs: $name has $real bytes, the dry run said $planned (+ at most a block and the pair)"
        fi
    done < <(grep "tensors" "$TMP/plan" | grep -v "shards,")
    rm -f "$P" "$Q" "$mnt"/p[0-3].gguf "$mnt"/pd-*.gguf
}

# refusal_suite FS MOUNT OTHER: clones refused where the probe promised them
# (the shim's GK_FAULT_CLONE_AFTER), and an output on the filesystem OTHER
# (EXDEV): the copying path runs, and the outputs are the --no-clone ones.
refusal_suite() {
    local fs=$1 mnt=$2 other=$3
    local P="$mnt/q.gguf"
    "$BIN" synth --preset tiny --layers 3 --alignment 4096 "$P" >/dev/null 2>&1 || { bad "$fs: synth"; return; }
    expect_exit 0 "$fs repack --no-clone" "$BIN" repack --no-clone "$P" "$mnt/q0.gguf"
    expect_exit 0 "$fs edit -o --no-clone" "$BIN" edit --no-clone --set general.name=x -o "$mnt/qe0.gguf" "$P"
    expect_exit 0 "$fs edit -o to $other" "$BIN" edit --set general.name=x -o "$other/qx.gguf" "$P"
    if grep -q "cloned" "$TMP/err"; then bad "$fs: edit -o to another filesystem says it cloned"; else ok; fi
    expect_same_file "$fs edit -o to $other = --no-clone" "$other/qx.gguf" "$mnt/qe0.gguf"
    expect_exit 0 "$fs split --clone" "$BIN" split --clone --split-max-tensors 9 "$P" "$mnt/qs"
    expect_exit 0 "$fs merge --no-clone" "$BIN" merge --no-clone "$mnt/qs-00001-of-00004.gguf" "$mnt/qm0.gguf"
    expect_exit 0 "$fs merge to $other" "$BIN" merge "$mnt/qs-00001-of-00004.gguf" "$other/qm.gguf"
    expect_same_file "$fs merge to $other = --no-clone" "$other/qm.gguf" "$mnt/qm0.gguf"
    rm -f "$other/qx.gguf" "$other/qm.gguf"
    if [ -z "$SHIM" ]; then
        skip "$fs: clones refused after the probe (no fault shim given)"
        rm -f "$P" "$mnt"/q*.gguf
        return
    fi
    local shim=(env LD_PRELOAD="$SHIM" ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0")
    # 1: the probe's clone only; the data section's run is refused and copied.
    expect_exit 0 "$fs repack, clones refused after the probe" \
        "${shim[@]}" GK_FAULT_CLONE_AFTER=1 "$BIN" repack "$P" "$mnt/q1.gguf"
    if grep -q "cloned" "$TMP/err"; then bad "$fs: repack with refused clones says it cloned"; else ok; fi
    expect_same_file "$fs repack, clones refused = --no-clone" "$mnt/q1.gguf" "$mnt/q0.gguf"
    expect_exit 0 "$fs edit -o, clones refused after the probe" \
        "${shim[@]}" GK_FAULT_CLONE_AFTER=1 "$BIN" edit --set general.name=x -o "$mnt/qe1.gguf" "$P"
    expect_same_file "$fs edit -o, clones refused = --no-clone" "$mnt/qe1.gguf" "$mnt/qe0.gguf"
    # 2: the probe and the first shard's run clone; the next shard's is refused.
    expect_exit 0 "$fs merge, clones refused from the second shard on" \
        "${shim[@]}" GK_FAULT_CLONE_AFTER=2 "$BIN" merge "$mnt/qs-00001-of-00004.gguf" "$mnt/qm2.gguf"
    expect_grep "$fs merge, first shard cloned" "$TMP/err" "cloned "
    expect_same_file "$fs merge, clones refused from the second shard = --no-clone" "$mnt/qm2.gguf" "$mnt/qm0.gguf"
    # An input that shrinks while its clone run is pending (at the last of the
    # padding reads the run compares; and once more with the run refused and
    # copied): exit 1 naming the input, no output.
    local extra reads
    for extra in GK_FAULT_CLONE_AFTER=1000 GK_FAULT_CLONE_AFTER=1; do
        cp "$P" "$mnt/qt.gguf"
        expect_exit 0 "$fs repack ($extra), counted" "${shim[@]}" "$extra" GK_FAULT_TRIGGER_PATH=qt.gguf \
            GK_FAULT_COUNT_OUT="$TMP/count" "$BIN" repack "$mnt/qt.gguf" "$mnt/qt-count.gguf"
        reads=$(sed -n 's/^read //p' "$TMP/count")
        rm -f "$mnt/qt-count.gguf"
        expect_exit 1 "$fs repack ($extra) of an input that shrinks during its clone run" \
            "${shim[@]}" "$extra" GK_FAULT_TRIGGER_PATH=qt.gguf GK_FAULT_TRIGGER=read:$((${reads:-0} - 100)) \
            GK_FAULT_ACTION=truncate:3000000 "$BIN" repack "$mnt/qt.gguf" "$mnt/qt1.gguf"
        expect_grep "$fs ($extra) the shrinking input is named" "$TMP/err" "qt.gguf: offset"
        expect_grep "$fs ($extra) the shrinking input ended early" "$TMP/err" "input ended early"
        expect_absent "$fs ($extra) no output from a shrinking input" "$mnt/qt1.gguf"
    done
    rm -f "$P" "$mnt"/q*.gguf
}

# On filesystems that do not clone: the same commands, byte for byte as with --no-clone.
plain_suite() {
    local fs=$1 mnt=$2
    local M="$mnt/m.gguf"
    cp "$TMP/small.gguf" "$M"
    expect_exit 0 "$fs edit -o" "$BIN" edit --set-file tokenizer.chat_template="$TMP/t.jinja" -o "$mnt/e.gguf" "$M"
    if grep -q "cloned" "$TMP/err"; then bad "$fs: edit -o says it cloned"; else ok; fi
    expect_exit 0 "$fs edit -o --no-clone" "$BIN" edit --no-clone --set-file tokenizer.chat_template="$TMP/t.jinja" -o "$mnt/e0.gguf" "$M"
    expect_same_file "$fs edit -o = --no-clone" "$mnt/e.gguf" "$mnt/e0.gguf"
    expect_exit 0 "$fs repack --alignment 64" "$BIN" repack --alignment 64 "$M" "$mnt/r.gguf"
    expect_exit 0 "$fs repack --no-clone" "$BIN" repack --no-clone --alignment 64 "$M" "$mnt/r0.gguf"
    expect_same_file "$fs repack = --no-clone" "$mnt/r.gguf" "$mnt/r0.gguf"
    expect_exit 0 "$fs split --clone" "$BIN" split --clone --split-max-tensors 7 "$M" "$mnt/s"
    expect_exit 0 "$fs split --no-clone" "$BIN" split --no-clone --split-max-tensors 7 "$M" "$mnt/t"
    local k
    for k in "$mnt"/s-*.gguf; do
        expect_same_file "$fs split ${k##*/} = --no-clone" "$k" "$mnt/t-${k##*/s-}"
    done
    expect_exit 0 "$fs merge" "$BIN" merge "$(ls "$mnt"/s-00001-of-*.gguf | head -1)" "$mnt/mm.gguf"
    expect_exit 0 "$fs merge --no-clone" "$BIN" merge --no-clone "$(ls "$mnt"/t-00001-of-*.gguf | head -1)" "$mnt/mm0.gguf"
    expect_same_file "$fs merge = --no-clone" "$mnt/mm.gguf" "$mnt/mm0.gguf"
    expect_same_file "$fs split + merge gives the file back" "$M" "$mnt/mm.gguf"
    cp "$M" "$mnt/ip.gguf"
    cp "$M" "$mnt/ip0.gguf"
    expect_exit 0 "$fs --in-place=auto" "$BIN" edit --in-place=auto --set-file tokenizer.chat_template="$TMP/t.jinja" "$mnt/ip.gguf"
    expect_exit 0 "$fs --in-place=auto --no-clone" "$BIN" edit --no-clone --in-place=auto --set-file tokenizer.chat_template="$TMP/t.jinja" "$mnt/ip0.gguf"
    expect_same_file "$fs --in-place=auto = --no-clone" "$mnt/ip.gguf" "$mnt/ip0.gguf"
    expect_same_file "$fs --in-place=auto = edit -o" "$mnt/ip.gguf" "$mnt/e.gguf"
}

mount_fs xfs "$TMP/xfs" 4G || skip_all "cannot mount an XFS image: $(cat "$TMP/mkfs.err" "$TMP/mount.err" 2>/dev/null | head -2)"
mount_fs btrfs "$TMP/btrfs" 4G || skip_all "cannot mount a btrfs image: $(cat "$TMP/mkfs.err" "$TMP/mount.err" 2>/dev/null | head -2)"
mount_fs ext4 "$TMP/ext4" 1G || skip_all "cannot mount an ext4 image: $(cat "$TMP/mkfs.err" "$TMP/mount.err" 2>/dev/null | head -2)"
mount_fs tmpfs "$TMP/tmpfs" 512M || skip_all "cannot mount a tmpfs"

"$BIN" synth --preset tiny --layers 48 "$TMP/big.gguf" >/dev/null 2>&1 || bad "synth of the 127 MB model"
"$BIN" synth --preset tiny --layers 3 "$TMP/small.gguf" >/dev/null 2>&1 || bad "synth of the small model"
size=$(stat -c %s "$TMP/big.gguf" 2>/dev/null || echo 0)
[ "$size" -gt 120000000 ] && ok || bad "the big model has $size bytes"

clone_suite xfs "$TMP/xfs"
clone_suite btrfs "$TMP/btrfs"
padding_suite xfs "$TMP/xfs"
padding_suite btrfs "$TMP/btrfs"
refusal_suite xfs "$TMP/xfs" "$TMP/btrfs"
refusal_suite btrfs "$TMP/btrfs" "$TMP/ext4"
rm -f "$TMP/big.gguf"
plain_suite ext4 "$TMP/ext4"
plain_suite tmpfs "$TMP/tmpfs"

echo "figures (model: $size bytes; goal: 0.2 s, bound: $MAX_SECONDS s; space: less than 16 MiB):"
cat "$FIGURES"
finish
