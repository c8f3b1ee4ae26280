#!/usr/bin/env bash
# test_crash_safety.sh GGUFKIT FAULT_PRELOAD_SO - kill tests of every writing
# subcommand: quantize, repack, split, merge, endian, edit -o and edit --in-place
# run on a 4-layer synthetic model (F16, 39 tensors, 5.8 MB: several write
# steps, several shards; a kill does not care how large the tensors are) and
# are SIGKILLed at points of their work,
# through the fault shim (tests/fault_preload.c): a first run counts the steps
# (writes, fsyncs, renames, links, unlinks, creating opens) and the bytes it
# writes; then each kill lands before one step, or inside one write after a
# chosen byte (a torn write), spread evenly over the whole run. No kill waits on
# the clock, so every run kills at the same points on any machine. After each kill:
#   - the input is unchanged (size and mtime every time, sha256 after each loop);
#   - the destination is absent or byte-identical to a reference output made
#     once without killing (that reference passes `ggufkit verify`); for split,
#     every shard present is its reference shard;
#   - the destination folder holds nothing else: outputs are written unnamed
#     (O_TMPFILE) and linked in when complete, so a kill leaves no file;
#   - for --in-place: while a journal is left, `ggufkit verify FILE` fails naming
#     `ggufkit edit --recover` and changes nothing; after `edit --recover`, FILE is
#     byte-identical to the old or the new version, and verifies; no journal;
#   - recovery itself killed at points of its work is finished by the next
#     recovery (the old version); a journal whose file was replaced after the
#     kill is refused as stale and the file kept, until --discard-journal;
#   - for --in-place=auto rewriting FILE: FILE is the old or the new version; the
#     only other file a kill may leave is the complete new version under a
#     temporary name (the kill landed between linking it beside FILE and renaming
#     it over FILE: Linux cannot link a file over another).
# The loops of repack and split run again with the shim refusing O_TMPFILE (a
# filesystem without it): outputs then go through named temporary files
# .NAME.ggufkit-XXXXXX, which a kill may leave, and are still published whole.
# After each loop a normal run (with any leftover temporary files present) must
# succeed and give the reference. A write failure (ENOSPC) and a SIGINT or
# SIGTERM that the shim sends when the command has read half of its input (or,
# for synth, written its first bytes) must leave no temporary file and no
# destination.
# GK_CRASH_KILLS overrides the kills per subcommand (default 50), GK_CRASH_DIR
# the folder the files go to (default /dev/shm when it has 2 GB free, else
# TMPDIR: common.sh's GK_TMP_RAM).
set -u
SHIM=${2:-}
[ -n "$SHIM" ] && [ -f "$SHIM" ] || { echo "SKIPPED: crash-safety tests (no fault shim given: the kills land through it)"; exit 77; }
SHIM=$(realpath "$SHIM")
KILLS=${GK_CRASH_KILLS:-50}
# A RAM-backed folder when there is one (a kill does not care about the disk;
# fsync there is free, so the runs are short): GK_CRASH_DIR overrides.
GK_TMP_BASE=${GK_CRASH_DIR:-} GK_TMP_RAM=1 GK_TMP_TEMPLATE=gk-crash.XXXXXX
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"   # $TMP/out is a folder here: expect_exit and run are not used
T0=$SECONDS

# The loops below run some thousand short commands: helpers fork as little as
# they can (no basename, no pipes; sha prints "DIGEST  -", compared only with
# its own output).
sha() { sha256sum <"$1"; }
stamp() { stat -c '%s %Y %i' "$@"; }

# shim_env VAR=VALUE... : sets the array SHIM_ENV to the environment that
# preloads the shim with VARS (and $SHIM_EXTRA, e.g. GK_FAULT_NO_TMPFILE=1).
SHIM_EXTRA=
shim_env() {
  # shellcheck disable=SC2206
  SHIM_ENV=("LD_PRELOAD=$SHIM" "ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0" $SHIM_EXTRA "$@")
}
ALLOW_TEMPS=0   # 1 while O_TMPFILE is refused: named temporary files may be left

