#!/usr/bin/env bash
# test_merge_delete.sh GGUFKIT FAULT_PRELOAD_SO - `merge --delete-splits`, which
# removes each shard once its bytes are safe in the merged file, must lose
# nothing: a set of 6 shards is merged with a SIGKILL before every step of the
# run (writes, fsyncs, renames, links, unlinks, creating opens, through the
# fault shim) and inside writes at spread byte counts. After each kill:
#   - every shard still present is byte-identical to the original;
#   - when shards were removed, the work file OUT.ggufkit-merge (or OUT) holds
#     the merged bytes of every removed shard: it is a prefix of the reference
#     merge reaching at least the end of the last removed shard's tensors;
#   - OUT, when present, is the reference merge;
#   - running the same command again (with any shard's name, removed or not)
#     finishes: OUT is the reference, no shard, work or state file is left.
# Also: a full disk (ENOSPC on the work file) and SIGINT midway lose nothing
# and a rerun finishes; a shard replaced after a kill is never removed; another
# set's pending merge and a leftover work file are refused; --help says that
# cloning filesystems need no deletion.
# The files live in /dev/shm when it has room (common.sh's GK_TMP_RAM: a kill
# does not care about the disk). GK_KILL_STRIDE=K (default 1) keeps every K-th
# kill point and the last K steps (the sanitizer run: a killed run executes a
# prefix of a whole one, which the sanitizers see anyway).
set -u
SHIM=${2:-}
GK_TMP_RAM=1
STRIDE=${GK_KILL_STRIDE:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"
if [ -z "$SHIM" ] || [ ! -f "$SHIM" ]; then
  skip "kill tests of merge --delete-splits (no fault shim given)"
  finish
fi
SHIM=$(realpath "$SHIM")
shim() { env LD_PRELOAD="$SHIM" ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" "$@"; }

W=$TMP/w
ORIG=$TMP/orig
mkdir -p "$W" "$ORIG"
# F16: the 6 shards and their cut points of the F32 model at half the bytes
# (every kill point copies and compares the whole set).
"$BIN" synth --preset tiny --layers 4 --type F16 "$TMP/m.gguf" >/dev/null || { bad "synth"; finish; }
"$BIN" split --split-max-tensors 7 "$TMP/m.gguf" "$ORIG/s" >/dev/null || { bad "split"; finish; }
N=$(ls "$ORIG" | wc -l)
[ "$N" -ge 4 ] && ok || bad "expected several shards, got $N"
"$BIN" merge --no-clone "$ORIG/s-00001-of-0000$N.gguf" "$TMP/ref.gguf" >/dev/null 2>&1 || bad "reference merge"

# Offset in the merged file just past the last tensor of each shard (ends[k], k from 1).
# nbytes are not in the dump: take the next tensor's offset in the merged file
# (the gap is zero padding, which the work file also holds once written) or,
# for the last shard, the file's size.
python3 - "$BIN" "$TMP/ref.gguf" "$ORIG" "$N" >"$TMP/ends" <<'EOF' || bad "shard ends"
import json, os, subprocess, sys
gk, ref, orig, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def js(*a):
    return json.loads(subprocess.run([gk, *a], capture_output=True, check=True, text=True).stdout)
start = js("info", "--json", ref)["data_offset"]
tensors = js("dump", "--json", ref)["tensors"]
offsets = sorted(t["offset"] for t in tensors.values())
for k in range(1, n + 1):
    names = list(js("dump", "--json", f"{orig}/s-{k:05d}-of-{n:05d}.gguf")["tensors"])
    off = tensors[names[-1]]["offset"]
    later = [o for o in offsets if o > off]
    print(start + later[0] if later else os.path.getsize(ref))
EOF
mapfile -t ends <"$TMP/ends"
[ "${#ends[@]}" -eq "$N" ] && ok || bad "expected $N shard ends, got ${#ends[@]}"

OUT=$W/out.gguf
WORK=$OUT.ggufkit-merge
STATE=$OUT.ggufkit-merge-state
fresh() { rm -rf "$W"; mkdir -p "$W"; cp "$ORIG"/*.gguf "$W/"; }
shard() { printf '%s/s-%05d-of-%05d.gguf' "$1" "$2" "$N"; }

# check_nothing_lost WHAT : the invariants after an interrupted run.
check_nothing_lost() {
  local what=$1 k removed=0 f
  for ((k = 1; k <= N; k++)); do
    f=$(shard "$W" "$k")
    if [ -e "$f" ]; then
      cmp -s "$f" "$(shard "$ORIG" "$k")" || bad "$what: shard $k present but changed"
    else
      removed=$k
    fi
  done
  if [ -e "$OUT" ]; then
    cmp -s "$OUT" "$TMP/ref.gguf" || bad "$what: $OUT present but not the reference merge"
  elif [ "$removed" -gt 0 ]; then
    if [ ! -f "$WORK" ]; then
      bad "$what: shards up to $removed removed but no work file"
    else
      local size; size=$(stat -c %s "$WORK")
      [ "$size" -ge "${ends[$((removed - 1))]}" ] || bad "$what: work file $size bytes, shard $removed ends at ${ends[$((removed - 1))]}"
      cmp -s -n "$size" "$WORK" "$TMP/ref.gguf" || bad "$what: work file is not a prefix of the merge"
    fi
  fi
  n_removed=$removed
}

# check_finishes WHAT SHARD_NAME : a rerun completes the merge.
check_finishes() {
  if [ ! -e "$STATE" ] && [ ! -e "$WORK" ] && [ -z "$(ls "$W" | grep '^s-')" ]; then
    # the kill came after the last step: the merge was complete
    cmp -s "$OUT" "$TMP/ref.gguf" || bad "$1: finished merge is not the reference"
    expect_exit 1 "$1: a rerun of a finished merge says so" "$BIN" merge --delete-splits "$2" "$OUT"
    expect_grep "$1: the message says no merge is pending" "$TMP/err" "no merge into"
    return
  fi
  if "$BIN" merge --delete-splits "$2" "$OUT" >/dev/null 2>"$TMP/rerun.err"; then
    cmp -s "$OUT" "$TMP/ref.gguf" || bad "$1: rerun gave another file"
    local left; left=$(ls -A "$W" | grep -v '^out.gguf$' | tr '\n' ' ')
    [ -z "$left" ] || bad "$1: rerun left files: $left"
  else
    bad "$1: rerun failed: $(head -2 "$TMP/rerun.err")"
  fi
}

# --- a plain run -----------------------------------------------------------
fresh
run "merge --delete-splits" "$BIN" merge --delete-splits "$(shard "$W" 2)" "$OUT"
expect_rc "merge --delete-splits exits 0" 0
expect_same_file "merge --delete-splits equals merge" "$OUT" "$TMP/ref.gguf"
[ -z "$(ls -A "$W" | grep -v '^out.gguf$')" ] && ok || bad "plain run left files: $(ls -A "$W")"
run "--help" "$BIN" merge --help
expect_grep "--help names --delete-splits" "$TMP/out" "--delete-splits"
expect_grep "--help says cloning filesystems take no room" "$TMP/out" "XFS"

# --- the kill loop: before every step, and inside writes ----------------------
fresh
rm -f "$TMP/counts"
shim GK_FAULT_COUNT_OUT="$TMP/counts" "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT" >/dev/null 2>&1 ||
  bad "counting run failed"
steps=$(awk '$1 == "steps" { print $2 }' "$TMP/counts")
wbytes=$(awk '$1 == "written" { print $2 }' "$TMP/counts")
rbytes=$(awk '$1 == "read" { print $2 }' "$TMP/counts")
[ "${steps:-0}" -gt 10 ] && ok || bad "counting run: steps '$steps'"
killed=0
max_removed=0
points=()
for ((i = 1; i <= steps; i++)); do
  ((i % STRIDE == 0 || i > steps - STRIDE)) && points+=("step:$i")
done
for ((i = 1; i <= 24; i++)); do ((i % STRIDE == 0)) && points+=("write:$(( i * wbytes / 25 ))"); done
for p in "${points[@]}"; do
  fresh
  shim GK_FAULT_TRIGGER="$p" GK_FAULT_ACTION=kill "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT" \
    >/dev/null 2>"$TMP/killed.err"
  rc=$?
  if [ "$rc" -eq 137 ]; then killed=$((killed + 1))
  elif [ "$rc" -ne 0 ]; then bad "kill at $p: exit $rc: $(head -2 "$TMP/killed.err")"
  fi
  check_nothing_lost "kill at $p"
  [ "$n_removed" -gt "$max_removed" ] && max_removed=$n_removed
  # rerun with the name of a shard that may be gone (the first) or the last
  if [ $((killed % 2)) -eq 0 ]; then check_finishes "kill at $p" "$(shard "$W" 1)"
  else check_finishes "kill at $p" "$(shard "$W" "$N")"; fi
done
[ "$killed" -gt $((${#points[@]} / 2)) ] && ok || bad "only $killed of ${#points[@]} kills landed"
[ "$max_removed" -eq "$N" ] && ok || bad "no kill landed after the last shard was removed ($max_removed)"
echo "kill loop: ${#points[@]} kill points over $steps steps and $wbytes written bytes, $killed landed"

# --- twice killed, then finished ------------------------------------------------
fresh
shim GK_FAULT_TRIGGER="step:$((steps / 3))" GK_FAULT_ACTION=kill "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT" >/dev/null 2>&1
shim GK_FAULT_TRIGGER="step:$((steps / 4))" GK_FAULT_ACTION=kill "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT" >/dev/null 2>&1
check_nothing_lost "two kills"
check_finishes "two kills" "$(shard "$W" 3)"

# --- a full disk on the work file ------------------------------------------------
for after in 20000 $((wbytes / 2)) $((wbytes - 100)); do
  fresh
  shim GK_FAULT_WRITE_PATH=ggufkit-merge GK_FAULT_WRITE_AFTER=$after "$BIN" merge --delete-splits \
    "$(shard "$W" 1)" "$OUT" >/dev/null 2>"$TMP/full.err"
  rc=$?
  [ "$rc" -eq 1 ] && ok || bad "full disk after $after bytes: exit $rc"
  grep -q "No space left" "$TMP/full.err" && ok || bad "full disk: message: $(cat "$TMP/full.err")"
  check_nothing_lost "full disk after $after bytes"
  check_finishes "full disk after $after bytes" "$(shard "$W" 1)"
done

# --- SIGINT midway -----------------------------------------------------------------
fresh
shim GK_FAULT_TRIGGER="read:$((rbytes / 2))" GK_FAULT_ACTION=int "$BIN" merge --delete-splits \
  "$(shard "$W" 1)" "$OUT" >/dev/null 2>"$TMP/int.err"
rc=$?
[ "$rc" -ne 0 ] && ok || bad "SIGINT: the merge finished anyway"
grep -q "run the same command again" "$TMP/int.err" && ok || bad "SIGINT: message: $(cat "$TMP/int.err")"
check_nothing_lost "SIGINT"
check_finishes "SIGINT" "$(shard "$W" 2)"

# --- a shard replaced after a kill is never removed -------------------------------------
fresh
kill_at=0
for ((i = steps / 2; i < steps; i++)); do
  fresh
  shim GK_FAULT_TRIGGER="step:$i" GK_FAULT_ACTION=kill "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT" >/dev/null 2>&1
  check_nothing_lost "replaced shard, kill at step $i"
  if [ "$n_removed" -ge 1 ] && [ "$n_removed" -le $((N - 2)) ] && [ -e "$(shard "$W" "$N")" ]; then kill_at=$i; break; fi
done
if [ "$kill_at" -gt 0 ]; then
  last=$(shard "$W" "$N")
  "$BIN" edit --set general.name=replaced -o "$TMP/other.gguf" "$last" >/dev/null 2>&1 && cp "$TMP/other.gguf" "$last"
  expect_exit 1 "a replaced shard is refused" "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT"
  expect_grep "the refusal says it was replaced" "$TMP/err" "replaced"
  cmp -s "$last" "$TMP/other.gguf" && ok || bad "the replaced shard was touched"
  [ ! -e "$OUT" ] && ok || bad "OUT written although a shard was replaced"
else
  bad "no kill point left shards 1..N-2 removed"
fi

# --- refusals -----------------------------------------------------------------------
fresh
shim GK_FAULT_TRIGGER="step:$((steps / 2))" GK_FAULT_ACTION=kill "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT" >/dev/null 2>&1
mkdir -p "$W/other"
cp "$ORIG/s-00001-of-0000$N.gguf" "$W/other/t-00001-of-0000$N.gguf"
expect_exit 1 "another set's pending merge is refused" "$BIN" merge --delete-splits "$W/other/t-00001-of-0000$N.gguf" "$OUT"
expect_grep "the refusal names the pending merge" "$TMP/err" "unfinished merge"
rm -rf "$W/other"
check_finishes "after the refusal" "$(shard "$W" 1)"
fresh
echo junk >"$WORK"
expect_exit 1 "a leftover work file without state is refused" "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT"
[ "$(ls "$W" | grep -c '^s-')" -eq "$N" ] && ok || bad "a refused merge removed shards"
fresh
cp "$TMP/ref.gguf" "$OUT"
expect_exit 1 "an existing OUT is refused without --force" "$BIN" merge --delete-splits "$(shard "$W" 1)" "$OUT"
[ "$(ls "$W" | grep -c '^s-')" -eq "$N" ] && ok || bad "a refused merge removed shards"
run "--force replaces OUT" "$BIN" merge --delete-splits --force "$(shard "$W" 1)" "$OUT"
expect_rc "--force replaces OUT" 0
expect_same_file "--force result" "$OUT" "$TMP/ref.gguf"
fresh
expect_exit 1 "OUT may not be a shard" "$BIN" merge --delete-splits --force "$(shard "$W" 1)" "$(shard "$W" 2)"
[ "$(ls "$W" | grep -c '^s-')" -eq "$N" ] && ok || bad "a refused merge removed shards"

finish
