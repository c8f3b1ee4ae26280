#!/usr/bin/env bash
# test_remote.sh - reading models over HTTP: every reading subcommand given a URL
# answers as for the local copy, fetching only the bytes it needs, and each way a
# server or network can fail gets a clear error naming the URL, exit 1, nothing
# written.
#
# Two servers on 127.0.0.1, on free ports, stopped at exit: lighttpd (Debian's,
# its configuration made in $TMP) serves the test files with Range support, and
# tests/remote_server.py misbehaves in one way per path prefix. Nothing leaves the
# machine. Timeouts and retries are made short through GGUFKIT_HTTP_*.
#
# Usage: bash test_remote.sh PATH/TO/ggufkit
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"

. "$HERE/remote_common.sh"
[[ -d $GOLDEN/real ]] || skip_all "no golden data at $GOLDEN (real/ vocab files needed)"

# Short enough to keep the failures quick, long enough for a loaded machine; the
# stalled server's case sets a stall timeout of 1 s and one retry for itself.
export GGUFKIT_HTTP_STALL_TIMEOUT=15 GGUFKIT_HTTP_CONNECT_TIMEOUT=5 GGUFKIT_HTTP_RETRIES=2 GGUFKIT_HTTP_BACKOFF_MS=20
unset HF_TOKEN HF_ENDPOINT

