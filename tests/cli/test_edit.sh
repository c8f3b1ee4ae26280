#!/usr/bin/env bash
# test_edit.sh - CLI tests of `ggufkit edit` (and of journal recovery by `edit --recover`).
#
# usage: test_edit.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN = the golden reference folder. The golden files are
# only read: every edit works on copies in a temporary folder. Without golden data
# the same checks run on files made by `ggufkit synth` and tests/cli/tiny_gguf.py,
# and the golden part is reported as SKIPPED.
#
# After each edit, `dump --json --json-array` of the result is compared with the
# one before (edit_check.py): the intended change and nothing else (values and
# types; offsets of later keys move). In-place edits must keep the inode, change
# only bytes before the data section and keep the tensor bytes' sha256; a crash
# injected before every low-level write (GGUFKIT_FAULT_AFTER_WRITES=N) must leave
# a file that `verify` refuses without touching it while the journal is there and
# that, once `edit --recover` recovered it, is byte for byte the old or the new one.
# dump --json -> --patch must give back the identical file.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

# dumpj FILE OUT : the JSON dump with array values.
dumpj() { "$BIN" dump --json --json-array "$1" >"$2" 2>/dev/null || bad "dump $1"; }

# queue_check NAME BEFORE.json AFTER.json [edit_check options] : checked in one batch at the end.
queue_check() {
    local name=$1
    shift
    printf '%s\t' "$name" >>"$TMP/check.list"
    printf '%q ' "$@" >>"$TMP/check.list"
    printf '\n' >>"$TMP/check.list"
}

run_checks() {
    [ -s "$TMP/check.list" ] || return 0
    python3 "$HERE/edit_check.py" --batch "$TMP/check.list" >"$TMP/check.out" 2>&1
    batch_results "$TMP/check.out"
    : >"$TMP/check.list"
}

n_check=0
# edit_ok NAME SRC [CHECK OPTIONS] -- EDIT ARGS : copies SRC, runs `edit ARGS -o`,
# and queues the dump comparison (CHECK OPTIONS are edit_check.py's).
edit_ok() {
    local name=$1 src=$2
    shift 2
    local checks=()
    while [ "$1" != "--" ]; do checks+=("$1"); shift; done
    shift
    n_check=$((n_check + 1))
    local out=$TMP/e$n_check.gguf
    expect_exit 0 "$name" "$BIN" edit "$@" -o "$out" "$src"
    [ -f "$out" ] || return
    expect_exit 0 "$name: verify" "$BIN" verify "$out"
    [ -f "$src.json" ] || dumpj "$src" "$src.json"
    dumpj "$out" "$out.json"
    queue_check "$name" "$src.json" "$out.json" "${checks[@]}"
}

# data_offset FILE : the data section's start.
data_offset() { "$BIN" dump --no-tensors "$1" | awk '/^data offset:/ {print $3}'; }

# tensor_sha FILE : sha256 of everything from the data section on.
tensor_sha() { tail -c +$(($(data_offset "$1") + 1)) "$1" | sha256sum | cut -d' ' -f1; }

# inplace_ok NAME FILE [CHECK OPTIONS] -- EDIT ARGS : edits FILE in place and checks
# the inode, that only header bytes changed, the tensor bytes and the dump.
inplace_ok() {
    local name=$1 f=$2
    shift 2
    local checks=()
    while [ "$1" != "--" ]; do checks+=("$1"); shift; done
    shift
    n_check=$((n_check + 1))
    local before=$TMP/b$n_check
    cp "$f" "$before.gguf"
    dumpj "$f" "$before.json"
    local ino d sha
    ino=$(stat -c %i "$f")
    d=$(data_offset "$f")
    local nt
    nt=$("$BIN" dump --no-tensors "$f" | awk '/^tensors:/ {print $2}')
    sha=$(tensor_sha "$f")
    expect_exit 0 "$name" "$BIN" edit "$@" --in-place "$f"
    expect_grep "$name: said in place" "$TMP/out" "edited in place"
    [ "$(stat -c %i "$f")" = "$ino" ] && ok || bad "$name: inode changed"
    if [ "$nt" != 0 ]; then   # a file without tensors is all header: it may grow or shrink
        [ "$(data_offset "$f")" = "$d" ] && ok || bad "$name: data offset moved"
        [ "$(stat -c %s "$f")" = "$(stat -c %s "$before.gguf")" ] && ok || bad "$name: size changed"
        local last
        last=$(cmp -l "$before.gguf" "$f" 2>/dev/null | tail -1 | awk '{print $1}')
        if [ -n "$last" ] && [ "$last" -le "$d" ]; then ok; else bad "$name: bytes past the header changed (last difference at ${last:-none}, data at $d)"; fi
        [ "$(tensor_sha "$f")" = "$sha" ] && ok || bad "$name: tensor bytes changed"
    fi
    [ ! -e "$f.ggufkit-journal" ] && ok || bad "$name: journal left behind"
    expect_exit 0 "$name: verify" "$BIN" verify "$f"
    dumpj "$f" "$before.after.json"
    queue_check "$name" "$before.json" "$before.after.json" --padding "${checks[@]}"
}

