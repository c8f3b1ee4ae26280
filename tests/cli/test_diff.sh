#!/usr/bin/env bash
# test_diff.sh - CLI tests of `ggufkit diff`.
#
# usage: test_diff.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN (reference files; the parts that need them say
# SKIPPED when absent), GGUFKIT_TESTDATA (testdata/, for the bad fixtures).
#
# The numbers are checked against numpy (tests/cli/diff_check.py) over the
# dequantized values of golden files, whose dequantization is itself checked
# against the MANIFEST's reference hashes: every metric to 1e-9 relative, counts
# exactly, at 1 and 2 threads (the same JSON). Then: identical files (also as a
# shard set, .zst and archive member), one key changed, keys added and removed,
# a long array with one element changed, a tensor missing on one side and one
# added, shapes that differ, a big-endian copy against its original, several
# OTHER files (ranking), the plot (PNG decoded: size, one panel per file; SVG),
# exit statuses, usage errors, and every testdata/bad fixture on either side.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"
CHECK=$HERE/diff_check.py

expect_out() {   # NAME FIXED-STRING
    if grep -qF -- "$2" "$TMP/out"; then ok; else
        bad "$1: output lacks '$2'"
        sed 's/^/    out: /' "$TMP/out" | head -12
    fi
}

# numpy: the python on PATH, else the system's (Debian's python3-numpy).
PY=
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
# jget FILE EXPR : a value of the JSON document (EXPR over `d`), as Python prints it.
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

if [ ! -x "$BIN" ]; then
    echo "FAIL: $BIN is not an executable"
    exit 1
fi

# ------------------------------------------------------------ usage and help
run "help" "$BIN" diff --help && expect_rc "diff --help" 0 && expect_out "diff --help" "usage: ggufkit diff"
for args in "" "one.gguf" "--threads 0 a b" "--threads x a b" "--plot out.txt a b" "--plot" "--bogus a b"; do
    # shellcheck disable=SC2086
    run "usage '$args'" "$BIN" diff $args && expect_rc "diff $args (usage error)" 2
done
run "missing file" "$BIN" diff "$TMP/none.gguf" "$TMP/none2.gguf" && expect_rc "diff of a missing file" 1
if grep -q "none.gguf" "$TMP/err"; then ok; else bad "missing file: message does not name it"; fi

# ------------------------------------------------------- synthetic models
"$BIN" synth --preset tiny "$TMP/a.gguf" >/dev/null
cp "$TMP/a.gguf" "$TMP/a-copy.gguf"

run "identical" "$BIN" diff "$TMP/a.gguf" "$TMP/a-copy.gguf" && expect_rc "identical files" 0
expect_out "identical" "verdict: $TMP/a-copy.gguf: identical"
expect_out "identical" "metadata: 0 changed, 0 added, 0 removed"
run "identical --json" "$BIN" diff --json "$TMP/a.gguf" "$TMP/a-copy.gguf" && expect_rc "identical --json" 0
cp "$TMP/out" "$TMP/ident.json"
got=$(jget "$TMP/ident.json" '(d["files"][0]["verdict"], d["files"][0]["summary"]["identical"], len(d["tensors"]), d["tensors"][0]["cosine"])')
[ "$got" = "('identical', 21, 21, 1.0)" ] && ok || bad "identical --json: got $got"

# The same model as a shard set, compressed, and as an archive member.
mkdir -p "$TMP/shards"
"$BIN" split --split-max-tensors 6 "$TMP/a.gguf" "$TMP/shards/s" >/dev/null 2>&1
zstd -q "$TMP/a.gguf" -o "$TMP/a.gguf.zst" 2>/dev/null
tar cf "$TMP/a.tar" -C "$TMP" a.gguf
for other in "$TMP/shards/s-00002-of-00004.gguf" "$TMP/a.gguf.zst" "$TMP/a.tar::a.gguf"; do
    run "identical $other" "$BIN" diff "$TMP/a.gguf" "$other" && expect_rc "identical: $other" 0
    expect_out "identical: $other" ": identical"
done
# ... and the other way round (a stream as the reference).
run "identical zst first" "$BIN" diff "$TMP/a.gguf.zst" "$TMP/shards/s-00001-of-00004.gguf" &&
    expect_rc "identical: .zst against the shard set" 0