# count_work CMD... : runs CMD once under the shim; sets steps and wbytes to the
# steps it took and the bytes it wrote (stdin, stdout and stderr aside).
count_work() {
  rm -f "$TMP/counts"
  shim_env GK_FAULT_COUNT_OUT="$TMP/counts"
  env "${SHIM_ENV[@]}" "$@" >/dev/null 2>"$TMP/ref.err" ||
    bad "counting run failed: $* ($(cat "$TMP/ref.err"))"
  steps=$(awk '$1 == "steps" { print $2 }' "$TMP/counts" 2>/dev/null)
  wbytes=$(awk '$1 == "written" { print $2 }' "$TMP/counts" 2>/dev/null)
  [ -n "$steps" ] && [ "$steps" -gt 0 ] || { bad "counting run: no steps counted: $*"; steps=1; wbytes=1; }
}

# kill_point I N : sets trig to the I-th of N kill points (I from 1) over a run
# of $steps steps and $wbytes written bytes: odd I before a step, even I inside
# a write, both spread evenly from the start of the run to its end.
kill_point() {
  local i=$1 n=$2 half=$(( ($2 + 1) / 2 ))
  if [ $((i % 2)) -eq 1 ]; then
    trig="step:$(( 1 + ((i - 1) / 2) * steps / half ))"
  else
    trig="write:$(( (i / 2 - 1) * wbytes / (n / 2) + wbytes / (2 * n) ))"
  fi
}

# run_killed TRIGGER CMD... : runs CMD under the shim, SIGKILLed at TRIGGER; sets
# rc (137 when the kill landed, the exit status when the run ended first).
run_killed() {
  local trigger=$1; shift
  shim_env GK_FAULT_TRIGGER="$trigger" GK_FAULT_ACTION=kill
  env "${SHIM_ENV[@]}" "$@" >/dev/null 2>"$TMP/killed.err"
  rc=$?
}

# check_folder DIR REFDIR : every file in DIR is equal to REFDIR's file of its
# name, or (ALLOW_TEMPS=1) a temporary file of one of REFDIR's names. Sets
# n_present/n_temp.
check_folder() {
  local dir=$1 refdir=$2 f b
  n_present=0
  n_temp=0
  shopt -s nullglob dotglob
  for f in "$dir"/*; do
    b=${f##*/}
    if [ -f "$refdir/$b" ]; then
      if cmp -s "$f" "$refdir/$b"; then
        n_present=$((n_present + 1))
      else
        bad "$dir/$b exists but differs from the reference ($($BIN verify "$f" 2>&1 | head -2 | tr '\n' ' '))"
      fi
    elif [ "$ALLOW_TEMPS" = 1 ] && [[ "$b" == .*.ggufkit-?????? ]] && [ -f "$refdir/${b:1:${#b}-16}" ]; then
      n_temp=$((n_temp + 1))
    else
      bad "$dir: unexpected file '$b' after a kill"
    fi
  done
  shopt -u nullglob dotglob
}

# remove_finals DIR REFDIR : removes the published outputs (not the temporary files).
remove_finals() {
  local f
  local names=()
  for f in "$2"/*; do names+=("$1/${f##*/}"); done
  rm -f "${names[@]}"
}

remove_temps() { find "$1" -maxdepth 1 -name '.*.ggufkit-*' -delete; }

