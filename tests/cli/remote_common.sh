# lighttpd.sh - sourced by the CLI scripts that read over HTTP (after
# common.sh): start_lighttpd DIR serves DIR with Range support from Debian's
# lighttpd on a free port of 127.0.0.1, its configuration and logs in $TMP.
# Sets LPORT and LPID (the caller's test_cleanup stops it) and returns once
# the server answers; skips the whole script when lighttpd is not installed.

LIGHTTPD=$(command -v lighttpd || echo /usr/sbin/lighttpd)
[[ -x $LIGHTTPD ]] || skip_all "lighttpd is not installed (scripts/setup installs it)"
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3)

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_lighttpd DIR
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
    local _
    for _ in $(seq 100); do
        "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$LPORT" \
            2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
