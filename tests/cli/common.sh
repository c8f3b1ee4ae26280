# common.sh - the pass/fail counters and expectations shared by the CLI test
# scripts that source it (test_edit.sh, test_writers.sh). Needs $TMP set; each
# expect_exit leaves the command's stdout in $TMP/out and stderr in $TMP/err.

passed=0
failed=0
skipped=0

ok() { passed=$((passed + 1)); }
bad() {
    failed=$((failed + 1))
    echo "FAIL: $*"
}

# expect_exit CODE NAME CMD... : runs CMD (stdout to $TMP/out, stderr to $TMP/err).
expect_exit() {
    local want=$1 name=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local got=$?
    if [ "$got" -eq "$want" ]; then
        ok
    else
        bad "$name: exit $got, expected $want"
        sed 's/^/    stderr: /' "$TMP/err" | head -5
    fi
}

# expect_grep NAME FILE TEXT : FILE holds TEXT (fixed string).
expect_grep() {
    if grep -qF -- "$3" "$2"; then ok; else bad "$1: no '$3' in $(basename "$2")"; fi
}

# expect_same_file NAME A B : A and B hold the same bytes.
expect_same_file() {
    if cmp -s "$2" "$3"; then ok; else bad "$1: $(basename "$2") and $(basename "$3") differ"; fi
}

# expect_absent NAME PATH : nothing was written at PATH.
expect_absent() {
    if [ -e "$2" ]; then bad "$1: $(basename "$2") was written"; else ok; fi
}