# kill_loop NAME INPUTS REFDIR OUTDIR CMD... : the kill loop of one subcommand.
# INPUTS is a space-separated list of files that must not change.
kill_loop() {
  local name=$1 inputs=$2 refdir=$3 outdir=$4; shift 4
  local before_stamp before_sha i f killed=0 completed=0 present=0 temps=0
  before_stamp=$(stamp $inputs)
  before_sha=$(cat $inputs | sha256sum)
  mkdir -p "$outdir"
  remove_finals "$outdir" "$refdir"
  count_work "$@"
  remove_finals "$outdir" "$refdir"
  local t; t=$SECONDS
  for ((i = 1; i <= KILLS; i++)); do
    kill_point "$i" "$KILLS"
    run_killed "$trig" "$@"
    if [ "$rc" -eq 137 ]; then killed=$((killed + 1))
    elif [ "$rc" -eq 0 ]; then completed=$((completed + 1))
    else bad "$name: kill $i: exit $rc, not 0 or SIGKILL: $(head -3 "$TMP/killed.err")"
    fi
    check_folder "$outdir" "$refdir"
    present=$((present + n_present))
    [ "$(stamp $inputs)" == "$before_stamp" ] || bad "$name: kill $i: an input changed (size/mtime/inode)"
    remove_finals "$outdir" "$refdir"
    # keep at most the last 10 kills' temporary files (disk space)
    if [ $((i % 10)) -eq 0 ] && [ "$i" -lt "$KILLS" ]; then
      temps=$((temps + $(find "$outdir" -maxdepth 1 -name '.*.ggufkit-*' | wc -l)))
      remove_temps "$outdir"
    fi
  done
  local left; left=$(find "$outdir" -maxdepth 1 -name '.*.ggufkit-*' | wc -l)
  temps=$((temps + left))
  [ "$(cat $inputs | sha256sum)" == "$before_sha" ] && ok || bad "$name: an input's sha256 changed"
  # A normal run next to the leftover temporary files gives the reference.
  if "$@" >/dev/null 2>"$TMP/after.err"; then
    check_folder "$outdir" "$refdir"
    [ "$n_present" -eq "$(ls "$refdir" | wc -l)" ] && ok ||
      bad "$name: the run after the kills did not publish every output"
    [ "$n_temp" -eq "$left" ] && ok || bad "$name: the run after the kills changed the leftover temporary files ($left -> $n_temp)"
  else
    bad "$name: a normal run after the kills failed ($left leftover temporary files): $(head -3 "$TMP/after.err")"
  fi
  remove_finals "$outdir" "$refdir"
  remove_temps "$outdir"
  echo "$name${SHIM_EXTRA:+ ($SHIM_EXTRA)}: $KILLS kills over $steps steps and $wbytes written bytes ($killed landed, $completed runs had finished), outputs present after a kill: $present, temporary files left: $temps, $((SECONDS - t)) s"
}

# ---------------------------------------------------------------------------
# Inputs and references
# ---------------------------------------------------------------------------

mkdir -p "$TMP/in" "$TMP/ref"
IN="$TMP/in/m.gguf"
"$BIN" synth --preset tiny --layers 4 --type F16 "$IN" >/dev/null || { echo "FAIL: synth"; exit 1; }
"$BIN" split --split-max-tensors 10 "$IN" "$TMP/in/s" >/dev/null || { echo "FAIL: split (input set)"; exit 1; }
SHARD1="$TMP/in/s-00001-of-00004.gguf"
[ -f "$SHARD1" ] || { echo "FAIL: expected 4 shards"; ls "$TMP/in"; exit 1; }
SHARDS=$(ls "$TMP/in"/s-*.gguf | tr '\n' ' ')
HAS_EDIT=0
"$BIN" edit --help >/dev/null 2>&1 && HAS_EDIT=1

