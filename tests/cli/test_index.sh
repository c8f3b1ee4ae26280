#!/usr/bin/env bash
# test_index.sh - CLI tests of `ggufkit index` (the SQLite catalogue).
#
# usage: test_index.sh PATH/TO/ggufkit
# Environment: GGUFKIT_GOLDEN = the golden reference folder. Its files are copied
# to a temporary folder (never written in place); without it the test prints
# SKIPPED for golden data and indexes a corpus made with `ggufkit synth`, `split`
# and `quantize` instead.
#
# Checks: every row of files / kv / tensors matches `ggufkit dump --json
# --json-array` of its file (plain, .zst, tar, tar.gz, zip members); shard sets
# are grouped into models; a truncated file has an error row; a second run
# changes nothing and reads no header (headers_read 0, database content
# identical); touching one file re-reads only it; --prune; --full-arrays; exit
# codes; every query of docs/index.md runs and returns the expected rows.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"   # BIN is absolute; TMP is made writable before it is removed
DOCS=$HERE/../../docs/index.md

# json_field FILE KEY : a top-level field of a JSON file.
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# expect_counts NAME FILE k=v... : the --json output in FILE has these counts.
expect_counts() {
    local name=$1 file=$2
    shift 2
    for kv in "$@"; do
        local k=${kv%%=*} v=${kv#*=} got
        got=$(json_field "$file" "$k" 2>/dev/null)
        if [ "$got" = "$v" ]; then ok; else bad "$name: $k = '$got', expected $v"; fi
    done
}

C=$TMP/corpus
mkdir -p "$C"
if [ -n "$GOLDEN" ] && [ -f "$GOLDEN/syn1/syn1-f32.gguf" ]; then
    cp -r "$GOLDEN/." "$C/"
    chmod -R u+w "$C"
    Q4KM=$C/syn1/syn1-preset-Q4_K_M.gguf
    F32=$C/syn1/syn1-f32.gguf
    VOCAB=$C/real/ggml-vocab-phi-3.gguf
    HAVE_GOLDEN=1
else
    echo "SKIPPED: golden parity (no golden data at ${GOLDEN:-<unset>}); indexing a synth corpus instead"
    HAVE_GOLDEN=0
    mkdir -p "$C/syn"
    "$BIN" synth "$C/syn/tiny-f32.gguf" >/dev/null || bad "synth"
    "$BIN" synth --type F16 --seed 2 "$C/syn/tiny-f16.gguf" >/dev/null || bad "synth f16"
    "$BIN" quantize "$C/syn/tiny-f32.gguf" "$C/syn/tiny-Q4_K_M.gguf" Q4_K_M >/dev/null 2>&1 || bad "quantize"
    "$BIN" split --split-max-tensors 5 "$C/syn/tiny-f32.gguf" "$C/syn/tiny-split" >/dev/null 2>&1 || bad "split"
    echo "not a model" >"$C/syn/README.md"
    Q4KM=$C/syn/tiny-Q4_K_M.gguf
    F32=$C/syn/tiny-f32.gguf
    VOCAB=$C/syn/tiny-f16.gguf
fi

# Compressed, archived, edited and broken copies.
mkdir -p "$C/zst" "$C/arch/sub" "$C/broken" "$C/edited"
zstd -q -k -o "$C/zst/${Q4KM##*/}.zst" "$Q4KM" || bad "zstd"
cp "$F32" "$VOCAB" "$C/arch/sub/"
(cd "$C/arch/sub" && tar -cf ../models.tar "${F32##*/}" "${VOCAB##*/}" &&
    tar -czf ../models.tar.gz "${VOCAB##*/}" &&
    tar -cf - "${VOCAB##*/}" | zstd -q -o ../models.tar.zst) || bad "tar"
python3 - "$C/arch/models.zip" "$Q4KM" <<'EOF' || bad "zip"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[2], "inner/dir/q4km.gguf")
    z.writestr("notes.txt", "hello")
EOF
rm -rf "$C/arch/sub"
head -c 3000 "$F32" >"$C/broken/truncated.gguf"
"$BIN" edit --set llama.context_length=32768 -o "$C/edited/q4km-32k.gguf" "$Q4KM" >/dev/null 2>&1 ||
    bad "edit context_length"

DB=$TMP/idx.sqlite

# ---- usage and exit codes ------------------------------------------------
expect_exit 0 "--help" "$BIN" index --help
grep -q "usage: ggufkit index" "$TMP/out" && ok || bad "--help text"
expect_exit 2 "no PATH" "$BIN" index
expect_exit 2 "bad option" "$BIN" index --bogus "$C"
expect_exit 2 "bad --jobs" "$BIN" index --jobs 0 "$C"
expect_exit 1 "missing PATH" "$BIN" index --db "$TMP/x.sqlite" "$TMP/does-not-exist"
expect_exit 1 "unwritable db" "$BIN" index --db "$TMP/no-such-dir/x.sqlite" "$C"
mkdir -p "$TMP/dbdir"
expect_exit 1 "db is a folder" "$BIN" index --db "$TMP/dbdir" "$C"

