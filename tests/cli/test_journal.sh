#!/usr/bin/env bash
# test_journal.sh - the journal of an interrupted `edit --in-place` applies only
# to the bytes it was written for (issue 32, items 1 and 3).
#
# usage: test_journal.sh PATH/TO/ggufkit
#
# An in-place edit is stopped (GGUFKIT_FAULT_AFTER_WRITES=N: the process exits at
# its Nth low-level step) before, during and after its header write; then the file
# is replaced in the ways a user replaces files: cp of another model over it (same
# inode), cp of a model with the same header and other tensor bytes, rm + cp (the
# inode may come back), mv away + cp of something else. Each time:
#   - edit --recover, edit --in-place and every reader refuse, say the journal is
#     stale and name `ggufkit edit --discard-journal FILE`; the file is unchanged;
#   - edit --discard-journal removes the journal and leaves the file alone; then
#     the file verifies and edits in place.
# A copy of the interrupted file under a new inode (mv away, cp back) is proven by
# its bytes and recovered; --discard-journal refuses that journal. Recovery and
# discard are themselves stopped before each of their steps and then finished.
# Journals of format 1 (inode only): removed when the file holds their old bytes,
# refused otherwise until `edit --recover --force`.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

cd "$TMP" || exit 1
sha() { sha256sum "$1" | cut -d' ' -f1; }
"$BIN" synth --type F16 a.gguf >/dev/null 2>&1 || bad "synth a"
"$BIN" synth --seed 2 --type F16 b.gguf >/dev/null 2>&1 || bad "synth b"   # a's header, other weights
"$BIN" quantize b.gguf c.gguf Q8_0 >/dev/null 2>&1 || bad "quantize c"
"$BIN" edit --set general.name=edited -o a-new.gguf a.gguf >/dev/null 2>&1 || bad "edit -o"
cmp -s a.gguf b.gguf && bad "a and b should differ"

# crash N FILE : an in-place edit of FILE (a copy of a.gguf) stopped at step N;
# a journal must be left.
crash() {
    cp a.gguf "$2"
    GGUFKIT_FAULT_AFTER_WRITES=$1 "$BIN" edit --set general.name=edited --in-place "$2" >/dev/null 2>&1
    [ -e "$2.ggufkit-journal" ] || bad "crash at $1 left no journal"
}

# stale NAME FILE : FILE's journal is stale: refused everywhere, FILE unchanged,
# then discarded; FILE verifies and edits afterwards.
stale() {
    local name=$1 f=$2 sum
    sum=$(sha "$f")
    expect_exit 1 "$name: edit --recover refuses" "$BIN" edit --recover "$f"
    expect_grep "$name: edit --recover says stale" "$TMP/err" "stale"
    expect_grep "$name: edit --recover names the way out" "$TMP/err" "ggufkit edit --discard-journal $f"
    expect_exit 1 "$name: edit --in-place refuses" "$BIN" edit --set general.name=y --in-place "$f"
    expect_grep "$name: edit --in-place says stale" "$TMP/err" "stale"
    expect_exit 1 "$name: edit --recover --force refuses" "$BIN" edit --recover --force "$f"
    for reader in verify info dump hash; do
        expect_exit 1 "$name: $reader refuses" "$BIN" $reader "$f"
        cat "$TMP/out" >>"$TMP/err"
        expect_grep "$name: $reader names the way out" "$TMP/err" "ggufkit edit --discard-journal $f"
    done
    "$BIN" verify "$f" | grep -q "rule: GGUF spec" && bad "$name: verify labels the journal a GGUF spec finding" || ok
    [ "$(sha "$f")" = "$sum" ] && ok || bad "$name: the file was changed"
    [ -e "$f.ggufkit-journal" ] && ok || bad "$name: the journal was removed"
    expect_exit 0 "$name: edit --discard-journal" "$BIN" edit --discard-journal "$f"
    expect_grep "$name: discard says so" "$TMP/err" "removed a stale journal"
    [ -e "$f.ggufkit-journal" ] && bad "$name: journal left after discard" || ok
    [ "$(sha "$f")" = "$sum" ] && ok || bad "$name: discard changed the file"
    expect_exit 0 "$name: verify after discard" "$BIN" verify "$f"
    expect_exit 0 "$name: edit --recover after discard" "$BIN" edit --recover "$f"
    expect_exit 0 "$name: edit --in-place after discard" "$BIN" edit --set general.name=z --in-place "$f"
}

