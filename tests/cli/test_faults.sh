#!/usr/bin/env bash
# test_faults.sh GGUFKIT [FAULT_PRELOAD_SO] - every writing subcommand under
# faults: a full disk (small tmpfs, as root), a file size limit (prlimit
# --fsize), failing and short reads (the LD_PRELOAD shim tests/fault_preload.c),
# an input truncated while it is read, broken .gguf.zst streams and archive
# members, an unwritable destination folder, existing destinations, outputs that
# are the input (same path, hard link, symbolic link) and a missing shard.
# Each must end in a clear error, exit 1, the input unchanged and nothing left
# behind: no output, no temporary file. Output, when a command succeeds anyway,
# must be the reference output (never garbage). Also the fuzz regression files
# of testdata/fuzz/regress (GGUFKIT_TESTDATA).
# A check that cannot run here prints a loud "SKIPPED:" line.
set -u
SHIM=${2:-}
[ -n "$SHIM" ] && [ -f "$SHIM" ] && SHIM=$(realpath "$SHIM") || SHIM=""
# GK_FAULTS_ON_TMPFS=1: the work folder is on a tmpfs (/dev/shm), a very fast
# "disk", so a run shows that no fault case depends on the disk's speed.
if [ "${GK_FAULTS_ON_TMPFS:-0}" = 1 ]; then
  if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ] || [ ! -w /dev/shm ]; then
    echo "SKIPPED: fault tests on tmpfs (no writable tmpfs at /dev/shm)"
    exit 77
  fi
  GK_TMP_BASE=/dev/shm
fi
GK_TMP_TEMPLATE=gk-faults.XXXXXX
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"
MOUNTS=()
# run at exit by common.sh, before it removes $TMP
test_cleanup() {
  local m
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
  chattr -i "$TMP"/* 2>/dev/null
}
T0=$SECONDS

sha() { sha256sum <"$1"; }   # "DIGEST  -", compared only with its own output
ident() { stat -c '%i %s %Y' "$1"; }

# ---------------------------------------------------------------------------
# Inputs and references
# ---------------------------------------------------------------------------
mkdir -p "$TMP/in" "$TMP/ref"
IN="$TMP/in/m.gguf"
"$BIN" synth --preset tiny "$IN" >/dev/null || { echo "FAIL: synth"; exit 1; }
"$BIN" split --split-max-tensors 8 "$IN" "$TMP/in/s" >/dev/null || { echo "FAIL: split"; exit 1; }
SHARD1="$TMP/in/s-00001-of-00003.gguf"
[ -f "$TMP/in/s-00003-of-00003.gguf" ] || { echo "FAIL: expected 3 shards"; exit 1; }
"$BIN" repack --reserve 4K "$IN" "$TMP/in/p.gguf" >/dev/null || { echo "FAIL: repack --reserve"; exit 1; }
HAS_EDIT=0
"$BIN" edit --help >/dev/null 2>&1 && HAS_EDIT=1
# The inputs unchanged: after every case their identity (size, inode, mtime and
# ctime to the nanosecond: any write, truncation or replacement moves ctime,
# which no process can set back) in one stat; after every section their bytes
# (sha256). Hashing the 19 MB of inputs after every case was half this
# script's time.
in_ids() { stat -c '%n %s %i %.9Y %.9Z' "$TMP/in"/*; }
snapshot() { (cd "$TMP/in" && sha256sum * | sha256sum); }
IN_IDS=$(in_ids)
IN_SUM=$(snapshot)
# inputs_intact SECTION : the inputs' bytes are the ones they started with.
inputs_intact() {
  [ "$(snapshot)" == "$IN_SUM" ] && ok "inputs' bytes unchanged after $1" || bad "$1: an input's bytes changed"
}

# Writing subcommands: NAME -> arguments; @ stands for the destination folder.
# The outputs are named so that each is found again: @/o*.
NAMES="repack quantize split merge endian synth export"
declare -A CMD=(
  [repack]="repack $IN @/o.gguf"
  [quantize]="quantize $IN @/o.gguf F16"
  [split]="split --split-max-tensors 8 $IN @/o"
  [merge]="merge $SHARD1 @/o.gguf"
  [endian]="endian --to big $IN @/o.gguf"
  [synth]="synth --preset tiny @/o.gguf"
  [export]="export $IN @/o"
  [repack-zst]="repack $IN @/o.gguf.zst"
)
if [ "$HAS_EDIT" = 1 ]; then
  NAMES="$NAMES edit-o"
  CMD[edit-o]="edit --set general.name=faults -o @/o.gguf $IN"
else
  echo "SKIPPED: edit (ggufkit edit --help does not work)"
fi
args_for() { ARGS=(${CMD[$1]//@/$2}); }

# References, made once in a plain folder.
for name in $NAMES repack-zst; do
  mkdir -p "$TMP/ref/$name"
  args_for "$name" "$TMP/ref/$name"
  "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err" || { echo "FAIL: reference $name: $(cat "$TMP/err")"; exit 1; }
done

# expect_fail LABEL DIR PATTERN [CMD...]: the command (already run; rc and
# $W/err hold its status and stderr) failed with exit 1, a message matching
# PATTERN (extended regex, case-insensitive), the inputs unchanged and DIR empty.
expect_fail() {
  local label=$1 dir=$2 pattern=$3
  [ "$rc" -eq 1 ] && ok || bad "$label: exit $rc, not 1 ($(head -c 300 "$TMP/err"))"
  grep -Eqi "$pattern" "$TMP/err" && ok || bad "$label: message does not say '$pattern': $(head -c 300 "$TMP/err")"
  [ "$(in_ids)" == "$IN_IDS" ] && ok || bad "$label: an input changed (size, inode, mtime or ctime)"
  if [ -n "$dir" ]; then
    local left
    shopt -s nullglob dotglob
    left=("$dir"/*)
    shopt -u nullglob dotglob
    [ "${#left[@]}" -eq 0 ] && ok || bad "$label: left behind: ${left[*]##*/}"
  fi
}

