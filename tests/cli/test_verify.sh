#!/usr/bin/env bash
# test_verify.sh - CLI tests of `ggufkit verify` (and of `info` / `dump` on broken
# files) over the fixtures of testdata/bad and testdata/good.
#
# usage: test_verify.sh PATH/TO/ggufkit
# Environment: GGUFKIT_TESTDATA = the repository's testdata folder (default: the
# one beside this script's tests/ folder). The fixtures are part of the
# repository (scripts/make-bad-fixtures writes them), so their absence fails.
#
# For each row of bad/EXPECTED.tsv: `verify FILE` exits with the listed status and
# names the listed offset; `verify --json FILE` reports the listed error code
# and offset and "valid": false; `info FILE` and `dump FILE` exit 1 (never a
# crash: a status >= 128 is a signal). For each row of good/EXPECTED.tsv:
# `verify FILE` exits 0 and shows as many warnings as listed, the first at the
# listed offset; `info` and `dump` exit 0. Plus a few whole-run checks (several
# files at once, --schema on a fixture, usage errors).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

# squashed : $TMP/out without blanks, so cJSON's pretty-printed layout
# ({"code":<TAB>"x", ...}) can be matched as fixed strings without a JSON parser
# (a python start per file made the run take minutes on a loaded machine).
squashed() { tr -d ' \t\n' <"$TMP/out"; }

if [ ! -x "$BIN" ]; then
    echo "FAIL: $BIN is not an executable"
    exit 1
fi
if [ ! -f "$DATA/bad/EXPECTED.tsv" ] || [ ! -f "$DATA/good/EXPECTED.tsv" ]; then
    echo "FAIL: no fixtures at $DATA (run scripts/make-bad-fixtures)"
    exit 1
fi

# ---------------------------------------------------------------- bad files
n_bad=0
while IFS=$'\t' read -r file want_rc code offset desc; do
    case $file in ''|'#'*) continue ;; esac
    n_bad=$((n_bad + 1))
    f=$DATA/bad/$file
    if [ ! -f "$f" ]; then bad "$file: listed in EXPECTED.tsv but missing"; continue; fi

    if run "verify $file" "$BIN" verify "$f"; then
        expect_rc "verify $file ($desc)" "$want_rc"
        if grep -qF "offset $offset: error:" "$TMP/out"; then ok; else
            bad "verify $file: output does not name 'offset $offset: error:'"
            sed 's/^/    out: /' "$TMP/out" | head -3
        fi
    fi

    if run "verify --json $file" "$BIN" verify --json "$f"; then
        expect_rc "verify --json $file" "$want_rc"
        got=$(squashed)
        want="\"findings\":[{\"code\":\"$code\",\"offset\":$offset,\"level\":\"error\""
        case $got in
            *"$want"*'"valid":false}],"valid":false}') ok ;;
            *) bad "verify --json $file: expected code $code at offset $offset, invalid; got: $got" ;;
        esac
    fi

    for sub in info dump; do
        if run "$sub $file" "$BIN" "$sub" "$f"; then
            expect_rc "$sub $file" 1
            if grep -q "offset $offset" "$TMP/err" "$TMP/out"; then ok; else
                bad "$sub $file: no 'offset $offset' in its message"
                sed 's/^/    err: /' "$TMP/err" | head -2
            fi
        fi
    done
    if run "info --json $file" "$BIN" info --json "$f"; then expect_rc "info --json $file" 1; fi
    if run "dump --json $file" "$BIN" dump --json "$f"; then expect_rc "dump --json $file" 1; fi
done <"$DATA/bad/EXPECTED.tsv"

if [ "$n_bad" -lt 30 ]; then bad "only $n_bad bad fixtures listed (at least 30 expected)"; else ok; fi

# --------------------------------------------------------------- good files
n_good=0
while IFS=$'\t' read -r file want_rc warnings woffset fragment canonical desc; do
    case $file in ''|'#'*) continue ;; esac
    n_good=$((n_good + 1))
    f=$DATA/good/$file
    if [ ! -f "$f" ]; then bad "$file: listed in EXPECTED.tsv but missing"; continue; fi

    if run "verify $file" "$BIN" verify "$f"; then
        expect_rc "verify $file ($desc)" "$want_rc"
        got=$(grep -c ': warning: ' "$TMP/out")
        if [ "$got" -eq "$warnings" ]; then ok; else bad "verify $file: $got warnings, expected $warnings"; fi
        if [ "$warnings" -gt 0 ]; then
            line=$(grep -m1 ': warning: ' "$TMP/out")
            case $line in
                *"offset $woffset: warning: "*"$fragment"*) ok ;;
                *) bad "verify $file: first warning '$line' lacks offset $woffset / '$fragment'" ;;
            esac
        else
            if grep -qF "$f: ok" "$TMP/out"; then ok; else bad "verify $file: no '$f: ok' line"; fi
        fi
    fi

    if run "verify --json $file" "$BIN" verify --json "$f"; then
        expect_rc "verify --json $file" 0
        got=$(squashed)
        n_warn=$(grep -o '"level":"warning"' <<<"$got" | wc -l)
        case $got in
            *'"valid":true}],"valid":true}') [ "$n_warn" -eq "$warnings" ] && ok ||
                bad "verify --json $file: $n_warn warnings, expected $warnings" ;;
            *) bad "verify --json $file: not valid: $got" ;;
        esac
    fi

    for sub in info dump; do
        if run "$sub $file" "$BIN" "$sub" "$f"; then expect_rc "$sub $file" 0; fi
    done
