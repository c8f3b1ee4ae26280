#!/usr/bin/env bash
# test_split_merge_endian.sh - CLI tests of `ggufkit split`, `merge` and `endian`.
#
# usage: test_split_merge_endian.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN = the golden reference folder (syn1/, imatrix/).
# Without it the golden checks print SKIPPED; the checks on `ggufkit synth`
# models (round trips, refusals, atomicity, usage) always run.
#
# Golden: `split --split-max-tensors 5 syn1-f32.gguf` and `split --split-max-size
# 1M syn1-f16.gguf` byte-identical to llama-gguf-split's shards; merging those
# shards gives syn1-f32 / syn1-f16 back and equals the reference merge with its
# stale split.* keys removed; `endian --to big` of syn1-f32 / syn1-f16 equals
# gguf_convert_endian.py's output; every golden file survives the trip to the
# other byte order and back byte for byte, the vocabulary-only real/ files too
# (types without a byte-swap kernel are reported SKIPPED).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"
EDIT="python3 $HERE/gguf_edit.py"

# expect_err NAME PATTERN : the last command's stderr holds PATTERN (fixed string).
expect_err() {
    if grep -qF -- "$2" "$TMP/err"; then ok; else bad "$1: no '$2' in stderr: $(head -c 300 "$TMP/err")"; fi
}

# expect_none NAME GLOB... : no file matches any of the globs.
expect_none() {
    local name=$1 f
    shift
    for f in "$@"; do
        if [ -e "$f" ]; then
            bad "$name: $f exists"
            return
        fi
    done
    ok
}

# ---------------------------------------------------------------------------
# Usage and help
# ---------------------------------------------------------------------------
for cmd in split merge endian; do
    expect_exit 0 "$cmd --help" "$BIN" "$cmd" --help
    expect_exit 2 "$cmd without arguments" "$BIN" "$cmd"
    expect_exit 2 "$cmd bad option" "$BIN" "$cmd" --bogus a b
done
expect_exit 2 "split without a limit" "$BIN" split "$TMP/a.gguf" "$TMP/p"
expect_exit 2 "split with both limits" "$BIN" split --split-max-tensors 2 --split-max-size 1M "$TMP/a.gguf" "$TMP/p"
expect_exit 2 "split zero tensors" "$BIN" split --split-max-tensors 0 "$TMP/a.gguf" "$TMP/p"
expect_exit 2 "split bad size" "$BIN" split --split-max-size 12Q "$TMP/a.gguf" "$TMP/p"
expect_exit 2 "endian bad order" "$BIN" endian --to middle "$TMP/a.gguf" "$TMP/b.gguf"
expect_exit 2 "endian without --to" "$BIN" endian "$TMP/a.gguf" "$TMP/b.gguf"
expect_exit 1 "split missing input" "$BIN" split --split-max-tensors 2 "$TMP/nothing.gguf" "$TMP/p"

# ---------------------------------------------------------------------------
# Generated models (always run)
# ---------------------------------------------------------------------------
M=$TMP/model.gguf
if ! "$BIN" synth "$M" >/dev/null 2>&1; then
    bad "synth could not make a test model"