WWW=$TMP/www
mkdir -p "$WWW"
cp "$GOLDEN"/real/*.gguf "$WWW/"
cp "$GOLDEN/syn1/syn1-f32.gguf" "$GOLDEN/syn1/syn1-Q8_0.gguf" "$WWW/"
for f in "$GOLDEN"/syn1/syn1-split-t5-*.gguf; do cp "$f" "$WWW/"; done
zstd -q "$WWW/syn1-f32.gguf" -o "$WWW/syn1-f32.gguf.zst" 2>/dev/null || true

# The large-header fixtures of "only the bytes needed", made meanwhile (no check
# reads them before it waits).
(
    head -c 2500000 /dev/zero | tr '\0' 'a' >"$TMP/t3"
    head -c 20000000 /dev/zero | tr '\0' 'b' >"$TMP/t20"
    "$BIN" edit --set-file tokenizer.chat_template="$TMP/t3" -o "$WWW/hdr3.gguf" "$WWW/syn1-f32.gguf" >/dev/null 2>&1
    "$BIN" edit --set-file tokenizer.chat_template="$TMP/t20" -o "$WWW/hdr20.gguf" "$WWW/syn1-f32.gguf" >/dev/null 2>&1
    for n in 1200000 1900000 3000000 7500000 20000000; do
        "$PY" "$HERE/remote_header_gguf.py" "$WWW/gen$n.gguf" "$n"
    done
) &
GENPID=$!

# --- the servers ----------------------------------------------------------------
start_lighttpd "$WWW" || bad "lighttpd did not start: $(head -c 300 "$TMP/lighttpd.out")"
"$PY" "$HERE/../remote_server.py" "$WWW" "$TMP/port" "$TMP/server.log" 2>"$TMP/server.err" &
SPID=$!
test_cleanup() {
    kill "$LPID" "$SPID" "$GENPID" 2>/dev/null
    wait "$LPID" "$SPID" "$GENPID" 2>/dev/null
}
wait_port_file "$TMP/port" "$SPID" || { bad "the test server did not start: $(cat "$TMP/server.err")"; finish; }
SPORT=$(cat "$TMP/port")
U=http://127.0.0.1:$LPORT
S=http://127.0.0.1:$SPORT


# --- the same answers as the local file ------------------------------------------
for f in syn1-f32.gguf syn1-Q8_0.gguf ggml-vocab-gpt-2.gguf ggml-vocab-llama-spm.gguf; do
    remote_same "dump --json $f" "$U/$f" "$f" dump --json --json-array
    remote_same "dump $f" "$U/$f" "$f" dump
    remote_same "info $f" "$U/$f" "$f" info
    remote_same "verify --schema $f" "$U/$f" "$f" verify --schema
done
remote_same "hash syn1-f32" "$U/syn1-f32.gguf" syn1-f32.gguf hash --all
remote_same "hash syn1-Q8_0" "$U/syn1-Q8_0.gguf" syn1-Q8_0.gguf hash
remote_same "verify --data syn1-f32" "$U/syn1-f32.gguf" syn1-f32.gguf verify --data
remote_same "hash --set (first shard finds the others)" "$U/syn1-split-t5-00001-of-00005.gguf" \
    syn1-split-t5-00001-of-00005.gguf hash --set
if [[ -f $WWW/syn1-f32.gguf.zst ]]; then
    remote_same "hash of a .gguf.zst over HTTP (a stream)" "$U/syn1-f32.gguf.zst" syn1-f32.gguf.zst hash
else
    skip "no zstd command: .gguf.zst over HTTP"
fi
# .gguf.zst of several frames: pzstd's (a skippable frame holding the compressed
# size before each frame, which records no content size) and two `zstd` files
# joined with cat (each frame records its size). Over HTTP they read as the local
# file, though sized lazily (the first frame's size is only a lower bound): info
# fetches the header's first 2,000,000-byte chunk, hash the compressed file once
# (before the lazy sizing: a walk of the whole file first, or a full pass).
if command -v pzstd >/dev/null && command -v zstd >/dev/null; then
    "$BIN" synth --layers 4 "$TMP/mf.gguf" >/dev/null 2>&1
    pzstd -q -p2 "$TMP/mf.gguf" -o "$WWW/mf-pz.gguf.zst"
    half=$(( $(stat -c %s "$TMP/mf.gguf") / 2 ))
    head -c "$half" "$TMP/mf.gguf" >"$TMP/mf.a"
    tail -c +$((half + 1)) "$TMP/mf.gguf" >"$TMP/mf.b"
    zstd -q "$TMP/mf.a" -o "$TMP/mf.a.zst" && zstd -q "$TMP/mf.b" -o "$TMP/mf.b.zst"
    cat "$TMP/mf.a.zst" "$TMP/mf.b.zst" >"$WWW/mf-cat.gguf.zst"
    for f in mf-pz.gguf.zst mf-cat.gguf.zst; do
        remote_same "dump --json of a multi-frame $f" "$U/$f" "$f" dump --json --json-array
        remote_same "hash of a multi-frame $f" "$U/$f" "$f" hash --all
        remote_same "verify --data of a multi-frame $f" "$U/$f" "$f" verify --data
        csize=$(stat -c %s "$WWW/$f")
        for c in info hash; do
            "$BIN" $c --stats "$U/$f" >/dev/null 2>"$TMP/err"
            read -r req bytes < <(sed -n 's/.*remote: \([0-9]*\) requests, \([0-9]*\) bytes.*/\1 \2/p' "$TMP/err")
            # info: the header's chunk; hash: one pass over the compressed file
            if [[ $c == info ]]; then max=2000000; else max=$csize; fi
            if [[ -n ${req:-} ]] && (( req <= 6 && bytes <= max )); then
                ok "$c $f: $req requests, $bytes bytes for $csize compressed (at most 6, $max)"
            else
                bad "$c $f: ${req:-?} requests, ${bytes:-?} bytes for $csize compressed: $(head -c 300 "$TMP/err")"
            fi
        done
    done
else
    skip "no pzstd/zstd command: multi-frame .gguf.zst over HTTP"
fi
# A model larger than the growing windows (1 + 2 + 4 MiB): after them the rest
# of the data streams in one request, read ahead into a ring of 4 MiB slots.
"$BIN" synth --layers 30 "$WWW/big.gguf" >/dev/null 2>&1
remote_same "hash of an 80 MB model (growing windows, then one read-ahead stream)" "$U/big.gguf" big.gguf hash --all
remote_same "... through a connection that drops once" "$S/drop/big.gguf" big.gguf hash
remote_same "... through a read-ahead stream that breaks midway" "$S/droplong/big.gguf" big.gguf hash
size=$(stat -c %s "$WWW/big.gguf")
# the stream (a range to the end, over 8 MiB) and its resumption 5 MiB later
mapfile -t long < <(awk -v last=$((size - 1)) '$1 == "droplong" && $2 ~ /big.gguf/ {
    split(substr($3, 7), r, "-"); if (r[2] == last && r[2] - r[1] + 1 > 8388608) print r[1] }' "$TMP/server.log")
[ "${#long[@]}" -eq 2 ] && [ "$(( ${long[1]:-0} - ${long[0]:-0} ))" -eq 5242880 ] &&
    ok "... resumed at the byte where it broke (${long[*]})" || bad "droplong requests: ${long[*]:-none}"