done <"$DATA/good/EXPECTED.tsv"

if [ "$n_good" -lt 10 ]; then bad "only $n_good good fixtures listed"; else ok; fi

# ------------------------------------------------------------ whole runs
# several files: one bad one makes the run fail, and each file is reported
if run "verify mixed" "$BIN" verify "$DATA/good/canonical.gguf" "$DATA/bad/key-duplicate.gguf" "$DATA/good/v2.gguf"; then
    expect_rc "verify good+bad+good" 1
    if [ "$(grep -c . "$TMP/out")" -ge 3 ]; then ok; else bad "verify good+bad+good: expected a line per file"; fi
fi
good_files=()
while IFS=$'\t' read -r file _; do
    case $file in ''|'#'*) continue ;; esac
    good_files+=("$DATA/good/$file")
done <"$DATA/good/EXPECTED.tsv"
if run "verify all good" "$BIN" verify "${good_files[@]}"; then expect_rc "verify all good files at once" 0; fi

# --schema on a fixture that has no model metadata: findings, but no crash
if run "verify --schema" "$BIN" verify --schema "$DATA/good/no-kv.gguf"; then
    expect_rc "verify --schema no-kv.gguf (no general.architecture)" 1
    if grep -q 'general.architecture' "$TMP/out"; then ok; else bad "verify --schema no-kv.gguf: general.architecture not named"; fi
fi

# --strict: a warning fails the file. ggml's layout rule (each tensor's data right
# after the previous one's, in directory order, padded) is a llama.cpp-loader warning
# whatever breaks it: another order, a gap, a late start; the same layout repacked passes.
for file in tensors-out-of-order.gguf tensor-data-gap.gguf tensor-data-late-start.gguf; do
    f=$DATA/good/$file
    if run "verify $file" "$BIN" verify "$f"; then
        expect_rc "verify $file (a warning only)" 0
        expect_grep "verify $file names ggml's rule" "$TMP/out" "in directory order, padded to the alignment"
        expect_grep "verify $file says what llama.cpp does" "$TMP/out" "llama.cpp refuses to load the file"
        expect_grep "verify $file: rule" "$TMP/out" "(rule: llama.cpp loader)"
    fi
    if run "verify --strict $file" "$BIN" verify --strict "$f"; then
        expect_rc "verify --strict $file" 1
        expect_grep "verify --strict $file says why" "$TMP/out" "not ok under --strict (1 warning)"
    fi
    if run "verify --strict --json $file" "$BIN" verify --json --strict "$f"; then
        expect_rc "verify --strict --json $file" 1
        case $(squashed) in *'"valid":false}],"valid":false}') ok ;; *) bad "verify --strict --json $file: not invalid" ;; esac
    fi
    if run "repack $file" "$BIN" repack "$f" "$TMP/relaid.gguf"; then
        expect_rc "repack $file" 0
        if run "verify --strict repacked $file" "$BIN" verify --strict "$TMP/relaid.gguf"; then
            expect_rc "verify --strict of $file repacked" 0
        fi
    fi
    rm -f "$TMP/relaid.gguf"
done
# the argument order does not matter: --strict after or before the files' other options
if run "verify --data --strict" "$BIN" verify --data --strict "$DATA/good/canonical.gguf" "$DATA/good/tensor-data-gap.gguf"; then
    expect_rc "verify --data --strict canonical + gap" 1
    expect_grep "verify --data --strict: the good file stays ok" "$TMP/out" "$DATA/good/canonical.gguf: ok"
fi

# ------------------------------------------- a tensor type ggufkit does not know
# A fork's type (99) between two F32 tensors: info and dump still show the header,
# list the tensor as "unknown type 99" of unknown size, and exit 1 naming the
# tensor, the id and that the data cannot be laid out; verify and index say so.
u=$DATA/bad/tensor-type-99-among-known.gguf
unknown_msg() {   # $1: test name, $2: file holding the message
    if grep -q "'fork.weight'" "$2" && grep -q "unknown tensor type 99" "$2" &&
        grep -q "cannot be laid out" "$2"; then ok; else
        bad "$1: message lacks the tensor, the id or 'cannot be laid out'"
        sed 's/^/    : /' "$2" | head -3
    fi
}
if run "info unknown type" "$BIN" info "$u"; then
    expect_rc "info of an unknown tensor type" 1
    unknown_msg "info of an unknown tensor type" "$TMP/err"
    if grep -qE '^  unknown type 99 +1 +unknown +-$' "$TMP/out" && grep -q '^tensors: *3$' "$TMP/out" &&
        grep -qE '^  F32 +2 +48 ' "$TMP/out"; then ok; else
        bad "info of an unknown tensor type: no 'unknown type 99' row of unknown size beside F32"
        sed 's/^/    out: /' "$TMP/out" | tail -8
    fi