else
    # split by tensors and by size, merge back exactly (from any shard)
    mkdir -p "$TMP/s1"
    expect_exit 0 "split by tensors" "$BIN" split --split-max-tensors 4 "$M" "$TMP/s1/m"
    n=$(ls "$TMP"/s1/m-*-of-00006.gguf 2>/dev/null | wc -l)
    [ "$n" -eq 6 ] && ok || bad "split by tensors: $n shards, expected 6"
    expect_exit 0 "merge from shard 4" "$BIN" merge "$TMP/s1/m-00004-of-00006.gguf" "$TMP/s1/merged.gguf"
    expect_same_file "merge by tensors" "$TMP/s1/merged.gguf" "$M"
    expect_exit 0 "info of a shard" "$BIN" info "$TMP/s1/m-00002-of-00006.gguf"
    if grep -q "shard 2 of 6" "$TMP/out" && grep -q "complete, 6 shards, 21 tensors" "$TMP/out"; then ok; else bad "info of a shard: no set report"; fi

    mkdir -p "$TMP/s2"
    expect_exit 0 "split by size" "$BIN" split --split-max-size 600K "$M" "$TMP/s2/m"
    expect_exit 0 "merge by size" "$BIN" merge "$TMP/s2/m-00001-of-"*.gguf "$TMP/s2/merged.gguf"
    expect_same_file "merge by size" "$TMP/s2/merged.gguf" "$M"

    # a tensor larger than the limit gets a shard of its own (no abort)
    mkdir -p "$TMP/s3"
    expect_exit 0 "split tiny size" "$BIN" split --split-max-size 1K "$M" "$TMP/s3/m"
    n=$(ls "$TMP"/s3/m-*-of-00021.gguf 2>/dev/null | wc -l)
    [ "$n" -eq 21 ] && ok || bad "split tiny size: $n shards, expected 21"
    expect_exit 0 "merge tiny size" "$BIN" merge "$TMP/s3/m-00021-of-00021.gguf" "$TMP/s3/merged.gguf"
    expect_same_file "merge tiny size" "$TMP/s3/merged.gguf" "$M"

    # --no-tensor-first-split: a metadata-only first shard
    mkdir -p "$TMP/s4"
    expect_exit 0 "split no tensor first" "$BIN" split --split-max-tensors 10 --no-tensor-first-split "$M" "$TMP/s4/m"
    expect_exit 0 "dump metadata shard" "$BIN" info "$TMP/s4/m-00001-of-00004.gguf"
    if grep -q "^tensors: *0" "$TMP/out"; then ok; else bad "no-tensor-first-split: first shard has tensors"; fi
    expect_exit 0 "merge no tensor first" "$BIN" merge "$TMP/s4/m-00003-of-00004.gguf" "$TMP/s4/merged.gguf"
    expect_same_file "merge no tensor first" "$TMP/s4/merged.gguf" "$M"

    # --dry-run writes nothing
    mkdir -p "$TMP/s5"
    expect_exit 0 "split dry run" "$BIN" split --dry-run --split-max-tensors 4 "$M" "$TMP/s5/m"
    expect_none "split dry run" "$TMP"/s5/*
    if grep -q "6 shards, 21 tensors" "$TMP/out"; then ok; else bad "split dry run: no plan printed"; fi

    # alignment 64: every shard aligned, merged back exactly
    mkdir -p "$TMP/a64"
    "$BIN" repack --alignment 64 "$M" "$TMP/a64/in.gguf" >/dev/null 2>&1 || bad "repack --alignment 64"
    expect_exit 0 "split alignment 64" "$BIN" split --split-max-size 700K "$TMP/a64/in.gguf" "$TMP/a64/m"
    expect_exit 0 "verify alignment-64 shards" "$BIN" verify "$TMP"/a64/m-*.gguf
    for s in "$TMP"/a64/m-*.gguf; do
        "$BIN" info "$s" >"$TMP/out" 2>&1
        grep -q "^alignment: *64" "$TMP/out" && ok || bad "alignment 64: ${s##*/} not aligned to 64"
    done
    expect_exit 0 "merge alignment 64" "$BIN" merge "$TMP/a64/m-00002-of-"*.gguf "$TMP/a64/merged.gguf"
    expect_same_file "merge alignment 64" "$TMP/a64/merged.gguf" "$TMP/a64/in.gguf"

    # big-endian models split and merge in their own order
    mkdir -p "$TMP/be"
    expect_exit 0 "endian to big" "$BIN" endian --to big "$M" "$TMP/be/in.gguf"
    expect_exit 0 "split big-endian" "$BIN" split --split-max-tensors 8 "$TMP/be/in.gguf" "$TMP/be/m"
    expect_exit 0 "merge big-endian" "$BIN" merge "$TMP/be/m-00001-of-00003.gguf" "$TMP/be/merged.gguf"
    expect_same_file "merge big-endian" "$TMP/be/merged.gguf" "$TMP/be/in.gguf"
    expect_exit 0 "endian back to little" "$BIN" endian --to little "$TMP/be/merged.gguf" "$TMP/be/le.gguf"
    expect_same_file "endian round trip" "$TMP/be/le.gguf" "$M"
    expect_exit 0 "endian native" "$BIN" endian --to native "$TMP/be/in.gguf" "$TMP/be/native.gguf"
    expect_same_file "endian native" "$TMP/be/native.gguf" "$M"

    # refusals: existing outputs, inputs never overwritten
    expect_exit 1 "split over existing shards" "$BIN" split --split-max-tensors 4 "$M" "$TMP/s1/m"
    expect_err "split over existing shards" "already exists"
    expect_exit 1 "merge over existing" "$BIN" merge "$TMP/s1/m-00001-of-00006.gguf" "$TMP/s1/merged.gguf"
    cp "$TMP/s1/m-00003-of-00006.gguf" "$TMP/keep.gguf"
    expect_exit 1 "merge over a shard" "$BIN" merge --force "$TMP/s1/m-00001-of-00006.gguf" "$TMP/s1/m-00003-of-00006.gguf"
    expect_same_file "merge over a shard leaves it" "$TMP/s1/m-00003-of-00006.gguf" "$TMP/keep.gguf"
    expect_exit 1 "endian in place" "$BIN" endian --force --to big "$M" "$M"
    expect_exit 1 "endian over existing" "$BIN" endian --to big "$M" "$TMP/s1/merged.gguf"
    expect_exit 0 "endian --force" "$BIN" endian --force --to big "$M" "$TMP/s1/merged.gguf"
    expect_exit 1 "merge of a plain file" "$BIN" merge "$M" "$TMP/x.gguf"
    expect_err "merge of a plain file" "not a shard"

    # all or none: a shard name taken by a folder stops the run before writing
    mkdir -p "$TMP/s6/m-00003-of-00006.gguf"
    expect_exit 1 "split blocked" "$BIN" split --split-max-tensors 4 "$M" "$TMP/s6/m"
    expect_none "split blocked leaves nothing" "$TMP"/s6/m-00001-of-00006.gguf "$TMP"/s6/m-00002-of-00006.gguf
    # ... and a write failure midway removes the shards already published
    mkdir -p "$TMP/s7"
    if command -v prlimit >/dev/null 2>&1; then
        # the first shard (metadata only) fits in 100 kB, the second does not
        prlimit --fsize=100000 "$BIN" split --split-max-tensors 12 --no-tensor-first-split "$M" "$TMP/s7/m" \
            >/dev/null 2>"$TMP/err"
        rc=$?
        [ "$rc" -ne 0 ] && ok || bad "split with a file size limit: exit 0"
        left=$(ls -A "$TMP/s7" | wc -l)
        [ "$left" -eq 0 ] && ok || bad "split failure midway left $(ls -A "$TMP/s7" | tr '\n' ' ')"
    else
        skip "midway failure test (no prlimit)"
    fi

    # broken sets (crafted from a good one with gguf_edit.py)
    mkdir -p "$TMP/bad"
    craft() { # craft NAME : a fresh copy of set s1 in $TMP/bad/NAME
        rm -rf "$TMP/bad/$1"
        mkdir -p "$TMP/bad/$1"
        cp "$TMP"/s1/m-*-of-00006.gguf "$TMP/bad/$1/"
    }
    craft missing
    rm "$TMP/bad/missing/m-00003-of-00006.gguf"
    expect_exit 1 "merge missing shard" "$BIN" merge "$TMP/bad/missing/m-00001-of-00006.gguf" "$TMP/bad/out.gguf"
    expect_err "merge missing shard" "m-00003-of-00006.gguf: shard 3 of 6 is missing"
    expect_exit 0 "info of a broken set" "$BIN" info "$TMP/bad/missing/m-00002-of-00006.gguf"
    if grep -q "INCOMPLETE OR INCONSISTENT" "$TMP/out"; then ok; else bad "info of a broken set: not reported"; fi
    expect_exit 0 "dump of a broken set" "$BIN" dump "$TMP/bad/missing/m-00002-of-00006.gguf"
    if grep -q "shard 3 of 6 is missing" "$TMP/out"; then ok; else bad "dump of a broken set: not reported"; fi
    expect_exit 1 "verify of a shard of a broken set" "$BIN" verify "$TMP/bad/missing/m-00002-of-00006.gguf"
    if grep -q "shard set: .*shard 3 of 6 is missing" "$TMP/out"; then ok; else bad "verify of a broken set: not reported"; fi
    expect_exit 0 "verify of a shard of a complete set" "$BIN" verify "$TMP/s1/m-00002-of-00006.gguf"
    if grep -q "complete, 6 shards" "$TMP/out"; then ok; else bad "verify of a complete set: not reported"; fi

    craft other   # a shard of another split of the same model, same shard count
    mkdir -p "$TMP/bad/other/b"
    "$BIN" split --split-max-size 1100K "$M" "$TMP/bad/other/b/m" >/dev/null 2>&1
    if [ -e "$TMP/bad/other/b/m-00003-of-00006.gguf" ]; then
        cp "$TMP/bad/other/b/m-00003-of-00006.gguf" "$TMP/bad/other/m-00003-of-00006.gguf"
        expect_exit 1 "merge shard of another set" "$BIN" merge "$TMP/bad/other/m-00001-of-00006.gguf" "$TMP/bad/out.gguf"
        if grep -qE "also in an earlier shard|hold [0-9]+ tensors" "$TMP/err"; then ok; else bad "merge shard of another set: $(cat "$TMP/err")"; fi
    else
        bad "could not make a second 6-shard set: $(ls "$TMP/bad/other/b")"
    fi

    craft dup
    $EDIT "$TMP/s1/m-00002-of-00006.gguf" "$TMP/bad/dup/m-00002-of-00006.gguf" \
        --rename-tensor blk.0.attn_v.weight blk.0.attn_q.weight
    expect_exit 1 "merge duplicate tensor" "$BIN" merge "$TMP/bad/dup/m-00001-of-00006.gguf" "$TMP/bad/out.gguf"
    expect_err "merge duplicate tensor" "tensor 'blk.0.attn_q.weight' is also in an earlier shard"

    craft count
    for s in "$TMP"/s1/m-*.gguf; do
        $EDIT "$s" "$TMP/bad/count/${s##*/}" --set split.tensors.count i32 22
    done
    expect_exit 1 "merge wrong tensor count" "$BIN" merge "$TMP/bad/count/m-00001-of-00006.gguf" "$TMP/bad/out.gguf"
    expect_err "merge wrong tensor count" "hold 21 tensors, split.tensors.count says 22"

    craft one
    $EDIT "$TMP/s1/m-00005-of-00006.gguf" "$TMP/bad/one/m-00005-of-00006.gguf" --set split.tensors.count i32 20
    expect_exit 1 "merge one shard disagrees" "$BIN" merge "$TMP/bad/one/m-00001-of-00006.gguf" "$TMP/bad/out.gguf"
    expect_err "merge one shard disagrees" "split.tensors.count 20"

    craft seq
    $EDIT "$TMP/s1/m-00004-of-00006.gguf" "$TMP/bad/seq/m-00004-of-00006.gguf" --set split.no u16 4
    expect_exit 1 "merge wrong split.no" "$BIN" merge "$TMP/bad/seq/m-00002-of-00006.gguf" "$TMP/bad/out.gguf"
    expect_err "merge wrong split.no" "says it is shard 5 of 6"

    craft n
    $EDIT "$TMP/s1/m-00006-of-00006.gguf" "$TMP/bad/n/m-00006-of-00006.gguf" --set split.count u16 7
    expect_exit 1 "merge wrong split.count" "$BIN" merge "$TMP/bad/n/m-00001-of-00006.gguf" "$TMP/bad/out.gguf"
    expect_err "merge wrong split.count" "of 7"

    craft align
    $EDIT "$TMP/s1/m-00002-of-00006.gguf" "$TMP/bad/align/m-00002-of-00006.gguf" --set general.alignment u32 64
    expect_exit 1 "merge mixed alignment" "$BIN" merge "$TMP/bad/align/m-00001-of-00006.gguf" "$TMP/bad/out.gguf"
    expect_err "merge mixed alignment" "alignment 64"

    craft order
    "$BIN" endian --to big "$TMP/s1/m-00006-of-00006.gguf" "$TMP/bad/order/x.gguf" >/dev/null 2>&1
    mv "$TMP/bad/order/x.gguf" "$TMP/bad/order/m-00006-of-00006.gguf"
    expect_exit 1 "merge mixed byte order" "$BIN" merge "$TMP/bad/order/m-00001-of-00006.gguf" "$TMP/bad/out.gguf"
    expect_err "merge mixed byte order" "big-endian, other shards little-endian"

    mkdir -p "$TMP/bad/name"
    cp "$TMP/s1/m-00002-of-00006.gguf" "$TMP/bad/name/renamed.gguf"
    expect_exit 1 "merge misnamed shard" "$BIN" merge "$TMP/bad/name/renamed.gguf" "$TMP/bad/out.gguf"
    expect_err "merge misnamed shard" "must be named PREFIX-00002-of-00006.gguf"
    expect_none "refused merges write nothing" "$TMP/bad/out.gguf"