# One key changed, one removed, one added.
"$BIN" edit --set general.name=changed --set general.extra_key=5 --delete general.license \
    -o "$TMP/b.gguf" "$TMP/a.gguf" >/dev/null 2>&1 ||
    "$BIN" edit --set general.name=changed --set general.extra_key=5 -o "$TMP/b.gguf" "$TMP/a.gguf" >/dev/null
run "one key" "$BIN" diff "$TMP/a.gguf" "$TMP/b.gguf" && expect_rc "one key differs" 1
expect_out "one key" "~ general.name: STRING "
expect_out "one key" '-> STRING "changed"'
expect_out "one key" "+ general.extra_key: UINT32 5"
expect_out "one key" "verdict: $TMP/b.gguf: same weights, different metadata"
expect_out "one key" "21 identical, 0 same values, 0 different"
run "one key --json" "$BIN" diff --json "$TMP/a.gguf" "$TMP/b.gguf" && expect_rc "one key --json" 1
cp "$TMP/out" "$TMP/key.json"
got=$(jget "$TMP/key.json" '[(c["key"], c["type_ref"], c["value_other"]) for c in d["metadata"]["changed"]], [(c["key"], c["value_other"]) for c in d["metadata"]["added"]], d["files"][0]["verdict"]')
[ "$got" = "[('general.name', 'STRING', 'changed')] [('general.extra_key', 5)] same-weights" ] && ok ||
    bad "one key --json: got $got"

# A long array with one element changed: summarized by length and first index.
python3 - "$TMP/a.gguf" "$BIN" "$TMP/patch.json" <<'EOF'
import json, subprocess, sys
doc = json.loads(subprocess.run([sys.argv[2], "dump", "--json", "--json-array", sys.argv[1]],
                                capture_output=True, check=True).stdout)
v = doc["metadata"]["tokenizer.ggml.scores"]["value"]
v[300] = v[300] + 1.0
json.dump({"set": {"tokenizer.ggml.scores": {"type": "array[f32]", "value": v}}}, open(sys.argv[3], "w"))
EOF
"$BIN" edit --patch "$TMP/patch.json" -o "$TMP/c.gguf" "$TMP/a.gguf" >/dev/null
run "long array" "$BIN" diff "$TMP/a.gguf" "$TMP/c.gguf" && expect_rc "long array changed" 1
expect_out "long array" "~ tokenizer.ggml.scores: [FLOAT32] 512 elements -> [FLOAT32] 512 elements; first difference at index 300: "
run "long array --json" "$BIN" diff --json "$TMP/a.gguf" "$TMP/c.gguf"
got=$(jget "$TMP/out" '[(c["key"], c["length_ref"], c["first_diff_index"], c["value_ref"], c["at_first_diff_other"] - c["at_first_diff_ref"] > 0.5) for c in d["metadata"]["changed"]]')
[ "$got" = "[('tokenizer.ggml.scores', 512, 300, None, True)]" ] && ok || bad "long array --json: got $got"

# A tensor missing on one side: one layer less.
"$BIN" synth --preset tiny --layers 1 "$TMP/one-layer.gguf" >/dev/null
run "missing tensor" "$BIN" diff --json "$TMP/a.gguf" "$TMP/one-layer.gguf" && expect_rc "tensor missing" 1
got=$(jget "$TMP/out" 'sorted(set(t["status"] for t in d["tensors"] if t["name"].startswith("blk.1."))), d["files"][0]["summary"]["only-in-reference"], d["files"][0]["verdict"]')
[ "$got" = "['only-in-reference'] 9 differs" ] && ok || bad "tensor missing: got $got"
run "missing tensor reversed" "$BIN" diff "$TMP/one-layer.gguf" "$TMP/a.gguf"
expect_out "tensor added" "only in other"