# The same model with its tensor directory reversed (the data where it was):
# repack reads the tensors in directory order, jumping back again and again,
# and each jump stops the read-ahead stream, which starts again further on.
"$PY" - "$WWW/big.gguf" "$WWW/big-rev.gguf" "$HERE" <<'PY' || bad "reversing big.gguf's tensor directory"
import sys
sys.path.insert(0, sys.argv[3])
from gguf_edit import Reader, raw_value
data = bytearray(open(sys.argv[1], "rb").read())
r = Reader(data)
r.take(8)
n_tensors, n_kv = r.num("Q"), r.num("Q")
for _ in range(n_kv):
    r.string()
    raw_value(r, r.num("I"))
spans = []
for _ in range(n_tensors):
    start = r.p
    r.string()
    r.take(8 * r.num("I") + 12)
    spans.append(bytes(data[start:r.p]))
first = r.p - sum(len(x) for x in spans)
data[first:r.p] = b"".join(reversed(spans))
open(sys.argv[2], "wb").write(data)
PY
"$BIN" repack --force "$WWW/big-rev.gguf" "$TMP/jumps-local.gguf" >/dev/null 2>&1 || bad "repack of big-rev.gguf"
"$BIN" repack --force --stats "$U/big-rev.gguf" "$TMP/jumps.gguf" >/dev/null 2>"$TMP/err"
if cmp -s "$TMP/jumps.gguf" "$TMP/jumps-local.gguf"; then
    ok "repack of a model read in jumps (the stream stopped, started again): the local copy's output ($(sed -n 's/.*remote: //p' "$TMP/err"))"
else
    bad "repack of big-rev.gguf over HTTP: $(head -c 300 "$TMP/err")"
fi
# quantize reads a tensor's chunks ahead in a thread while it copies the small
# tensors between them a little behind: two readers at once, which the
# previous window serves (before it, each jump back refetched a window: 128
# requests and 3.2 times the file's bytes).
"$BIN" quantize --force "$WWW/big.gguf" "$TMP/q-local.gguf" Q8_0 >/dev/null 2>&1 || bad "quantize of big.gguf"
"$BIN" quantize --force --stats "$U/big.gguf" "$TMP/q-remote.gguf" Q8_0 >/dev/null 2>"$TMP/err"
read -r qreq qbytes < <(sed -n 's/.*remote: \([0-9]*\) requests, \([0-9]*\) bytes.*/\1 \2/p' "$TMP/err")
if ! cmp -s "$TMP/q-remote.gguf" "$TMP/q-local.gguf"; then
    bad "quantize of big.gguf over HTTP: not the local copy's output: $(head -c 300 "$TMP/err")"
elif (( ${qbytes:-0} * 10 <= size * 12 && ${qreq:-999} <= 30 )); then
    ok "quantize over HTTP: the local copy's output, $qreq requests, $qbytes bytes for $size"
else
    bad "quantize over HTTP: ${qreq:-?} requests, ${qbytes:-?} bytes for a file of $size"
fi
# hash and verify --data read the stream's buffers in place (lent, not
# copied): Q8_0's 34-byte blocks straddle the 1 MiB buffers, where one block
# is copied instead.
cp "$TMP/q-local.gguf" "$WWW/q8.gguf"
remote_same "hash of a Q8_0 model (blocks straddling the read-ahead's buffers)" "$U/q8.gguf" q8.gguf hash --all
remote_same "... verify --data of it" "$U/q8.gguf" q8.gguf verify --data
"$BIN" hash --stats "$U/big.gguf" >/dev/null 2>"$TMP/err"
grep -q "remote: [0-9]* requests, $size bytes fetched" "$TMP/err" && ok "... every byte fetched once ($(sed -n 's/.*remote: //p' "$TMP/err"))" ||
    bad "hash of big.gguf: $(cat "$TMP/err") for a file of $size bytes"
"$BIN" hash --all "$U/syn1-f32.gguf" >"$TMP/manifest" 2>/dev/null
expect_exit 0 "hash --check over HTTP" "$BIN" hash --check "$TMP/manifest" "$U/syn1-f32.gguf"
expect_grep "hash --check: success" "$TMP/out" "Success"
remote_same "diff of a URL and a local file" "$U/syn1-Q8_0.gguf" syn1-Q8_0.gguf diff "$WWW/syn1-f32.gguf"
expect_exit 0 "diff of a URL and its local copy: identical" "$BIN" diff "$U/syn1-f32.gguf" "$WWW/syn1-f32.gguf"

