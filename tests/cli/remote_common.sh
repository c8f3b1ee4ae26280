# remote_common.sh - sourced by the CLI scripts that read over HTTP (after
# common.sh): start_lighttpd DIR serves DIR with Range support from Debian's
# lighttpd on a free port of 127.0.0.1, its configuration and logs in $TMP;
# remote_same compares a command's answer for a URL with its answer for the
# local copy. Skips the whole script when lighttpd is not installed.

LIGHTTPD=$(command -v lighttpd || echo /usr/sbin/lighttpd)
[[ -x $LIGHTTPD ]] || skip_all "lighttpd is not installed (scripts/setup installs it)"
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3)

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_lighttpd DIR : sets LPORT and LPID (the caller's test_cleanup stops the
# server) and returns once the server answers, or 1 when it exits first.
start_lighttpd() {
    LPORT=$(free_port)
    cat >"$TMP/lighttpd.conf" <<CONF
server.document-root = "$1"
server.bind = "127.0.0.1"
server.port = $LPORT
server.errorlog = "$TMP/lighttpd.err"
server.pid-file = "$TMP/lighttpd.pid"
mimetype.assign = ( "" => "application/octet-stream" )
CONF
    "$LIGHTTPD" -D -f "$TMP/lighttpd.conf" >"$TMP/lighttpd.out" 2>&1 &
    LPID=$!
    # Until it answers or exits (no time limit: a slow machine only waits longer).
    wait_until "$LPID" answers "$LPORT"
}
# answers PORT : something on 127.0.0.1:PORT accepts a connection.
answers() {
    "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" 2>/dev/null
}

# remote_same NAME URL LOCAL CMD... : CMD URL and CMD LOCAL (run in $WWW, the
# served folder) print the same (the URL spelled as the local path in the
# first) and exit alike, 0 or 1 (diff's "something differs").
remote_same() {
    local name=$1 url=$2 loc=$3
    shift 3
    local rr rl
    "$BIN" "$@" "$url" >"$TMP/out.r" 2>"$TMP/err.r"; rr=$?
    (cd "$WWW" && "$BIN" "$@" "$loc" >"$TMP/out.l" 2>"$TMP/err.l"); rl=$?
    # sed, not ${r//url/loc}: bash's substitution is slow on a 20 MB dump.
    if (( rr > 1 || rr != rl )); then
        bad "$name: exit $rr over HTTP, $rl locally: $(head -c 300 "$TMP/err.r")"
    elif sed "s|${url//./\\.}|$loc|g" "$TMP/out.r" | cmp -s - "$TMP/out.l" && [[ -s $TMP/out.l ]]; then
        ok "$name"
    else
        bad "$name: output differs from the local file's"
    fi
}

# wait_port_file FILE PID : waits until the test server PID has written its
# port to FILE, or has exited (no time limit, as start_lighttpd).
# @return : 0 when the port is there.
wait_port_file() { wait_until "$2" test -s "$1"; }
