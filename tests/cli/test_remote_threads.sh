#!/usr/bin/env bash
# test_remote_threads.sh - the threaded paths of reading over HTTP, small enough
# to run under ThreadSanitizer (scripts/test runs it on build-tsan/ too): the
# read-ahead thread and its ring, the windows lent to the scanner's consumer
# threads (hash, verify --data: gk_http_borrow), and the pipeline's reader
# thread (quantize). Each answers as for the local copy. The model is large
# enough for the stream to start (windows of 1, 2 and 4 MiB, then the ring)
# and to go round its 16 slots more than twice,
# and the Q8_0 one has 34-byte blocks that straddle the ring's 1 MiB slots.
#
# Usage: bash test_remote_threads.sh PATH/TO/ggufkit
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"
. "$HERE/remote_common.sh"

export GGUFKIT_HTTP_STALL_TIMEOUT=60 GGUFKIT_HTTP_CONNECT_TIMEOUT=10 GGUFKIT_HTTP_RETRIES=2
unset HF_TOKEN HF_ENDPOINT

WWW=$TMP/www
mkdir -p "$WWW"
"$BIN" synth --layers 20 "$WWW/m.gguf" >/dev/null 2>&1 || bad "synth of the model"
"$BIN" quantize "$WWW/m.gguf" "$WWW/q8.gguf" Q8_0 >/dev/null 2>&1 || bad "quantize of the model"
size=$(stat -c %s "$WWW/m.gguf")
(( size > 48 * 1048576 )) && ok "a model of $size bytes: the read-ahead stream starts" ||
    bad "the model has only $size bytes: too small for the stream"

test_cleanup() {
    kill "$LPID" 2>/dev/null
    wait "$LPID" 2>/dev/null
}
start_lighttpd "$WWW" || { bad "lighttpd did not start: $(head -c 300 "$TMP/lighttpd.out")"; finish; }
U=http://127.0.0.1:$LPORT

for f in m.gguf q8.gguf; do
    remote_same "hash --all of $f (windows lent to two digest threads)" "$U/$f" "$f" hash --all
    remote_same "verify --data of $f" "$U/$f" "$f" verify --data
done
"$BIN" quantize --force "$U/m.gguf" "$TMP/q-remote.gguf" Q4_0 >/dev/null 2>"$TMP/err" &&
    "$BIN" quantize --force "$WWW/m.gguf" "$TMP/q-local.gguf" Q4_0 >/dev/null 2>&1 &&
    cmp -s "$TMP/q-remote.gguf" "$TMP/q-local.gguf" &&
    ok "quantize over HTTP (the pipeline's reader thread): the local copy's output" ||
    bad "quantize over HTTP: $(head -c 300 "$TMP/err")"

finish
