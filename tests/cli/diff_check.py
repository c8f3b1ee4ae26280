#!/usr/bin/env python3
"""diff_check.py - the independent side of the `ggufkit diff` tests.

usage: diff_check.py numbers REF.gguf OTHER.gguf DIFF.json [FILE_INDEX]
           recomputes, with numpy, every number `diff --json` reports for the
           tensors both files hold with the same shape (both F32 or F16 here:
           quantized sides are first dequantized to F32 by the caller) and
           checks them to 1e-9 relative; counts exactly.
       diff_check.py manifest DEQ.gguf MANIFEST.json NAME
           checks that every tensor of DEQ.gguf (F32) has the bytes llama.cpp's
           dequantization of NAME gave (the golden MANIFEST's deq_f32_sha256, or
           the tensor's own sha256 where NAME holds it as F32 already; the
           MANIFEST gives no reference for the quantized tensors of presets).
       diff_check.py make OUT.gguf base|other
           writes a small little-endian F32 model: "other" differs from "base"
           in one element of a long multi-row tensor (row 2), in one tensor's
           shape, by a tensor it lacks and one it adds.
       diff_check.py poke FILE.gguf TENSOR BYTE_OFFSET HEX
           writes the bytes HEX at BYTE_OFFSET of TENSOR's data, in place (a NaN,
           an infinity, a block's scale).
       diff_check.py colour FILE.png R G B
           prints how many pixels have exactly that colour.
       diff_check.py png FILE.png WIDTH HEIGHT PANELS FRAME_X
           decodes the PNG (zlib and the five row filters, no image library)
           and checks its size and that column FRAME_X crosses 2 * PANELS rows of
           the panel frame colour (64, 64, 64).
Exit status 0 when every check passes; otherwise the first failure on stderr, 1.
"""
import hashlib
import json
import math
import struct
import sys
import zlib

# numpy is imported by main() for the commands that compute with it (numbers,
# make): its import takes 0.2 s of CPU, longer than poke, png or colour run.
np = None

from gguf_writer import STR, Writer

SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def tensor_offsets(path):
    """@return: {name: absolute file offset of its data} of a little-endian GGUF v2/v3 file."""
    data = open(path, "rb").read()
    pos = 4

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def skip_value(t):
        nonlocal pos
        if t == 8:
            n = take("Q")
            pos += n
        elif t == 9:
            et, n = take("I"), take("Q")
            for _ in range(n):
                skip_value(et)
        else:
            take(SCALAR[t])

    version, n_tensors, n_kv = take("I"), take("Q"), take("Q")
    assert version in (2, 3), path
    align = 32
    for _ in range(n_kv):
        n = take("Q")
        key = data[pos:pos + n]
        pos += n
        t = take("I")
        if key == b"general.alignment":
            align = take("I")
        else:
            skip_value(t)
    infos = []
    for _ in range(n_tensors):
        n = take("Q")
        name = data[pos:pos + n].decode()
        pos += n
        nd = take("I")
        for _ in range(nd):
            take("Q")
        take("I")
        infos.append((name, take("Q")))
    start = (pos + align - 1) // align * align
    return {name: start + off for name, off in infos}


def poke(path, name, byte_offset, hex_bytes):
    """Writes the bytes hex_bytes at byte_offset into tensor name's data (in place)."""
    at = tensor_offsets(path)[name] + byte_offset
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(bytes.fromhex(hex_bytes))


