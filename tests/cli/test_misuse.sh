#!/usr/bin/env bash
# test_misuse.sh - the smaller defects of issue 32 (item 4):
#   - verify names no rule for a file it cannot read (missing, a folder, a journal
#     beside it): "(not checked: ...)", and "rule": null in JSON;
#   - edit --delete with a literal key holding glob characters deletes that key
#     alone (an exact match wins), and a backslash escapes a glob character;
#   - quantize --dry-run checks its outputs as the real run does: an OUT that
#     exists (without --force) or that is an input makes it exit 1 and say so;
#     so does edit --dry-run -o OUT.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

cd "$TMP" || exit 1
"$BIN" synth a.gguf >/dev/null 2>&1 || bad "synth"

# --- verify's labels -------------------------------------------------------------
for what in missing folder journal; do
    case $what in
    missing) f=nothere.gguf ;;
    folder) mkdir -p dir.gguf; f=dir.gguf ;;
    journal) cp a.gguf j.gguf; echo "not a journal" >j.gguf.ggufkit-journal; f=j.gguf ;;
    esac
    expect_exit 1 "verify $what" "$BIN" verify "$f"
    if grep -q "rule: GGUF spec" "$TMP/out"; then bad "verify $what: labelled a GGUF spec finding: $(cat "$TMP/out")"; else ok; fi
    expect_grep "verify $what: says it was not checked" "$TMP/out" "not checked"
    expect_exit 1 "verify --json $what" "$BIN" verify --json "$f"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=d["files"][0]["findings"][0]; sys.exit(0 if f["rule"] is None else 1)' "$TMP/out" &&
        ok || bad "verify --json $what: rule is not null"
done
# A real finding keeps its rule.
head -c 100 a.gguf >cut.gguf
expect_exit 1 "verify of a cut file" "$BIN" verify cut.gguf
expect_grep "verify of a cut file names its rule" "$TMP/out" "(rule: "

# --- edit --delete with glob characters in a key ------------------------------------
expect_exit 0 "keys with glob characters" "$BIN" edit --force --set 'x*y=1' --set xzy=2 --set 'x?z=3' --set xaz=4 \
    --set 'x[ab]=5' --set xa=6 -o g.gguf a.gguf
keys() { "$BIN" dump --json "$1" | python3 -c 'import json,sys; print(" ".join(sorted(k for k in json.load(sys.stdin)["metadata"] if k.startswith("x"))))'; }
# delete PATTERN WANT : deleting PATTERN from g.gguf leaves the x-keys WANT.
delete() {
    rm -f d.gguf
    expect_exit 0 "--delete '$1'" "$BIN" edit --delete "$1" -o d.gguf g.gguf
    local got
    got=$(keys d.gguf)
    [ "$got" = "$2" ] && ok || bad "--delete '$1' left '$got', expected '$2'"
}
delete 'x*y' 'x?z x[ab] xa xaz xzy'
delete 'x?z' 'x*y x[ab] xa xaz xzy'
delete 'x[ab]' 'x*y x?z xa xaz xzy'
delete 'x\?z' 'x*y x[ab] xa xaz xzy'
delete 'x\*y' 'x?z x[ab] xa xaz xzy'
delete 'x?y' 'x?z x[ab] xa xaz'              # no key is x?y: a glob, matching x*y and xzy
delete 'xz*' 'x*y x?z x[ab] xa xaz'
expect_exit 1 "--delete 'x\\*q' matches nothing" "$BIN" edit --delete 'x\*q' -o d2.gguf g.gguf
expect_exit 0 "edit --help documents the exact match" "$BIN" edit --help
expect_grep "edit --help documents the exact match" "$TMP/out" "deleted alone"

# --- quantize --dry-run and an existing OUT ------------------------------------------
cp a.gguf exists.gguf
expect_exit 1 "quantize --dry-run onto an existing OUT" "$BIN" quantize --dry-run a.gguf exists.gguf Q8_0
expect_grep "quantize --dry-run says OUT exists" "$TMP/err" "exists.gguf: already exists"
expect_grep "quantize --dry-run still prints the plan" "$TMP/out" "exists.gguf"
expect_exit 1 "the real run fails the same way" "$BIN" quantize a.gguf exists.gguf Q8_0
expect_exit 0 "quantize --dry-run --force onto an existing OUT" "$BIN" quantize --dry-run --force a.gguf exists.gguf Q8_0
expect_exit 1 "quantize --dry-run --force onto its input" "$BIN" quantize --dry-run --force a.gguf a.gguf Q8_0
expect_grep "quantize --dry-run onto its input says so" "$TMP/err" "input"
expect_exit 0 "quantize --dry-run onto a new OUT" "$BIN" quantize --dry-run a.gguf new.gguf Q8_0
expect_absent "quantize --dry-run writes nothing" new.gguf
expect_exit 1 "quantize --dry-run --json onto an existing OUT" "$BIN" quantize --dry-run --json a.gguf exists.gguf Q8_0
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" && ok || bad "--dry-run --json: the plan is not JSON"

# --- edit --dry-run -o an existing OUT: the same answer as the edit --------------------
expect_exit 1 "edit --dry-run -o an existing OUT" "$BIN" edit --dry-run --set general.name=q -o exists.gguf a.gguf
expect_grep "edit --dry-run says OUT exists" "$TMP/err" "exists.gguf: already exists"
expect_grep "edit --dry-run still prints the diff" "$TMP/out" "general.name"
expect_exit 0 "edit --dry-run --force -o an existing OUT" "$BIN" edit --dry-run --force --set general.name=q -o exists.gguf a.gguf
expect_exit 1 "edit --dry-run --force -o its input" "$BIN" edit --dry-run --force --set general.name=q -o a.gguf a.gguf
expect_exit 0 "edit --dry-run -o a new OUT" "$BIN" edit --dry-run --set general.name=q -o new2.gguf a.gguf
expect_absent "edit --dry-run writes nothing" new2.gguf

finish