# One reference folder per subcommand, each output verified once.
make_ref() {   # make_ref NAME CMD... (the command writes into $TMP/ref/NAME/)
  local name=$1; shift
  mkdir -p "$TMP/ref/$name"
  "$@" >/dev/null 2>"$TMP/ref.err" || { echo "FAIL: reference $name: $(cat "$TMP/ref.err")"; exit 1; }
  local f
  for f in "$TMP/ref/$name"/*; do
    "$BIN" verify "$f" >/dev/null 2>&1 || { echo "FAIL: reference $name: $f does not verify"; exit 1; }
  done
}
make_ref repack "$BIN" repack "$IN" "$TMP/ref/repack/r.gguf"
make_ref quantize "$BIN" quantize "$IN" "$TMP/ref/quantize/q.gguf" Q8_0
make_ref split "$BIN" split --split-max-tensors 8 "$IN" "$TMP/ref/split/p"
make_ref merge "$BIN" merge "$SHARD1" "$TMP/ref/merge/mm.gguf"
make_ref endian "$BIN" endian --to big "$IN" "$TMP/ref/endian/be.gguf"
cmp -s "$TMP/ref/merge/mm.gguf" "$IN" && ok || bad "merge of the split input is not the input"
if [ "$HAS_EDIT" = 1 ]; then
  make_ref edit "$BIN" edit --set general.name=crash-test --delete tokenizer.chat_template -o "$TMP/ref/edit/e.gguf" "$IN"
  # in place: a copy with room in its header
  "$BIN" repack --reserve 4K "$IN" "$TMP/in/p-old.gguf" >/dev/null || { echo "FAIL: repack --reserve"; exit 1; }
  cp "$TMP/in/p-old.gguf" "$TMP/in/p-new.gguf"
  "$BIN" edit --in-place --set general.name=crash-test-in-place "$TMP/in/p-new.gguf" >/dev/null 2>&1 ||
    { echo "FAIL: reference in-place edit"; exit 1; }
  "$BIN" verify "$TMP/in/p-new.gguf" >/dev/null 2>&1 || { echo "FAIL: in-place reference does not verify"; exit 1; }
  cmp -s "$TMP/in/p-old.gguf" "$TMP/in/p-new.gguf" && { echo "FAIL: in-place edit changed nothing"; exit 1; }
fi
echo "setup: $(stat -c %s "$IN") byte model, references made in $((SECONDS - T0)) s"

# ---------------------------------------------------------------------------
# Kill loops
# ---------------------------------------------------------------------------

kill_loop repack "$IN" "$TMP/ref/repack" "$TMP/out/repack" "$BIN" repack "$IN" "$TMP/out/repack/r.gguf"
kill_loop quantize "$IN" "$TMP/ref/quantize" "$TMP/out/quantize" "$BIN" quantize "$IN" "$TMP/out/quantize/q.gguf" Q8_0
kill_loop split "$IN" "$TMP/ref/split" "$TMP/out/split" "$BIN" split --split-max-tensors 8 "$IN" "$TMP/out/split/p"
kill_loop merge "$SHARDS" "$TMP/ref/merge" "$TMP/out/merge" "$BIN" merge "$SHARD1" "$TMP/out/merge/mm.gguf"
kill_loop endian "$IN" "$TMP/ref/endian" "$TMP/out/endian" "$BIN" endian --to big "$IN" "$TMP/out/endian/be.gguf"
if [ "$HAS_EDIT" = 1 ]; then
  kill_loop edit-o "$IN" "$TMP/ref/edit" "$TMP/out/edit" \
    "$BIN" edit --set general.name=crash-test --delete tokenizer.chat_template -o "$TMP/out/edit/e.gguf" "$IN"
else
  echo "SKIPPED: edit kill tests (ggufkit edit --help does not work)"
fi

# kill_edit I NAME ORIGINAL FILE CMD... : FILE restored from ORIGINAL, CMD (which
# edits FILE) killed at kill point I; counts n_killed, fails on another exit.
kill_edit() {
  local i=$1 name=$2 orig=$3 file=$4; shift 4
  cp "$orig" "$file"
  kill_point "$i" "$KILLS"
  run_killed "$trig" "$@"
  [ "$rc" -eq 137 ] && n_killed=$((n_killed + 1))
  [ "$rc" -ne 137 ] && [ "$rc" -ne 0 ] && bad "$name: kill $i ($trig): exit $rc: $(head -3 "$TMP/killed.err")"
}

# In place: kill, check that verify refuses a journaled file without touching
# it, recover with edit --recover, compare with the old and the new file.
# The kills land before each step of the edit (journal written and synced,
# header rewritten and synced, journal removed) and inside its writes (a torn
# journal, a torn header).
if [ "$HAS_EDIT" = 1 ]; then
  OLD=$(sha "$TMP/in/p-old.gguf")
  NEW=$(sha "$TMP/in/p-new.gguf")
  mkdir -p "$TMP/inplace"
  F="$TMP/inplace/p.gguf"
  EDIT=("$BIN" edit --in-place --set general.name=crash-test-in-place "$F")
  cp "$TMP/in/p-old.gguf" "$F"
  count_work "${EDIT[@]}"
  n_old=0 n_new=0 n_recovered=0 n_killed=0 t=$SECONDS
  for ((i = 1; i <= KILLS; i++)); do
    kill_edit "$i" "edit --in-place" "$TMP/in/p-old.gguf" "$F" "${EDIT[@]}"
    if [ -e "$F.ggufkit-journal" ]; then
      before=$(sha "$F")
      out=$("$BIN" verify "$F" 2>&1)
      vrc=$?
      [ "$vrc" -eq 1 ] && ok || bad "edit --in-place: kill $i ($trig): verify of a journaled file exits $vrc: $out"
      case "$out" in *"ggufkit edit --recover $F"*) ok ;; *) bad "edit --in-place: kill $i ($trig): verify does not name the recovery: $out" ;; esac
      [ "$(sha "$F")" == "$before" ] && [ -e "$F.ggufkit-journal" ] && ok ||
        bad "edit --in-place: kill $i ($trig): verify wrote to the model or its journal"
    fi
    out=$("$BIN" edit --recover "$F" 2>&1) || bad "edit --in-place: kill $i ($trig): edit --recover failed: $out"
    case "$out" in *journal*) n_recovered=$((n_recovered + 1)) ;; esac
    out=$("$BIN" verify "$F" 2>&1) || bad "edit --in-place: kill $i ($trig): verify after recovery: $out"
    s=$(sha "$F")
    if [ "$s" == "$OLD" ]; then n_old=$((n_old + 1))
    elif [ "$s" == "$NEW" ]; then n_new=$((n_new + 1))
    else bad "edit --in-place: kill $i ($trig): after recovery the file is neither the old nor the new version"
    fi
    extra=()
    shopt -s nullglob dotglob
    for f in "$TMP/inplace"/*; do [ "$f" = "$F" ] || extra+=("${f##*/}"); done
    shopt -u nullglob dotglob
    [ "${#extra[@]}" -eq 0 ] || { bad "edit --in-place: kill $i ($trig): left after recovery: ${extra[*]}"; rm -f "$TMP/inplace"/.??* "$TMP/inplace"/*journal*; }
  done
  [ $((n_old + n_new)) -eq "$KILLS" ] && ok
  [ "$n_killed" -gt 0 ] && ok || bad "edit --in-place: no kill landed"
  echo "edit --in-place: $KILLS kills over $steps steps and $wbytes written bytes ($n_killed landed), after recovery: $n_old old, $n_new new, $n_recovered journals recovered by edit --recover, $((SECONDS - t)) s"
  # A journal left by a kill does not stop the next edit: it is recovered first.
  # The kill lands before each step in turn until one leaves the journal.
  n_journal=0
  for ((k = 1; k <= steps && n_journal == 0; k++)); do
    cp "$TMP/in/p-old.gguf" "$F"
    run_killed "step:$k" "${EDIT[@]}"
    [ -e "$F.ggufkit-journal" ] && n_journal=1
  done
  if [ "$n_journal" = 1 ]; then
    if "${EDIT[@]}" >/dev/null 2>"$TMP/e.err"; then
      [ "$(sha "$F")" == "$NEW" ] && ok || bad "edit --in-place after a leftover journal: not the new version"
      [ ! -e "$F.ggufkit-journal" ] && ok || bad "edit --in-place left the journal"
    else
      bad "edit --in-place refused to run after a kill left a journal: $(cat "$TMP/e.err")"
    fi
  else
    bad "leftover-journal check: no kill before any of the $steps steps of an in-place edit left a journal"
  fi
  # Recovery killed: a kill late in an edit leaves a journal and a changed header;
  # recovery is then killed before each of its steps and inside its writes, and a
  # second recovery must give the old version (the journal still proves the mixed
  # bytes). A journal whose file was replaced after the kill (cp of another model
  # over it, the inode kept) is refused as stale, the file kept, until
  # --discard-journal removes it.
  jsaved=0
  for ((k = steps; k >= 1 && jsaved == 0; k--)); do
    cp "$TMP/in/p-old.gguf" "$F"
    run_killed "step:$k" "${EDIT[@]}"
    if [ -e "$F.ggufkit-journal" ] && [ "$(sha "$F")" != "$OLD" ]; then
      cp "$F" "$TMP/j-file"; cp "$F.ggufkit-journal" "$TMP/j-journal"; jsaved=1
    fi
  done
  if [ "$jsaved" = 1 ]; then
    restore_j() { cp "$TMP/j-file" "$F"; cp "$TMP/j-journal" "$F.ggufkit-journal"; }
    restore_j
    count_work "$BIN" edit --recover "$F"
    [ "$(sha "$F")" == "$OLD" ] && ok || bad "recovery (counting run): not the old version"
    n_rk=0
    for ((i = 1; i <= 20; i++)); do
      restore_j
      kill_point "$i" 20
      run_killed "$trig" "$BIN" edit --recover "$F"
      [ "$rc" -eq 137 ] && n_rk=$((n_rk + 1))
      out=$("$BIN" edit --recover "$F" 2>&1) || bad "recovery killed at $trig: the next recovery failed: $out"
      [ "$(sha "$F")" == "$OLD" ] && ok || bad "recovery killed at $trig: not the old version"
      [ -e "$F.ggufkit-journal" ] && bad "recovery killed at $trig: journal left" || ok
    done
    [ "$n_rk" -gt 0 ] && ok || bad "recovery: no kill landed"
    restore_j
    cp "$IN" "$F"
    stale_sum=$(sha "$F")
    out=$("$BIN" edit --recover "$F" 2>&1) && bad "a stale journal was applied: $out"
    case "$out" in *stale*"edit --discard-journal $F"*) ok ;; *) bad "stale journal: no way out named: $out" ;; esac
    "${EDIT[@]}" >/dev/null 2>&1 && bad "edit --in-place ran over a stale journal"
    [ "$(sha "$F")" == "$stale_sum" ] && [ -e "$F.ggufkit-journal" ] && ok || bad "stale journal: file or journal changed"
    "$BIN" edit --discard-journal "$F" >/dev/null 2>&1 && ok || bad "edit --discard-journal failed"
    [ "$(sha "$F")" == "$stale_sum" ] && [ ! -e "$F.ggufkit-journal" ] && ok || bad "discard: file changed or journal left"
    echo "edit --recover: 20 kills over $steps steps and $wbytes written bytes ($n_rk landed), each finished by the next recovery"
  else
    bad "recovery kills: no kill late in an in-place edit left a journal and a changed header"
  fi
fi

# In place with a rewrite (--in-place=auto on a file without room): the new file
# replaces FILE by a rename. After a kill FILE is the old or the new version.
if [ "$HAS_EDIT" = 1 ]; then
  mkdir -p "$TMP/auto"
  A="$TMP/auto/a.gguf"
  LONG=$(head -c 3000 /dev/zero | tr '\0' n)
  AUTO=("$BIN" edit --in-place=auto --set general.name="$LONG" "$A")
  cp "$IN" "$A"
  "${AUTO[@]}" >"$TMP/auto.out" 2>&1 || bad "reference --in-place=auto rewrite failed: $(head -3 "$TMP/auto.out")"
  grep -q rewritten "$TMP/auto.out" && ok || bad "reference --in-place=auto did not rewrite: $(head -3 "$TMP/auto.out")"
  AUTO_NEW=$(sha "$A")
  AUTO_OLD=$(sha "$IN")
  cp "$IN" "$A"
  count_work "${AUTO[@]}"
  n_old=0 n_new=0 n_named=0 n_killed=0 t=$SECONDS
  for ((i = 1; i <= KILLS; i++)); do
    kill_edit "$i" "edit --in-place=auto" "$IN" "$A" "${AUTO[@]}"
    s=$(sha "$A")
    if [ "$s" == "$AUTO_OLD" ]; then n_old=$((n_old + 1))
    elif [ "$s" == "$AUTO_NEW" ]; then n_new=$((n_new + 1))
    else bad "edit --in-place=auto: kill $i ($trig): the file is neither the old nor the new version"
    fi
    for f in "$TMP/auto"/.??* "$TMP/auto"/*; do
      [ -e "$f" ] && [ "$f" != "$A" ] || continue
      if [[ "${f##*/}" == .a.gguf.ggufkit-?????? ]] && [ "$(sha "$f")" == "$AUTO_NEW" ]; then
        n_named=$((n_named + 1))
      else
        bad "edit --in-place=auto: kill $i ($trig): left: ${f##*/}"
      fi
      rm -f "$f"
    done
  done
  [ "$n_killed" -gt 0 ] && ok || bad "edit --in-place=auto: no kill landed"
  [ "$n_named" -le 2 ] && ok || bad "edit --in-place=auto: $n_named kills left the new file under a temporary name (only the kill before the rename may)"
  echo "edit --in-place=auto: $KILLS kills over $steps steps and $wbytes written bytes ($n_killed landed): $n_old old, $n_new new, $n_named left the complete new file beside it, $((SECONDS - t)) s"