# Writers read URLs and write local files: the same bytes as from the local input.
mkdir -p "$TMP/o"
check_writer() {
    local name=$1
    shift
    rm -f "$TMP/o/r.gguf" "$TMP/o/l.gguf"
    if "$BIN" "${@//@IN@/$U/syn1-f32.gguf}" >/dev/null 2>"$TMP/err" && mv "$TMP/o/out.gguf" "$TMP/o/r.gguf" &&
        "$BIN" "${@//@IN@/$WWW/syn1-f32.gguf}" >/dev/null 2>&1 && mv "$TMP/o/out.gguf" "$TMP/o/l.gguf" &&
        cmp -s "$TMP/o/r.gguf" "$TMP/o/l.gguf"; then
        ok "$name: the same output as from the local file"
    else
        bad "$name: $(head -c 300 "$TMP/err")"
    fi
}
check_writer "quantize" quantize @IN@ "$TMP/o/out.gguf" Q4_0
check_writer "repack" repack --alignment 64 @IN@ "$TMP/o/out.gguf"
check_writer "endian" endian --to big @IN@ "$TMP/o/out.gguf"
check_writer "edit -o" edit --set general.name=x -o "$TMP/o/out.gguf" @IN@
rm -f "$TMP"/o/*
expect_exit 0 "merge of a shard set named by URL" "$BIN" merge "$U/syn1-split-t5-00001-of-00005.gguf" "$TMP/o/m.gguf"
expect_exit 0 "split of a URL" "$BIN" split --split-max-tensors 5 "$U/syn1-f32.gguf" "$TMP/o/sp"
expect_exit 1 "edit --in-place of a URL is refused" "$BIN" edit --set general.name=x --in-place "$U/syn1-f32.gguf"
expect_grep "... and says outputs stay local" "$TMP/err" "outputs stay local"

# --- only the bytes needed ---------------------------------------------------------
# Headers of several sizes: the real vocabulary files (0.6-1.8 MB, all header),
# syn1 (a small header before 6 MB of data), generated ones of 1.2 to 20 MB
# (a vocabulary and 3.7 MB of tensor data after it) and two with a long chat
# template. `info` must take at most 2 requests for a header under 2 MiB and 6
# ("a handful") for the 20 MB ones, and never fetch more bytes than
# @huggingface/gguf would (tests/hf_fetch_sim.py walks the same file by its rule).
wait "$GENPID"   # the fixtures, made in the background since the start
remote_same "dump --json of hdr3.gguf" "$U/hdr3.gguf" hdr3.gguf dump --json
remote_same "dump --json of hdr20.gguf" "$U/hdr20.gguf" hdr20.gguf dump --json
remote_same "dump --json of gen7500000.gguf" "$U/gen7500000.gguf" gen7500000.gguf dump --json
for f in "$WWW"/ggml-vocab-*.gguf syn1-f32.gguf gen{1200000,1900000,3000000,7500000,20000000}.gguf hdr3.gguf hdr20.gguf; do
    f=$(basename "$f")
    read -r _ hf_bytes hdr < <("$PY" "$HERE/../hf_fetch_sim.py" "$WWW/$f")
    "$BIN" info --stats "$U/$f" >/dev/null 2>"$TMP/err"
    read -r req bytes < <(sed -n 's/.*remote: \([0-9]*\) requests, \([0-9]*\) bytes.*/\1 \2/p' "$TMP/err")
    want=$(( ${hdr:-0} < 2097152 ? 2 : 6 ))
    if (( ${req:-99} <= want && ${bytes:-0} > 0 && ${bytes:-0} <= ${hf_bytes:--1} )); then
        ok "info $f (header ${hdr:-?} bytes): $req requests (at most $want), $bytes bytes (@huggingface/gguf: $hf_bytes)"
    else
        bad "info $f (header ${hdr:-?} bytes): ${req:-?} requests (want at most $want), ${bytes:-?} bytes (@huggingface/gguf: ${hf_bytes:-?})"
    fi
done

