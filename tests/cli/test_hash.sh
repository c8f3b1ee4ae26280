#!/usr/bin/env bash
# test_hash.sh - CLI tests of `ggufkit hash` and `ggufkit verify --data`.
#
# usage: test_hash.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN   the golden reference folder (hash/ and syn1/ are
#                               used; without them that part says SKIPPED loudly)
#              GGUFKIT_TESTDATA the repository's testdata folder (bad/, data/)
#
# Golden: every line of llama-gguf-hash's output on the syn1 files equal (default
# and --all --uuid), its --check runs equal (the tampered file fails on exactly
# blk.0.attn_norm.weight). Without golden data, on files `synth` writes: our
# manifest read back by our --check, a tampered copy failing on exactly the
# tensor that changed, manifests that lack a tensor or name one the file lacks,
# big-endian copies (--canonical gives the little-endian identity), shard sets
# (--set equals the merged file), .zst and archive members, --json, --no-layer,
# every testdata/bad fixture refused without a crash, usage errors; and
# verify --data on testdata/data (each finding at its offset) and on golden files.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"   # BIN is absolute: the tests run in other folders

same_file() {   # NAME A B
    if cmp -s "$2" "$3"; then ok; else
        bad "$1: outputs differ"
        diff "$2" "$3" | head -6 | sed 's/^/    /'
    fi
}
# model_line FILE KIND: the whole-model line of KIND (its hex) in hash output FILE
model_hex() { awk -v k="$2" '$1 == k && $3 !~ /:/ { print $2 }' "$1"; }
# relabel FILE OLD NEW: hash output with the file label OLD replaced by NEW
relabel() { sed "s|  $2\$|  $3|; s|  $2:|  $3:|" "$1"; }
# tensor_offset FILE NAME: absolute offset of tensor NAME's data (from `dump`)
tensor_offset() { "$BIN" dump "$1" | awk -v n="$2" '$2 == n { print $(NF-1) }'; }

if [ ! -x "$BIN" ]; then echo "FAIL: $BIN is not an executable"; exit 1; fi