# fault_loop NAME FILE EDIT ARGS : crashes the in-place edit after N = 0, 1, ...
# low-level operations until it completes. While a journal is left, `verify` and
# `info` fail naming `edit --recover` and change nothing; after `edit --recover`
# the file must be the old or the new version byte for byte.
fault_loop() {
    local name=$1 f=$2
    shift 2
    local old=$TMP/fault-old.gguf new=$TMP/fault-new.gguf t=$TMP/fault-t.gguf
    cp "$f" "$old"
    cp "$f" "$new"
    "$BIN" edit "$@" --in-place "$new" >/dev/null 2>&1 || { bad "$name: the edit itself failed"; return; }
    cmp -s "$old" "$new" && { bad "$name: the edit changed nothing"; return; }
    local n=0 saw_old=0 saw_new=0 restored=0 rc
    while [ $n -lt 60 ]; do
        cp "$old" "$t"
        GGUFKIT_FAULT_AFTER_WRITES=$n "$BIN" edit "$@" --in-place "$t" >/dev/null 2>&1
        rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 137 ]; then bad "$name: N=$n exit $rc"; fi
        if [ -e "$t.ggufkit-journal" ]; then
            local sum; sum=$(sha256sum <"$t")
            for reader in verify info; do
                "$BIN" $reader "$t" >"$TMP/vout" 2>&1 && bad "$name: N=$n: $reader accepts a file with a journal"
                grep -q "ggufkit edit --recover" "$TMP/vout" && ok ||
                    bad "$name: N=$n: $reader does not name the recovery: $(head -3 "$TMP/vout")"
            done
            [ -e "$t.ggufkit-journal" ] && [ "$(sha256sum <"$t")" = "$sum" ] && ok ||
                bad "$name: N=$n: a read-only command wrote to the model or its journal"
        fi
        "$BIN" edit --recover "$t" >"$TMP/vout" 2>&1 || bad "$name: N=$n: edit --recover failed: $(head -2 "$TMP/vout")"
        grep -q "old header restored" "$TMP/vout" && restored=$((restored + 1))
        [ -e "$t.ggufkit-journal" ] && bad "$name: N=$n: journal left after edit --recover"
        expect_exit 0 "$name: N=$n: verify after recovery" "$BIN" verify "$t"
        if cmp -s "$t" "$old"; then
            saw_old=$((saw_old + 1))
        elif cmp -s "$t" "$new"; then
            saw_new=$((saw_new + 1))
        else
            bad "$name: N=$n: neither the old nor the new file after recovery"
        fi
        [ $rc -eq 0 ] && break
        n=$((n + 1))
    done
    if [ $rc -eq 0 ] && [ $saw_old -gt 0 ] && [ $saw_new -gt 0 ] && [ $restored -gt 0 ]; then
        ok
        echo "$name: crash before each of $n operations recovered ($saw_old old, $saw_new new, $restored restored)"
    else
        bad "$name: fault loop incomplete (rc $rc, $saw_old old, $saw_new new, $restored restored)"
    fi
}

# ---------------------------------------------------------------------------
# Usage
# ---------------------------------------------------------------------------
expect_exit 0 "edit --help" "$BIN" edit --help
expect_grep "edit --help" "$TMP/out" "usage: ggufkit edit"
expect_exit 2 "edit without FILE" "$BIN" edit --set a.b=1 -o x
expect_exit 2 "edit without output" "$BIN" edit --set a.b=1 x.gguf
expect_exit 2 "edit -o and --in-place" "$BIN" edit --in-place -o y x.gguf
expect_exit 2 "edit unknown option" "$BIN" edit --bogus x.gguf
expect_exit 2 "edit --set without =" "$BIN" edit --set novalue -o y x.gguf
expect_exit 2 "edit unknown type" "$BIN" edit --set a.b:u9=1 -o y x.gguf
expect_exit 2 "edit unknown special token" "$BIN" edit --special-token nonsense=x -o y x.gguf
expect_exit 1 "edit missing file" "$BIN" edit --set a.b=1 -o "$TMP/y" "$TMP/nope.gguf"