# ---- first run -----------------------------------------------------------
expect_exit 0 "first run" "$BIN" index --db "$DB" --jobs 2 --json "$C"
cp "$TMP/out" "$TMP/run1.json"
expect_counts "first run" "$TMP/run1.json" updated=0 unchanged=0 broken=1 removed=0

# ---- rows against dump --json -------------------------------------------
python3 - "$DB" "$BIN" "$HAVE_GOLDEN" "$DOCS" <<'EOF'
import json, math, re, sqlite3, subprocess, sys
db, binary, have_golden, docs = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
con = sqlite3.connect(db)
fails = []
def check(cond, msg):
    if not cond: fails.append(msg)

def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b): return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b and type(a) == type(b) or (isinstance(a, (int, float)) and not isinstance(a, bool)
                                              and isinstance(b, (int, float)) and not isinstance(b, bool) and a == b)

def head(v, n=8):
    return [head(x, n) for x in v[:n]] if isinstance(v, list) else v

rows = con.execute("SELECT id, path, member, version, endian, n_kv, n_tensors, error FROM files").fetchall()
check(len(rows) > 0, "no rows")
n_checked = 0
for fid, path, member, version, endian, n_kv, n_tensors, error in rows:
    name = path + ("::" + member if member else "")
    r = subprocess.run([binary, "dump", "--json", "--json-array", name], capture_output=True)
    if error is not None:
        check(r.returncode != 0, f"{name}: error row but dump succeeds")
        continue
    check(r.returncode == 0, f"{name}: dump failed")
    if r.returncode: continue
    d = json.loads(r.stdout)
    md = d["metadata"]
    check(endian == d["endian"].lower(), f"{name}: endian {endian}")
    check(version == md["GGUF.version"]["value"], f"{name}: version")
    check(n_kv == md["GGUF.kv_count"]["value"], f"{name}: n_kv")
    check(n_tensors == md["GGUF.tensor_count"]["value"], f"{name}: n_tensors")
    kvs = con.execute("SELECT idx, key, type, value, array_type, array_len, offset FROM kv WHERE file_id=? ORDER BY idx", (fid,)).fetchall()
    keys = [k for k in md if not k.startswith("GGUF.")]
    check(len(kvs) == len(keys), f"{name}: {len(kvs)} kv rows, dump has {len(keys)}")
    for (idx, key, typ, value, atype, alen, off), dkey in zip(kvs, keys):
        e = md[dkey]
        check(key == dkey and idx + 3 == e["index"] and typ == e["type"] and off == e["offset"], f"{name}: kv {key}")
        dv = e.get("value")
        if typ == "ARRAY":
            check(atype == e["array_types"][0] if e["array_types"] else True, f"{name}: {key} array_type")
            check(alen == len(dv), f"{name}: {key} array_len {alen} != {len(dv)}")
            check(same(json.loads(value), head(dv)), f"{name}: {key} array value")
        elif typ == "STRING":
            check(value == dv, f"{name}: {key} string value")
        elif typ == "BOOL":
            check(value == ("true" if dv else "false"), f"{name}: {key} bool")
        elif typ.startswith("FLOAT"):
            check(same(float(value), float(dv)), f"{name}: {key} float {value} != {dv}")
        else:
            check(int(value) == dv, f"{name}: {key} int {value} != {dv}")
    ts = con.execute("SELECT name, type, n_dims, ne0, ne1, ne2, ne3, info_offset, idx FROM tensors WHERE file_id=? ORDER BY idx", (fid,)).fetchall()
    dts = list(d["tensors"].items())
    check(len(ts) == len(dts), f"{name}: tensor count")
    for (tn, tt, nd, *rest), (dn, dt) in zip(ts, dts):
        ne, info_off, idx = rest[:4], rest[4], rest[5]
        check(tn == dn and tt == dt["type"] and ne[:nd] == dt["shape"] and info_off == dt["offset"]
              and idx == dt["index"], f"{name}: tensor {tn}")
    n_checked += 1
print(f"checked {n_checked} files against dump --json")

# Broken file.
br = con.execute("SELECT path, error, error_code FROM files WHERE error IS NOT NULL").fetchall()
check(len(br) == 1 and br[0][0].endswith("broken/truncated.gguf") and "offset" in br[0][1],
      f"broken rows: {br}")