# Big-endian copy against its original: the same weights, another byte order.
"$BIN" endian --to big "$TMP/a.gguf" "$TMP/a-be.gguf" >/dev/null
run "big-endian" "$BIN" diff "$TMP/a.gguf" "$TMP/a-be.gguf" && expect_rc "big-endian copy" 1
expect_out "big-endian" "layout: byte order little-endian -> big-endian"
expect_out "big-endian" "21 identical, 0 same values, 0 different"
expect_out "big-endian" "same weights, different metadata"
# F16 against F32 of the same model: other types, numbers compared by value.
"$BIN" synth --preset tiny --type F16 "$TMP/a16.gguf" >/dev/null
"$BIN" endian --to big "$TMP/a16.gguf" "$TMP/a16-be.gguf" >/dev/null
run "f16 be vs f32" "$BIN" diff --json "$TMP/a16-be.gguf" "$TMP/a.gguf"
got=$(jget "$TMP/out" 'sorted(set(t["status"] for t in d["tensors"]))')
case $got in *different*|*same-values*) ok ;; *) bad "F16 (big-endian) against F32: statuses $got" ;; esac

# Thread count does not change a number.
"$BIN" quantize --pure "$TMP/a.gguf" "$TMP/a-q4k.gguf" Q4_K >/dev/null 2>&1
"$BIN" diff --json --threads 1 "$TMP/a.gguf" "$TMP/a-q4k.gguf" >"$TMP/t1.json"
"$BIN" diff --json --threads 2 "$TMP/a.gguf" "$TMP/a-q4k.gguf" >"$TMP/t2.json"
"$BIN" diff --json --threads 7 "$TMP/a.gguf" "$TMP/a-q4k.gguf" >"$TMP/t7.json"
if [ -s "$TMP/t1.json" ] && cmp -s "$TMP/t1.json" "$TMP/t2.json" && cmp -s "$TMP/t1.json" "$TMP/t7.json"; then ok; else
    bad "--threads 1, 2 and 7 give different JSON"
fi

# A stream read in its own order: the quantized file orders tensors by layer,
# unlike its source; compressed, it gives the same report as uncompressed.
zstd -q "$TMP/a-q4k.gguf" -o "$TMP/a-q4k.gguf.zst" 2>/dev/null
"$BIN" diff --json "$TMP/a.gguf" "$TMP/a-q4k.gguf.zst" >"$TMP/tz.json"
"$BIN" diff --json "$TMP/a-q4k.gguf.zst" "$TMP/a.gguf.zst" >"$TMP/tzz.json"
got=$(python3 - "$TMP/t1.json" "$TMP/tz.json" <<'EOF2'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(a["tensors"] == b["tensors"] and a["metadata"] == b["metadata"] and len(a["tensors"]) == 21)
EOF2
)
[ "$got" = "True" ] && ok || bad ".zst other in another tensor order: report differs from the plain file's"
got=$(jget "$TMP/tzz.json" 'd["files"][0]["summary"]["different"]')
[ "$got" = "16" ] && ok || bad "two streams: $got tensors different, expected 16"

# Another alignment: a layout line of its own (general.alignment is metadata too).
"$BIN" repack --alignment 64 "$TMP/a.gguf" "$TMP/a64.gguf" >/dev/null
run "alignment" "$BIN" diff "$TMP/a.gguf" "$TMP/a64.gguf" && expect_rc "other alignment" 1
expect_out "alignment" "layout: alignment 32 -> 64"
expect_out "alignment" "+ general.alignment: UINT32 64"
expect_out "alignment" "same weights, different metadata"

# Shapes that differ, a tensor only on either side, one element differing in
# row 2 of a long multi-piece tensor, an all-zero tensor; numbers against numpy.
if [ -n "$PY" ]; then
    "$PY" "$CHECK" make "$TMP/m-base.gguf" base && "$PY" "$CHECK" make "$TMP/m-other.gguf" other
    run "shapes" "$BIN" diff "$TMP/m-base.gguf" "$TMP/m-other.gguf" && expect_rc "shapes differ" 1
    expect_out "shapes" "[8, 4] -> [4, 8]      other shape: not compared"
    expect_out "shapes" "only in reference"
    expect_out "shapes" "only in other"
    run "shapes --json" "$BIN" diff --json "$TMP/m-base.gguf" "$TMP/m-other.gguf"
    cp "$TMP/out" "$TMP/m.json"
    got=$(jget "$TMP/m.json" '[(t["name"], t["status"], t["n_diff"], t["first_diff_row"]) for t in d["tensors"]]')
    [ "$got" = "[('long', 'different', 1, 2), ('small', 'shape-differs', None, None), ('zeros', 'identical', 0, None), ('gone', 'only-in-reference', None, None), ('new', 'only-in-other', None, None)]" ] &&
        ok || bad "shapes --json: got $got"
    if run "numpy (synthetic)" "$PY" "$CHECK" numbers "$TMP/m-base.gguf" "$TMP/m-other.gguf" "$TMP/m.json"; then
        expect_rc "numbers against numpy (synthetic)" 0
    fi