# --- index over URLs --------------------------------------------------------------
printf '# vocab files\n%s\n\n%s\n' "$U/ggml-vocab-gpt-2.gguf" "$U/ggml-vocab-phi-3.gguf" >"$TMP/urls"
expect_exit 0 "index --urls" "$BIN" index --db "$TMP/r.sqlite" --urls "$TMP/urls" "$U/syn1-f32.gguf"
expect_grep "index: 3 added" "$TMP/out" "3 added"
(cd "$WWW" && "$BIN" index --db "$TMP/l.sqlite" ggml-vocab-gpt-2.gguf ggml-vocab-phi-3.gguf syn1-f32.gguf >/dev/null 2>&1)
rows() {
    sqlite3 "$1" "SELECT replace(f.path, '$2', ''), k.key, k.type, k.value FROM kv k JOIN files f ON f.id = k.file_id ORDER BY 1, 2;
                  SELECT replace(f.path, '$2', ''), t.name, t.type, t.offset, t.nbytes FROM tensors t JOIN files f ON f.id = t.file_id ORDER BY 1, 2;" 2>&1
}
if command -v sqlite3 >/dev/null; then
    if [[ $(rows "$TMP/r.sqlite" "$U/") == "$(rows "$TMP/l.sqlite" "$WWW/")" ]] && [[ -n $(rows "$TMP/r.sqlite" "$U/") ]]; then
        ok "index rows over URLs equal the local files' rows"
    else
        bad "index rows over URLs differ from the local files' rows"
    fi
else
    skip "no sqlite3 command: index rows"
fi
"$BIN" index --stats --db "$TMP/r.sqlite" --urls "$TMP/urls" "$U/syn1-f32.gguf" >"$TMP/out" 2>"$TMP/err"
expect_grep "index again: all unchanged" "$TMP/out" "3 unchanged"
expect_grep "... one 1-byte request per URL" "$TMP/err" "3 requests, 3 bytes fetched"