# Archives and compressed files.
mem = con.execute("SELECT path, member FROM files WHERE member IS NOT NULL ORDER BY path, member").fetchall()
check(len(mem) == 5, f"archive member rows: {mem}")
check(any(p.endswith("models.tar.zst") for p, m in mem), "tar.zst member")
check(any(m == "inner/dir/q4km.gguf" and p.endswith("models.zip") for p, m in mem), "zip member")
check(con.execute("SELECT count(*) FROM skipped WHERE path LIKE '%models.zip'").fetchone()[0] == 0, "zip skipped")
check(con.execute("SELECT count(*) FROM files WHERE path LIKE '%.gguf.zst' AND member IS NULL AND error IS NULL").fetchone()[0] == 1, "zst row")

# Shard sets: every name PREFIX-0000k-of-0000n.gguf grouped by PREFIX.
expected = {}
for (p,) in con.execute("SELECT path FROM files WHERE member IS NULL AND error IS NULL"):
    m = re.match(r"(.*)-(\d{5})-of-(\d{5})\.gguf$", p)
    if m: expected.setdefault((m.group(1), int(m.group(3))), set()).add(p)
groups = {}
for mid, p in con.execute("SELECT m.id, f.path FROM models m JOIN files f ON f.model_id = m.id WHERE m.n_files > 1"):
    groups.setdefault(mid, set()).add(p)
check(sorted(map(sorted, groups.values())) == sorted(map(sorted, expected.values())), f"shard groups {groups} != {expected}")
if have_golden:
    sizes = sorted(len(g) for g in groups.values())
    check(sizes == [4, 5], f"golden shard sets: {sizes}")
check(con.execute("SELECT count(*) FROM files WHERE model_id IS NULL").fetchone()[0] == 0, "files without model")
single = con.execute("SELECT count(*) FROM models WHERE n_files = 1 AND split_count IS NULL").fetchone()[0]
nonshard = con.execute("SELECT count(*) FROM files WHERE split_count IS NULL").fetchone()[0]
check(single == nonshard, "single files are their own models")
# The quant mix of a model sums to its tensor bytes.
bad_mix = con.execute("SELECT count(*) FROM models m WHERE tensor_bytes > 0 AND tensor_bytes <> (SELECT sum(bytes) FROM quant_mix q WHERE q.model_id = m.id)").fetchone()[0]
check(bad_mix == 0, "quant_mix bytes do not add up")
check(con.execute("SELECT count(*) FROM model_summary WHERE quant_mix IS NULL AND n_broken = 0 AND parameters > 0").fetchone()[0] == 0, "model_summary.quant_mix")

for f in fails[:30]: print("FAIL:", f)
sys.exit(1 if fails else 0)
EOF
[ $? -eq 0 ] && ok || bad "rows against dump --json"

# ---- docs/index.md queries ------------------------------------------------
python3 - "$DB" "$DOCS" "$HAVE_GOLDEN" <<'EOF'
import re, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
have_golden = sys.argv[3] == "1"
queries = re.findall(r"```sql\n(.*?)```", open(sys.argv[2]).read(), re.S)
fails = []
def check(cond, msg):
    if not cond: fails.append(msg)
results = []
for i, q in enumerate(queries):
    try:
        results.append(con.execute(q).fetchall())
    except Exception as e:
        fails.append(f"docs query {i + 1} fails: {e}")
        results.append(None)
check(len(queries) == 11, f"docs/index.md has {len(queries)} queries, the test knows 11")
if not fails:
    r = results
    n_shards = con.execute("SELECT count(*) FROM files WHERE split_count IS NOT NULL").fetchone()[0]
    check(len(r[0]) == 1 and r[0][0][1].endswith("edited/q4km-32k.gguf") and r[0][0][2] == 32768, f"q1 {r[0]}")
    check(len(r[1]) == n_shards and n_shards > 0 and all(row[4] == 1 for row in r[1]), f"q2 {len(r[1])} rows")
    q4 = [row for row in r[2] if row[0].endswith(("preset-Q4_K_M.gguf", "tiny-Q4_K_M.gguf"))]
    check(any(row[2].endswith(("syn1-f32.gguf", "tiny-f32.gguf")) for row in q4), f"q3 {q4}")
    if have_golden:
        check(len(r[3]) >= 18 and all(row[7] in ("syn1.imatrix", "syn1.imatrix.gguf") for row in r[3]), f"q4 {len(r[3])} rows")
    check(len(r[4]) == 1 and r[4][0][2] == "truncated" or (len(r[4]) == 1 and r[4][0][0].endswith("truncated.gguf")), f"q5 {r[4]}")
    check(len(r[5]) >= 2 and abs(sum(row[3] for row in r[5]) - 100) < 0.1, f"q6 {r[5]}")
    tok = con.execute("SELECT max(array_len) FROM kv WHERE key='tokenizer.ggml.tokens'").fetchone()[0]
    check(len(r[6]) == min(5, con.execute("SELECT count(*) FROM kv WHERE key='tokenizer.ggml.tokens'").fetchone()[0]) and r[6][0][2] == tok, f"q7 {r[6]}")
    check(any(row[0].endswith("q4km-32k.gguf") for row in r[7]), f"q8 {r[7]}")
    check(len(r[8]) == 6, f"q9 {len(r[8])} rows (5 archive members + 1 .gguf.zst)")
    check(any(r[9]) and any(row[3] >= 2 for row in r[9]), f"q10 {r[9]}")
    check(r[10] == [], f"q11 (same_weights, no --hash run here; tests/cli/test_hash.sh runs it) {r[10]}")