else
    echo "SKIPPED: numpy checks of ggufkit diff (no python3 with numpy: apt-get install python3-numpy)"
fi

# ------------------------------------------------------------ plot
run "plot" "$BIN" diff --plot "$TMP/p.png" "$TMP/a.gguf" "$TMP/a-q4k.gguf" "$TMP/a16.gguf" && expect_rc "plot" 1
if [ -n "$PY" ] && [ -f "$TMP/p.png" ]; then
    # 1000 wide, a 50-pixel title band and 340 per panel; the frame's left edge at x = 90.
    if run "png" "$PY" "$CHECK" png "$TMP/p.png" 1000 730 2 93; then expect_rc "plot: PNG decodes, 1000x730, 2 panels" 0; fi
    "$BIN" diff --plot "$TMP/p1.png" "$TMP/a.gguf" "$TMP/a-q4k.gguf" >/dev/null
    if run "png 1" "$PY" "$CHECK" png "$TMP/p1.png" 1000 390 1 93; then expect_rc "plot: 1 panel" 0; fi
elif [ -z "$PY" ]; then
    echo "SKIPPED: decoding the plot (no python3 with numpy)"
else
    bad "plot: no $TMP/p.png"
fi
run "plot exists" "$BIN" diff --plot "$TMP/p.png" "$TMP/a.gguf" "$TMP/a-q4k.gguf" && expect_rc "plot: existing FILE refused" 1
run "plot --force" "$BIN" diff --force --plot "$TMP/p.png" "$TMP/a.gguf" "$TMP/a-q4k.gguf" && expect_rc "plot --force" 1
run "svg" "$BIN" diff --plot "$TMP/p.svg" "$TMP/a.gguf" "$TMP/a-q4k.gguf" "$TMP/a16.gguf" && expect_rc "svg" 1
if head -c 200 "$TMP/p.svg" 2>/dev/null | grep -q "<svg" && grep -q 'width="1000' "$TMP/p.svg"; then ok; else bad "svg: not an SVG 1000 wide"; fi
if ls "$TMP" | grep -q '\.tmp\|ggufkit-'; then bad "plot: a temporary file was left: $(ls "$TMP")"; else ok; fi

# ------------------------------------------------------------ several files
run "ranking" "$BIN" diff "$TMP/a.gguf" "$TMP/a-q4k.gguf" "$TMP/a-copy.gguf" "$TMP/b.gguf"
expect_rc "several files, some differ" 1
expect_out "ranking" "ranking (relative RMSE weighted by elements, then non-finite differences, size, name):"
last=$(tail -1 "$TMP/out")
case $last in *a-q4k.gguf) ok ;; *) bad "ranking: the Q4_K file is not last: $last" ;; esac
run "ranking --json" "$BIN" diff --json "$TMP/a.gguf" "$TMP/a-q4k.gguf" "$TMP/a-copy.gguf"
got=$(jget "$TMP/out" 'len(d["files"]), [r["path"].rsplit("/",1)[1] for r in d["ranking"]], [f["verdict"] for f in d["files"]]')
[ "$got" = "2 ['a-copy.gguf', 'a-q4k.gguf'] ['differs', 'identical']" ] && ok || bad "ranking --json: got $got"