# Steps of an in-place edit here: 0-2 journal writes, 3 journal fsync, 4 folder
# fsync, 5 header write, 6 fsync, 7 journal unlink.
for n in 3 5 6 7; do
    crash "$n" m.gguf
    cp c.gguf m.gguf                       # the report's case: another model, same inode
    stale "cp other model (stop $n)" m.gguf
    cmp -s m.gguf c.gguf || true

    crash "$n" m.gguf
    cp b.gguf m.gguf                       # the same header and size, other tensor bytes
    stale "cp same-header model (stop $n)" m.gguf

    crash "$n" m.gguf
    rm m.gguf
    cp c.gguf m.gguf                       # the inode may be reused
    stale "rm + cp (stop $n)" m.gguf

    crash "$n" m.gguf
    mv m.gguf g.gguf
    cp b.gguf m.gguf
    stale "mv away + cp other (stop $n)" m.gguf
done

# The interrupted file itself, copied under a new inode: its bytes prove it.
for n in 5 6 7; do
    crash "$n" f.gguf
    mv f.gguf g.gguf
    cp g.gguf f.gguf
    if [ "$n" -ge 6 ]; then
        expect_exit 1 "mv + cp back (stop $n): --discard-journal refuses a journal that belongs" \
            "$BIN" edit --discard-journal f.gguf
        expect_grep "mv + cp back (stop $n): names --recover" "$TMP/err" "ggufkit edit --recover f.gguf"
    fi
    expect_exit 1 "mv + cp back (stop $n): verify refuses" "$BIN" verify f.gguf
    expect_grep "mv + cp back (stop $n): verify names --recover" "$TMP/out" "ggufkit edit --recover f.gguf"
    expect_exit 0 "mv + cp back (stop $n): edit --recover" "$BIN" edit --recover f.gguf
    expect_same_file "mv + cp back (stop $n): the old file" a.gguf f.gguf
    [ -e f.gguf.ggufkit-journal ] && bad "mv + cp back (stop $n): journal left" || ok
done

# Recovery stopped before each of its steps, then finished.
for k in 0 1 2 3 4 5; do
    crash 6 r.gguf
    GGUFKIT_FAULT_AFTER_WRITES=$k "$BIN" edit --recover r.gguf >/dev/null 2>&1
    expect_exit 0 "recovery stopped at $k, then finished" "$BIN" edit --recover r.gguf
    expect_same_file "recovery stopped at $k: the old file" a.gguf r.gguf
    [ -e r.gguf.ggufkit-journal ] && bad "recovery stopped at $k: journal left" || ok
done
# Discard stopped before its unlink and its folder fsync, then finished.
for k in 0 1; do
    crash 5 d.gguf
    cp c.gguf d.gguf
    GGUFKIT_FAULT_AFTER_WRITES=$k "$BIN" edit --discard-journal d.gguf >/dev/null 2>&1
    expect_exit 0 "discard stopped at $k, then finished" "$BIN" edit --discard-journal d.gguf
    expect_same_file "discard stopped at $k: file untouched" c.gguf d.gguf
    [ -e d.gguf.ggufkit-journal ] && bad "discard stopped at $k: journal left" || ok
done
# A file that is gone: --recover names --discard-journal, which removes the journal.
crash 6 gone.gguf
rm gone.gguf
expect_exit 1 "journal without its file: --recover" "$BIN" edit --recover gone.gguf
expect_grep "journal without its file: names the way out" "$TMP/err" "ggufkit edit --discard-journal gone.gguf"
expect_exit 0 "journal without its file: --discard-journal" "$BIN" edit --discard-journal gone.gguf
[ -e gone.gguf.ggufkit-journal ] && bad "journal without its file: left" || ok
expect_exit 0 "--discard-journal without a journal" "$BIN" edit --discard-journal a.gguf
expect_exit 2 "--discard-journal with an operation" "$BIN" edit --discard-journal --set a.b=1 a.gguf
expect_exit 0 "edit --help documents --discard-journal" "$BIN" edit --help
expect_grep "edit --help documents --discard-journal" "$TMP/out" "--discard-journal"