fi

# ---------------------------------------------------------------------------
# Golden parity
# ---------------------------------------------------------------------------
if [ -z "$GOLDEN" ] || [ ! -d "$GOLDEN/syn1" ]; then
    skip "golden parity (no golden data at ${GOLDEN:-<GGUFKIT_GOLDEN unset>})"
else
    S=$GOLDEN/syn1
    mkdir -p "$TMP/g"
    expect_exit 0 "golden split t5" "$BIN" split --split-max-tensors 5 "$S/syn1-f32.gguf" "$TMP/g/syn1-split-t5"
    for k in 1 2 3 4 5; do
        f=syn1-split-t5-0000$k-of-00005.gguf
        expect_same_file "golden split t5 shard $k" "$TMP/g/$f" "$S/$f"
    done
    expect_exit 0 "golden split 1M" "$BIN" split --split-max-size 1M "$S/syn1-f16.gguf" "$TMP/g/syn1-split-1M"
    for k in 1 2 3 4; do
        f=syn1-split-1M-0000$k-of-00004.gguf
        expect_same_file "golden split 1M shard $k" "$TMP/g/$f" "$S/$f"
    done
    expect_exit 0 "merge golden t5 shards" "$BIN" merge "$S/syn1-split-t5-00003-of-00005.gguf" "$TMP/g/t5.gguf"
    expect_same_file "merge golden t5 shards" "$TMP/g/t5.gguf" "$S/syn1-f32.gguf"
    $EDIT "$S/syn1-split-t5.merged.gguf" "$TMP/g/ref-merged.gguf" --del-prefix split.
    expect_same_file "merge equals the reference merge without split.*" "$TMP/g/t5.gguf" "$TMP/g/ref-merged.gguf"
    expect_exit 0 "merge golden 1M shards" "$BIN" merge "$S/syn1-split-1M-00004-of-00004.gguf" "$TMP/g/1m.gguf"
    expect_same_file "merge golden 1M shards" "$TMP/g/1m.gguf" "$S/syn1-f16.gguf"
    expect_exit 1 "merge the reference merge (stale split.count 0)" "$BIN" merge "$S/syn1-split-t5.merged.gguf" "$TMP/g/x.gguf"

    for t in f32 f16; do
        expect_exit 0 "golden endian $t" "$BIN" endian --to big "$S/syn1-$t.gguf" "$TMP/g/$t.be.gguf"
        expect_same_file "golden endian $t" "$TMP/g/$t.be.gguf" "$S/syn1-$t.be.gguf"
    done

    # every golden file to the other byte order and back
    n_rt=0
    for f in "$S"/*.gguf "$GOLDEN"/imatrix/*.gguf "$GOLDEN"/real/*.gguf; do
        [ -e "$f" ] || continue
        if "$BIN" info "$f" 2>/dev/null | grep -q "big-endian"; then there=little back=big; else there=big back=little; fi
        rm -f "$TMP/g/rt1.gguf" "$TMP/g/rt2.gguf"
        "$BIN" endian --to $there "$f" "$TMP/g/rt1.gguf" >/dev/null 2>"$TMP/err"
        rc=$?
        if [ $rc -ne 0 ] && grep -q "is not available" "$TMP/err"; then
            skip "endian round trip of ${f##*/}: $(head -1 "$TMP/err")"
            continue
        fi
        if [ $rc -ne 0 ]; then
            bad "endian round trip of ${f##*/}: $(head -1 "$TMP/err")"
            continue
        fi
        if cmp -s "$f" "$TMP/g/rt1.gguf"; then bad "endian of ${f##*/} changed nothing"; continue; fi
        "$BIN" endian --to $back "$TMP/g/rt1.gguf" "$TMP/g/rt2.gguf" >/dev/null 2>"$TMP/err" ||
            { bad "endian back of ${f##*/}: $(head -1 "$TMP/err")"; continue; }
        expect_same_file "endian round trip of ${f##*/}" "$TMP/g/rt2.gguf" "$f"
        n_rt=$((n_rt + 1))
    done
    echo "endian round trips: $n_rt golden files byte-identical"
