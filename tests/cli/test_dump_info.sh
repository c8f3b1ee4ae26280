#!/usr/bin/env bash
# test_dump_info.sh - CLI tests of `ggufkit dump` and `ggufkit info`.
#
# usage: test_dump_info.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN = the golden reference folder (real/, syn1/). Without
# it the golden parity checks are reported as SKIPPED; the checks on generated
# files (tiny_gguf.py) and the usage checks always run.
#
# Golden parity: `ggufkit dump --json --json-array` of every real/*.gguf and of
# syn1/syn1-f32.gguf must parse equal (json_equal.py, `filename` aside) to the
# gguf_dump.py output beside it; the big-endian syn1 twins must dump with endian
# BIG and otherwise exactly as their little-endian originals; `info --json` of
# every syn1 file must agree with MANIFEST.json.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

# expect_same NAME ACTUAL EXPECTED [json_equal options] : parsed JSON equality.
# Comparisons are queued and run by one json_equal.py --batch at the end (a
# python start costs more than all the dumps together on a busy machine), so
# ACTUAL and EXPECTED must stay in place until then.
expect_same() {
    local name=$1
    shift
    printf '%s\t' "$name" >>"$TMP/compare.list"
    printf '%q ' "$@" >>"$TMP/compare.list"
    printf '\n' >>"$TMP/compare.list"
}

# run_comparisons : runs the queued comparisons and counts their results.
run_comparisons() {
    [ -s "$TMP/compare.list" ] || return 0
    python3 "$HERE/json_equal.py" --batch "$TMP/compare.list" >"$TMP/compare.out" 2>&1
    batch_results "$TMP/compare.out"
    : >"$TMP/compare.list"
}

# ---------------------------------------------------------------------------
# Usage and help
# ---------------------------------------------------------------------------
for cmd in dump info; do
    expect_exit 0 "$cmd --help" "$BIN" "$cmd" --help
    expect_grep "$cmd --help" "$TMP/out" "usage: ggufkit $cmd"
    expect_exit 0 "$cmd -h" "$BIN" "$cmd" -h
    expect_exit 2 "$cmd without FILE" "$BIN" "$cmd"
    expect_grep "$cmd without FILE" "$TMP/err" "ggufkit $cmd:"
    expect_exit 2 "$cmd unknown option" "$BIN" "$cmd" --bogus x.gguf
    expect_exit 2 "$cmd two files" "$BIN" "$cmd" a.gguf b.gguf
    expect_exit 1 "$cmd missing file" "$BIN" "$cmd" "$TMP/does-not-exist.gguf"
    expect_grep "$cmd missing file" "$TMP/err" "does-not-exist.gguf"
done
expect_exit 2 "dump --json-array without --json" "$BIN" dump --json-array x.gguf

# ---------------------------------------------------------------------------
# Generated files: every value type, both byte orders, version 1 and 3
# ---------------------------------------------------------------------------
if ! python3 "$HERE/tiny_gguf.py" --all "$TMP"; then
    bad "tiny_gguf.py --all"
fi
for variant in le3 be3 le2 le1 be1; do
    f=$TMP/tiny-$variant.gguf
    expect_exit 0 "dump --json --json-array tiny-$variant" "$BIN" dump --json --json-array "$f"
    cp "$TMP/out" "$TMP/tiny-$variant.out.json"
    expect_same "dump --json --json-array tiny-$variant" "$TMP/tiny-$variant.out.json" \
        "$TMP/tiny-$variant.json"
    # Without --json-array: arrays keep index/type/offset/array_types, lose value.
    expect_exit 0 "dump --json tiny-$variant" "$BIN" dump --json "$f"
    cp "$TMP/out" "$TMP/tiny-$variant.out.noarr.json"
    expect_same "dump --json tiny-$variant" "$TMP/tiny-$variant.out.noarr.json" \
        "$TMP/tiny-$variant.noarr.json"
    expect_exit 0 "info --json tiny-$variant" "$BIN" info --json "$f"
    cp "$TMP/out" "$TMP/tiny-$variant.out.info.json"
    expect_same "info --json tiny-$variant" "$TMP/tiny-$variant.out.info.json" \
        "$TMP/tiny-$variant.info.json" --subset