fi

# A filesystem without O_TMPFILE (refused by the shim): named temporary files,
# still published whole.
SHIM_EXTRA=GK_FAULT_NO_TMPFILE=1 ALLOW_TEMPS=1
kill_loop repack "$IN" "$TMP/ref/repack" "$TMP/out/repack-named" "$BIN" repack "$IN" "$TMP/out/repack-named/r.gguf"
kill_loop split "$IN" "$TMP/ref/split" "$TMP/out/split-named" "$BIN" split --split-max-tensors 8 "$IN" "$TMP/out/split-named/p"
SHIM_EXTRA= ALLOW_TEMPS=0

# ---------------------------------------------------------------------------
# Normal failures leave no temporary file (needs the fault shim)
# ---------------------------------------------------------------------------

shim_run() {   # shim_run VARS... -- CMD... (env for the shim, then the command)
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  shim_env "${vars[@]}"
  env "${SHIM_ENV[@]}" "$@"
}

# no_leftovers NAME DIR : DIR holds nothing at all.
no_leftovers() {
  local left; left=$(ls -A "$2")
  [ -z "$left" ] && ok || bad "$1: left behind in the destination folder: $(echo $left)"
}

declare -A CMDS=(
  [repack]="repack $IN @/r.gguf"
  [quantize]="quantize $IN @/q.gguf Q8_0"
  [split]="split --split-max-tensors 8 $IN @/p"
  [merge]="merge $SHARD1 @/mm.gguf"
  [endian]="endian --to big $IN @/be.gguf"
  [synth]="synth --preset tiny --layers 4 --type F16 @/sy.gguf"
)
[ "$HAS_EDIT" = 1 ] && CMDS[edit-o]="edit --set general.name=x -o @/e.gguf $IN"