print(f"ran {len(queries)} docs queries")
for f in fails: print("FAIL:", f)
sys.exit(1 if fails else 0)
EOF
[ $? -eq 0 ] && ok || bad "docs/index.md queries"

# ---- second run: nothing read, nothing changed -----------------------------
snapshot() { sqlite3 "$DB" "SELECT * FROM files ORDER BY id; SELECT count(*), sum(length(value)) FROM kv; SELECT * FROM models ORDER BY id;" 2>/dev/null || python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for q in ("SELECT * FROM files ORDER BY id", "SELECT count(*), sum(length(value)) FROM kv", "SELECT * FROM models ORDER BY id"):
    for r in c.execute(q): print(r)' "$DB"; }
snapshot >"$TMP/snap1"
rows=$(json_field "$TMP/run1.json" rows)
# Unreadable files would be errors if they were opened (unless we are root, who reads anyway).
find "$C" -type f -exec chmod 000 {} +
expect_exit 0 "second run" "$BIN" index --db "$DB" --json "$C"
find "$C" -type f -exec chmod 644 {} +
cp "$TMP/out" "$TMP/run2.json"
expect_counts "second run" "$TMP/run2.json" added=0 updated=0 removed=0 broken=0 headers_read=0 unchanged="$rows"
snapshot >"$TMP/snap2"
cmp -s "$TMP/snap1" "$TMP/snap2" && ok || bad "second run changed the database"

# ---- touching one file re-reads only it -----------------------------------
TOUCHED=$C/edited/q4km-32k.gguf
id_before=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT id FROM files WHERE path=?", (sys.argv[2],)).fetchone()[0])' "$DB" "$TOUCHED")
touch -d '2030-01-01 00:00:00' "$TOUCHED"
expect_exit 0 "touch run" "$BIN" index --db "$DB" --json "$C"
cp "$TMP/out" "$TMP/run3.json"
expect_counts "touch run" "$TMP/run3.json" added=0 updated=1 removed=0 headers_read=1 unchanged=$((rows - 1))
id_after=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT id FROM files WHERE path=?", (sys.argv[2],)).fetchone()[0])' "$DB" "$TOUCHED")
[ "$id_before" = "$id_after" ] && ok || bad "re-read file changed id ($id_before -> $id_after)"
# A touched archive re-reads its members only.
touch -d '2030-01-01 00:00:00' "$C/arch/models.tar"
expect_exit 0 "touch archive" "$BIN" index --db "$DB" --json "$C"
expect_counts "touch archive" "$TMP/out" added=0 updated=2 removed=0 headers_read=3

# ---- repair the broken file, then vanish and --prune -------------------------
cp "$F32" "$C/broken/truncated.gguf"
expect_exit 0 "repaired" "$BIN" index --db "$DB" --json "$C"
expect_counts "repaired" "$TMP/out" updated=1 broken=0 headers_read=1
n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM files WHERE error IS NOT NULL").fetchone()[0])' "$DB")
[ "$n" = 0 ] && ok || bad "repaired file keeps its error"
rm "$C/edited/q4km-32k.gguf" "$C/arch/models.tar"
expect_exit 0 "vanished" "$BIN" index --db "$DB" --json "$C"
expect_counts "vanished" "$TMP/out" vanished=3 removed=0 rows="$rows"
expect_exit 0 "prune" "$BIN" index --db "$DB" --json --prune "$C"
expect_counts "prune" "$TMP/out" removed=3 rows=$((rows - 3)) headers_read=0
"$BIN" index --db "$DB" "$C" >"$TMP/out" 2>&1 && grep -q "0 added, 0 updated" "$TMP/out" && ok || bad "one-line summary: $(cat "$TMP/out")"

# ---- --full-arrays ----------------------------------------------------------
expect_exit 0 "full arrays" "$BIN" index --db "$TMP/full.sqlite" --full-arrays --jobs 1 --json "$C/zst" "$VOCAB"
python3 - "$TMP/full.sqlite" <<'EOF'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("SELECT key, value, array_len FROM kv WHERE type='ARRAY'").fetchall()
bad = [k for k, v, n in rows if len(json.loads(v)) != n]
sys.exit(1 if not rows or bad else 0)
EOF
[ $? -eq 0 ] && ok || bad "--full-arrays keeps whole arrays"

finish
