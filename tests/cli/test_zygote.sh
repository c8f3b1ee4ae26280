#!/usr/bin/env bash
# test_zygote.sh GGUFKIT ZYGOTE CLIENT LEAKY - the fork server of the sanitizer
# runs (tests/zygote): run through it, a command behaves as the binary run
# directly: exit codes, death by a signal (128+N), pipes on stdin/stdout/stderr,
# a /dev/fd/N of a process substitution, cwd, umask, environment and file size
# limit; killing the client kills the command; a leak of the command is
# reported by the leak check at its exit (ASan builds; LEAKY is a server around
# a test program that leaks on request); with LD_PRELOAD set the client runs
# the binary itself; a server for another binary is refused.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
GK_NO_ZYGOTE=1   # this script starts its own servers
. "$HERE/common.sh"
ZYGOTE=$(realpath -s -- "${2:?usage: test_zygote.sh GGUFKIT ZYGOTE CLIENT LEAKY}")
ZC=$(realpath -s -- "$3")
LEAKY=$(realpath -s -- "$4")
unset GGUFKIT_ZYGOTE GGUFKIT_ZYGOTE_BIN GGUFKIT_ZYGOTE_CLIENT LD_PRELOAD

SPIDS=()
test_cleanup() { for p in "${SPIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }

# start_server EXE SOCKET BINARY : starts a server, waits for its socket.
start_server() {
    "$1" "$2" "$3" 2>"$TMP/server.err" &
    SPIDS+=($!)
    wait_until $! test -S "$2" && return 0
    bad "the server $1 did not open $2: $(cat "$TMP/server.err")"
    return 1
}
start_server "$ZYGOTE" "$TMP/z.sock" "$BIN" || { finish; }
export GGUFKIT_ZYGOTE=$TMP/z.sock GGUFKIT_ZYGOTE_BIN=$BIN

# A command run through the zygote must not have been run by exec: the served
# command's process is a child of the server, not of the client.
"$BIN" synth "$TMP/m.gguf" >/dev/null 2>&1 || bad "synth"

for args in "--version" "info $TMP/m.gguf"; do
    "$BIN" $args >"$TMP/direct.out" 2>"$TMP/direct.err"; want=$?
    "$ZC" $args >"$TMP/z.out" 2>"$TMP/z.err"; got=$?
    [ "$got" = "$want" ] && cmp -s "$TMP/direct.out" "$TMP/z.out" && cmp -s "$TMP/direct.err" "$TMP/z.err" &&
        ok "$args: same status and output as the binary" || bad "$args: exit $got (want $want), or other output"
done
expect_exit 1 "exit 1 passes through" "$ZC" info "$TMP/missing.gguf"
expect_grep "... with the command's message on stderr" "$TMP/err" "missing.gguf"
expect_exit 2 "exit 2 passes through" "$ZC" --no-such-option
expect_exit 0 "exit 0 passes through" "$ZC" info "$TMP/m.gguf"

# Pipes and a process substitution's /dev/fd/N: the same status and output as
# the binary's (info refuses a pipe, naming it: so the fd was there).
cat "$TMP/m.gguf" | "$BIN" info /dev/stdin >"$TMP/p.want" 2>&1; want=$?
cat "$TMP/m.gguf" | "$ZC" info /dev/stdin >"$TMP/p.got" 2>&1; got=$?
[ "$got" = "$want" ] && cmp -s "$TMP/p.want" "$TMP/p.got" && ok "stdin from a pipe, stdout to a file: as the binary" ||
    bad "stdin from a pipe: exit $got (want $want): $(head -2 "$TMP/p.got")"
[ "$("$ZC" info "$TMP/m.gguf" 2>&1 | cmp - <("$BIN" info "$TMP/m.gguf" 2>&1) && echo same)" = same ] &&
    ok "stdout into a pipe" || bad "stdout into a pipe differs"
"$BIN" info <(cat "$TMP/m.gguf") >"$TMP/ps.want" 2>&1; want=$?
"$ZC" info <(cat "$TMP/m.gguf") >"$TMP/ps.got" 2>&1; got=$?
[ "$got" = "$want" ] && cmp -s "$TMP/ps.want" "$TMP/ps.got" && grep -q "/dev/fd/.*pipe" "$TMP/ps.got" &&
    ok "a /dev/fd/N of a process substitution: as the binary" ||
    bad "process substitution: exit $got (want $want): $(head -2 "$TMP/ps.got")"
err=$("$ZC" info "$TMP/missing.gguf" 2>&1 >/dev/null)
case $err in *missing.gguf*) ok "stderr into a pipe" ;; *) bad "stderr into a pipe: '$err'" ;; esac

