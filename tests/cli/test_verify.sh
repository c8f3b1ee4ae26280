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

# usage errors
if run "verify no file" "$BIN" verify; then expect_rc "verify without a file" 2; fi
if run "verify bad option" "$BIN" verify --nope "$DATA/good/v2.gguf"; then expect_rc "verify --nope" 2; fi
if run "verify missing file" "$BIN" verify "$TMP/does-not-exist.gguf"; then expect_rc "verify of a missing file" 1; fi

finish "$n_bad bad and $n_good good fixtures"
