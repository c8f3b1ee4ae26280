# common.sh - the harness every CLI test script in tests/cli/ sources: the
# ggufkit binary, the temporary folder and its removal, the golden and testdata
# folders, the checks' TAP output and counters, the common expectations and the
# summary.
#
# Use, at the top of a script run as `bash test_NAME.sh PATH/TO/ggufkit [...]`:
#
#     set -u                                   # the script's own shell options
#     HERE=$(cd "$(dirname "$0")" && pwd)
#     . "$HERE/common.sh"
#     ... checks: ok / bad, expect_exit, run + expect_rc, ...
#     finish                                   # the plan line and the exit status
#
# Output is TAP (tests/meson.build registers the scripts with protocol 'tap', so
# meson sees every check): each check prints "ok - NAME" or "not ok - NAME"
# (meson numbers them), finish prints the plan "1..N". Everything else the
# script writes to stdout is turned into a TAP comment ("# ..."), so a command's
# output can never pass for a result. The exit status still says it too: 0 when
# no check failed, else 1. A script that stops before finish (exit, set -u)
# gets a "not ok" for that; one that exits 77 before any check is reported
# skipped ("1..0 # SKIP").
#
# Set before sourcing (all optional):
#   GK_TMP_BASE      the folder $TMP is made in (default ${TMPDIR:-/tmp})
#   GK_TMP_RAM=1     without GK_TMP_BASE: make $TMP in /dev/shm when it has 2 GB
#                    free (for the kill tests: a kill does not care about the
#                    disk, and fsync on a RAM folder costs nothing)
#   GK_TMP_TEMPLATE  mktemp's template for $TMP's name (default tmp.XXXXXXXXXX)
#   GK_NO_ZYGOTE=1   never run the command through the zygote (see BIN below)
# Define (optional, before or after sourcing): test_cleanup, a function run at
# exit before $TMP is removed (unmounts, chattr -i, ...).
#
# Sourcing sets:
#   BIN      the ggufkit binary: the first argument, made absolute (the scripts
#            cd to other folders); missing, the script stops with a usage line.
#            Under the zygote (below) it is the zygote's client instead.
#   REAL_BIN the first argument, made absolute, always
#   HERE     this folder (tests/cli)
#   TMP      a new empty folder, made writable and removed at exit
#   GOLDEN   $GGUFKIT_GOLDEN, else ../shared/golden beside the repository (the
#            folder may not exist: scripts test for the files they need)
#   DATA     $GGUFKIT_TESTDATA, else the repository's testdata/
#   passed failed skipped   the counters (a script adding to them directly, not
#            through ok/bad, gets one summary TAP line for the difference at
#            finish; batch_results names each case instead)
# and exports GGUFKIT_NO_PROGRESS=1.
#
# Functions:
#   ok [NAME]                 a check passed: "ok - NAME" (no NAME: the script's
#                             line that called it)
#   bad MESSAGE               a check failed: "not ok - MESSAGE"
#   skip MESSAGE              a part that cannot run here: "ok - MESSAGE # SKIP"
#   skip_all MESSAGE          the whole script cannot run here: "1..0 # SKIP
#                             MESSAGE", exit 0 (only before any check)
#   batch_results FILE [PREFIX]   a batch checker's output: a line "ok NAME" is a
#                             passed check, any other line a failed one (a
#                             leading "FAIL " dropped); PREFIX goes before NAME
#   expect_exit CODE NAME CMD...  runs CMD (stdout to $TMP/out, stderr to $TMP/err)
#                             and checks its exit status
#   run NAME CMD...           runs CMD the same way, its status in $rc; a status of
#                             128 or more (a signal) is a failure and returns 1
#   expect_rc NAME WANT       the status of the last `run` is WANT
#   expect_grep NAME FILE TEXT    FILE holds TEXT (a fixed string)
#   expect_same_file NAME A B     A and B hold the same bytes
#   expect_absent NAME PATH       nothing was written at PATH
#   wait_until PID TEST...    waits until the command TEST succeeds or process PID
#                             has exited, with no time limit (meson's timeout
#                             ends a hang; a '#' line first says what is awaited);
#                             returns TEST's status at the end
#   finish [NOTE]             prints "# SCRIPT: P passed, F failed, S skipped[; NOTE]"
#                             and the plan, and exits 0 when nothing failed, else 1