# cwd, umask, the environment, the file size limit.
mkdir -p "$TMP/d"
(cd "$TMP/d" && umask 077 && "$ZC" synth rel.gguf >/dev/null 2>&1 && "$ZC" export rel.gguf hf >/dev/null 2>&1)
[ -s "$TMP/d/rel.gguf" ] && ok "a relative output lands in the client's cwd" || bad "no $TMP/d/rel.gguf"
[ "$(stat -c %a "$TMP/d/hf" 2>/dev/null)" = 700 ] && ok "umask 077 honoured (export's folder)" ||
    bad "umask 077: export's folder has mode $(stat -c %a "$TMP/d/hf" 2>/dev/null)"
GGUFKIT_KERNELS=scalar "$ZC" --version >"$TMP/k.out" 2>&1
GGUFKIT_KERNELS=scalar "$BIN" --version >"$TMP/k.want" 2>&1
expect_same_file "an environment variable (GGUFKIT_KERNELS) honoured" "$TMP/k.out" "$TMP/k.want"
(ulimit -f 8; "$BIN" synth "$TMP/fs-direct.gguf" >/dev/null 2>"$TMP/fs-direct.err"; echo $? >"$TMP/fs-direct.rc")
(ulimit -f 8; "$ZC" synth "$TMP/fs-z.gguf" >/dev/null 2>"$TMP/fs-z.err"; echo $? >"$TMP/fs-z.rc")
[ "$(cat "$TMP/fs-z.rc")" = "$(cat "$TMP/fs-direct.rc")" ] && [ "$(cat "$TMP/fs-z.rc")" != 0 ] &&
    [ ! -e "$TMP/fs-z.gguf" ] && ok "ulimit -f honoured (exit $(cat "$TMP/fs-z.rc"), no output)" ||
    bad "ulimit -f: exit $(cat "$TMP/fs-z.rc"), direct $(cat "$TMP/fs-direct.rc")"

# Signals, on a command blocked reading from a server that never answers:
# SIGTERM and SIGUSR1 reach it through the client, which ends as the command
# did (`info` dies of both: 128+15, 128+10). The
# server notes each connection it accepts (a line in $TMP/accepted), and the
# signal is sent once the command's connection is there.
: >"$TMP/accepted"
python3 -c 'import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
while True:
    c, _ = s.accept(); held.append(c)
    with open(sys.argv[2], "a") as f: f.write("accepted\n")' "$TMP/port" "$TMP/accepted" &
SPIDS+=($!)
wait_until $! test -s "$TMP/port"
url="http://127.0.0.1:$(cat "$TMP/port")/m.gguf"
# accepted : how many connections the server has accepted.
accepted() { wc -l <"$TMP/accepted"; }
# accepted_more N : the server has accepted more than N connections.
accepted_more() { [ "$(accepted)" -gt "$1" ]; }
# status_on_signal SIG CMD... : CMD's exit status when SIG reaches it blocked on the server.
status_on_signal() {
    local sig=$1; shift
    local before pid
    before=$(accepted)
    "$@" info "$url" >/dev/null 2>&1 &
    pid=$!
    wait_until $pid accepted_more "$before"
    kill -s "$sig" $pid
    wait $pid
}
for sig in TERM USR1; do
    status_on_signal $sig "$BIN"; want=$?
    status_on_signal $sig "$ZC"; got=$?
    [ "$got" = "$want" ] && ok "SIG$sig: status $got, as the binary's" || bad "SIG$sig: status $got, binary $want"