# --- a .gguf.zst behind a URL is sized lazily ----------------------------------------
# A model of 48 MB of random (incompressible) tensor data after a 3.3 MB header
# (a chat template of random base64), compressed three ways: one zstd frame;
# two frames joined with cat, the first holding only the first 1000 bytes (so
# the header runs on into a frame that the first one's recorded size says
# nothing about); pzstd's frames, which record no size at all. Header-only
# commands must fetch about the header, not the 45 MB of the compressed file:
# at most its bytes rounded up to the 2,000,000-byte grid of header reads plus
# one more chunk (the decoder and the reader's 64 KiB window read a little past
# the header's end), in at most 3 requests. Their answers are the local file's,
# and hash reads every byte (once: no pass to size the stream first).
if command -v pzstd >/dev/null && command -v zstd >/dev/null; then
    "$BIN" synth --layers 18 "$TMP/lz0.gguf" >/dev/null 2>&1
    head -c 2500000 /dev/urandom | base64 -w0 >"$TMP/lz.tmpl"
    "$BIN" edit --set-file tokenizer.chat_template="$TMP/lz.tmpl" -o "$TMP/lz.gguf" "$TMP/lz0.gguf" >/dev/null 2>&1
    rm -f "$TMP/lz0.gguf"
    zstd -q "$TMP/lz.gguf" -o "$WWW/lz-one.gguf.zst"
    pzstd -q -p2 "$TMP/lz.gguf" -o "$WWW/lz-pz.gguf.zst"
    head -c 1000 "$TMP/lz.gguf" | zstd -q >"$TMP/lz.a.zst"
    tail -c +1001 "$TMP/lz.gguf" | zstd -q >"$TMP/lz.b.zst"
    cat "$TMP/lz.a.zst" "$TMP/lz.b.zst" >"$WWW/lz-cat.gguf.zst"
    rm -f "$TMP/lz.a.zst" "$TMP/lz.b.zst"
    hdr=$("$BIN" info --json "$TMP/lz.gguf" | sed -n 's/.*"data_offset":[[:space:]]*\([0-9]*\).*/\1/p')
    limit=$(( (hdr + 1999999) / 2000000 * 2000000 + 2000000 ))
    rm -f "$TMP/lz.gguf"
    for f in lz-one.gguf.zst lz-cat.gguf.zst lz-pz.gguf.zst; do
        csize=$(stat -c %s "$WWW/$f")
        remote_same "info of $f (lazy size)" "$U/$f" "$f" info
        remote_same "dump --json of $f (lazy size)" "$U/$f" "$f" dump --json --json-array
        remote_same "diff of $f and its local copy" "$U/$f" "$f" diff "$WWW/$f"
        for c in "info" "dump --json" "diff $WWW/ggml-vocab-gpt-2.gguf" "index --db $TMP/lz-$f.sqlite"; do
            "$BIN" $c --stats "$U/$f" >/dev/null 2>"$TMP/err"
            read -r req bytes < <(sed -n 's/.*remote: \([0-9]*\) requests, \([0-9]*\) bytes.*/\1 \2/p' "$TMP/err")
            if [[ -n ${req:-} ]] && (( req <= 3 && bytes <= limit )); then
                ok "${c%% *} $f: $req requests, $bytes bytes (header $hdr, at most $limit; $csize compressed)"
            else
                bad "${c%% *} $f: ${req:-?} requests, ${bytes:-?} bytes (header $hdr, at most $limit): $(head -c 300 "$TMP/err")"
            fi
        done
        "$BIN" hash --stats "$U/$f" >"$TMP/out.r" 2>"$TMP/err"
        read -r req bytes < <(sed -n 's/.*remote: \([0-9]*\) requests, \([0-9]*\) bytes.*/\1 \2/p' "$TMP/err")
        (cd "$WWW" && "$BIN" hash "$f" >"$TMP/out.l" 2>/dev/null)
        if sed "s|$U/||" "$TMP/out.r" | cmp -s - "$TMP/out.l" && [[ -s $TMP/out.l ]] &&
            (( ${bytes:-0} >= csize && ${bytes:-0} <= csize + limit )); then
            ok "hash of $f: the local hash, $req requests, $bytes bytes for $csize compressed"
        else
            bad "hash of $f: ${req:-?} requests, ${bytes:-?} bytes for $csize compressed, or not the local hash"
        fi
    done
    if command -v sqlite3 >/dev/null; then
        (cd "$WWW" && "$BIN" index --db "$TMP/lz-l.sqlite" lz-one.gguf.zst lz-cat.gguf.zst lz-pz.gguf.zst >/dev/null 2>&1)
        "$BIN" index --db "$TMP/lz-r.sqlite" "$U/lz-one.gguf.zst" "$U/lz-cat.gguf.zst" "$U/lz-pz.gguf.zst" >/dev/null 2>&1
        sizes() { sqlite3 "$1" "SELECT replace(path, '$2', ''), data_size, data_offset, n_tensors FROM files ORDER BY 1" 2>&1; }
        if [[ $(rows "$TMP/lz-r.sqlite" "$U/") == "$(rows "$TMP/lz-l.sqlite" "$WWW/")" &&
              $(sizes "$TMP/lz-r.sqlite" "$U/") == "$(sizes "$TMP/lz-l.sqlite" "$WWW/")" && -n $(sizes "$TMP/lz-l.sqlite" "$WWW/") ]]; then
            ok "index rows (and data sizes) of the .gguf.zst URLs equal the local files'"
        else
            bad "index rows of the .gguf.zst URLs differ from the local files'"
        fi
    else
        skip "no sqlite3 command: index rows of .gguf.zst URLs"
    fi
    # Cut short: the header is whole, the data is not. The header-only commands
    # do not read that far (not checked; docs/remote.md); reading the data fails
    # clearly, and verify (which measures a stream) says what a local file says.
    head -c 20000000 "$WWW/lz-one.gguf.zst" >"$WWW/lz-cut.gguf.zst"
    head -c 20000000 "$WWW/lz-pz.gguf.zst" >"$WWW/lz-cutpz.gguf.zst"
    for f in lz-cut.gguf.zst lz-cutpz.gguf.zst; do
        expect_exit 1 "hash of a cut $f over HTTP fails" "$BIN" hash --stats "$U/$f"
        expect_grep "... saying the compressed file is truncated" "$TMP/err" "compressed file truncated"
        bytes=$(sed -n 's/.*remote: [0-9]* requests, \([0-9]*\) bytes.*/\1/p' "$TMP/err")
        (( ${bytes:-0} <= 20000000 )) && ok "... having fetched the cut file once (${bytes:-?} bytes)" ||
            bad "... fetched ${bytes:-?} bytes of a 20000000-byte file"
        remote_same "verify of a cut $f: the local file's finding" "$U/$f" "$f" verify
        expect_grep "... that its data runs past the end" "$TMP/out.r" "run past the end of the file"
    done
    # The header itself cut: info fails, naming the truncation, from the bytes there.
    head -c 3000 "$WWW/lz-one.gguf.zst" >"$WWW/lz-cuthdr.gguf.zst"
    expect_exit 1 "info of a .gguf.zst cut inside its header" "$BIN" info "$U/lz-cuthdr.gguf.zst"
    expect_grep "... says the compressed file is truncated" "$TMP/err" "compressed file truncated"
    # A writer's input: the same output as from the local file, from one pass
    # over the compressed bytes (pzstd's: no frame records its size).
    rm -f "$TMP/o/lzr.gguf" "$TMP/o/lzl.gguf"
    csize=$(stat -c %s "$WWW/lz-pz.gguf.zst")
    "$BIN" repack "$WWW/lz-pz.gguf.zst" "$TMP/o/lzl.gguf" >/dev/null 2>&1
    "$BIN" repack --stats "$U/lz-pz.gguf.zst" "$TMP/o/lzr.gguf" >/dev/null 2>"$TMP/err"
    bytes=$(sed -n 's/.*remote: [0-9]* requests, \([0-9]*\) bytes.*/\1/p' "$TMP/err")
    if cmp -s "$TMP/o/lzr.gguf" "$TMP/o/lzl.gguf" && (( ${bytes:-0} >= csize && ${bytes:-0} <= csize + limit )); then
        ok "repack of lz-pz.gguf.zst over HTTP: the local output, $bytes bytes for $csize compressed"
    else
        bad "repack of lz-pz.gguf.zst over HTTP: ${bytes:-?} bytes for $csize compressed, or not the local output: $(head -c 300 "$TMP/err")"
    fi
    rm -f "$TMP/o/lzr.gguf" "$TMP/o/lzl.gguf"