# ------------------------------------------------------------ golden parity
if [ -f "$GOLDEN/hash/README.md" ] && [ -d "$GOLDEN/syn1" ]; then
    n_golden=0
    for ref in "$GOLDEN"/hash/*.default.txt "$GOLDEN"/hash/*.all.txt; do
        base=${ref##*/}
        model=${base%.default.txt}
        model=${model%.all.txt}
        args=()
        case $base in *.all.txt) args=(--all --uuid) ;; esac
        n_golden=$((n_golden + 1))
        (cd "$GOLDEN/syn1" && "$BIN" hash "${args[@]}" "$model.gguf" >"$TMP/golden.out" 2>"$TMP/err"; echo $? >"$TMP/golden.rc")
        if [ "$(cat "$TMP/golden.rc")" -eq 0 ]; then ok; else bad "hash ${args[*]} $model: exit $(cat "$TMP/golden.rc")"; fi
        same_file "hash ${args[*]} $model.gguf vs $base" "$ref" "$TMP/golden.out"
    done
    # --check that passes, run in syn1/ as the reference was
    (cd "$GOLDEN/syn1" && "$BIN" hash --check ../hash/syn1-Q4_0.all.txt syn1-Q4_0.gguf >"$TMP/check.out"; echo $? >"$TMP/check.rc")
    if [ "$(cat "$TMP/check.rc")" -eq 0 ]; then ok; else bad "hash --check syn1-Q4_0: exit $(cat "$TMP/check.rc")"; fi
    same_file "hash --check syn1-Q4_0 vs check-ok.txt" "$GOLDEN/hash/syn1-Q4_0.check-ok.txt" "$TMP/check.out"
    # the tampered file, run in hash/: exit 1, exactly the changed tensor (and the model) mismatch
    (cd "$GOLDEN/hash" && "$BIN" hash --check syn1-Q4_0.tampered.manifest.txt syn1-Q4_0.tampered.gguf >"$TMP/check.out"; echo $? >"$TMP/check.rc")
    if [ "$(cat "$TMP/check.rc")" -eq 1 ]; then ok; else bad "hash --check tampered: exit $(cat "$TMP/check.rc"), expected 1"; fi
    same_file "hash --check tampered vs check-tampered.txt" "$GOLDEN/hash/syn1-Q4_0.check-tampered.txt" "$TMP/check.out"
    mism=$(grep 'Mismatch$' "$TMP/check.out" | awk '{ print $3 }' | tr '\n' ' ')
    if [ "$mism" = "syn1-Q4_0.tampered.gguf:blk.0.attn_norm.weight syn1-Q4_0.tampered.gguf " ]; then ok; else
        bad "tampered check: mismatching lines are '$mism'"; fi
    # shard sets and big-endian golden files: one identity
    (cd "$GOLDEN/syn1" && "$BIN" hash --all --uuid --set syn1-split-t5-00003-of-00005.gguf >"$TMP/set.out" &&
        "$BIN" hash --all --uuid syn1-split-t5.merged.gguf >"$TMP/merged.out" &&
        "$BIN" hash --all --uuid --canonical syn1-f32.be.gguf >"$TMP/be.out")
    relabel "$TMP/set.out" syn1-split-t5-00003-of-00005.gguf syn1-f32.gguf >"$TMP/set.relabeled"
    relabel "$TMP/merged.out" syn1-split-t5.merged.gguf syn1-f32.gguf >"$TMP/merged.relabeled"
    relabel "$TMP/be.out" syn1-f32.be.gguf syn1-f32.gguf >"$TMP/be.relabeled"
    same_file "hash --set t5 shards vs syn1-f32 reference" "$GOLDEN/hash/syn1-f32.all.txt" "$TMP/set.relabeled"
    same_file "hash merged t5 vs syn1-f32 reference" "$GOLDEN/hash/syn1-f32.all.txt" "$TMP/merged.relabeled"
    same_file "hash --canonical syn1-f32.be vs syn1-f32 reference" "$GOLDEN/hash/syn1-f32.all.txt" "$TMP/be.relabeled"
    # verify --data: every golden file passes
    vbad=0
    for f in "$GOLDEN"/syn1/*.gguf "$GOLDEN"/imatrix/*.gguf; do
        [ -f "$f" ] || continue
        "$BIN" verify --data "$f" >"$TMP/out" 2>&1 || { vbad=$((vbad + 1)); bad "verify --data ${f##*/}: $(head -1 "$TMP/out")"; }
    done
    [ "$vbad" -eq 0 ] && ok
    echo "cli_hash: golden parity on $n_golden reference outputs"
else
    echo "SKIPPED: golden hash parity (no golden data at $GOLDEN): llama-gguf-hash's own output is NOT compared"
fi

# ------------------------------------------------------- generated models
cd "$TMP" || exit 1
"$BIN" synth --preset tiny --type F16 m.gguf >/dev/null 2>&1 || { echo "FAIL: synth"; exit 1; }
"$BIN" quantize m.gguf q.gguf Q4_K_M >/dev/null 2>&1 || { echo "FAIL: quantize"; exit 1; }

# our manifest read back by our --check, every kind
if run "hash --all --uuid" "$BIN" hash --all --uuid m.gguf; then expect_rc "hash --all --uuid m.gguf" 0; fi
cp out manifest.txt
n_lines=$(wc -l <manifest.txt)
n_tensors=$("$BIN" dump m.gguf | awk '$2 ~ /\.weight$/' | wc -l)
if [ "$n_lines" -eq $((3 * n_tensors + 4)) ]; then ok; else bad "--all --uuid: $n_lines lines for $n_tensors tensors"; fi
if run "check own" "$BIN" hash --all --uuid --check manifest.txt m.gguf; then expect_rc "hash --check of our own manifest" 0; fi
if [ "$(grep -c '  -  Ok$' out)" -eq "$n_lines" ] && tail -1 out | grep -q 'Success$'; then ok; else bad "own manifest: not every line Ok"; fi
if grep -q '^uuid .*Ok$' out; then ok; else bad "own manifest: the uuid line is not checked"; fi
if run "check default kind" "$BIN" hash --check manifest.txt m.gguf; then expect_rc "hash --check (strongest kind)" 0; fi
if [ "$(grep -c '^sha256 ' out)" -eq $((n_tensors + 1)) ] && ! grep -q '^xxh64 ' out; then ok; else bad "--check without a kind does not use sha256 alone"; fi
if head -1 out | grep -qx 'manifest  manifest.txt  sha256  sha1  xxh64  uuid'; then ok; else bad "manifest header line: $(head -1 out)"; fi