# same_tree LABEL REF DIR: DIR holds the files of REF (folders too: export's),
# byte for byte, and nothing else.
same_tree() {
  local d; d=$(diff -rq "$2" "$3" 2>&1)
  [ -z "$d" ] && ok || bad "$1: differs from the reference: $(echo $d | head -c 300)"
}

# run_cmd VAR=VALUE... -- ARGS... : runs ggufkit with extra environment.
run_env() {
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  env "${vars[@]}" "$BIN" "$@" >/dev/null 2>"$TMP/err"
  rc=$?
}
shim_env() { echo "LD_PRELOAD=$SHIM" "ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0"; }

# ---------------------------------------------------------------------------
# 1. Disk full: a small tmpfs as the destination
# ---------------------------------------------------------------------------
can_mount=0
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$TMP/probe"
  if mount -t tmpfs -o size=1m tmpfs "$TMP/probe" 2>/dev/null; then
    umount "$TMP/probe"
    can_mount=1
  fi
fi
if [ "$can_mount" = 1 ]; then
  for size in 1m 3m; do
    M="$TMP/full-$size"
    mkdir -p "$M"
    mount -t tmpfs -o size=$size tmpfs "$M" || { bad "mount tmpfs $size"; continue; }
    MOUNTS+=("$M")
    for name in $NAMES repack-zst; do
      args_for "$name" "$M"
      "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err"
      rc=$?
      expect_fail "disk full ($size tmpfs): $name" "$M" "no space|write failed"
      rm -rf "${M:?}"/* "$M"/.??* 2>/dev/null
    done
    umount "$M" && ok || bad "umount $M"
    MOUNTS=("${MOUNTS[@]/$M/}")
  done
  # In place on a full disk: the journal cannot be written; the file is kept.
  M="$TMP/full-inplace"
  mkdir -p "$M"
  if [ "$HAS_EDIT" = 1 ] && mount -t tmpfs -o size=8m tmpfs "$M"; then
    MOUNTS+=("$M")
    cp "$TMP/in/p.gguf" "$M/p.gguf"
    before=$(sha "$M/p.gguf")
    head -c 100M /dev/zero >"$M/filler" 2>/dev/null   # fills what is left
    "$BIN" edit --in-place --set general.name=faults-in-place-a-longer-name "$M/p.gguf" >/dev/null 2>"$TMP/err"
    rc=$?
    rm -f "$M/filler"
    expect_fail "disk full: edit --in-place" "" "no space|write failed"
    [ "$(sha "$M/p.gguf")" == "$before" ] && ok || bad "disk full: edit --in-place changed the file"
    left=$(ls -A "$M" | grep -v '^p\.gguf$')
    [ -z "$left" ] && ok || bad "disk full: edit --in-place left: $(echo $left)"
    "$BIN" verify "$M/p.gguf" >/dev/null 2>&1 && ok || bad "disk full: the file does not verify after a failed in-place edit"
    # --in-place=auto falls back to a rewrite when the edit does not fit: no room for it either
    head -c 100M /dev/zero >"$M/filler" 2>/dev/null
    "$BIN" edit --in-place=auto --set "general.name=$(head -c 6000 /dev/zero | tr '\0' x)" "$M/p.gguf" >/dev/null 2>"$TMP/err"
    rc=$?
    rm -f "$M/filler"
    expect_fail "disk full: edit --in-place=auto (rewrite)" "" "no space|write failed"
    [ "$(sha "$M/p.gguf")" == "$before" ] && ok || bad "disk full: edit --in-place=auto changed the file"
    left=$(ls -A "$M" | grep -v '^p\.gguf$')
    [ -z "$left" ] && ok || bad "disk full: edit --in-place=auto left: $(echo $left)"
    umount "$M"
  fi
  # split writes shard 1 and 2, then runs out of space: none may stay.
  M="$TMP/full-split"
  mkdir -p "$M"
  if mount -t tmpfs -o size=5m tmpfs "$M"; then
    MOUNTS+=("$M")
    "$BIN" split --split-max-tensors 8 "$IN" "$M/o" >/dev/null 2>"$TMP/err"
    rc=$?
    expect_fail "disk full after 2 of 3 shards: split" "$M" "no space|write failed"
    umount "$M"
  fi
else
  echo "SKIPPED: disk-full tests on a small tmpfs (need root and mount -t tmpfs)"
fi

inputs_intact "disk full"

# ---------------------------------------------------------------------------
# 2. File size limit (prlimit --fsize): works without root
# ---------------------------------------------------------------------------
if command -v prlimit >/dev/null; then
  for name in $NAMES repack-zst; do
    D="$TMP/fsize/$name"
    mkdir -p "$D"
    args_for "$name" "$D"
    prlimit --fsize=1000000 "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err"
    rc=$?
    expect_fail "file size limit: $name" "$D" "too large|write failed|size limit"
  done
else
  echo "SKIPPED: file size limit tests (no prlimit)"
fi

inputs_intact "the file size limit"

# ---------------------------------------------------------------------------
# 3. Read errors
# ---------------------------------------------------------------------------
if [ -n "$SHIM" ]; then
  # Reads of the input fail (EIO) or the input seems to end (EOF) after N bytes.
  for after in 100 1000000 5000000; do
    for mode in eio eof; do
      for name in $NAMES; do
        [ "$name" = synth ] && continue
        D="$TMP/read/$name-$after-$mode"
        mkdir -p "$D"
        args_for "$name" "$D"
        run_env $(shim_env) GK_FAULT_READ_PATH=/in/ GK_FAULT_READ_AFTER=$after GK_FAULT_READ_MODE=$mode -- "${ARGS[@]}"
        expect_fail "read fault ($mode after $after bytes): $name" "$D" "read failed|input/output|ended early|ends|truncated|shrank"
      done
    done
  done
  # A write that fails with EIO, and an fsync that fails: nothing left.
  for name in $NAMES; do
    D="$TMP/wfault/$name"
    mkdir -p "$D"
    args_for "$name" "$D"
    run_env $(shim_env) GK_FAULT_WRITE_PATH="$D/" GK_FAULT_WRITE_AFTER=1000000 GK_FAULT_WRITE_ERRNO=5 -- "${ARGS[@]}"
    expect_fail "write EIO after 1 MB: $name" "$D" "write failed|input/output"
    run_env $(shim_env) GK_FAULT_FSYNC_PATH="$D/" -- "${ARGS[@]}"
    expect_fail "fsync EIO: $name" "$D" "fsync"
  done
  # O_DIRECT taken by the filesystem but its writes refused (EINVAL): the
  # output is written normally instead, and is the reference output.
  for name in $NAMES repack-zst; do
    D="$TMP/einval/$name"
    mkdir -p "$D"
    args_for "$name" "$D"
    run_env $(shim_env) GK_FAULT_WRITE_PATH="$D/" GK_FAULT_DIRECT_EINVAL=1 -- "${ARGS[@]}"
    [ "$rc" -eq 0 ] && ok || bad "O_DIRECT writes refused: $name: exit $rc ($(head -c 300 "$TMP/err"))"
    same_tree "O_DIRECT writes refused: $name" "$TMP/ref/$name" "$D"
  done
  # A filesystem without O_TMPFILE (the shim refuses it): the output goes through
  # a named temporary file, is still the reference, and a failing write leaves
  # nothing behind either.
  for name in $NAMES; do
    D="$TMP/notmp/$name"
    mkdir -p "$D"
    args_for "$name" "$D"
    run_env $(shim_env) GK_FAULT_NO_TMPFILE=1 -- "${ARGS[@]}"
    [ "$rc" -eq 0 ] && ok || bad "O_TMPFILE refused: $name: exit $rc ($(head -c 300 "$TMP/err"))"
    same_tree "O_TMPFILE refused: $name" "$TMP/ref/$name" "$D"
    rm -rf "$D"
    mkdir -p "$D"
    args_for "$name" "$D"
    run_env $(shim_env) GK_FAULT_NO_TMPFILE=1 GK_FAULT_WRITE_PATH="$D/" GK_FAULT_WRITE_AFTER=1000000 -- "${ARGS[@]}"
    expect_fail "O_TMPFILE refused, write ENOSPC after 1 MB: $name" "$D" "no space"
  done
  # The input shrinks while it is read: the shim truncates it to 3 MB when the
  # command has read its first 1 MB (an event of the work, not a moment), so
  # the rest of the data is missing mid-stream on any disk at any speed.
  for name in repack quantize endian edit-o; do
    [ -n "${CMD[$name]:-}" ] || continue
    S="$TMP/shrink-in"
    D="$TMP/shrink/$name"
    mkdir -p "$S" "$D"
    cp "$IN" "$S/m.gguf"
    ARGS=(${CMD[$name]//@/$D})
    ARGS=("${ARGS[@]//$IN/$S/m.gguf}")
    run_env $(shim_env) GK_FAULT_TRIGGER_PATH=/shrink-in/m.gguf GK_FAULT_TRIGGER=read:1000000 \
      GK_FAULT_ACTION=truncate:3000000 -- "${ARGS[@]}"
    [ "$(stat -c %s "$S/m.gguf")" = 3000000 ] && ok || bad "input truncated while read: $name: the shim did not truncate the input"
    expect_fail "input truncated while read: $name" "$D" "ended early|ends|truncated|shrank|past"
    rm -rf "$S"
  done
  # A checkpoint shard that shrinks while convert reads it (positional reads,
  # issue 34): the shim truncates the tiny model's BF16 safetensors to 1 MB
  # once 500 KB of it were read. A clear error naming the tensor and the byte
  # offset, exit 1, no output; never a crash.
  if "$BIN" convert --help >/dev/null 2>&1 && "$BIN" export --help >/dev/null 2>&1; then
    S="$TMP/shrink-ck"
    D="$TMP/shrink/convert"
    mkdir -p "$D"
    "$BIN" export --dtype bf16 "$IN" "$S" >/dev/null 2>&1 && ok || bad "export of the tiny model for convert"
    run_env $(shim_env) GK_FAULT_TRIGGER_PATH=/shrink-ck/model.safetensors GK_FAULT_TRIGGER=read:500000 \
      GK_FAULT_ACTION=truncate:1000000 -- convert "$S" "$D/o.gguf" Q4_K_M
    [ "$(stat -c %s "$S/model.safetensors")" = 1000000 ] && ok || bad "checkpoint truncated while converted: the shim did not truncate it"
    expect_fail "checkpoint truncated while converted" "$D" "tensor '[^']+': the file ends early"
    grep -Eq "model.safetensors: offset [0-9]+" "$TMP/err" && ok || bad "checkpoint truncated while converted: no file and byte offset: $(head -c 300 "$TMP/err")"
    rm -rf "$S"
  fi
  # The reading commands (hash, verify --data) under the same faults: a read
  # that fails or comes back short, and an input that shrinks while it is read
  # (after 1 MB of tensor data, so inside the scan): a clear error, exit 1.
  # verify reports on stdout: both streams are looked at.
  run_read() {
    local vars=()
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    env "${vars[@]}" "$BIN" "$@" >"$TMP/err" 2>&1
    rc=$?
  }
  for rname in hash hash-all verify-data; do
    case $rname in
      hash) RARGS=(hash) ;;
      hash-all) RARGS=(hash --all --uuid) ;;
      verify-data) RARGS=(verify --data) ;;
    esac
    "$BIN" "${RARGS[0]}" --help >/dev/null 2>&1 || { echo "SKIPPED: $rname (no ${RARGS[0]})"; continue; }
    for mode in eio eof; do
      run_read $(shim_env) GK_FAULT_READ_PATH=/in/ GK_FAULT_READ_AFTER=1000000 GK_FAULT_READ_MODE=$mode -- \
        "${RARGS[@]}" "$IN"
      expect_fail "read fault ($mode after 1000000 bytes): $rname" "" "read failed|input/output|ended early|ends|truncated|shrank"
    done
    S="$TMP/shrink-in"
    mkdir -p "$S"
    cp "$IN" "$S/m.gguf"
    run_read $(shim_env) GK_FAULT_TRIGGER_PATH=/shrink-in/m.gguf GK_FAULT_TRIGGER=read:1000000 \
      GK_FAULT_ACTION=truncate:3000000 -- "${RARGS[@]}" "$S/m.gguf"
    [ "$(stat -c %s "$S/m.gguf")" = 3000000 ] && ok || bad "input truncated while read: $rname: the shim did not truncate the input"
    expect_fail "input truncated while read: $rname" "" "ended early|ends|truncated|shrank|past"
    rm -rf "$S"
  done
else
  echo "SKIPPED: read-fault, write-fault and shrinking-input tests (no fault shim given)"
fi

# Broken compressed inputs and archive members: an error and no output, or
# (when the damage spares the model) exactly the reference output.
Z="$TMP/z"
mkdir -p "$Z"
zstd_ok=0
command -v zstd >/dev/null && zstd -q "$IN" -o "$Z/m.gguf.zst" && zstd_ok=1
if [ "$zstd_ok" = 1 ]; then
  python3 - "$Z" <<'EOF'
import sys
z = sys.argv[1]
d = open(z + "/m.gguf.zst", "rb").read()
open(z + "/cut-half.gguf.zst", "wb").write(d[:len(d) // 2])
open(z + "/cut-header.gguf.zst", "wb").write(d[:100])
for i, pos in enumerate((len(d) // 3, len(d) // 2, len(d) - 100, 20)):
    e = bytearray(d)
    e[pos] ^= 0x41
    open(z + "/flip-%d.gguf.zst" % i, "wb").write(bytes(e))
open(z + "/cut-checksum.gguf.zst", "wb").write(d[:-4])
EOF
  for f in cut-half cut-header flip-0 flip-1 flip-2 flip-3; do
    for name in repack endian; do
      D="$TMP/zout/$f-$name"
      mkdir -p "$D"
      ARGS=(${CMD[$name]//@/$D})
      ARGS=("${ARGS[@]//$IN/$Z/$f.gguf.zst}")
      "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err"
      rc=$?
      expect_fail "broken zstd ($f): $name" "$D" "zstd|truncated|ends|corrupt|checksum"
    done
  done
  # Without its 4-byte checksum the stream still holds every byte: an error or
  # the exact reference, never anything else.
  D="$TMP/zout/cut-checksum"
  mkdir -p "$D"
  "$BIN" repack "$Z/cut-checksum.gguf.zst" "$D/o.gguf" >/dev/null 2>"$TMP/err"
  rc=$?
  if [ "$rc" -eq 0 ]; then
    cmp -s "$D/o.gguf" "$TMP/ref/repack/o.gguf" && ok || bad "zstd without checksum: output differs from the reference"
    echo "note: a .gguf.zst without its frame checksum is accepted (the output is the reference)"
  else
    expect_fail "zstd without checksum: repack" "$D" "zstd|truncated|checksum"
  fi
else
  echo "SKIPPED: broken .gguf.zst tests (no zstd)"
fi
A="$TMP/a"
mkdir -p "$A"
(cd "$TMP/in" && tar -cf "$A/m.tar" m.gguf && tar -czf "$A/m.tar.gz" m.gguf)
command -v zip >/dev/null && (cd "$TMP/in" && zip -q -0 "$A/m.zip" m.gguf)
for ar in m.tar m.tar.gz m.zip; do
  [ -f "$A/$ar" ] || { echo "SKIPPED: truncated $ar member (cannot make it)"; continue; }
  # the intact member reads as the reference
  D="$TMP/aout/$ar-ok"
  mkdir -p "$D"
  "$BIN" repack "$A/$ar::m.gguf" "$D/o.gguf" >/dev/null 2>"$TMP/err" && cmp -s "$D/o.gguf" "$TMP/ref/repack/o.gguf" &&
    ok || bad "archive $ar: intact member does not repack to the reference: $(head -c 200 "$TMP/err")"
  size=$(stat -c %s "$A/$ar")
  for keep in 60 95; do
    cut="$A/cut$keep-$ar"
    head -c $((size * keep / 100)) "$A/$ar" >"$cut"
    for name in repack endian; do
      D="$TMP/aout/$ar-$keep-$name"
      mkdir -p "$D"
      ARGS=(${CMD[$name]//@/$D})
      ARGS=("${ARGS[@]//$IN/$cut::m.gguf}")
      "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err"
      rc=$?
      expect_fail "truncated archive ($ar cut to $keep%): $name" "$D" "archive|truncat|ends|early|member"
    done
  done
done

# Without libarchive (loaded only when an archive is opened): archive members
# are refused with a reason, plain files read as ever.
if [ -n "$SHIM" ] && [ -f "$A/m.tar" ]; then
  D="$TMP/aout/no-libarchive"
  mkdir -p "$D"
  run_env $(shim_env) GK_FAULT_DLOPEN=libarchive -- repack "$A/m.tar::m.gguf" "$D/o.gguf"
  expect_fail "archive member without libarchive" "$D" "archive support is not available.*libarchive"
  run_env $(shim_env) GK_FAULT_DLOPEN=libarchive -- repack "$IN" "$D/o.gguf"
  [ "$rc" -eq 0 ] && cmp -s "$D/o.gguf" "$TMP/ref/repack/o.gguf" && ok ||
    bad "a plain file without libarchive: exit $rc ($(head -c 200 "$TMP/err"))"
  rm -f "$D/o.gguf"
else
  echo "SKIPPED: archive without libarchive (no fault shim or no tar)"
fi

# A shard set is committed together (every shard written, then each fsynced
# and linked, then the folder fsynced once): when shard 2's or 3's fsync fails
# after the ones before it are in place, none may stay. Named temporary files
# (no O_TMPFILE) so that the failing fsync can be told by the shard's name.
if [ -n "$SHIM" ]; then
  for k in 2 3; do
    D="$TMP/aout/set-fsync-$k"
    mkdir -p "$D"
    run_env $(shim_env) GK_FAULT_NO_TMPFILE=1 GK_FAULT_FSYNC_PATH="o-0000$k-of" -- split --split-max-tensors 8 "$IN" "$D/o"
    expect_fail "split: shard $k of 3 fails its fsync" "$D" "fsync failed"
  done
else
  echo "SKIPPED: shard set failing at its commit (no fault shim)"
fi

# A large output makes its writes durable as it goes (an fdatasync every 64 MiB
# from the writer thread): a failure there is a write error of the command, even
# though the kernel reports it to that one call only, and nothing is left.
if [ -n "$SHIM" ]; then
  D="$TMP/aout/flush"
  mkdir -p "$D"
  mkdir -p "$TMP/big"
  "$BIN" synth --preset tiny --layers 30 "$TMP/big/m.gguf" >/dev/null
  [ "$(stat -c %s "$TMP/big/m.gguf")" -gt $((70 << 20)) ] && ok || bad "the large model is not over 70 MiB"
  run_env $(shim_env) GK_FAULT_NO_TMPFILE=1 GK_FAULT_FSYNC_PATH=".o.gguf.ggufkit" -- repack "$TMP/big/m.gguf" "$D/o.gguf"
  expect_fail "repack of 76 MB: the fdatasync after 64 MiB fails" "$D" "write failed.*Input/output"
  rm -rf "$TMP/big"
else
  echo "SKIPPED: a failing fdatasync during a large write (no fault shim)"
fi

# Without the other libraries opened on first use (lib/shared/dynlib.h): what
# needs them is refused with a reason, the rest works.
if [ -n "$SHIM" ]; then
  D="$TMP/aout/no-dynlib"
  mkdir -p "$D"
  run_env $(shim_env) GK_FAULT_DLOPEN=libcrypto -- hash --sha256 "$IN"
  expect_fail "hash --sha256 without libcrypto" "$D" "SHA-1/SHA-256 is not available.*libcrypto"
  run_env $(shim_env) GK_FAULT_DLOPEN=libcrypto -- hash "$IN"
  [ "$rc" -eq 0 ] && ok || bad "hash (xxh64) without libcrypto: exit $rc ($(head -c 200 "$TMP/err"))"
  cp "$IN" "$D/e.gguf"
  before=$(sha "$D/e.gguf")
  run_env $(shim_env) GK_FAULT_DLOPEN=libcrypto -- edit --in-place --set general.name=x "$D/e.gguf"
  [ "$rc" -eq 1 ] && grep -q "libcrypto" "$TMP/err" && ok ||
    bad "edit --in-place without libcrypto: exit $rc ($(head -c 200 "$TMP/err"))"
  [ "$(sha "$D/e.gguf")" == "$before" ] && [ "$(ls -A "$D")" == "e.gguf" ] && ok ||
    bad "edit --in-place without libcrypto changed the file or left: $(ls -A "$D")"
  rm -f "$D/e.gguf"
  run_env $(shim_env) GK_FAULT_DLOPEN=libsqlite3 -- index --db "$D/i.db" "$TMP/in"
  expect_fail "index without libsqlite3" "$D" "index is not available.*libsqlite3"
  run_env $(shim_env) GK_FAULT_DLOPEN=libcairo -- diff --plot "$D/p.png" "$IN" "$TMP/in/p.gguf"
  expect_fail "diff --plot without libcairo" "$D" "diff --plot is not available.*libcairo"
else
  echo "SKIPPED: libraries opened on first use, missing (no fault shim)"
fi

inputs_intact "the read errors"

# ---------------------------------------------------------------------------
# 4. Destinations that must be refused
# ---------------------------------------------------------------------------
# A folder nobody may write to: chmod 555 (not for root), else a read-only bind
# mount (root), else chattr +i.
RO="$TMP/ro"
mkdir -p "$RO"
ro_how=""
if [ "$(id -u)" != 0 ]; then
  chmod 555 "$RO" && ro_how="chmod 555"
elif mount --bind "$RO" "$RO" 2>/dev/null; then
  MOUNTS+=("$RO")
  if mount -o remount,bind,ro "$RO" 2>/dev/null; then ro_how="read-only bind mount"
  else umount "$RO"; fi
fi
if [ -z "$ro_how" ] && command -v chattr >/dev/null && chattr +i "$RO" 2>/dev/null; then ro_how="chattr +i"; fi
if [ -n "$ro_how" ] && ! touch "$RO/probe" 2>/dev/null; then
  for name in $NAMES repack-zst; do
    args_for "$name" "$RO"
    "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err"
    rc=$?
    expect_fail "unwritable folder ($ro_how): $name" "$RO" "read-only|permission|cannot create|not permitted"
  done
else
  rm -f "$RO/probe"
  echo "SKIPPED: unwritable destination folder (no way to make one here: root without mount or chattr)"
fi
[ "$ro_how" = "read-only bind mount" ] && umount "$RO"
[ "$ro_how" = "chattr +i" ] && chattr -i "$RO"
[ "$ro_how" = "chmod 555" ] && chmod 755 "$RO"

# first_output NAME: the output of subcommand NAME a destination test puts in the way
# (for split, a later shard, so that the refusal comes before anything is written).
first_output() {
  case $1 in
    split) echo o-00002-of-00003.gguf ;;
    repack-zst) echo o.gguf.zst ;;
    *) echo o.gguf ;;
  esac
}

# An existing destination is refused without --force, replaced with it.
# (export writes a folder: its existing-folder, file and --force cases are in
# test_export.sh.)
for name in $NAMES repack-zst; do
  [ "$name" = export ] && continue
  D="$TMP/exists/$name"
  mkdir -p "$D"
  args_for "$name" "$D"
  first=$(first_output "$name")
  echo "precious" >"$D/$first"
  "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err"
  rc=$?
  [ "$rc" -eq 1 ] && ok || bad "existing destination: $name: exit $rc, not 1"
  grep -qi "exists" "$TMP/err" && ok || bad "existing destination: $name: message: $(head -c 200 "$TMP/err")"
  [ "$(cat "$D/$first")" == "precious" ] && ok || bad "existing destination: $name replaced it without --force"
  [ "$(ls -A "$D")" == "$first" ] && ok || bad "existing destination: $name left: $(ls -A "$D" | tr '\n' ' ')"
  if [ "$name" != split ]; then
    "$BIN" "${ARGS[@]}" --force >/dev/null 2>"$TMP/err" && cmp -s "$D/$first" "$TMP/ref/$name/$first" && ok ||
      bad "existing destination: $name --force does not give the reference: $(head -c 200 "$TMP/err")"
  fi
done

# A destination that exists but is not a regular file (here a fifo; /dev/null
# or a folder alike) is never replaced, --force or not: the rename would put a
# file in its place.
for name in $NAMES repack-zst; do
  [ "$name" = export ] && continue
  D="$TMP/notfile/$name"
  mkdir -p "$D"
  args_for "$name" "$D"
  first=$(first_output "$name")
  mkfifo "$D/$first"
  force=--force
  [ "$name" = split ] && force=
  "$BIN" "${ARGS[@]}" $force >/dev/null 2>"$TMP/err"
  rc=$?
  [ "$rc" -eq 1 ] && ok || bad "fifo destination: $name: exit $rc, not 1"
  grep -qi "not a regular file" "$TMP/err" && ok || bad "fifo destination: $name: message: $(head -c 200 "$TMP/err")"
  [ -p "$D/$first" ] && ok || bad "fifo destination: $name replaced the fifo"
  [ "$(ls -A "$D")" == "$first" ] && ok || bad "fifo destination: $name left: $(ls -A "$D" | tr '\n' ' ')"
done

# The output is the input: same path, a hard link, a symbolic link; also with --force.
V="$TMP/same"
mkdir -p "$V"
for how in path hardlink symlink; do
  for name in repack quantize endian edit-o merge; do
    [ -n "${CMD[$name]:-}" ] || continue
    for force in "" --force; do
      rm -rf "${V:?}"/*
      if [ "$name" = merge ]; then
        cp "$TMP/in"/s-0000?-of-00003.gguf "$V/"
        src="$V/s-00002-of-00003.gguf"
      else
        cp "$IN" "$V/m.gguf"
        src="$V/m.gguf"
      fi
      case $how in
        path) out="$src" ;;
        hardlink) out="$V/link.gguf"; ln "$src" "$out" ;;
        symlink) out="$V/link.gguf"; ln -s "$src" "$out" ;;
      esac
      before=$(sha "$src")
      before_id=$(ident "$src")
      case $name in
        repack) ARGS=(repack "$src" "$out") ;;
        quantize) ARGS=(quantize --allow-requantize "$src" "$out" Q8_0) ;;
        endian) ARGS=(endian --to big "$src" "$out") ;;
        edit-o) ARGS=(edit --set general.name=same -o "$out" "$src") ;;
        merge) ARGS=(merge "$V/s-00001-of-00003.gguf" "$out") ;;
      esac
      [ -n "$force" ] && ARGS+=("$force")
      "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err"
      rc=$?
      label="output is the input ($how${force:+, --force}): $name"
      [ "$rc" -eq 1 ] && ok || bad "$label: exit $rc, not 1 ($(head -c 200 "$TMP/err"))"
      grep -Eqi "input|same|exists|in place|--in-place" "$TMP/err" && ok || bad "$label: message: $(head -c 200 "$TMP/err")"
      [ "$(sha "$src")" == "$before" ] && [ "$(ident "$src")" == "$before_id" ] && ok ||
        bad "$label: the input was changed or replaced"
      left=$(ls -A "$V" | grep ggufkit-)
      [ -z "$left" ] && ok || bad "$label: left: $left"
    done
  done
done
# split: a shard name that is the input (the same path, a symbolic link to it).
for how in path symlink; do
  rm -rf "${V:?}"/*
  cp "$IN" "$V/x-00001-of-00003.gguf"
  src="$V/x-00001-of-00003.gguf"
  prefix="$V/x"
  if [ "$how" = symlink ]; then ln -s x-00001-of-00003.gguf "$V/y-00002-of-00003.gguf"; prefix="$V/y"; fi
  before_id=$(ident "$src")
  before=$(sha "$src")
  "$BIN" split --split-max-tensors 8 "$src" "$prefix" >/dev/null 2>"$TMP/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -Eqi "input|exists" "$TMP/err" && ok || bad "split onto its input ($how): exit $rc: $(head -c 200 "$TMP/err")"
  [ "$(sha "$src")" == "$before" ] && [ "$(ident "$src")" == "$before_id" ] && ok || bad "split onto its input ($how): input changed"
  n=$(ls -A "$V" | wc -l)
  [ "$n" -eq "$([ $how = symlink ] && echo 2 || echo 1)" ] && ok || bad "split onto its input ($how): left $(ls -A "$V" | tr '\n' ' ')"
done
# A model without tensors is refused as well (nothing to compare tensor by tensor).
if [ -n "${GGUFKIT_TESTDATA:-}" ] && [ -f "$GGUFKIT_TESTDATA/good/no-tensors.gguf" ]; then
  for name in repack endian edit-o; do
    [ -n "${CMD[$name]:-}" ] || continue
    rm -rf "${V:?}"/*
    cp "$GGUFKIT_TESTDATA/good/no-tensors.gguf" "$V/n.gguf"
    before_id=$(ident "$V/n.gguf")
    case $name in
      repack) ARGS=(repack "$V/n.gguf" "$V/n.gguf" --force) ;;
      endian) ARGS=(endian --to big "$V/n.gguf" "$V/n.gguf" --force) ;;
      edit-o) ARGS=(edit --set general.name=same -o "$V/n.gguf" "$V/n.gguf" --force) ;;
    esac
    "$BIN" "${ARGS[@]}" >/dev/null 2>"$TMP/err"
    rc=$?
    [ "$rc" -eq 1 ] && [ "$(ident "$V/n.gguf")" == "$before_id" ] && ok ||
      bad "output is the input (no tensors, --force): $name: exit $rc, file $( [ "$(ident "$V/n.gguf")" == "$before_id" ] && echo kept || echo replaced)"
  done
else
  echo "SKIPPED: tensor-less same-file check (GGUFKIT_TESTDATA not set)"
fi

# A shard missing from the set: merge refuses, writes nothing.
MS="$TMP/missing"
mkdir -p "$MS/out"
cp "$TMP/in"/s-0000?-of-00003.gguf "$MS/"
rm "$MS/s-00002-of-00003.gguf"
for first in s-00001-of-00003.gguf s-00003-of-00003.gguf; do
  "$BIN" merge "$MS/$first" "$MS/out/o.gguf" >/dev/null 2>"$TMP/err"
  rc=$?
  [ "$rc" -eq 1 ] && ok || bad "missing shard: merge exit $rc"
  grep -Eqi "missing|not found|no such|cannot open" "$TMP/err" && ok || bad "missing shard: message: $(head -c 200 "$TMP/err")"
  [ -z "$(ls -A "$MS/out")" ] && ok || bad "missing shard: merge left $(ls -A "$MS/out")"
done
if [ -f "$TMP/ref/quantize/o.gguf" ]; then
  "$BIN" quantize "$MS/s-00001-of-00003.gguf" "$MS/out/q.gguf" Q8_0 >/dev/null 2>"$TMP/err"
  rc=$?
  [ "$rc" -eq 1 ] && [ -z "$(ls -A "$MS/out")" ] && ok || bad "missing shard: quantize of the set exit $rc, left $(ls -A "$MS/out")"
fi

inputs_intact "the refused destinations"

# ---------------------------------------------------------------------------
# 5. Fuzz regression files (testdata/fuzz/regress): verify ends with 0 or 1,
#    repack refuses them with a message about what it cannot write
# ---------------------------------------------------------------------------
if [ -n "${GGUFKIT_TESTDATA:-}" ] && [ -d "$GGUFKIT_TESTDATA/fuzz/regress" ]; then
  R="$TMP/regress"
  mkdir -p "$R"
  for f in "$GGUFKIT_TESTDATA"/fuzz/regress/*.gguf "$GGUFKIT_TESTDATA"/fuzz/regress/*.zip; do
    b=${f##*/}
    "$BIN" verify "$f" >/dev/null 2>&1
    rc=$?
    [ "$rc" -le 1 ] && ok || bad "fuzz regression $b: verify exit $rc"
    "$BIN" repack "$f" "$R/o.gguf" >/dev/null 2>"$TMP/err"
    rc=$?
    case $b in
      align-*) expect_fail "fuzz regression $b: repack" "$R" "alignment" ;;
      *.zip) expect_fail "fuzz regression $b: repack" "$R" "archive" ;;
      *) [ "$rc" -le 1 ] && ok || bad "fuzz regression $b: repack exit $rc"; rm -f "$R"/* ;;
    esac
  done
else
  echo "SKIPPED: fuzz regression files (GGUFKIT_TESTDATA/fuzz/regress not found)"
fi

inputs_intact "the fuzz regression files"
finish "$((SECONDS - T0)) s"