# ------------------------------------------------------------ non-finite values
# One NaN, +inf or -inf, in the reference or the other file, at the first or the
# last element of an F32 tensor, or in an F16 tensor, or as a Q8_0 block's scale
# (a whole block non-finite): the element counts as a difference, the errors
# are infinite (JSON null, with the counts beside), the text says so, the plot
# marks it, and a file with one ranks after every finite one whatever the order
# of the arguments.
nf_case() {   # NAME BASE TENSOR BYTE_OFFSET HEX SIDE(ref|other) WANT_NONFINITE
    local name=$1 base=$2 tensor=$3 at=$4 hex=$5 side=$6 want=$7 ref other
    cp "$base" "$TMP/nf.gguf"
    "$PY" "$CHECK" poke "$TMP/nf.gguf" "$tensor" "$at" "$hex" || { bad "$name: poke failed"; return; }
    if [ "$side" = ref ]; then ref=$TMP/nf.gguf other=$base; else ref=$base other=$TMP/nf.gguf; fi
    run "$name" "$BIN" diff --json "$ref" "$other" && expect_rc "$name: differs" 1
    local got
    got=$(jget "$TMP/out" "[(t['status'], t['max_abs_err'], t['rmse'], t['rel_rmse'], t['n_nonfinite_$side'], t['n_nonfinite_diff']) for t in d['tensors'] if t['name'] == '$tensor'][0], d['files'][0]['summary']['n_nonfinite_diff'], d['ranking'][0]['rel_rmse_weighted'], d['files'][0]['verdict']")
    [ "$got" = "('different', None, None, None, $want, $want) $want None differs" ] && ok ||
        bad "$name: --json gave $got"
    run "$name text" "$BIN" diff "$ref" "$other" && expect_rc "$name text" 1
    if grep -F "$tensor " "$TMP/out" | grep -q " inf  *inf  *inf  *nan .*non-finite: "; then ok; else
        bad "$name: the text row lacks inf/nan and the non-finite counts"; grep -F "$tensor " "$TMP/out" | sed 's/^/    out: /'
    fi
    expect_out "$name text" "non-finite: $want differing element"
}
if [ -n "$PY" ]; then
    "$BIN" quantize --pure "$TMP/a.gguf" "$TMP/a-q8.gguf" Q8_0 >/dev/null 2>&1
    last32=$((65535 * 4)) last16=$((65535 * 2)) lastq8=$((2047 * 34))
    for side in ref other; do
        nf_case "F32 NaN first ($side)" "$TMP/a.gguf" blk.0.attn_q.weight 0 0000c07f $side 1
        nf_case "F32 -NaN last ($side)" "$TMP/a.gguf" blk.1.attn_q.weight $last32 0000c0ff $side 1
        nf_case "F32 +inf first ($side)" "$TMP/a.gguf" blk.0.attn_q.weight 0 0000807f $side 1
        nf_case "F32 -inf last ($side)" "$TMP/a.gguf" blk.0.attn_q.weight $last32 000080ff $side 1
        nf_case "F16 NaN last ($side)" "$TMP/a16.gguf" blk.1.attn_k.weight $last16 007e $side 1
        nf_case "F16 inf first ($side)" "$TMP/a16.gguf" blk.0.attn_v.weight 0 007c $side 1
        nf_case "Q8_0 NaN scale first block ($side)" "$TMP/a-q8.gguf" blk.0.attn_q.weight 0 007e $side 32
        nf_case "Q8_0 inf scale last block ($side)" "$TMP/a-q8.gguf" blk.1.attn_output.weight $lastq8 007c $side 32
    done
    # a NaN on both sides at the same element is equal; +inf against -inf is not
    cp "$TMP/a.gguf" "$TMP/nan1.gguf"
    "$PY" "$CHECK" poke "$TMP/nan1.gguf" blk.0.attn_q.weight 0 0000c07f
    cp "$TMP/nan1.gguf" "$TMP/nan2.gguf"
    "$PY" "$CHECK" poke "$TMP/nan2.gguf" blk.0.attn_q.weight 0 0100c07f   # another NaN payload
    run "NaN both sides" "$BIN" diff --json "$TMP/nan1.gguf" "$TMP/nan2.gguf"
    got=$(jget "$TMP/out" "[(t['status'], t['n_nonfinite_ref'], t['n_nonfinite_other'], t['n_nonfinite_diff'], t['max_abs_err']) for t in d['tensors'] if t['name'] == 'blk.0.attn_q.weight'][0]")
    [ "$got" = "('same-values', 1, 1, 0, 0.0)" ] && ok || bad "NaN on both sides: $got"
    cp "$TMP/a.gguf" "$TMP/pinf.gguf"; "$PY" "$CHECK" poke "$TMP/pinf.gguf" blk.0.attn_q.weight 4 0000807f
    cp "$TMP/a.gguf" "$TMP/minf.gguf"; "$PY" "$CHECK" poke "$TMP/minf.gguf" blk.0.attn_q.weight 4 000080ff
    run "inf against -inf" "$BIN" diff --json "$TMP/pinf.gguf" "$TMP/minf.gguf"
    got=$(jget "$TMP/out" "[(t['status'], t['n_nonfinite_diff'], t['max_abs_err']) for t in d['tensors'] if t['name'] == 'blk.0.attn_q.weight'][0]")
    [ "$got" = "('different', 1, None)" ] && ok || bad "+inf against -inf: $got"

    # the ranking: finite files first, then by the count of non-finite
    # differences, size and name; the same for every order of the arguments
    cp "$TMP/a-q8.gguf" "$TMP/q8-nan.gguf"
    "$PY" "$CHECK" poke "$TMP/q8-nan.gguf" blk.0.attn_q.weight 34 007e
    cp "$TMP/q8-nan.gguf" "$TMP/q8-nan-b.gguf"
    cp "$TMP/a.gguf" "$TMP/f32-nan.gguf"
    "$PY" "$CHECK" poke "$TMP/f32-nan.gguf" blk.1.attn_q.weight 8 0000c07f
    want="['a-q4k.gguf', 'f32-nan.gguf', 'q8-nan-b.gguf', 'q8-nan.gguf']"
    for order in "q8-nan f32-nan a-q4k q8-nan-b" "a-q4k q8-nan-b q8-nan f32-nan" "f32-nan q8-nan q8-nan-b a-q4k" \
                 "q8-nan-b a-q4k f32-nan q8-nan"; do
        set --
        for f in $order; do set -- "$@" "$TMP/$f.gguf"; done
        run "ranking $order" "$BIN" diff --json "$TMP/a.gguf" "$@"
        got=$(jget "$TMP/out" '[r["path"].rsplit("/",1)[1] for r in d["ranking"]]')
        [ "$got" = "$want" ] && ok || bad "ranking of $order: $got (want $want)"
        run "ranking text $order" "$BIN" diff "$TMP/a.gguf" "$@"
        got=$(tail -4 "$TMP/out" | awk '{print $NF}' | sed 's|.*/||' | tr '\n' ' ')
        [ "$got" = "a-q4k.gguf f32-nan.gguf q8-nan-b.gguf q8-nan.gguf " ] && ok || bad "text ranking of $order: $got"
    done

    # the plot: a red square (255, 0, 0) per layer with a non-finite error,
    # none where every error is finite; "no layer tensor differs" is not the case
    rm -f "$TMP/nf.png" "$TMP/f.png"
    "$BIN" diff --plot "$TMP/nf.png" "$TMP/a.gguf" "$TMP/f32-nan.gguf" >/dev/null
    "$BIN" diff --plot "$TMP/f.png" "$TMP/a.gguf" "$TMP/a-q4k.gguf" >/dev/null
    red=$("$PY" "$CHECK" colour "$TMP/nf.png" 255 0 0)
    [ "${red:-0}" -ge 50 ] && ok || bad "plot: no red mark for a NaN (got ${red:-none} pixels)"
    red=$("$PY" "$CHECK" colour "$TMP/f.png" 255 0 0)
    [ "$red" = 0 ] && ok || bad "plot: red marks without a non-finite value ($red pixels)"