# a tampered copy fails on exactly the tensor that changed
cp m.gguf t.gguf
off=$(tensor_offset t.gguf blk.1.attn_v.weight)
printf '\125' | dd of=t.gguf bs=1 seek=$((off + 1000)) conv=notrunc status=none
sed 's/  m\.gguf/  t.gguf/' manifest.txt >tmanifest.txt
if run "check tampered" "$BIN" hash --check tmanifest.txt t.gguf; then expect_rc "hash --check of a tampered copy" 1; fi
mism=$(grep 'Mismatch$' out | awk '{ print $3 }' | tr '\n' ' ')
if [ "$mism" = "t.gguf:blk.1.attn_v.weight t.gguf " ]; then ok; else bad "tampered copy: mismatching lines '$mism'"; fi
if tail -1 out | grep -q 'tmanifest.txt - Failure$'; then ok; else bad "tampered copy: last line $(tail -1 out)"; fi

# a manifest without one tensor's lines, and one naming a tensor the file lacks
grep -v ':blk.0.ffn_up.weight$' manifest.txt >less.txt
if run "check less" "$BIN" hash --check less.txt m.gguf; then expect_rc "hash --check, a tensor missing from the manifest" 1; fi
if grep -q 'm.gguf:blk.0.ffn_up.weight  -  Not Found$' out; then ok; else bad "missing manifest entry not reported Not Found"; fi
{ cat manifest.txt; echo "sha256    $(printf '%064d' 0)  m.gguf:blk.9.extra.weight"; } >more.txt
if run "check more" "$BIN" hash --check more.txt m.gguf; then expect_rc "hash --check, a manifest tensor the file lacks" 1; fi
if grep -q 'm.gguf:blk.9.extra.weight  -  Missing From File$' out; then ok; else bad "tensor absent from the file not reported"; fi
# a --no-layer manifest checks the model line alone
"$BIN" hash --all --no-layer m.gguf >nolayer.txt
if [ "$(wc -l <nolayer.txt)" -eq 3 ]; then ok; else bad "--no-layer --all: $(wc -l <nolayer.txt) lines, expected 3"; fi
if run "check nolayer" "$BIN" hash --check nolayer.txt m.gguf; then expect_rc "hash --check of a --no-layer manifest" 0; fi
# a manifest of another file: nothing found
if run "check other" "$BIN" hash --check manifest.txt q.gguf; then expect_rc "hash --check of a file the manifest does not name" 1; fi

# metadata edits do not change the identity; requantizing does
"$BIN" edit --set general.name=renamed -o e.gguf m.gguf >/dev/null 2>&1
"$BIN" hash --sha256 m.gguf >a.out; "$BIN" hash --sha256 e.gguf | sed 's/  e\.gguf/  m.gguf/' >b.out
same_file "hash after a metadata edit" a.out b.out
"$BIN" hash q.gguf >q.out
if [ "$(model_hex q.out xxh64)" != "$(model_hex a.out xxh64)" ]; then ok; else bad "quantized copy has the same identity"; fi