done

f=$TMP/tiny-le3.gguf
expect_exit 0 "dump --json --no-tensors tiny" "$BIN" dump --json --json-array --no-tensors "$f"
cp "$TMP/out" "$TMP/tiny.nt.json"
expect_same "dump --no-tensors" "$TMP/tiny.nt.json" "$TMP/tiny-le3.json" --ignore tensors --expect 'tensors={}'

# Options after the file and `--` work too.
expect_exit 0 "dump FILE --json" "$BIN" dump "$f" --json --json-array
cp "$TMP/out" "$TMP/tiny.late.json"
expect_same "dump FILE --json" "$TMP/tiny.late.json" "$TMP/tiny-le3.json"
expect_exit 0 "dump -- FILE" "$BIN" dump --json --json-array -- "$f"
cp "$TMP/out" "$TMP/tiny.dashdash.json"
expect_same "dump -- FILE" "$TMP/tiny.dashdash.json" "$TMP/tiny-le3.json"

# String arrays in JSON: plain tokens are written as they are, the others (a quote,
# a backslash, control bytes, a NUL, a long one, bad UTF-8) escaped or repaired.
python3 - "$TMP/esc.gguf" "$TMP/esc.want.json" <<'EOF'
import json, struct, sys
toks = [b'plain', b'with"quote', b'back\\slash', b'new\nline', b'\x01ctl', b'nul\x00in', b'x' * 300,
        b'\xc4\xa0ok', b'', b'\x7f del', b'/slash', b'\xe4\xb8\xad', b'bad\xff']
def s(b): return struct.pack('<Q', len(b)) + b
body = s(b'tokenizer.ggml.tokens') + struct.pack('<IIQ', 9, 8, len(toks)) + b''.join(s(t) for t in toks)
open(sys.argv[1], 'wb').write(b'GGUF' + struct.pack('<IQQ', 3, 0, 1) + body)
json.dump([t.decode('utf-8', 'replace') for t in toks], open(sys.argv[2], 'w'))
EOF
expect_exit 0 "dump --json escaped string array" "$BIN" dump --json --json-array "$TMP/esc.gguf"
if python3 -c 'import json, sys
got = json.load(open(sys.argv[1]))["metadata"]["tokenizer.ggml.tokens"]["value"]
sys.exit(0 if got == json.load(open(sys.argv[2])) else 1)' "$TMP/out" "$TMP/esc.want.json"; then ok; else
    bad "dump --json escaped string array: $(head -c 300 "$TMP/out")"
fi

# Readable listing.
expect_exit 0 "dump tiny (text)" "$BIN" dump "$f"
out=$TMP/out
expect_grep "dump text version" "$out" "version:     3"
expect_grep "dump text string escaped" "$out" '"tiny \"quoted\"\n\tline \\ end"'
expect_grep "dump text u64" "$out" "18446744073709551615"
expect_grep "dump text f32" "$out" "0.10000000149011612"
expect_grep "dump text nul escaped" "$out" '"a\x00b\x00"'
expect_grep "dump text bad utf-8 escaped" "$out" '"ok\xff\xc3(\xe4\xb8 end\xed\xa0\x80\xf4\x90\xf0\x9f\x98"'
expect_grep "dump text array summary" "$out" '20 elements [-10, -9, -8, -7, -6, -5, ...]'
expect_grep "dump text string array" "$out" '[STRING]'
expect_grep "dump text nested label" "$out" '[[INT32]]'
expect_grep "dump text nested value" "$out" '[[1, -2], [3]]'
expect_grep "dump text tensor" "$out" "[2, 1, 3]"
expect_grep "dump text tensor type" "$out" "F16"
expect_exit 0 "dump --no-tensors tiny (text)" "$BIN" dump --no-tensors "$f"
if grep -q "blk.0.b" "$TMP/out"; then bad "dump --no-tensors still lists tensors"; else ok; fi