# ---------------------------------------------------------------------------
# The files: golden copies, or generated ones
# ---------------------------------------------------------------------------
W=$TMP/w
mkdir -p "$W"
if [ -n "$GOLDEN" ] && [ -f "$GOLDEN/syn1/syn1-f32.gguf" ]; then
    cp "$GOLDEN/syn1/syn1-f32.gguf" "$W/syn1.gguf"
    cp "$GOLDEN/syn1/syn1-f16.be.gguf" "$W/syn1-be.gguf"
    cp "$GOLDEN/syn1/syn1-split-t5-00001-of-00005.gguf" "$W/shard.gguf"
    for f in "$GOLDEN"/real/*.gguf; do cp "$f" "$W/real-${f##*/}"; done
    chmod u+w "$W"/*.gguf
    have_golden=1
else
    skip "golden parity (no golden data at ${GOLDEN:-<unset>}): using generated files"
    # synth's tiny model plus the test.* pairs of the golden syn1 file.
    syn1_keys=(--set general.name=synthetic-1 --set test.u8:u8=200 --set test.i8:i8=-100
        --set test.u16:u16=60000 --set test.i16:i16=-30000 --set test.u32:u32=4000000000
        --set test.f32:f32=3.25 --set test.u64:u64=9223372036854775813 --set 'test.str.utf8=héllo'
        --set test.str.empty:str= --set 'test.arr.bool:array[bool]=[true,false,true]')
    "$BIN" synth "$TMP/s.gguf" >/dev/null || bad "synth"
    "$BIN" synth --big-endian --type F16 "$TMP/s-be.gguf" >/dev/null || bad "synth --big-endian"
    "$BIN" edit "${syn1_keys[@]}" -o "$W/syn1.gguf" "$TMP/s.gguf" || bad "edit: make syn1.gguf"
    "$BIN" edit "${syn1_keys[@]}" -o "$W/syn1-be.gguf" "$TMP/s-be.gguf" || bad "edit: make syn1-be.gguf"
    have_golden=0
fi
mkdir -p "$TMP/tiny"
python3 "$HERE/tiny_gguf.py" --all "$TMP/tiny" >/dev/null 2>&1 || bad "tiny_gguf.py"
S=$W/syn1.gguf

# ---------------------------------------------------------------------------
# Each operation, written with -o
# ---------------------------------------------------------------------------
edit_ok "set keeps the type" "$S" --set llama.context_length=UINT32:4096 -- --set llama.context_length=4096
edit_ok "set string" "$S" --set general.name=STRING:'"edited model"' -- --set "general.name=edited model"
edit_ok "set infers new keys" "$S" \
    --set new.int=UINT32:5 --set new.neg=INT32:-5 --set new.big=UINT64:5000000000 --set new.float=FLOAT32:1.5 \
    --set new.bool=BOOL:true --set new.str=STRING:'"hello"' -- \
    --set new.int=5 --set new.neg=-5 --set new.big=5000000000 --set new.float=1.5 --set new.bool=true --set new.str=hello
edit_ok "set typed" "$S" \
    --set x.a=UINT8:7 --set x.b=INT64:-9 --set x.c=FLOAT64:0.5 --set x.d=STRING:'"42"' --set x.e=UINT64:18446744073709551615 -- \
    --set x.a:u8=7 --set x.b:i64=-9 --set x.c:f64=0.5 --set x.d:str=42 --set x.e:u64=18446744073709551615
edit_ok "set json arrays" "$S" \
    --set x.list=ARRAY/STRING:'["a","b"]' --set x.nums=ARRAY/UINT16:'[1,2]' --set x.nested=ARRAY/ARRAY/INT32:'[[1,-2],[3]]' -- \
    --set 'x.list:json=["a","b"]' --set 'x.nums:array[u16]=[1,2]' --set 'x.nested:json=[[1,-2],[3]]'
edit_ok "set existing array" "$S" --set test.arr.bool=ARRAY/BOOL:'[false]' -- --set 'test.arr.bool=[false]'
edit_ok "set existing u64 exactly" "$S" --set test.u64=UINT64:18446744073709551614 -- --set test.u64=18446744073709551614
printf '{%% for m in messages %%}{{ m.content }}\n{%% endfor %%}' >"$TMP/template.jinja"
edit_ok "set-file" "$S" --set tokenizer.chat_template=STRING:'"{% for m in messages %}{{ m.content }}\n{% endfor %}"' -- \
    --set-file "tokenizer.chat_template=$TMP/template.jinja"
edit_ok "delete" "$S" --deleted test.u8 -- --delete test.u8
edit_ok "delete glob" "$S" --deleted test.str.utf8 --deleted test.str.empty -- --delete 'test.str.*'
edit_ok "rename" "$S" --renamed test.u8=test.byte -- --rename test.u8=test.byte
edit_ok "special tokens" "$S" --set tokenizer.ggml.eos_token_id=UINT32:1 --set tokenizer.ggml.padding_token_id=UINT32:3 -- \
    --special-token 'eos=<s>' --special-token-id pad=3
edit_ok "in order" "$S" --set x.a=UINT32:6 -- --set x.a=5 --rename x.a=x.b --set x.b=6 --rename x.b=x.a
cat >"$TMP/patch.json" <<'EOF'
{"set": {"general.name": "patched", "llama.context_length": {"type": "u32", "value": 8192},
         "x.big": {"type": "u64", "value": 18446744073709551615}, "x.tags": ["a", "b"]},
 "delete": ["test.i8"], "rename": {"test.u16": "test.word"}}
EOF
edit_ok "patch" "$S" --set general.name=STRING:'"patched"' --set llama.context_length=UINT32:8192 \
    --set x.big=UINT64:18446744073709551615 --set x.tags=ARRAY/STRING:'["a","b"]' --deleted test.i8 --renamed test.u16=test.word -- \
    --patch "$TMP/patch.json"
n_check=$((n_check + 1))
expect_exit 0 "patch from stdin" sh -c "\"$BIN\" edit --patch - -o \"$TMP/stdin.gguf\" \"$S\" <\"$TMP/patch.json\""
dumpj "$TMP/stdin.gguf" "$TMP/stdin.json"
queue_check "patch from stdin" "$S.json" "$TMP/stdin.json" --set general.name=STRING:'"patched"' \
    --set llama.context_length=UINT32:8192 --set x.big=UINT64:18446744073709551615 --set x.tags=ARRAY/STRING:'["a","b"]' \
    --deleted test.i8 --renamed test.u16=test.word
edit_ok "big-endian stays big-endian" "$W/syn1-be.gguf" --endian BIG --set general.name=STRING:'"be"' -- --set general.name=be
edit_ok "force allows a refused edit" "$S" --set Odd.Key=UINT32:1 -- --set Odd.Key=1 --force

# Errors and refusals: exit 1, nothing written.
refuse() {
    local name=$1
    shift
    expect_exit 1 "$name" "$BIN" edit "$@" -o "$TMP/refused.gguf" "$S"
    [ ! -e "$TMP/refused.gguf" ] && ok || { bad "$name: wrote a file"; rm -f "$TMP/refused.gguf"; }
}
refuse "refuse general.alignment" --set general.alignment:u32=64
expect_grep "refuse general.alignment" "$TMP/err" "--force overrides"
refuse "refuse split keys" --set split.count:u16=2
refuse "refuse GGUF keys" --set GGUF.version:u32=2
refuse "refuse bad key name" --set Bad.Key=1
refuse "refuse bad key name (rename)" --rename test.u8=test..u8
refuse "refuse well-known type (str)" --set llama.context_length:str=4096
refuse "refuse well-known type (u64)" --set llama.context_length:u64=4096
refuse "refuse well-known type (array)" --set 'tokenizer.ggml.scores:array[f64]=[1.0]'
refuse "refuse padding key" --set ggufkit.padding:u8=1
refuse "value does not parse" --set llama.context_length=lots
refuse "value does not fit" --set test.u8=256
refuse "negative for unsigned" --set test.u32=-1
refuse "float does not fit" --set test.f32=1e39
refuse "delete missing key" --delete no.such.key
refuse "rename onto existing" --rename test.u8=test.i8
refuse "token id outside vocabulary" --special-token-id eos=512
refuse "token text not in vocabulary" --special-token 'eos=<nope>'
refuse "bad json" --set 'x.l:json=[1,'
refuse "mixed json array" --set 'x.l:json=[1,"a"]'
refuse "empty json array" --set 'x.l:json=[]'
echo '{"sett": {}}' >"$TMP/badpatch.json"
refuse "bad patch" --patch "$TMP/badpatch.json"
expect_exit 1 "-o onto the input" "$BIN" edit --set general.name=x -o "$S" "$S" --force
if [ "$have_golden" = 1 ]; then
    expect_exit 1 "refuse deleting split keys" "$BIN" edit --delete 'split.*' -o "$TMP/refused.gguf" "$W/shard.gguf"
    expect_exit 0 "delete split keys with --force" "$BIN" edit --delete 'split.*' --force -o "$TMP/unsplit.gguf" "$W/shard.gguf"
fi

# ---------------------------------------------------------------------------
# Dry run, in place, reserve, auto
# ---------------------------------------------------------------------------
cp "$S" "$TMP/dry.gguf"
expect_exit 0 "dry run" "$BIN" edit --set general.name=dry --delete test.u8 --dry-run --in-place "$TMP/dry.gguf"
expect_grep "dry run" "$TMP/out" '+ general.name (str) = "dry"'
expect_grep "dry run" "$TMP/out" '- test.u8 (u8) = 200'
expect_grep "dry run" "$TMP/out" 'in place: yes'
expect_same_file "dry run leaves the file" "$S" "$TMP/dry.gguf"
expect_exit 0 "dry run (does not fit)" "$BIN" edit --set general.name=a-name-far-longer-than-the-slack-before-the-data-section-of-this-small-synthetic-model-allows --dry-run "$TMP/dry.gguf"
expect_grep "dry run (does not fit)" "$TMP/out" 'in place: no'

cp "$S" "$TMP/ip.gguf"
inplace_ok "in place (alignment slack)" "$TMP/ip.gguf" --set general.name=STRING:'"short"' -- --set general.name=short
inplace_ok "in place (delete)" "$TMP/ip.gguf" --deleted test.str.empty -- --delete test.str.empty
cp "$TMP/ip.gguf" "$TMP/ip.before"
expect_exit 1 "in place does not fit" "$BIN" edit --set general.name=a-name-far-longer-than-the-slack-before-the-data-section-of-this-small-synthetic-model-allows --in-place "$TMP/ip.gguf"
expect_grep "in place does not fit" "$TMP/err" "does not fit in place"
expect_same_file "in place does not fit: file untouched" "$TMP/ip.before" "$TMP/ip.gguf"
ino=$(stat -c %i "$TMP/ip.gguf")
dumpj "$TMP/ip.gguf" "$TMP/ip.before.json"
expect_exit 0 "in place auto rewrites" "$BIN" edit --set general.name=a-name-far-longer-than-the-slack-before-the-data-section-of-this-small-synthetic-model-allows --in-place=auto "$TMP/ip.gguf"
expect_grep "in place auto rewrites" "$TMP/out" "rewritten"
expect_exit 0 "in place auto: verify" "$BIN" verify "$TMP/ip.gguf"
dumpj "$TMP/ip.gguf" "$TMP/ip.after.json"
queue_check "in place auto rewrites" "$TMP/ip.before.json" "$TMP/ip.after.json" \
    --set general.name=STRING:'"a-name-far-longer-than-the-slack-before-the-data-section-of-this-small-synthetic-model-allows"'

# --reserve leaves room: then long edits fit in place, again and again.
expect_exit 0 "reserve" "$BIN" edit --reserve 4096 --set general.name=reserved -o "$TMP/res.gguf" "$S"
expect_grep "reserve: padding pair" <("$BIN" dump "$TMP/res.gguf") "ggufkit.padding"
inplace_ok "in place grows into the reserve" "$TMP/res.gguf" --set general.name=STRING:'"a much longer name that needs the reserved room"' \
    --set new.key=STRING:'"x"' -- --set "general.name=a much longer name that needs the reserved room" --set new.key=x
inplace_ok "in place shrinks" "$TMP/res.gguf" --set general.name=STRING:'"s"' -- --set general.name=s
inplace_ok "in place on big-endian" "$W/syn1-be.gguf" --endian BIG --set general.name=STRING:'"be!"' -- --set general.name=be!
expect_exit 0 "repack --reserve" "$BIN" repack --reserve 1000 "$S" "$TMP/rp.gguf"
inplace_ok "in place after repack --reserve" "$TMP/rp.gguf" \
    --set general.name=STRING:'"a name far longer than the alignment slack would ever allow"' -- \
    --set "general.name=a name far longer than the alignment slack would ever allow"
cp "$S" "$TMP/noop.gguf"
expect_exit 0 "in place no change" "$BIN" edit --set general.name=synthetic-1 --in-place "$TMP/noop.gguf"
expect_same_file "in place no change" "$S" "$TMP/noop.gguf"

# Tiny generated files (every value type, version 2, big-endian).
for v in le3 be3 le2; do
    tf=$TMP/tiny/tiny-$v.gguf
    [ -f "$tf" ] || continue
    edit_ok "tiny $v set" "$tf" --set t.u8=UINT8:1 --set t.f32=FLOAT32:0.5 -- --set t.u8=1 --set t.f32=0.5
done
[ -f "$TMP/tiny/tiny-le1.gguf" ] && edit_ok "tiny v1 becomes v3" "$TMP/tiny/tiny-le1.gguf" --set t.u8=UINT8:2 -- --set t.u8=2

# ---------------------------------------------------------------------------
# Crash safety: a crash before every low-level operation, then recovery
# ---------------------------------------------------------------------------
cp "$TMP/res.gguf" "$TMP/crash.gguf"
fault_loop "crash: in place with tensors" "$TMP/crash.gguf" --set general.name=crash-test-name --set x.y=1
cp "$TMP/crash.gguf" "$TMP/crash2.gguf"
GGUFKIT_FAULT_AFTER_WRITES=6 "$BIN" edit --set general.name=zzz --in-place "$TMP/crash2.gguf" >/dev/null 2>&1
[ -e "$TMP/crash2.gguf.ggufkit-journal" ] && ok || bad "crash left no journal"
expect_exit 0 "edit recovers first" "$BIN" edit --set x.z=1 --dry-run "$TMP/crash2.gguf"
expect_grep "edit recovers first" "$TMP/err" "old header restored"
expect_same_file "edit recovers first: old file back" "$TMP/crash.gguf" "$TMP/crash2.gguf"
echo "not a journal" >"$TMP/crash2.gguf.ggufkit-journal"
expect_exit 1 "verify refuses a file with a journal" "$BIN" verify "$TMP/crash2.gguf"
expect_grep "verify refuses a file with a journal" "$TMP/out" "ggufkit edit --recover $TMP/crash2.gguf"
[ -e "$TMP/crash2.gguf.ggufkit-journal" ] && ok || bad "verify removed a journal"
expect_exit 0 "edit --recover removes a torn journal" "$BIN" edit --recover "$TMP/crash2.gguf"
expect_grep "edit --recover removes a torn journal" "$TMP/err" "removed an incomplete journal"
[ ! -e "$TMP/crash2.gguf.ggufkit-journal" ] && ok || bad "edit --recover left the torn journal"
expect_exit 0 "edit --recover without a journal" "$BIN" edit --recover "$TMP/crash2.gguf"
expect_grep "edit --recover without a journal" "$TMP/out" "no interrupted edit"
expect_exit 2 "edit --recover with an operation" "$BIN" edit --recover --set a.b=1 "$TMP/crash2.gguf"
expect_exit 2 "edit --wait without seconds" "$BIN" edit --wait soon --set a.b=1 --in-place "$TMP/crash2.gguf"

# ---------------------------------------------------------------------------
# Golden real files: an edit of each, in place and with -o; crash loop on one
# ---------------------------------------------------------------------------
if [ "$have_golden" = 1 ]; then
    for f in "$W"/real-*.gguf; do
        n=$(basename "$f" .gguf)
        edit_ok "$n: set/delete/rename" "$f" --set general.name=STRING:'"edited"' --set x.n=UINT32:1 \
            --deleted tokenizer.ggml.model --renamed general.architecture=general.arch_old -- \
            --set general.name=edited --set x.n=1 --delete tokenizer.ggml.model --rename general.architecture=general.arch_old --force
        cp "$f" "$TMP/real.gguf"
        inplace_ok "$n: in place" "$TMP/real.gguf" --set general.name=STRING:'"a new name for this vocabulary"' -- \
            --set "general.name=a new name for this vocabulary"
    done
    cp "$W/real-ggml-vocab-gpt-2.gguf" "$TMP/crash3.gguf"
    fault_loop "crash: in place without tensors" "$TMP/crash3.gguf" --set general.name=gpt-2-renamed-by-a-crash-test
fi

# ---------------------------------------------------------------------------
# dump --json -> --patch gives back the identical file
# ---------------------------------------------------------------------------
rt_files=("$S" "$W/syn1-be.gguf")
[ "$have_golden" = 1 ] && rt_files+=("$W"/real-*.gguf "$W/shard.gguf")
for f in "${rt_files[@]}"; do
    n=${f##*/}
    "$BIN" dump --json --json-array "$f" >"$TMP/rt.json"
    rm -f "$TMP/rt.gguf"
    expect_exit 0 "round trip $n" "$BIN" edit --patch "$TMP/rt.json" -o "$TMP/rt.gguf" "$f"
    expect_same_file "round trip $n" "$f" "$TMP/rt.gguf"
    cp "$f" "$TMP/rt-ip.gguf"
    expect_exit 0 "round trip in place $n" "$BIN" edit --patch "$TMP/rt.json" --in-place "$TMP/rt-ip.gguf"
    expect_grep "round trip in place $n" "$TMP/out" "unchanged"
    expect_same_file "round trip in place $n" "$f" "$TMP/rt-ip.gguf"