if [ -n "$SHIM" ] && [ -f "$SHIM" ]; then
  for name in $(echo "${!CMDS[@]}" | tr ' ' '\n' | sort); do
    D="$TMP/fail/$name"
    mkdir -p "$D"
    # shellcheck disable=SC2086
    set -- ${CMDS[$name]//@/$D}
    # 1. ENOSPC after 1 MB of output (every output is larger: quantize's 3 MB)
    shim_run GK_FAULT_WRITE_PATH="$D/" GK_FAULT_WRITE_AFTER=1000000 -- "$BIN" "$@" >/dev/null 2>"$TMP/f.err"
    rc=$?
    [ "$rc" -eq 1 ] && ok || bad "$name with a failing write: exit $rc, not 1"
    grep -qi "no space" "$TMP/f.err" && ok || bad "$name with a failing write: message does not say why: $(head -2 "$TMP/f.err")"
    no_leftovers "$name (ENOSPC)" "$D"
    # 2. SIGINT (Ctrl-C) and SIGTERM while the temporary file is being written:
    #    the shim sends the signal when the command has read half of its input
    #    (synth, which has none: when it writes its first bytes), so the
    #    command still has work to do when it arrives, on any machine.
    if [ "$name" = synth ]; then trigger=(GK_FAULT_TRIGGER_PATH="$D/" GK_FAULT_TRIGGER=write:0)
    elif [ "$name" = merge ]; then trigger=(GK_FAULT_TRIGGER_PATH="$TMP/in/s-" GK_FAULT_TRIGGER=read:$(( $(cat $SHARDS | wc -c) / 2 )))
    else trigger=(GK_FAULT_TRIGGER_PATH="$IN" GK_FAULT_TRIGGER=read:$(( $(stat -c %s "$IN") / 2 )))
    fi
    for sig in INT TERM; do
      shim_env "${trigger[@]}" GK_FAULT_ACTION=${sig,,}
      env "${SHIM_ENV[@]}" "$BIN" "$@" >/dev/null 2>"$TMP/f.err"
      rc=$?
      [ "$rc" -ne 0 ] && ok || bad "$name interrupted by SIG$sig: exit 0"
      left=$(ls -A "$D")
      if [ -z "$left" ]; then ok
      else bad "$name interrupted by SIG$sig (exit $rc) while writing leaves: $(echo $left)"
      fi
      rm -rf "$D"
      mkdir -p "$D"
    done
    rm -rf "$D"
  done
else
  echo "SKIPPED: failure cleanup and SIGINT checks (no fault shim given)"
fi

finish "$((SECONDS - T0)) s"