fi

# ---------------------------------------------------------------------------
# Issue 32: split's memory, its table, repack's limits
# ---------------------------------------------------------------------------
if [ -f "$M" ]; then
    # a failed split prints no shard table (nothing of the set is left); a
    # successful one prints it as written, a dry run as a plan
    run "split into a missing folder" "$BIN" split --split-max-tensors 4 "$M" "$TMP/no/such/dir/p"
    expect_rc "split into a missing folder" 1
    if grep -q "of-0000" "$TMP/out"; then bad "failed split printed the shard table: $(head -3 "$TMP/out")"; else ok; fi
    mkdir -p "$TMP/tbl"
    run "split table" "$BIN" split --split-max-tensors 4 "$M" "$TMP/tbl/p"
    expect_rc "split table" 0
    expect_grep "split: table after writing" "$TMP/out" "wrote 6 shards, 21 tensors"
    got=$(awk '/-of-0000/ {print $1, $4}' "$TMP/out" | while read -r f b; do [ "$(stat -c %s "$f")" = "$b" ] && echo same || echo "$f $b"; done | sort -u)
    [ "$got" = same ] && ok || bad "split table: sizes are not the files' ($got)"
    run "split dry run table" "$BIN" split --dry-run --split-max-tensors 4 "$M" "$TMP/tbl/q"
    expect_grep "split --dry-run: a plan" "$TMP/out" "plan: 6 shards, 21 tensors (dry run: nothing written)"

    # repack: --alignment names its real limit; --reserve 0 adds no pair
    run "repack --alignment 2^31" "$BIN" repack --alignment 2147483648 "$M" "$TMP/al.gguf"
    expect_rc "repack --alignment 2147483648" 2
    expect_grep "repack --alignment 2^31: the real limit" "$TMP/err" "from 1 to 1073741824 (2^30)"
    if grep -q "needs a power of two\"*$" "$TMP/err" && ! grep -q "2^30" "$TMP/err"; then bad "says 'needs a power of two' of a power of two"; else ok; fi
    run "synth --alignment 2^31" "$BIN" synth --alignment 2147483648 "$TMP/al.gguf"
    expect_rc "synth --alignment 2147483648" 2
    expect_grep "synth --alignment 2^31: the real limit" "$TMP/err" "power of two from 1 to 1073741824"
    run "repack --reserve 0" "$BIN" repack --reserve 0 "$M" "$TMP/r0.gguf"
    expect_rc "repack --reserve 0" 0
    expect_same_file "repack --reserve 0: no padding pair (the input's bytes)" "$M" "$TMP/r0.gguf"
    "$BIN" repack --reserve 4096 "$M" "$TMP/r4k.gguf" >/dev/null 2>&1
    run "repack --reserve 0 of a padded file" "$BIN" repack --reserve 0 "$TMP/r4k.gguf" "$TMP/r4k0.gguf"
    expect_same_file "repack --reserve 0 drops a padding pair" "$M" "$TMP/r4k0.gguf"
    # edit --reserve: the same rule (--no-clone: no clone padding either)
    run "edit --reserve 0" "$BIN" edit --no-clone --reserve 0 --set general.name=r0 -o "$TMP/e0.gguf" "$M"
    expect_rc "edit --reserve 0" 0
    if "$BIN" dump "$TMP/e0.gguf" | grep -q ggufkit.padding; then bad "edit --reserve 0 added a padding pair"; else ok; fi
    run "edit --reserve 0 of a padded file" "$BIN" edit --no-clone --reserve 0 --set general.name=r0 -o "$TMP/e40.gguf" "$TMP/r4k.gguf"
    expect_same_file "edit --reserve 0 drops a padding pair" "$TMP/e0.gguf" "$TMP/e40.gguf"

    # split's peak memory does not grow with the shard count or size: 4x the
    # shards (of 8M, of 32M) within 8 MiB of the case with a quarter of them;
    # one 128M shard within 16 MiB of 8M shards (the writer's two 8 MiB buffers
    # fill up to 16M). Before the fix each shard left its buffers in the heap:
    # up to +16 MiB per shard. Peak RSS from GNU time: no timing involved.
    if [ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1; then
        mkdir -p "$TMP/mem"
        "$BIN" synth --preset tiny --layers 24 --type F16 "$TMP/mem/m24.gguf" >/dev/null 2>&1
        "$BIN" synth --preset tiny --layers 96 --type F16 "$TMP/mem/m96.gguf" >/dev/null 2>&1
        peak() {   # IN SIZE: peak RSS in KiB of splitting IN into SIZE shards, and the shard count
            rm -rf "$TMP/mem/o" && mkdir "$TMP/mem/o"
            local k
            k=$(/usr/bin/time -f %M "$BIN" split --split-max-size "$2" "$1" "$TMP/mem/o/s" 2>&1 >/dev/null | tail -1)
            echo "$k $(ls "$TMP/mem/o" | wc -l)"
        }
        read -r base n_base < <(peak "$TMP/mem/m24.gguf" 8M)
        read -r more n_more < <(peak "$TMP/mem/m96.gguf" 8M)
        read -r big n_big < <(peak "$TMP/mem/m96.gguf" 32M)
        read -r one n_one < <(peak "$TMP/mem/m96.gguf" 128M)
        echo "    split peak RSS: $base KiB ($n_base shards of 8M), $more KiB ($n_more shards of 8M, 4x the model);" \
             "$one KiB ($n_one shard of 128M), $big KiB ($n_big shards of 32M)"
        [ "$n_more" -ge $((3 * n_base)) ] && [ "$n_big" -ge 4 ] && [ "$n_one" -eq 1 ] && ok ||
            bad "split memory: shard counts $n_base, $n_more, $n_big, $n_one"
        [ "$more" -le $((base + 8192)) ] && ok || bad "split memory grows with the shard count: $base -> $more KiB"
        [ "$big" -le $((one + 8192)) ] && ok || bad "split memory grows with the shard count: $one -> $big KiB"
        [ "$one" -le $((base + 16384)) ] && ok || bad "split memory grows with the shard size: $base -> $one KiB"
        rm -rf "$TMP/mem"
    else
        skip "split memory (no GNU time at /usr/bin/time)"
    fi
fi

finish