fi
if run "info --json unknown type" "$BIN" info --json "$u"; then
    expect_rc "info --json of an unknown tensor type" 1
    got=$(squashed)
    case $got in
        *'"tensors_of_unknown_size":1,'*'{"type":"unknowntype99","tensors":1,"bytes":null,"share":null}'*) ok ;;
        *) bad "info --json of an unknown tensor type: $got" ;;
    esac
fi
if run "dump unknown type" "$BIN" dump "$u"; then
    expect_rc "dump of an unknown tensor type" 1
    unknown_msg "dump of an unknown tensor type" "$TMP/err"
    if grep -qE '^ +1  fork\.weight +unknown type 99 +\[64, 2\] .* unknown$' "$TMP/out" &&
        grep -qE '^ +0  a\.weight ' "$TMP/out" && grep -qE '^ +2  b\.weight .* 16$' "$TMP/out"; then ok; else
        bad "dump of an unknown tensor type: the three tensors not listed as expected"
        sed 's/^/    out: /' "$TMP/out" | tail -5
    fi
fi
if run "dump --json unknown type" "$BIN" dump --json "$u"; then
    expect_rc "dump --json of an unknown tensor type" 1
    case $(squashed) in *'"fork.weight":{"index":1,"shape":[64,2],"type":"unknowntype99"'*) ok ;;
        *) bad "dump --json of an unknown tensor type: no fork.weight entry" ;; esac
fi
if run "verify unknown type" "$BIN" verify "$u"; then
    expect_rc "verify of an unknown tensor type" 1
    unknown_msg "verify of an unknown tensor type" "$TMP/out"
fi
mkdir -p "$TMP/ix"
cp "$u" "$TMP/ix/"
if run "index unknown type" "$BIN" index --db "$TMP/ix.sqlite" "$TMP/ix"; then
    expect_rc "index of a folder with an unknown tensor type" 0
    python3 - "$TMP/ix.sqlite" >"$TMP/err" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
for path, code, error in con.execute("SELECT path, error_code, error FROM files"):
    print(path, code, error)
PY
    if grep -q "tensor-type-99-among-known.gguf unknown-tensor-type" "$TMP/err"; then ok; else
        bad "index: the file is not recorded as broken with unknown-tensor-type"
        sed 's/^/    : /' "$TMP/err" | head -3
    fi
    unknown_msg "index of an unknown tensor type" "$TMP/err"
fi

# ------------------------------- verify --data: the scales of NVFP4, Q1_0, Q2_0
# A synthetic model quantized to each type (--tensor-type over Q8_0), then one
# scale made NaN / Inf: verify --data names the tensor, block and field.
if "$BIN" synth "$TMP/tiny.gguf" >/dev/null 2>&1; then
    for spec in "nvfp4 NVFP4 38 7f d[2]" "q1_0 Q1_0 19 7c d" "q2_0 Q2_0 19 7e d" "mxfp4 MXFP4 17 ff e"; do
        read -r lower T at byte field <<<"$spec"
        q=$TMP/tiny-$T.gguf
        if ! "$BIN" quantize --tensor-type "weight=$lower" "$TMP/tiny.gguf" "$q" Q8_0 >/dev/null 2>"$TMP/err"; then
            bad "quantize --tensor-type weight=$lower: $(head -1 "$TMP/err")"; continue
        fi
        if run "verify --data $T" "$BIN" verify --data "$q"; then expect_rc "verify --data of clean $T" 0; fi
        # file offset of the first tensor of the type (dump's 'file offset' column), plus
        # the byte of block 1 under test
        off=$("$BIN" dump "$q" | awk -v t="$T" '$3 == t { print $(NF - 1); exit }')
        printf "\\x$byte" | dd of="$q" bs=1 seek=$((off + at)) conv=notrunc status=none
        if run "verify --data $T broken" "$BIN" verify --data "$q"; then
            expect_rc "verify --data of $T with a bad scale" 1
            if grep -qF "block 1: $field = " "$TMP/out"; then ok; else
                bad "verify --data $T: no 'block 1: $field =' in the report"
                sed 's/^/    out: /' "$TMP/out" | head -3
            fi
        fi
    done
else
    bad "synth tiny"
fi

# usage errors
if run "verify no file" "$BIN" verify; then expect_rc "verify without a file" 2; fi
if run "verify bad option" "$BIN" verify --nope "$DATA/good/v2.gguf"; then expect_rc "verify --nope" 2; fi
if run "verify missing file" "$BIN" verify "$TMP/does-not-exist.gguf"; then expect_rc "verify of a missing file" 1; fi

finish "$n_bad bad and $n_good good fixtures"