done
# the dump without array values keeps the arrays
"$BIN" dump --json "$S" >"$TMP/rt.json"
rm -f "$TMP/rt.gguf"
expect_exit 0 "round trip without arrays" "$BIN" edit --patch "$TMP/rt.json" -o "$TMP/rt.gguf" "$S"
expect_same_file "round trip without arrays" "$S" "$TMP/rt.gguf"
# edit the dump's JSON: exactly that change
python3 - "$TMP/rt.json" "$TMP/rt-edited.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["metadata"]["general.name"]["value"] = "from the dump"
d["metadata"]["llama.context_length"]["value"] = 8192
json.dump(d, open(sys.argv[2], "w"))
EOF
edit_ok "patch from an edited dump" "$S" --set general.name=STRING:'"from the dump"' --set llama.context_length=UINT32:8192 -- \
    --patch "$TMP/rt-edited.json"

# In place when the freed room is more than the alignment absorbs but less than a
# UINT8 array pair takes: the padding pair takes a smaller form, data stays put.
"$BIN" synth --preset tiny "$TMP/slack0.gguf" >/dev/null 2>&1 || bad "synth for the slack test"
for name in b be ben bench benchm; do
    cp "$TMP/slack0.gguf" "$TMP/slack.gguf"
    before=$(data_offset "$TMP/slack.gguf")
    ino=$(stat -c %i "$TMP/slack.gguf")
    expect_exit 0 "in place, name '$name'" "$BIN" edit --in-place --set "general.name=$name" "$TMP/slack.gguf"
    expect_exit 0 "verify after name '$name'" "$BIN" verify "$TMP/slack.gguf"
    [ "$(data_offset "$TMP/slack.gguf")" = "$before" ] && ok || bad "name '$name': data section moved"
    [ "$(stat -c %i "$TMP/slack.gguf")" = "$ino" ] && ok || bad "name '$name': not in place"
    "$BIN" dump "$TMP/slack.gguf" | grep -q "general.name .*\"$name\"" && ok || bad "name '$name' not set"