# big-endian: bytes as stored by default, the little-endian identity with --canonical
"$BIN" endian --to big q.gguf qbe.gguf >/dev/null 2>&1
"$BIN" hash --all --uuid q.gguf >le.out
"$BIN" hash --all --uuid qbe.gguf >be.out
"$BIN" hash --all --uuid --canonical qbe.gguf | sed 's/  qbe\.gguf/  q.gguf/' >bec.out
same_file "hash --canonical of a big-endian Q4_K_M copy" le.out bec.out
if [ "$(model_hex be.out sha256)" != "$(model_hex le.out sha256)" ]; then ok; else bad "big-endian bytes hash like little-endian ones without --canonical"; fi
"$BIN" hash --canonical q.gguf >lec.out
"$BIN" hash q.gguf >le1.out
same_file "--canonical leaves a little-endian file's hashes alone" le1.out lec.out

# shard sets: --set is the merged file's model; a shard alone is its own
"$BIN" split --split-max-tensors 4 q.gguf sh >/dev/null 2>&1
"$BIN" merge sh-00002-of-00006.gguf merged.gguf >/dev/null 2>&1
"$BIN" hash --all --uuid merged.gguf | sed 's/  merged\.gguf/  X/' >merged.out
"$BIN" hash --all --uuid --set sh-00004-of-00006.gguf | sed 's/  sh-00004-of-00006\.gguf/  X/' >set.out
same_file "hash --set equals the merged file" merged.out set.out
"$BIN" hash --all --uuid q.gguf | sed 's/  q\.gguf/  X/' >orig.out
same_file "hash of the merged file equals the original" orig.out merged.out
"$BIN" hash sh-00004-of-00006.gguf >one.out
if [ "$(grep -c . one.out)" -le 5 ]; then ok; else bad "a shard without --set hashes more than its own tensors"; fi
mkdir partial && cp sh-00001-of-00006.gguf sh-00002-of-00006.gguf partial/
if run "set missing shard" "$BIN" hash --set partial/sh-00001-of-00006.gguf; then expect_rc "hash --set with a shard missing" 1; fi
if [ ! -s out ] && grep -q 'sh-00003-of-00006' err; then ok; else bad "missing shard: output or message wrong: $(head -1 err)"; fi

# .gguf.zst and archive members hash like the file
zstd -q -o q.gguf.zst q.gguf
"$BIN" hash --all q.gguf.zst | sed 's/  q\.gguf\.zst/  q.gguf/' >zst.out
"$BIN" hash --all q.gguf >plain.out
same_file "hash of a .gguf.zst" plain.out zst.out
tar -cf models.tar q.gguf
"$BIN" hash --all models.tar::q.gguf | sed 's/  models\.tar::q\.gguf/  q.gguf/' >tar.out
same_file "hash of an archive member" plain.out tar.out

# --json: the same digests
"$BIN" hash --all --uuid --json q.gguf >j.json
if python3 - j.json le.out <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["files"][0]
want = {}
for line in open(sys.argv[2]):
    kind, hexd, name = line.split()
    want[(kind, name)] = hexd
got = {}
for t in j["tensors"]:
    for k in ("xxh64", "sha1", "sha256"):
        got[(k, "q.gguf:" + t["name"])] = t[k]
for k in ("xxh64", "sha1", "sha256", "uuid"):
    got[(k, "q.gguf")] = j["model"][k]
sys.exit(0 if got == want else 1)
PY
then ok; else bad "hash --json differs from the text output"; fi
"$BIN" hash --json --check manifest.txt t.gguf >jc.json; rc=$?
if [ "$rc" -eq 1 ] && python3 -c "import json,sys; j=json.load(open('jc.json')); sys.exit(0 if j['passed'] is False and j['files'][0]['passed'] is False else 1)"; then ok; else bad "hash --json --check: rc $rc or verdict wrong"; fi

# several files in one run
"$BIN" hash m.gguf q.gguf >two.out
if [ "$(grep -c '  m\.gguf' two.out)" -gt 0 ] && [ "$(grep -c '  q\.gguf' two.out)" -gt 0 ]; then ok; else bad "two files: both not listed"; fi