# Things at the journal's name that ggufkit never writes: a folder, a symbolic link
# (to the model itself), a FIFO. Refused with the way out named; discarded; the
# model and the link's target untouched. An empty file or garbage is a torn journal.
for kind in folder link fifo; do
    cp a.gguf o.gguf
    case $kind in
    folder) mkdir o.gguf.ggufkit-journal ;;
    link) ln -s a.gguf o.gguf.ggufkit-journal ;;
    fifo) mkfifo o.gguf.ggufkit-journal ;;
    esac
    run "verify with a $kind as journal" timeout 10 "$BIN" verify o.gguf
    expect_rc "verify with a $kind as journal refuses" 1
    expect_grep "verify with a $kind as journal: the way out" "$TMP/out" "ggufkit edit --discard-journal o.gguf"
    run "edit --recover with a $kind as journal" timeout 10 "$BIN" edit --recover o.gguf
    expect_rc "edit --recover with a $kind as journal refuses" 1
    expect_grep "edit --recover with a $kind: the way out" "$TMP/err" "ggufkit edit --discard-journal o.gguf"
    run "edit --discard-journal of a $kind" timeout 10 "$BIN" edit --discard-journal o.gguf
    expect_rc "edit --discard-journal of a $kind" 0
    [ -e o.gguf.ggufkit-journal ] || [ -L o.gguf.ggufkit-journal ] && bad "$kind journal left" || ok
    expect_same_file "$kind journal: model untouched" a.gguf o.gguf
    expect_exit 0 "$kind journal: verify afterwards" "$BIN" verify o.gguf
done
: >o.gguf.ggufkit-journal
expect_exit 1 "an empty journal: verify refuses" "$BIN" verify o.gguf
expect_grep "an empty journal: verify names --recover" "$TMP/out" "ggufkit edit --recover o.gguf"
expect_exit 0 "an empty journal: --discard-journal removes it" "$BIN" edit --discard-journal o.gguf
[ -e o.gguf.ggufkit-journal ] && bad "empty journal left" || ok

# Format 1 journals (inode, sizes, offset, old bytes, SHA-256).
# v1 FILE OFF OLDHEX : writes FILE's format-1 journal saving OLDHEX at OFF.
v1() {
    python3 - "$1" "$2" "$3" <<'EOF'
import hashlib, os, struct, sys
path, off, old = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
st = os.stat(path)
body = b"GGUFKJ01" + struct.pack("<5Q", st.st_ino, st.st_size, st.st_size, off, len(old)) + old
open(path + ".ggufkit-journal", "wb").write(body + hashlib.sha256(body).digest())
EOF
}
cp a.gguf v.gguf
v1 v.gguf 40 "$(xxd -p -s 40 -l 8 a.gguf)"
expect_exit 0 "format 1, file holds its old bytes: removed" "$BIN" edit --recover v.gguf
expect_same_file "format 1, untouched: file unchanged" a.gguf v.gguf
[ -e v.gguf.ggufkit-journal ] && bad "format 1 untouched: journal left" || ok
v1 v.gguf 40 "0000000000000000"
expect_exit 1 "format 1, other bytes: refused" "$BIN" edit --recover v.gguf
expect_grep "format 1: names --force" "$TMP/err" "edit --recover --force v.gguf"
expect_grep "format 1: names --discard-journal" "$TMP/err" "edit --discard-journal v.gguf"
expect_same_file "format 1 refused: file unchanged" a.gguf v.gguf
expect_exit 0 "format 1: --recover --force applies it" "$BIN" edit --recover --force v.gguf
cmp -s a.gguf v.gguf && bad "format 1 --force: old bytes not put back" || ok
[ "$(xxd -p -s 40 -l 8 v.gguf)" = "0000000000000000" ] && ok || bad "format 1 --force: wrong bytes"
cp c.gguf v.gguf
v1 v.gguf 40 "0000000000000000"
cp a.gguf v.gguf   # other size: stale even with --force
expect_exit 1 "format 1, other size: --force refuses" "$BIN" edit --recover --force v.gguf
expect_grep "format 1, other size: stale" "$TMP/err" "stale"
expect_exit 0 "format 1: --discard-journal" "$BIN" edit --discard-journal v.gguf
expect_same_file "format 1 discarded: file unchanged" a.gguf v.gguf

finish
