# common.sh - the harness every CLI test script in tests/cli/ sources: the
# ggufkit binary, the temporary folder and its removal, the golden and testdata
# folders, the pass/fail counters, the common expectations and the summary.
#
# Use, at the top of a script run as `bash test_NAME.sh PATH/TO/ggufkit [...]`:
#
#     set -u                                   # the script's own shell options
#     HERE=$(cd "$(dirname "$0")" && pwd)
#     . "$HERE/common.sh"
#     ... checks: ok / bad, expect_exit, run + expect_rc, ...
#     finish                                   # the summary and the exit status
#
# Set before sourcing (all optional):
#   GK_TMP_BASE      the folder $TMP is made in (default ${TMPDIR:-/tmp})
#   GK_TMP_TEMPLATE  mktemp's template for $TMP's name (default tmp.XXXXXXXXXX)
# Define (optional, before or after sourcing): test_cleanup, a function run at
# exit before $TMP is removed (unmounts, chattr -i, ...).
#
# Sourcing sets:
#   BIN      the ggufkit binary: the first argument, made absolute (the scripts
#            cd to other folders); missing, the script stops with a usage line
#   HERE     this folder (tests/cli)
#   TMP      a new empty folder, made writable and removed at exit
#   GOLDEN   $GGUFKIT_GOLDEN, else ../shared/golden beside the repository (the
#            folder may not exist: scripts test for the files they need)
#   DATA     $GGUFKIT_TESTDATA, else the repository's testdata/
#   passed failed skipped   the counters (a script may add to them directly,
#            e.g. from a batch checker's "ok"/"FAIL" lines)
# and exports GGUFKIT_NO_PROGRESS=1.
#
# Functions:
#   ok [NAME]                 a check passed (NAME, when given, is printed as "ok   NAME")
#   bad MESSAGE               a check failed: prints "FAIL: MESSAGE"
#   skip MESSAGE              a part that cannot run here: prints "SKIPPED: MESSAGE"
#   expect_exit CODE NAME CMD...  runs CMD (stdout to $TMP/out, stderr to $TMP/err)
#                             and checks its exit status
#   run NAME CMD...           runs CMD the same way, its status in $rc; a status of
#                             128 or more (a signal) is a failure and returns 1
#   expect_rc NAME WANT       the status of the last `run` is WANT
#   expect_grep NAME FILE TEXT    FILE holds TEXT (a fixed string)
#   expect_same_file NAME A B     A and B hold the same bytes
#   expect_absent NAME PATH       nothing was written at PATH
#   finish [NOTE]             prints "SCRIPT: P passed, F failed, S skipped[; NOTE]"
#                             and exits 0 when nothing failed, else 1

BIN=${1:?usage: $(basename "$0") PATH/TO/ggufkit}
BIN=$(realpath -s -- "$BIN")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GOLDEN=${GGUFKIT_GOLDEN:-$HERE/../../../shared/golden}
DATA=${GGUFKIT_TESTDATA:-$HERE/../../testdata}
export GGUFKIT_NO_PROGRESS=1

TMP=$(mktemp -d "${GK_TMP_BASE:-${TMPDIR:-/tmp}}/${GK_TMP_TEMPLATE:-tmp.XXXXXXXXXX}") ||
    { echo "FAIL: cannot make a temporary folder"; exit 1; }
gk_cleanup() {
    if declare -F test_cleanup >/dev/null; then test_cleanup; fi
    chmod -R u+rwX "$TMP" 2>/dev/null
    rm -rf "$TMP"
}
trap gk_cleanup EXIT

passed=0
failed=0
skipped=0

ok() {
    passed=$((passed + 1))
    if [ $# -gt 0 ]; then printf 'ok   %s\n' "$*"; fi
}
bad() {
    failed=$((failed + 1))
    echo "FAIL: $*"
}
skip() {
    skipped=$((skipped + 1))
    echo "SKIPPED: $*"
}

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

run() {
    local name=$1
    shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -ge 128 ]; then
        bad "$name: crashed (exit $rc)"
        sed 's/^/    stderr: /' "$TMP/err" | head -5
        return 1
    fi
    return 0
}
expect_rc() {
    if [ "$rc" -eq "$2" ]; then ok; else
        bad "$1: exit $rc, expected $2"
        sed 's/^/    out: /' "$TMP/out" | head -3
        sed 's/^/    err: /' "$TMP/err" | head -3
    fi
}

expect_grep() {
    if grep -qF -- "$3" "$2"; then ok; else bad "$1: no '$3' in $(basename "$2")"; fi
}
expect_same_file() {
    if cmp -s "$2" "$3"; then ok; else bad "$1: $(basename "$2") and $(basename "$3") differ"; fi
}
expect_absent() {
    if [ -e "$2" ]; then bad "$1: $(basename "$2") was written"; else ok; fi
}

finish() {
    local note=${1:+; $1}
    echo "$(basename "$0" .sh): $passed passed, $failed failed, $skipped skipped$note"
    [ "$failed" -eq 0 ] && exit 0
    exit 1
}