# broken input: an error, no crash, nothing on stdout
n_bad=0
for f in "$DATA"/bad/*.gguf; do
    n_bad=$((n_bad + 1))
    if run "hash ${f##*/}" "$BIN" hash --all --uuid "$f"; then
        if [ "$rc" -eq 1 ] && [ ! -s out ] && [ -s err ]; then ok; else bad "hash ${f##*/}: exit $rc, stdout $(wc -c <out) bytes"; fi
    fi
done
[ "$n_bad" -gt 0 ] || bad "no fixtures in $DATA/bad"
echo "not a model" >text.txt
if run "hash text" "$BIN" hash text.txt; then expect_rc "hash of a text file" 1; fi
if run "hash missing" "$BIN" hash nope.gguf; then expect_rc "hash of a missing file" 1; fi
if run "hash dir" "$BIN" hash partial; then expect_rc "hash of a folder" 1; fi
if run "hash bad manifest" "$BIN" hash --check text.txt m.gguf; then expect_rc "hash --check of a manifest without hashes" 1; fi
if run "hash no manifest" "$BIN" hash --check nope.txt m.gguf; then expect_rc "hash --check of a missing manifest" 1; fi
if run "hash no file" "$BIN" hash; then expect_rc "hash without a file" 2; fi
if run "hash bad option" "$BIN" hash --md5 m.gguf; then expect_rc "hash --md5" 2; fi
if run "hash -c without arg" "$BIN" hash -c; then expect_rc "hash -c without a manifest" 2; fi
if run "hash help" "$BIN" hash --help; then expect_rc "hash --help" 0; fi

# ------------------------------------------------------------ index --hash
# (qbe.gguf: q.gguf big-endian, and mbe.gguf: m.gguf big-endian, have the same
# weights as their originals, as diff and hash --canonical say: same_weights
# groups them; their files.content_xxh64 stay the bytes as stored)
"$BIN" endian --to big m.gguf mbe.gguf >/dev/null 2>&1
mkdir coll && cp m.gguf e.gguf q.gguf qbe.gguf mbe.gguf coll/ && cp sh-*.gguf merged.gguf coll/
if run "index" "$BIN" index --db coll.sqlite coll; then expect_rc "index without --hash" 0; fi
if run "index --hash" "$BIN" index --hash --jobs 2 --json --db coll.sqlite coll; then expect_rc "index --hash" 0; fi
if grep -q '"updated":[[:space:]]*12' out; then ok; else bad "index --hash did not read again the files indexed without it: $(tr -d '\n ' <out)"; fi
if run "index --hash again" "$BIN" index --hash --json --db coll.sqlite coll; then expect_rc "index --hash, second run" 0; fi
if grep -q '"headers_read":[[:space:]]*0' out; then ok; else bad "index --hash read unchanged files again"; fi
"$BIN" hash m.gguf q.gguf qbe.gguf sh-00001-of-00006.gguf >ix.expected
if python3 - coll.sqlite ix.expected "$HERE/../../docs/index.md" <<'PY'
import re, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
fails = []
# files.content_xxh64 and tensors.xxh64 are what `ggufkit hash` prints
for line in open(sys.argv[2]):
    kind, hexd, name = line.split()
    f, _, t = name.partition(":")
    if t:
        got = con.execute("SELECT t.xxh64 FROM tensors t JOIN files fi ON fi.id = t.file_id"
                          " WHERE fi.path LIKE ? AND t.name = ?", ("%/coll/" + f, t)).fetchall()
    else:
        got = con.execute("SELECT content_xxh64 FROM files WHERE path LIKE ?", ("%/coll/" + f,)).fetchall()
    if got != [(hexd,)]:
        fails.append(f"{name}: index has {got}, hash printed {hexd}")