# info, text and JSON.
expect_exit 0 "info tiny" "$BIN" info "$f"
expect_grep "info file type" "$TMP/out" "15 (Q4_K_M)"
expect_grep "info architecture" "$TMP/out" "architecture:  tiny"
expect_grep "info parameters" "$TMP/out" "parameters:    18"
expect_grep "info warnings" "$TMP/out" "array of arrays"
expect_grep "info tensor types" "$TMP/out" "  F32              2              56   87.50%"

# ---------------------------------------------------------------------------
# Invalid input: exit 1, the reader's message with a byte offset
# ---------------------------------------------------------------------------
head -c 40 "$f" >"$TMP/truncated.gguf"
printf 'GGUX\003\000\000\000' >"$TMP/badmagic.gguf"
for cmd in dump info; do
    expect_exit 1 "$cmd truncated" "$BIN" "$cmd" "$TMP/truncated.gguf"
    expect_grep "$cmd truncated" "$TMP/err" "offset"
    expect_exit 1 "$cmd --json truncated" "$BIN" "$cmd" --json "$TMP/truncated.gguf"
    expect_exit 1 "$cmd bad magic" "$BIN" "$cmd" "$TMP/badmagic.gguf"
    expect_grep "$cmd bad magic" "$TMP/err" "offset 0"
done

# A whole header whose tensor data is cut short: still listed (a partial
# download says what it is), the problem reported with its offset, exit 1.
size=$(stat -c %s "$f")
head -c $((size - 40)) "$f" >"$TMP/shortdata.gguf"
expect_exit 1 "info data cut short" "$BIN" info "$TMP/shortdata.gguf"
expect_grep "info data cut short" "$TMP/out" "'x.3d'"
expect_grep "info data cut short" "$TMP/err" "run past the end of the file"
expect_exit 1 "dump data cut short" "$BIN" dump --json --json-array "$TMP/shortdata.gguf"
cp "$TMP/out" "$TMP/shortdata.json"
expect_grep "dump data cut short" "$TMP/err" "run past the end of the file"
expect_same "dump data cut short" "$TMP/shortdata.json" "$TMP/tiny-le3.json" --ignore filename

# ---------------------------------------------------------------------------
# Golden parity
# ---------------------------------------------------------------------------
if [ -z "$GOLDEN" ] || [ ! -d "$GOLDEN/real" ] || [ ! -d "$GOLDEN/syn1" ]; then
    skip "golden dump parity (no golden data at ${GOLDEN:-<GGUFKIT_GOLDEN unset>})"
else
    n_parity=0
    for ref in "$GOLDEN"/real/*.dump.json "$GOLDEN/syn1/syn1-f32.dump.json"; do
        g=${ref%.dump.json}.gguf
        name=$(basename "$g" .gguf)
        expect_exit 0 "dump --json --json-array $name" "$BIN" dump --json --json-array "$g"
        cp "$TMP/out" "$TMP/golden-$name.json"
        expect_same "golden parity $name" "$TMP/golden-$name.json" "$ref" --ignore filename
        n_parity=$((n_parity + 1))
    done
    echo "golden dump parity: $n_parity files queued for comparison"

    for base in syn1-f32 syn1-f16; do
        le=$GOLDEN/syn1/$base.gguf
        be=$GOLDEN/syn1/$base.be.gguf
        expect_exit 0 "dump $base" "$BIN" dump --json --json-array "$le"
        cp "$TMP/out" "$TMP/$base.le.json"
        expect_exit 0 "dump $base.be" "$BIN" dump --json --json-array "$be"
        cp "$TMP/out" "$TMP/$base.be.json"
        expect_same "big-endian twin $base" "$TMP/$base.be.json" "$TMP/$base.le.json" \
            --ignore filename --ignore endian --expect 'endian="BIG"'
    done

    # info --json against MANIFEST.json: size, counts, parameters, bytes by type
    # (checked by one python run over all files).
    : >"$TMP/manifest.list"
    i=0
    for g in "$GOLDEN"/syn1/*.gguf "$GOLDEN"/imatrix/*.gguf; do
        [ -f "$g" ] || continue
        i=$((i + 1))
        expect_exit 0 "info --json ${g##*/}" "$BIN" info --json "$g"
        cp "$TMP/out" "$TMP/info-$i.json"
        printf '%s\t%s\n' "$TMP/info-$i.json" "$g" >>"$TMP/manifest.list"
    done
    python3 - "$TMP/manifest.list" >"$TMP/manifest.out" 2>&1 <<'EOF'
