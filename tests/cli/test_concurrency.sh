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
G=$(realpath "$1")
export GGUFKIT_NO_PROGRESS=1
ROUNDS=${GK_CONCURRENCY_ROUNDS:-12}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { checks=$((checks + 1)); }

mkdir -p "$W/m" "$W/log"
F="$W/m/model.gguf"
"$G" synth --preset tiny --layers 4 "$W/src.gguf" >/dev/null || { echo "FAIL: synth"; exit 1; }
"$G" repack --reserve 2K "$W/src.gguf" "$F" >/dev/null || { echo "FAIL: repack --reserve"; exit 1; }

# tensor_sha FILE : sha256 of everything from the data section on.
tensor_sha() {
  local d
  d=$("$G" info --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data_offset"])')
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
    "$G" edit --wait 120 --set "$key=$(value "$k" "$i")" $mode "$F" >/dev/null 2>"$W/log/e$k-$i.err"
    rc=$?
    echo "$i $rc" >>"$W/log/e$k.rc"
  done
}

reader() {   # reader CMD : ROUNDS reads
  local i rc
  for ((i = 1; i <= ROUNDS * 2; i++)); do
    # shellcheck disable=SC2086
    "$G" $1 "$F" >/dev/null 2>"$W/log/r-${1%% *}-$i.err"
    rc=$?
    echo "$i $rc" >>"$W/log/r-${1%% *}.rc"
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
    [ "$rc" = 0 ] && pass || fail "$r round $i: exit $rc: $(head -3 "$W/log/r-$r-$i.err")"
  done <"$W/log/r-$r.rc"
  [ "$n" = $((ROUNDS * 2)) ] && pass || fail "$r: $n reads recorded, not $((ROUNDS * 2))"
done

# Editors: 0, or 1 with a message; the last success of each is what the file holds.
python3 - "$G" "$F" >"$W/final.tsv" <<'EOF' || fail "cannot read the metadata of the result"
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
  last=0 ok=0 busy=0
  while read -r i rc; do
    if [ "$rc" = 0 ]; then
      ok=$((ok + 1)); last=$i; pass
    elif [ "$rc" = 1 ] && [ -s "$W/log/e$k-$i.err" ]; then
      busy=$((busy + 1)); pass
    else
      fail "editor $k round $i: exit $rc: $(head -3 "$W/log/e$k-$i.err")"
    fi
  done <"$W/log/e$k.rc"
  got=$(awk -F'\t' -v k="$key" '$1 == k {print $2}' "$W/final.tsv")
  if [ "$last" = 0 ]; then
    want=$([ "$k" = 3 ] && "$G" dump --json "$W/src.gguf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["general.name"]["value"])')
  else
    want=$(value "$k" "$last")
  fi
  [ "$got" = "$want" ] && pass ||
    fail "$key: holds '${got:0:40}...' (${#got} bytes), not the last successful edit (round $last, ${#want} bytes)"
  summary="$summary editor $k: $ok done, $busy gave up waiting;"
done

# The file itself.
"$G" verify "$F" >"$W/v.out" 2>&1 && pass || fail "the model does not verify: $(head -3 "$W/v.out")"
[ "$(tensor_sha "$F")" = "$SHA" ] && pass || fail "tensor bytes changed"
left=$(ls -A "$W/m" | grep -v '^model\.gguf$')
[ -z "$left" ] && pass || fail "left in the model's folder: $(echo $left)"

# A held edit lock (taken here by python): an in-place editor and a rewriting one
# give up at once with --wait 0, exit 1 naming the reason and change nothing;
# readers are not kept out; once the lock is gone, the edit goes through.
python3 - "$G" "$F" <<'EOF' && pass || fail "a held edit lock: see above"
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
echo "cli_concurrency: $checks checks passed, $fails failed"
[ "$fails" -eq 0 ]