else
    echo "SKIPPED: non-finite values in diff (no python3 with numpy)"
fi

# ------------------------------------------------------------ golden files
if [ -f "$GOLDEN/syn1/MANIFEST.json" ] && [ -n "$PY" ]; then
    S=$GOLDEN/syn1
    # numbers against numpy over the reference's own dequantization
    for pair in "syn1-f32.gguf syn1-Q4_0.gguf" "syn1-f32.gguf syn1-Q4_K_S.gguf" "syn1-f16.gguf syn1-Q2_K.gguf" \
                "syn1-f32.gguf syn1-IQ4_XS.gguf" "syn1-f16.gguf syn1-TQ2_0.gguf" "syn1-f32.gguf syn1-preset-Q4_K_M.gguf"; do
        set -- $pair
        deq=$TMP/deq-$2
        rm -f "$deq"
        "$BIN" quantize --allow-requantize --pure "$S/$2" "$deq" F32 >/dev/null 2>&1
        if run "manifest $2" "$PY" "$CHECK" manifest "$deq" "$S/MANIFEST.json" "$2"; then
            expect_rc "$2 dequantized as llama.cpp does" 0
        fi
        for t in 1 2; do
            "$BIN" diff --json --threads $t "$S/$1" "$S/$2" >"$TMP/g$t.json"
        done
        if cmp -s "$TMP/g1.json" "$TMP/g2.json"; then ok; else bad "$1 vs $2: threads 1 and 2 differ"; fi
        if run "numpy $2" "$PY" "$CHECK" numbers "$S/$1" "$deq" "$TMP/g1.json"; then
            expect_rc "numbers of $1 vs $2 against numpy" 0
        fi
    done
    # several files: each file's numbers are its own
    "$BIN" diff --json "$S/syn1-f32.gguf" "$S/syn1-Q8_0.gguf" "$S/syn1-Q4_0.gguf" >"$TMP/multi.json"
    "$BIN" quantize --allow-requantize --pure "$S/syn1-Q8_0.gguf" "$TMP/deq-q8.gguf" F32 >/dev/null 2>&1
    if run "numpy multi" "$PY" "$CHECK" numbers "$S/syn1-f32.gguf" "$TMP/deq-q8.gguf" "$TMP/multi.json" 0 &&
       run "numpy multi 2" "$PY" "$CHECK" numbers "$S/syn1-f32.gguf" "$TMP/deq-syn1-Q4_0.gguf" "$TMP/multi.json" 1; then
        expect_rc "several files: numbers of each" 0
    fi
    # llama.cpp's big-endian copy and its shards
    run "golden be" "$BIN" diff "$S/syn1-f32.gguf" "$S/syn1-f32.be.gguf" && expect_rc "golden big-endian copy" 1
    expect_out "golden be" "21 identical, 0 same values, 0 different"
    expect_out "golden be" "layout: byte order little-endian -> big-endian"
    run "golden shards" "$BIN" diff "$S/syn1-f16.gguf" "$S/syn1-split-1M-00003-of-00004.gguf" &&
        expect_rc "golden shard set against its source" 0
    # the merged file keeps stale split.* keys: reported as metadata, weights the same
    run "golden merged" "$BIN" diff "$S/syn1-f32.gguf" "$S/syn1-split-t5.merged.gguf"
    expect_out "golden merged" "same weights, different metadata"