done
[ "$got" = $((128 + 10)) ] && ok "death by SIGUSR1 gives status 128+10" || bad "SIGUSR1: status $got"

# Killing the client (SIGKILL) kills the command: the test program prints its pid and waits.
start_server "$LEAKY" "$TMP/l.sock" /bin/true || finish
GGUFKIT_ZYGOTE=$TMP/l.sock GGUFKIT_ZYGOTE_BIN=/bin/true "$ZC" hold >"$TMP/hold.pid" &
cpid=$!
wait_until $cpid test -s "$TMP/hold.pid"
hpid=$(cat "$TMP/hold.pid")
if [ -n "$hpid" ] && kill -0 "$hpid" 2>/dev/null; then
    kill -KILL "$cpid"; wait "$cpid" 2>/dev/null
    # (a command that outlives its client keeps this wait going until meson's timeout)
    echo "waiting until the held command $hpid is gone"
    while kill -0 "$hpid" 2>/dev/null; do sleep 0.02; done
    ok "SIGKILL of the client kills the command"
else
    bad "the held command did not report a live pid ('$hpid')"
fi
GGUFKIT_ZYGOTE=$TMP/l.sock GGUFKIT_ZYGOTE_BIN=/bin/true expect_exit 3 "test program: exit 3 passes through" "$ZC" exit 3

# A leak of the command is reported at its exit (only where LeakSanitizer runs).
if nm -D "$LEAKY" 2>/dev/null | grep -q __lsan_do_leak_check || ldd "$LEAKY" 2>/dev/null | grep -q libasan; then
    if [ "${ASAN_OPTIONS:-}" != "${ASAN_OPTIONS#*detect_leaks=0}" ]; then
        skip "leak report (detect_leaks=0 here)"
    else
        GGUFKIT_ZYGOTE=$TMP/l.sock GGUFKIT_ZYGOTE_BIN=/bin/true "$ZC" leak >/dev/null 2>"$TMP/leak.err"; rc=$?
        [ "$rc" -ne 0 ] && grep -q "detected memory leaks" "$TMP/leak.err" && ok "a leak is reported (exit $rc)" ||
            bad "a leak: exit $rc, $(head -3 "$TMP/leak.err")"
    fi
else
    skip "leak report (not an ASan build)"
fi

# Fallbacks: LD_PRELOAD, no server, another binary's server: the binary itself runs.
# (The test program exits 0 on "leak" without LeakSanitizer; /bin/true exits 0
# on anything: so ask for exit 3, which only the server gives.)
GGUFKIT_ZYGOTE=$TMP/l.sock GGUFKIT_ZYGOTE_BIN=/bin/true LD_PRELOAD=/dev/null/none.so expect_exit 0 \
    "LD_PRELOAD: the binary is run, not the server" "$ZC" exit 3
GGUFKIT_ZYGOTE=$TMP/none.sock GGUFKIT_ZYGOTE_BIN=/bin/true expect_exit 0 "no server: the binary is run" "$ZC" exit 3
GGUFKIT_ZYGOTE=$TMP/l.sock GGUFKIT_ZYGOTE_BIN=/bin/false expect_exit 1 "another binary's server: refused, the binary is run" "$ZC" exit 3
GGUFKIT_ZYGOTE=$TMP/l.sock GGUFKIT_ZYGOTE_BIN=/bin/true ASAN_OPTIONS="${ASAN_OPTIONS:-}:x=1" expect_exit 0 \
    "other sanitizer options: refused, the binary is run" "$ZC" exit 3
# A bad request does not stop the server.
printf 'garbage' | python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"garbage"*100); s.close()' "$TMP/l.sock" 2>/dev/null
GGUFKIT_ZYGOTE=$TMP/l.sock GGUFKIT_ZYGOTE_BIN=/bin/true expect_exit 4 "the server survives a bad request" "$ZC" exit 4
finish