else
    skip "no pzstd/zstd command: lazily sized .gguf.zst over HTTP"
fi

# --- bad servers and networks: a clear error naming the URL, exit 1, no output -------
# fails NAME MODE TEXT [CMD]: `ggufkit CMD URL OUT` (default: hash) on the misbehaving
# server's MODE path fails with exit 1, an error naming the URL and holding TEXT,
# and nothing written.
fails() {
    local name=$1 mode=$2 text=$3
    shift 3
    local url="$S/$mode/syn1-f32.gguf" start=$SECONDS
    rm -f "$TMP/o/q.gguf"
    run "$name" env GGUFKIT_HTTP_STALL_TIMEOUT="${STALL:-15}" GGUFKIT_HTTP_RETRIES="${RETRIES:-2}" timeout 60 "$BIN" quantize "$url" "$TMP/o/q.gguf" Q8_0 "$@"
    expect_rc "$name: exit 1" 1
    expect_grep "$name: the error names the URL" "$TMP/err" "$url"
    expect_grep "$name: says what went wrong" "$TMP/err" "$text"
    expect_absent "$name: no output" "$TMP/o/q.gguf"
    (( SECONDS - start <= 30 )) && ok "$name: bounded time" || bad "$name: took $((SECONDS - start)) s"
}
fails "404" 404 "HTTP 404"
fails "401 without a token" 401 "HF_TOKEN"
fails "403 with a token" 403 "refused the token" --header "Authorization: Bearer s3cr3t-token"
grep -q s3cr3t "$TMP/err" "$TMP/out" && bad "the token was printed" || ok "the token is never printed"
fails "416" 416 "416"
fails "wrong Content-Range" badrange "wrong Content-Range"
fails "short body" short "short body"
STALL=1 RETRIES=1 fails "stalled server" stall "stalled"
fails "HTML page instead of GGUF" html "web page"
fails "redirect loop" loop "redirect loop"
fails "ETag changed mid-read" etag "changed on the server"
fails "503 every time" down "HTTP 503"