else
    echo "SKIPPED: golden parts of ggufkit diff (no $GOLDEN/syn1/MANIFEST.json or no numpy)"
fi

# ------------------------------------------------------------ bad input
n=0
while IFS=$'\t' read -r file want_rc code offset desc; do
    case $file in ''|'#'*) continue ;; esac
    f=$DATA/bad/$file
    [ -f "$f" ] || continue
    n=$((n + 1))
    for order in 1 2; do
        if [ $order = 1 ]; then set -- "$TMP/a.gguf" "$f"; else set -- "$f" "$TMP/a.gguf"; fi
        if run "bad $file" "$BIN" diff "$@"; then
            expect_rc "diff with $file ($desc)" 1
            if grep -qF "$file" "$TMP/err" && grep -q "offset $offset" "$TMP/err"; then ok; else
                bad "diff with $file: message lacks the file or 'offset $offset'"
                sed 's/^/    err: /' "$TMP/err" | head -2
            fi
            if [ -s "$TMP/out" ]; then bad "diff with $file: printed a partial report"; else ok; fi
        fi
    done
done <"$DATA/bad/EXPECTED.tsv"
[ "$n" -ge 30 ] && ok || bad "only $n bad fixtures found"

# A compressed model cut short: its header reads, its tensor data does not. The
# error names the file and the tensor, and no partial report is printed.
head -c 2000000 "$TMP/a.gguf.zst" >"$TMP/cut.gguf.zst"
if run "cut .zst" "$BIN" diff --json "$TMP/a.gguf" "$TMP/cut.gguf.zst"; then
    expect_rc "diff with a cut .zst" 1
    if grep -q "cut.gguf.zst: .*tensor " "$TMP/err"; then ok; else bad "cut .zst: message lacks the file and tensor"; sed 's/^/    err: /' "$TMP/err"; fi
    if [ -s "$TMP/out" ]; then bad "cut .zst: printed a partial report"; else ok; fi
fi

finish