# the docs query: two groups, the quantized file with its big-endian copy, its
# shard set and merged file, the F16 file with its edited and big-endian copies
docs = re.findall(r"```sql\n(.*?)```", open(sys.argv[3]).read(), re.S)
q = [d for d in docs if "same_weights" in d]
rows = con.execute(q[0]).fetchall() if len(q) == 1 else []
groups = sorted(sorted(p.rsplit("/", 1)[-1] for p in r[2].split(" | ")) for r in rows)
want = [["e.gguf", "m.gguf", "mbe.gguf"], ["merged.gguf", "q.gguf", "qbe.gguf", "sh-00001-of-00006.gguf"]]
if len(q) != 1 or groups != want or sorted(r[1] for r in rows) != [3, 4]:
    fails.append(f"same_weights docs query: {rows}")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
then ok; else bad "index --hash: digests or same_weights wrong"; fi

# ------------------------------------------------------------ verify --data
if [ -f "$DATA/data/EXPECTED.tsv" ]; then
    # the committed fixtures are what their generator writes
    if python3 "$HERE/../../scripts/make-data-fixtures" "$TMP/regen" >/dev/null && diff -r "$DATA/data" "$TMP/regen/data" >/dev/null; then
        ok; else bad "testdata/data differs from what scripts/make-data-fixtures writes"; fi
    n_data=0
    while IFS=$'\t' read -r file want_rc tensor block offset frag desc; do
        case $file in ''|'#'*) continue ;; esac
        n_data=$((n_data + 1))
        f=$DATA/data/$file
        if run "verify --data $file" "$BIN" verify --data "$f"; then
            expect_rc "verify --data $file ($desc)" "$want_rc"
            if [ "$want_rc" -eq 0 ]; then
                if grep -q ': ok$' out && ! grep -q 'error' out; then ok; else bad "verify --data $file: $(head -1 out)"; fi
                continue
            fi
            first=$(grep ': error: ' out | head -1)
            want="offset $offset: error: tensor '$tensor'"
            case $first in *"$want"*"$frag"*) ok ;; *) bad "verify --data $file: first finding '$first', expected '$want' ... '$frag'" ;; esac
            if [ "$block" != "-" ]; then
                case $first in *"block $block:"*|*"element $block:"*) ok ;; *) bad "verify --data $file: block $block not named" ;; esac
            fi
        fi
        if [ "$want_rc" -eq 1 ] && run "verify --data --json $file" "$BIN" verify --data --json "$f"; then
            if python3 -c "
import json, sys
j = json.load(open('$TMP/out'))['files'][0]
e = [x for x in j['findings'] if x['level'] == 'error'][0]
ok = j['valid'] is False and e['offset'] == $offset and e['tensor'] == '$tensor' and ('$block' == '-' or e['block'] == int('0$block'))
sys.exit(0 if ok else 1)"; then ok; else bad "verify --data --json $file: finding wrong"; fi
        fi
        # without --data the header alone is fine
        if run "verify $file" "$BIN" verify "$f"; then expect_rc "verify $file without --data" 0; fi
    done <"$DATA/data/EXPECTED.tsv"
    [ "$n_data" -ge 10 ] || bad "only $n_data data fixtures"
else
    bad "no fixtures at $DATA/data (run scripts/make-data-fixtures)"