expect_exit 0 "server ignoring Range: info reads what it needs" "$BIN" info --stats "$S/norange/syn1-f32.gguf"
req_bytes=$(sed -n 's/.*remote: [0-9]* requests, \([0-9]*\) bytes.*/\1/p' "$TMP/err")
(( ${req_bytes:-999999999} <= 2000000 + 524288 )) && ok "... and stops (${req_bytes} bytes of 6 MB)" || bad "... fetched ${req_bytes:-?} bytes"
remote_same "a dropped connection is resumed" "$S/drop/syn1-f32.gguf" syn1-f32.gguf hash
grep -q "^drop .*bytes=100000-" "$TMP/server.log" && ok "... at the byte where it broke" || bad "no resumed request in the log"
remote_same "429 then good: retried" "$S/busy/syn1-f32.gguf" syn1-f32.gguf hash

remote_same "a model labelled text/html is still read" "$S/htmltype/syn1-f32.gguf" syn1-f32.gguf dump --json

# index records a URL it cannot read as a broken row, as it does a broken file.
expect_exit 0 "index of a missing URL" "$BIN" index --db "$TMP/b.sqlite" "$S/404/syn1-f32.gguf" "$U/syn1-f32.gguf"
expect_grep "... two rows, one broken" "$TMP/out" "2 added, 0 updated, 0 unchanged, 1 broken"

# Usage: a header is one "Name: value" line; an hf:// URL names owner, repo and file.
expect_exit 2 "--header without a colon" "$BIN" info --header "nocolon" "$U/syn1-f32.gguf"
expect_exit 1 "hf:// without a file" "$BIN" info "hf://someone/model"
expect_grep "... says the form" "$TMP/err" "hf://OWNER/REPO/PATH"

# Authorization goes to the URL's host, never to another host a redirect leads to.
: >"$TMP/server.log"
expect_exit 0 "redirect to another host" "$BIN" info --header "Authorization: Bearer s3cr3t" "$S/xhost/syn1-f32.gguf"
grep -q "^xhost .*auth=yes" "$TMP/server.log" && ok "the first host gets the header" || bad "the first host did not get the header"
grep -q "^ok .*auth=yes" "$TMP/server.log" && bad "Authorization was sent to another host" || ok "the other host does not get it"
grep -q "^ok " "$TMP/server.log" && ok "the redirect was followed" || bad "the redirect was not followed"

# hf:// URLs: the hub's resolve path; HF_TOKEN sent to the hub only.
: >"$TMP/server.log"
HF_ENDPOINT=$S HF_TOKEN=hf_s3cr3t "$BIN" info "hf://someone/model/syn1-f32.gguf@v1" >"$TMP/out" 2>"$TMP/err"
[[ $? == 0 ]] && ok "hf:// URL read" || bad "hf:// URL: $(cat "$TMP/err")"
grep -q "^hub /someone/model/resolve/v1/syn1-f32.gguf .*auth=yes" "$TMP/server.log" && ok "hf:// resolves to the hub path with the token" ||
    bad "hf:// request: $(head -2 "$TMP/server.log")"
: >"$TMP/server.log"
HF_TOKEN=hf_s3cr3t "$BIN" info "$S/ok/syn1-f32.gguf" >/dev/null 2>&1
grep -q "auth=yes" "$TMP/server.log" && bad "HF_TOKEN was sent to a host that is not the hub" || ok "HF_TOKEN goes to the hub only"

# TLS is verified: a server with a certificate nobody vouches for is refused.
if openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 -keyout "$TMP/tls.pem" \
        -out "$TMP/tls.crt" >/dev/null 2>&1 && cat "$TMP/tls.crt" >>"$TMP/tls.pem"; then
    "$PY" "$HERE/../remote_server.py" "$WWW" "$TMP/tlsport" "$TMP/tls.log" "$TMP/tls.pem" 2>/dev/null &
    TPID=$!
    wait_port_file "$TMP/tlsport" "$TPID"
    run "self-signed certificate" "$BIN" info "https://127.0.0.1:$(cat "$TMP/tlsport")/ok/syn1-f32.gguf"
    expect_rc "self-signed certificate: exit 1" 1
    expect_grep "... says why" "$TMP/err" "certificate"
    kill "$TPID" 2>/dev/null
    wait "$TPID" 2>/dev/null
else
    skip "no openssl command: TLS verification"
fi

# No server at all: a bounded, clear failure.
run "connection refused" "$BIN" info "http://127.0.0.1:$(free_port)/x.gguf"
expect_rc "connection refused: exit 1" 1
expect_grep "connection refused: names the URL" "$TMP/err" "http://127.0.0.1:"

finish