import json, os, sys
manifests = {}
for line in open(sys.argv[1]):
    info_path, gguf = line.rstrip("\n").split("\t")
    name = os.path.basename(gguf)
    folder = os.path.dirname(gguf)
    if folder not in manifests:
        manifests[folder] = json.load(open(os.path.join(folder, "MANIFEST.json")))
    entry = manifests[folder].get(name)
    info = json.load(open(info_path))
    if entry is None:
        print(f"ok {name} (not in MANIFEST)")
        continue
    problems = []
    if info.get("file_size") != entry["size"]:
        problems.append(f"file_size {info.get('file_size')} != {entry['size']}")
    want_endian = "BIG" if name.endswith(".be.gguf") else "LITTLE"
    if info.get("endian") != want_endian:
        problems.append(f"endian {info.get('endian')} != {want_endian}")
    tensors = entry.get("tensors")
    if tensors is not None:
        params, by_type = 0, {}
        for t in tensors.values():
            n = 1
            for d in t["ne"]:
                n *= d
            params += n
            count, nbytes = by_type.get(t["type"], (0, 0))
            by_type[t["type"]] = (count + 1, nbytes + t["nbytes"])
        want = {"tensor_count": len(tensors), "parameters": params,
                "tensor_bytes": sum(b for _, b in by_type.values())}
        for k, v in want.items():
            if info.get(k) != v:
                problems.append(f"{k} {info.get(k)!r} != {v!r}")
        got_types = {r["type"]: (r["tensors"], r["bytes"]) for r in info.get("tensor_types", [])}
        if got_types != by_type:
            problems.append(f"tensor_types {got_types} != {by_type}")
        if info.get("tensors_of_unknown_size") != 0:
            problems.append(f"tensors_of_unknown_size {info.get('tensors_of_unknown_size')!r} != 0")
        first = min((t["offset"] for t in tensors.values()), default=None)
        if first is not None and info.get("data_offset") != first:
            problems.append(f"data_offset {info.get('data_offset')} != first tensor at {first}")
    # general.file_type named as llama.cpp names it, the 2026 types included
    ft_names = {"syn1-preset-Q1_0.gguf": "Q1_0", "syn1-preset-Q2_0.gguf": "Q2_0",
                "syn1-preset-MXFP4_MOE.gguf": "MXFP4_MOE", "syn1-Q1_0.gguf": "Q1_0",
                "syn1-Q2_0.gguf": "Q2_0", "syn1-NVFP4.gguf": "Q8_0", "syn1-imat-Q2_0.gguf": "Q2_0"}
    if name in ft_names and (info.get("file_type") or {}).get("name") != ft_names[name]:
        problems.append(f"file_type {info.get('file_type')!r}, expected the name {ft_names[name]}")
    print(f"FAIL {name}: " + "; ".join(problems) if problems else f"ok {name}")
EOF
    n_ok=$(grep -c '^ok ' "$TMP/manifest.out")
    batch_results "$TMP/manifest.out" "info vs MANIFEST: "
    echo "info vs MANIFEST: $n_ok files agree"

    # The file type names llama-quantize would print.
    expect_exit 0 "info preset Q4_K_M" "$BIN" info "$GOLDEN/syn1/syn1-preset-Q4_K_M.gguf"
    expect_grep "info preset Q4_K_M" "$TMP/out" "15 (Q4_K_M)"
    expect_exit 0 "info Q6_K" "$BIN" info "$GOLDEN/syn1/syn1-Q6_K.gguf"
    expect_grep "info Q6_K" "$TMP/out" "18 (Q6_K)"
fi

run_comparisons
finish