fi
# ---- issue 32, item 9: every manifest hash writes reads back ------------------
# File names with a space, a tab, a newline, a backslash, a byte that is not
# UTF-8, a leading dash, and a tensor name with a space: hash writes the line
# escaped (a leading backslash, \s \t \n \\ \xHH in the name, as sha256sum does)
# and --check reads it back, each file alone and all in one manifest; an
# ordinary name keeps llama-gguf-hash's line exactly.
O=$TMP/oddnames
mkdir -p "$O"
python3 - "$HERE" "$O/tensor-space.gguf" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from gguf_writer import STR, Writer
w = Writer()
w.header(2, 1)
w.kv("general.architecture", STR, "llama")
w.tensor_info("blk.0.attn q", [8], 0, 0)
w.tensor_info("tab\there", [8], 0, 32)
w.pad(32)
open(sys.argv[2], "wb").write(bytes(w.buf) + bytes(range(32)) + bytes(range(32, 64)))
EOF
odd_names=("my model.gguf" "tab	name.gguf" "new
line.gguf" 'back\slash.gguf' "$(printf 'lat\xe9n.gguf')" "-dash.gguf" "cr$(printf '\r').gguf")
for n in "${odd_names[@]}"; do cp m.gguf "$O/$n"; done
(
    cd "$O" || exit 1
    all=()
    for n in "${odd_names[@]}" tensor-space.gguf; do all+=("$n"); done
    : >"$TMP/all.manifest"
    i=0
    for n in "${all[@]}"; do
        i=$((i + 1))
        "$BIN" hash --all -- "$n" >"$TMP/one.manifest" 2>"$TMP/err" || echo "FAIL: hash of odd name $i"
        cat "$TMP/one.manifest" >>"$TMP/all.manifest"
        if "$BIN" hash --check "$TMP/one.manifest" -- "$n" >"$TMP/out" 2>"$TMP/err" &&
            grep -q "Success" "$TMP/out" && ! grep -q "Not Found\|Mismatch" "$TMP/out"; then echo "ok"; else
            echo "FAIL: hash --check of its own manifest, odd name $i"; head -5 "$TMP/out" "$TMP/err"
        fi
    done
    if "$BIN" hash --check "$TMP/all.manifest" -- "${all[@]}" >"$TMP/out" 2>&1 &&
        [ "$(grep -c 'Success' "$TMP/out")" -ge 1 ] && ! grep -q "Not Found\|Mismatch\|Failure" "$TMP/out"; then echo "ok"; else
        echo "FAIL: hash --check of one manifest of every odd name"
    fi
    # the escaped lines: one line per digest, starting with a backslash, no raw blank in the name
    "$BIN" hash --no-layer -- "my model.gguf" >"$TMP/out"
    [ "$(cat "$TMP/out")" = "\\xxh64     $(awk '{print $2}' "$TMP/out")  my\\smodel.gguf" ] && echo ok ||
        echo "FAIL: escaped line: $(cat "$TMP/out")"
    "$BIN" hash --no-layer -- "new
line.gguf" >"$TMP/out"
    [ "$(wc -l <"$TMP/out")" = 1 ] && echo ok || echo "FAIL: a newline in a name split the line"
    # a corrupted escaped manifest still fails: another digest is a Mismatch
    python3 -c '
import sys
out = []
for line in open(sys.argv[1], "rb").read().split(b"\n"):
    f = line.split()
    if len(f) == 3 and f[0] == b"\\sha256" and f[2].startswith(b"my\\smodel"):
        h = f[1]
        line = line.replace(h, (b"0" if h[:1] != b"0" else b"1") + h[1:], 1)
    out.append(line)
open(sys.argv[2], "wb").write(b"\n".join(out))' "$TMP/all.manifest" "$TMP/bad.manifest"
    if "$BIN" hash --check "$TMP/bad.manifest" -- "my model.gguf" >"$TMP/out" 2>&1; then
        echo "FAIL: a changed digest in an escaped line passed"
    else
        grep -q "Mismatch" "$TMP/out" && echo ok || echo "FAIL: no Mismatch for a changed escaped line"
    fi
) >"$TMP/odd.log" 2>&1
while IFS= read -r line; do
    case $line in ok) ok ;; FAIL:*) bad "${line#FAIL: }" ;; *) echo "    $line" ;; esac
done <"$TMP/odd.log"
# an ordinary name: llama-gguf-hash's line, unescaped
"$BIN" hash --no-layer m.gguf >"$TMP/out"
case $(cat "$TMP/out") in 'xxh64     '*'  m.gguf') ok ;; *) bad "ordinary name changed: $(cat "$TMP/out")" ;; esac

if run "verify --data synth" "$BIN" verify --data m.gguf q.gguf qbe.gguf; then expect_rc "verify --data of generated models" 0; fi
for f in "$DATA"/bad/*.gguf; do
    if run "verify --data ${f##*/}" "$BIN" verify --data "$f"; then
        [ "$rc" -eq 1 ] && ok || bad "verify --data ${f##*/}: exit $rc"
    fi
done

finish
