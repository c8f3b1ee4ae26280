#!/usr/bin/env bash
# test_concurrency.sh GGUFKIT - several processes on one model at once.
#
# Three in-place editors (each its own key, values of varying length; the third
# edits general.name with --in-place=auto, and every other value it writes is too
# long for the header's room, so it rewrites and replaces the file while the
# others wait on the old one) and three readers (verify, info, dump) run side by
# side on one file, each for a fixed number of iterations (not for a duration).
# Afterwards:
#   - every read succeeded (a reader sees the old header or the new one);
#   - every editor exited 0, or 1 with a message (a lock it waited for too long);
#   - the file verifies, its tensor bytes are unchanged, no journal and no other
#     file is left in the folder;
#   - each key holds the value of its editor's last successful edit: no edit was
#     lost (edits of one file are serialized by its lock, a rewrite included).
# Then, with an edit lock held by the test itself, editors give up (--wait 0)
# with exit 1 and a reason while readers go on.
# Nothing here depends on timing: whatever the interleaving, these must hold.
# GK_CONCURRENCY_ROUNDS overrides the iterations per process (default 12).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"
ROUNDS=${GK_CONCURRENCY_ROUNDS:-12}

mkdir -p "$TMP/m" "$TMP/log"
F="$TMP/m/model.gguf"
"$BIN" synth --preset tiny --layers 4 "$TMP/src.gguf" >/dev/null || { echo "FAIL: synth"; exit 1; }
"$BIN" repack --reserve 2K "$TMP/src.gguf" "$F" >/dev/null || { echo "FAIL: repack --reserve"; exit 1; }

# tensor_sha FILE : sha256 of everything from the data section on.
tensor_sha() {
  local d
  d=$("$BIN" info --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data_offset"])')
  tail -c +$((d + 1)) "$1" | sha256sum | cut -d' ' -f1
}
SHA=$(tensor_sha "$F")

# value K I : the value editor K writes in round I (lengths 1 to ~600 bytes;
# editor 3's odd rounds are 5000 bytes, more than the header has room for).
value() {
  local k=$1 i=$2 n
  if [ "$k" = 3 ] && [ $((i % 2)) = 1 ]; then n=5000; else n=$(((i * 37 + k * 101) % 600)); fi
  printf 'e%s-r%s-%s' "$k" "$i" "$(head -c "$n" /dev/zero | tr '\0' "$(printf '\\%03o' $((97 + (i + k) % 26)))")"
}
key_of() { if [ "$1" = 3 ]; then echo general.name; else echo "test.editor$1"; fi; }

editor() {   # editor K : ROUNDS in-place edits of its own key
  local k=$1 i rc key; key=$(key_of "$k")
  local mode=--in-place; [ "$k" = 3 ] && mode=--in-place=auto
  for ((i = 1; i <= ROUNDS; i++)); do
    "$BIN" edit --wait 120 --set "$key=$(value "$k" "$i")" $mode "$F" >/dev/null 2>"$TMP/log/e$k-$i.err"
    rc=$?
    echo "$i $rc" >>"$TMP/log/e$k.rc"
  done
}

reader() {   # reader CMD : ROUNDS reads
  local i rc
  for ((i = 1; i <= ROUNDS * 2; i++)); do
    # shellcheck disable=SC2086
    "$BIN" $1 "$F" >/dev/null 2>"$TMP/log/r-${1%% *}-$i.err"
    rc=$?
    echo "$i $rc" >>"$TMP/log/r-${1%% *}.rc"
  done
}

T0=$SECONDS
pids=()
for k in 1 2 3; do editor "$k" & pids+=($!); done
for r in verify info "dump --json"; do reader "$r" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done

# Readers: every read succeeded.
for r in verify info dump; do
  n=0
  while read -r i rc; do
    n=$((n + 1))
    [ "$rc" = 0 ] && ok || bad "$r round $i: exit $rc: $(head -3 "$TMP/log/r-$r-$i.err")"
  done <"$TMP/log/r-$r.rc"
  [ "$n" = $((ROUNDS * 2)) ] && ok || bad "$r: $n reads recorded, not $((ROUNDS * 2))"
done

# Editors: 0, or 1 with a message; the last success of each is what the file holds.
python3 - "$BIN" "$F" >"$TMP/final.tsv" <<'EOF' || bad "cannot read the metadata of the result"
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], "dump", "--json", "--json-array", sys.argv[2]],
                              capture_output=True, check=True).stdout)
for k in ("test.editor1", "test.editor2", "general.name"):
    v = d["metadata"].get(k)
    print("%s\t%s" % (k, v["value"] if v else ""))
EOF
summary=""
for k in 1 2 3; do
  key=$(key_of "$k")
  last=0 n_done=0 busy=0
  while read -r i rc; do
    if [ "$rc" = 0 ]; then
      n_done=$((n_done + 1)); last=$i; ok
    elif [ "$rc" = 1 ] && [ -s "$TMP/log/e$k-$i.err" ]; then
      busy=$((busy + 1)); ok
    else
      bad "editor $k round $i: exit $rc: $(head -3 "$TMP/log/e$k-$i.err")"
    fi
  done <"$TMP/log/e$k.rc"
  got=$(awk -F'\t' -v k="$key" '$1 == k {print $2}' "$TMP/final.tsv")
  if [ "$last" = 0 ]; then
    want=$([ "$k" = 3 ] && "$BIN" dump --json "$TMP/src.gguf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["general.name"]["value"])')
  else
    want=$(value "$k" "$last")
  fi
  [ "$got" = "$want" ] && ok ||
    bad "$key: holds '${got:0:40}...' (${#got} bytes), not the last successful edit (round $last, ${#want} bytes)"
  summary="$summary editor $k: $n_done done, $busy gave up waiting;"
done

# The file itself.
"$BIN" verify "$F" >"$TMP/v.out" 2>&1 && ok || bad "the model does not verify: $(head -3 "$TMP/v.out")"
[ "$(tensor_sha "$F")" = "$SHA" ] && ok || bad "tensor bytes changed"
left=$(ls -A "$TMP/m" | grep -v '^model\.gguf$')
[ -z "$left" ] && ok || bad "left in the model's folder: $(echo $left)"

# A held edit lock (taken here by python): an in-place editor and a rewriting one
# give up at once with --wait 0, exit 1 naming the reason and change nothing;
# readers are not kept out; once the lock is gone, the edit goes through.
python3 - "$BIN" "$F" <<'EOF' && ok || bad "a held edit lock: see above"
import fcntl, os, struct, subprocess, sys
g, path = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 1, 1, 0))
before = open(path, "rb").read()
def run(*args):
    return subprocess.run([g, *args], capture_output=True, text=True)
for mode, value in (("--in-place", "held"), ("--in-place=auto", "h" * 5000)):
    r = run("edit", "--wait", "0", "--set", "test.held=" + value, mode, path)
    assert r.returncode == 1 and "being edited or replaced by another process" in r.stderr, (mode, r)
    assert open(path, "rb").read() == before, mode + ": the file changed"
for reader in ("info", "verify"):
    r = run(reader, path)
    assert r.returncode == 0, (reader, r)
os.close(fd)
r = run("edit", "--wait", "0", "--set", "test.held=free", "--in-place", path)
assert r.returncode == 0, r
EOF

echo "cli_concurrency: $ROUNDS rounds per editor, $((ROUNDS * 2)) reads per reader;$summary $((SECONDS - T0)) s"
finish