def count_colour(path, r, g, b):
    """@return: how many pixels of the PNG have exactly the colour (r, g, b)."""
    return sum(1 for row in png_rows(path)[2] for i in range(0, len(row) // 3) if tuple(row[3 * i:3 * i + 3]) == (r, g, b))


def read_gguf(path):
    """@return: {name: (type, ne, bytes)} of a little-endian GGUF v2/v3 file."""
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("Q")
        s = data[pos:pos + n]
        pos += n
        return s

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(SCALAR[t])

    assert data[:4] == b"GGUF", path
    pos = 4
    version, n_tensors, n_kv = take("I"), take("Q"), take("Q")
    assert version in (2, 3), path
    align = 32
    for _ in range(n_kv):
        key = string()
        v = value(take("I"))
        if key == b"general.alignment":
            align = v
    infos = []
    for _ in range(n_tensors):
        name = string().decode()
        nd = take("I")
        ne = [take("Q") for _ in range(nd)]
        infos.append((name, ne, take("I"), take("Q")))
    start = (pos + align - 1) // align * align
    out = {}
    for name, ne, t, off in infos:
        n = math.prod(ne)
        size = {0: 4, 1: 2}.get(t)
        out[name] = (t, ne, data[start + off:start + off + n * size] if size else None)
    return out


def values(t, raw):
    return np.frombuffer(raw, dtype=np.float32 if t == 0 else np.float16).astype(np.float64)


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def fail(msg):
    print("diff_check: " + msg, file=sys.stderr)
    sys.exit(1)


def numbers(ref_path, other_path, json_path, index=0):
    ref, other = read_gguf(ref_path), read_gguf(other_path)
    doc = json.load(open(json_path))
    entries = {e["name"]: e for e in doc["files"][index]["tensors"]}
    checked, weighted, elems = 0, 0.0, 0
    for name, (ta, ne, ra) in ref.items():
        if name not in other or other[name][1] != ne:
            continue
        tb, _, rb = other[name]
        if ra is None or rb is None:
            fail(f"{name}: give F32/F16 inputs")
        e = entries[name]
        x, y = values(ta, ra), values(tb, rb)
        err = y - x
        n = x.size
        rmse = float(np.sqrt(np.sum(err * err) / n))
        ref_rms = float(np.sqrt(np.sum(x * x) / n))
        sx, sy = float(np.sum(x * x)), float(np.sum(y * y))
        cosine = 1.0 if sx == 0 and sy == 0 else 0.0 if sx == 0 or sy == 0 else float(np.sum(x * y) / np.sqrt(sx * sy))
        rel = rmse / ref_rms if ref_rms > 0 else (0.0 if rmse == 0 else None)
        differ = (x != y) & ~(np.isnan(x) & np.isnan(y))
        rows = differ.reshape(-1, ne[0]).any(axis=1)
        first_row = int(np.argmax(rows)) if rows.any() else None
        want = {"rmse": rmse, "max_abs_err": float(np.max(np.abs(err))), "rel_rmse": rel, "cosine": cosine}
        if e["status"] != "identical":
            want["ref_rms"] = ref_rms
        for k, v in want.items():
            if not close(e[k], v):
                fail(f"{name}: {k} is {e[k]}, numpy says {v}")
        if e["n_diff"] != int(differ.sum()) or e["first_diff_row"] != first_row or e["n_elements"] != n:
            fail(f"{name}: n_diff {e['n_diff']} / first_diff_row {e['first_diff_row']}, numpy says "
                 f"{int(differ.sum())} / {first_row}")
        if (e["status"] == "identical") != (ta == tb and ra == rb):
            fail(f"{name}: status {e['status']} but bytes {'equal' if ra == rb else 'differ'}")
        checked += 1
        elems += n
        weighted += n * (rel if rel is not None else float("inf"))
    total = doc["files"][index]["summary"]["rel_rmse_weighted"]
    if checked == 0 or not close(total, weighted / elems):
        fail(f"weighted relative RMSE {total}, numpy says {weighted / max(elems, 1)} ({checked} tensors)")
    print(f"numbers agree with numpy for {checked} tensors")


def manifest(deq_path, manifest_path, name):
    entry = json.load(open(manifest_path))[name]
    deq = read_gguf(deq_path)
    checked = 0
    for tname, info in entry["tensors"].items():
        t, _, raw = deq[tname]
        if t != 0:
            fail(f"{tname}: not F32 in {deq_path}")
        want = info.get("deq_f32_sha256") or (info["sha256"] if info["type"] == "F32" else None)
        if want is None:
            continue   # the MANIFEST holds no reference dequantization of this one
        if hashlib.sha256(raw).hexdigest() != want:
            fail(f"{tname}: dequantized bytes differ from the reference's")
        checked += 1
    if checked == 0:
        fail(f"no tensor of {name} has a reference dequantization")
    print(f"{checked} of {len(entry['tensors'])} tensors dequantized as the reference did")


def make(out, variant):
    rng = np.random.default_rng(7)
    long_t = rng.standard_normal(20000 * 3).astype(np.float32)
    small = rng.standard_normal(32).astype(np.float32)
    tensors = [("long", [20000, 3], long_t), ("small", [8, 4], small),
               ("zeros", [64], np.zeros(64, np.float32))]
    if variant == "base":
        tensors.append(("gone", [16], np.ones(16, np.float32)))
    else:
        long_t = long_t.copy()
        long_t[2 * 20000 + 17000] += 0.5
        tensors = [("long", [20000, 3], long_t), ("small", [4, 8], small),
                   ("zeros", [64], np.zeros(64, np.float32)), ("new", [16], np.ones(16, np.float32))]

    w = Writer()
    w.header(len(tensors), 1)
    w.kv("general.architecture", STR, "t")
    off, blobs = 0, []
    for name, ne, arr in tensors:
        w.tensor_info(name, ne, 0, off)
        blob = arr.tobytes()
        blobs.append(blob + b"\0" * ((-len(blob)) % 32))
        off += len(blobs[-1])
    w.pad(32)
    open(out, "wb").write(w.buf + b"".join(blobs))


def png_rows(path):
    """@return: (width, height, rows) of an 8-bit RGB(A) PNG, each row RGB bytes."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack_from(">I4s", data, pos)
        body = data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) != struct.unpack_from(">I", data, pos + 8 + n)[0]:
            fail(f"bad CRC in chunk {kind}")
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype = hdr[:4]
    if depth != 8 or ctype not in (2, 6):
        fail(f"unexpected pixel format (depth {depth}, colour type {ctype})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f in (1, 3, 4):
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up, ul = prev[i], prev[i - bpp] if i >= bpp else 0
                if f == 1:
                    pred = left
                elif f == 3:
                    pred = (left + up) // 2
                else:
                    p = left + up - ul
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                    pred = left if pa <= pb and pa <= pc else up if pb <= pc else ul
                line[i] = (line[i] + pred) & 255
        elif f != 0:
            fail(f"unknown filter {f}")
        rows.append(bytes(line) if bpp == 3 else bytes(c for i, c in enumerate(line) if i % 4 != 3))
        prev = line
    return w, h, rows


def png(path, width, height, panels, frame_x):
    w, h, rows = png_rows(path)
    if (w, h) != (width, height):
        fail(f"size {w}x{h}, expected {width}x{height}")
    column = [tuple(row[frame_x * 3:frame_x * 3 + 3]) for row in rows]
    frame_rows = sum(1 for p in column if p == (64, 64, 64))
    if frame_rows != 2 * panels:
        fail(f"{frame_rows} frame rows in column {frame_x}, expected {2 * panels} ({panels} panels)")
    print(f"PNG {w}x{h} with {panels} panels")


def main(argv):
    global np
    if len(argv) > 1 and argv[1] in ("numbers", "make"):
        import numpy as np
    if len(argv) >= 4 and argv[1] == "numbers":
        numbers(argv[2], argv[3], argv[4], int(argv[5]) if len(argv) > 5 else 0)
    elif len(argv) == 5 and argv[1] == "manifest":
        manifest(argv[2], argv[3], argv[4])
    elif len(argv) == 4 and argv[1] == "make":
        make(argv[2], argv[3])
    elif len(argv) == 7 and argv[1] == "png":
        png(argv[2], *map(int, argv[3:7]))
    elif len(argv) == 6 and argv[1] == "poke":
        poke(argv[2], argv[3], int(argv[4]), argv[5])
    elif len(argv) == 6 and argv[1] == "colour":
        print(count_colour(argv[2], *map(int, argv[3:6])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