done

# --- A rewrite keeps the container it replaces; archive members are refused -----
"$BIN" synth --preset tiny --layers 1 "$TMP/c0.gguf" >/dev/null 2>&1 || bad "synth for the container tests"
long=$(head -c 3000 /dev/zero | tr '\0' x)
is_zstd() { [ "$(od -An -tx1 -N4 "$1" | tr -d ' ')" = 28b52ffd ]; }
if command -v zstd >/dev/null; then
    zstd -q "$TMP/c0.gguf" -o "$TMP/c.gguf.zst"
    zstd -q -c "$TMP/c0.gguf" >"$TMP/cz.gguf"    # zstd inside, whatever the name says
    for z in "$TMP/c.gguf.zst" "$TMP/cz.gguf"; do
        n=${z##*/}
        expect_exit 1 "--in-place on compressed $n" "$BIN" edit --in-place --set general.name=z "$z"
        expect_grep "--in-place on compressed $n says why" "$TMP/err" "a compressed file cannot be edited in place"
        expect_exit 0 "--in-place=auto on compressed $n" "$BIN" edit --in-place=auto --set "general.name=$long" "$z"
        expect_grep "--in-place=auto on $n rewrote" "$TMP/out" "rewritten"
        is_zstd "$z" && ok || bad "--in-place=auto on $n: no longer zstd"
        zstd -q -t "$z" 2>/dev/null && ok || bad "--in-place=auto on $n: zstd -t fails"
        expect_exit 0 "verify $n after the rewrite" "$BIN" verify "$z"
        "$BIN" dump "$z" | grep -q "general.name .*xxxx" && ok || bad "$n: edit not applied"
        ls -a "$TMP" | grep -q 'ggufkit-edit' && bad "$n: temporary file left" || ok
    done
else
    skip ".zst in-place rewrites (no zstd tool)"
fi
(cd "$TMP" && cp c0.gguf m.gguf && tar cf a.tar m.gguf && tar czf a.tar.gz m.gguf) || bad "archives"
for ar in a.tar a.tar.gz; do
    cp "$TMP/$ar" "$TMP/$ar.orig"
    for mode in --in-place --in-place=auto "--in-place=auto --dry-run"; do
        # shellcheck disable=SC2086
        expect_exit 1 "$mode on $ar::m.gguf" "$BIN" edit $mode --set "general.name=$long" "$TMP/$ar::m.gguf"
        expect_grep "$mode on $ar::m.gguf says why" "$TMP/err" "a member of an archive cannot be edited in place"
        grep -q "No such file" "$TMP/err" && bad "$mode on $ar::m.gguf: 'No such file'" || ok
    done
    expect_same_file "$ar unchanged" "$TMP/$ar" "$TMP/$ar.orig"
    expect_exit 0 "-o from $ar::m.gguf" "$BIN" edit --set general.name=out -o "$TMP/from-$ar.gguf" "$TMP/$ar::m.gguf"
done

# --- Through a symbolic link: the file it names is edited, the link stays -------
mkdir -p "$TMP/real" "$TMP/links"
for fits in yes no; do
    cp "$TMP/c0.gguf" "$TMP/real/t-$fits.gguf"
    ln -sf "../real/t-$fits.gguf" "$TMP/links/l1-$fits.gguf"
    ln -sf "l1-$fits.gguf" "$TMP/links/l2-$fits.gguf"     # a link to a link
    ino=$(stat -c %i "$TMP/real/t-$fits.gguf")
    [ $fits = yes ] && value=via-link || value=$long
    expect_exit 0 "--in-place=auto through links (fits: $fits)" "$BIN" edit --in-place=auto --set "general.name=$value" "$TMP/links/l2-$fits.gguf"
    [ -L "$TMP/links/l2-$fits.gguf" ] && [ -L "$TMP/links/l1-$fits.gguf" ] && ok || bad "links replaced (fits: $fits)"
    [ "$(readlink "$TMP/links/l1-$fits.gguf")" = "../real/t-$fits.gguf" ] && ok || bad "link retargeted (fits: $fits)"
    "$BIN" dump "$TMP/real/t-$fits.gguf" | grep -qF "\"${value:0:20}" && ok || bad "target not edited (fits: $fits)"
    expect_exit 0 "verify the link's file (fits: $fits)" "$BIN" verify "$TMP/real/t-$fits.gguf"
    if [ $fits = yes ]; then
        [ "$(stat -c %i "$TMP/real/t-$fits.gguf")" = "$ino" ] && ok || bad "in place through a link: not in place"
    fi
    ls -a "$TMP/links" "$TMP/real" | grep -q 'ggufkit' && bad "temporary or journal file left (fits: $fits)" || ok
done

# --- An edit that changes nothing writes nothing; deleting the pair deletes it --
# P: files with a ggufkit.padding pair (--reserve) whose header ends short of the
# data section by 0 to 3 bytes (short by more is the case that used to grow the pair).
for reserve in 50 51 52 53; do
rm -f "$TMP/p0.gguf"
expect_exit 0 "--reserve $reserve" "$BIN" edit --reserve $reserve --set general.name=p -o "$TMP/p0.gguf" "$TMP/c0.gguf"
"$BIN" dump --json "$TMP/p0.gguf" >"$TMP/p0.json" 2>/dev/null || bad "dump of P"
for how in "--set general.name=p" "--patch $TMP/p0.json" "--set general.name=p --dry-run"; do
    cp "$TMP/p0.gguf" "$TMP/p.gguf"
    # shellcheck disable=SC2086
    expect_exit 0 "no-op in place ($how)" "$BIN" edit --in-place=auto $how "$TMP/p.gguf"
    expect_same_file "no-op in place ($how) changes no byte" "$TMP/p0.gguf" "$TMP/p.gguf"
    case $how in
    *--dry-run) expect_grep "no-op dry run says so" "$TMP/out" "(no metadata change)" ;;
    *) expect_grep "no-op in place ($how) says unchanged" "$TMP/out" "unchanged" ;;
    esac
done
done
cp "$TMP/p0.gguf" "$TMP/p.gguf"
expect_exit 1 "--delete ggufkit.padding --in-place (the data would move)" "$BIN" edit --in-place --delete ggufkit.padding "$TMP/p.gguf"
expect_grep "--delete ggufkit.padding --in-place says why" "$TMP/err" "ggufkit.padding (deleted)"
expect_same_file "--delete ggufkit.padding --in-place refused: unchanged" "$TMP/p0.gguf" "$TMP/p.gguf"
expect_exit 0 "--delete ggufkit.padding --in-place=auto" "$BIN" edit --in-place=auto --delete ggufkit.padding "$TMP/p.gguf"
"$BIN" dump "$TMP/p.gguf" | grep -q ggufkit.padding && bad "--delete ggufkit.padding: the pair stays" || ok
expect_exit 0 "verify after deleting the pair" "$BIN" verify "$TMP/p.gguf"

run_checks
finish