# The script's own name, once: `ok` without a NAME and the summary use it, and
# a basename process per check would cost more than the check.
GK_SCRIPT=${0##*/}
BIN=${1:?usage: $GK_SCRIPT PATH/TO/ggufkit}
BIN=$(realpath -s -- "$BIN")
# The zygote (tests/zygote, started by scripts/test for the ASan+UBSan run):
# with GGUFKIT_ZYGOTE (its socket) and GGUFKIT_ZYGOTE_CLIENT (ggufkit_zc) set,
# BIN becomes the client, which has the server fork the command instead of
# starting a sanitized process. REAL_BIN is always the binary itself: for a
# check that needs the command to be the process it runs (a SIGKILL of it must
# leave it dead when the kill returns). A script sets GK_NO_ZYGOTE=1 before
# sourcing to run the real binary throughout.
REAL_BIN=$BIN
if [ -n "${GGUFKIT_ZYGOTE:-}" ] && [ -n "${GGUFKIT_ZYGOTE_CLIENT:-}" ] && [ "${GK_NO_ZYGOTE:-0}" != 1 ]; then
    export GGUFKIT_ZYGOTE_BIN=$BIN
    BIN=$GGUFKIT_ZYGOTE_CLIENT
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GOLDEN=${GGUFKIT_GOLDEN:-$HERE/../../../shared/golden}
DATA=${GGUFKIT_TESTDATA:-$HERE/../../testdata}
export GGUFKIT_NO_PROGRESS=1

if [ -z "${GK_TMP_BASE:-}" ] && [ "${GK_TMP_RAM:-0}" = 1 ] && [ -d /dev/shm ] && [ -w /dev/shm ] &&
   [ "$(df -Pk /dev/shm | awk 'NR==2 {print $4}')" -gt 2000000 ]; then
  GK_TMP_BASE=/dev/shm
fi
TMP=$(mktemp -d "${GK_TMP_BASE:-${TMPDIR:-/tmp}}/${GK_TMP_TEMPLATE:-tmp.XXXXXXXXXX}") ||
    { echo "1..0 # SKIP cannot make a temporary folder"; exit 1; }

# TAP lines go to the original stdout (fd GK_TAP_FD); the script's own stdout
# becomes comments. Every result also appends one letter to GK_TAP_LOG (o: ok,
# x: not ok, s: skipped), so checks made in subshells are counted too: the plan
# and the exit status come from that file, not from variables.
exec {GK_TAP_FD}>&1
exec > >(sed -u 's/^/# /')
GK_TAP_LOG=$(mktemp "${TMPDIR:-/tmp}/gk-tap.XXXXXXXXXX") || { echo "not ok - cannot make the TAP log" >&$GK_TAP_FD; exit 1; }
gk_finished=0

# tap_line LETTER TEXT : one result line, counted in GK_TAP_LOG.
tap_line() {
    printf '%s' "$1" >>"$GK_TAP_LOG"
    shift
    # one line per result: a newline inside a message would end it
    printf '%s\n' "${*//$'\n'/ | }" >&$GK_TAP_FD
}
# tap_count LETTER : how many results of that kind were printed.
tap_count() { tr -cd "$1" <"$GK_TAP_LOG" | wc -c; }

gk_cleanup() {
    local status=$?
    if [ "$gk_finished" = 0 ]; then
        if [ "$status" -eq 77 ] && [ "$(wc -c <"$GK_TAP_LOG")" -eq 0 ]; then
            echo "1..0 # SKIP ${GK_SCRIPT%.sh} cannot run here (see the comments above)" >&$GK_TAP_FD
            status=0
        else
            tap_line x "not ok - $GK_SCRIPT stopped before its end (exit $status)"
            echo "1..$(wc -c <"$GK_TAP_LOG")" >&$GK_TAP_FD
            status=1
        fi
    fi
    if declare -F test_cleanup >/dev/null; then test_cleanup; fi
    chmod -R u+rwX "$TMP" 2>/dev/null
    rm -rf "$TMP" "$GK_TAP_LOG"
    exit "$status"
}
trap gk_cleanup EXIT

passed=0
failed=0
skipped=0
# what ok/bad/skip counted, to find additions made directly to the counters
gk_passed=0
gk_failed=0

ok() {
    passed=$((passed + 1))
    gk_passed=$((gk_passed + 1))
    if [ $# -gt 0 ]; then
        tap_line o "ok - $*"
    else
        tap_line o "ok - $GK_SCRIPT line ${BASH_LINENO[0]}"
    fi
}
bad() {
    failed=$((failed + 1))
    gk_failed=$((gk_failed + 1))
    tap_line x "not ok - $*"
}
skip() {
    skipped=$((skipped + 1))
    tap_line s "ok - $* # SKIP"
}
skip_all() {
    echo "1..0 # SKIP $*" >&$GK_TAP_FD
    gk_finished=1
    exit 0
}
batch_results() {
    local line
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "${2:-}${line#ok }" ;;
        *) bad "${2:-}${line#FAIL }" ;;
        esac
    done <"$1"
}

expect_exit() {
    local want=$1 name=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local got=$?
    if [ "$got" -eq "$want" ]; then
        ok "$name"
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
    if [ "$rc" -eq "$2" ]; then ok "$1"; else
        bad "$1: exit $rc, expected $2"
        sed 's/^/    out: /' "$TMP/out" | head -3
        sed 's/^/    err: /' "$TMP/err" | head -3
    fi
}

expect_grep() {
    if grep -qF -- "$3" "$2"; then ok "$1"; else bad "$1: no '$3' in $(basename "$2")"; fi
}
expect_same_file() {
    if cmp -s "$2" "$3"; then ok "$1"; else bad "$1: $(basename "$2") and $(basename "$3") differ"; fi
}
expect_absent() {
    if [ -e "$2" ]; then bad "$1: $(basename "$2") was written"; else ok "$1"; fi
}
wait_until() {
    local pid=$1
    shift
    echo "waiting until: $*"
    until "$@"; do
        kill -0 "$pid" 2>/dev/null || { "$@"; return; }
        sleep 0.02
    done
}

finish() {
    local note=${1:+; $1} n
    # additions made directly to the counters: one line for each difference
    n=$((passed - gk_passed))
    [ "$n" -gt 0 ] && tap_line o "ok - $n more checks counted by $GK_SCRIPT itself"
    n=$((failed - gk_failed))
    [ "$n" -gt 0 ] && tap_line x "not ok - $n more failures counted by $GK_SCRIPT itself (see the comments above)"
    echo "${GK_SCRIPT%.sh}: $(tap_count o) passed, $(tap_count x) failed, $(tap_count s) skipped$note"
    echo "1..$(wc -c <"$GK_TAP_LOG")" >&$GK_TAP_FD
    gk_finished=1
    [ "$(tap_count x)" -eq 0 ] && exit 0
    exit 1
}
