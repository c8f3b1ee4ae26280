"""gguf_writer.py - the one GGUF writer of the Python test helpers (tiny_gguf.py,
gguf_edit.py, ggml_layout.py, diff_check.py import it): a byte buffer with the
header, key/value pairs, tensor infos and alignment padding, in either byte
order and for versions 1 to 3. Written from the GGUF layout; standard library
only.

    w = Writer(big=False, version=3)
    w.header(n_tensors, n_kv)
    w.kv("general.architecture", STR, "llama")
    w.tensor_info("a.weight", [8], 0, 0)       # name, shape, ggml type, offset
    w.pad(32)                                    # zeros up to the alignment
    open(path, "wb").write(w.buf + data)
"""
import struct

# Metadata value types.
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
TYPE_NAMES = ["UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32",
              "BOOL", "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"]
SCALAR_FMT = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f",
              BOOL: "?", U64: "Q", I64: "q", F64: "d"}


class Writer:
    """A GGUF file being built in buf (a bytearray). Version 1 writes counts,
    lengths and dimensions as 32-bit, later versions as 64-bit."""

    def __init__(self, big=False, version=3):
        self.e = ">" if big else "<"
        self.version = version
        self.buf = bytearray()

    def put(self, fmt, *v):
        """Appends v packed with struct format fmt, in the file's byte order."""
        self.buf += struct.pack(self.e + fmt, *v)

    def count(self, n):
        """A count or length (u32 in version 1, else u64)."""
        self.put("I" if self.version == 1 else "Q", n)

    def string(self, s):
        """A GGUF string: length, then the bytes (str is encoded as UTF-8)."""
        b = s if isinstance(s, bytes) else s.encode("utf-8")
        self.count(len(b))
        self.buf += b

    def value(self, t, v):
        """A value of type t; an array is (elem_type, [items]), nesting allowed."""
        if t == STR:
            self.string(v)
        elif t == ARR:
            elem, items = v
            self.put("I", elem)
            self.count(len(items))
            for item in items:
                self.value(elem, item)
        else:
            self.put(SCALAR_FMT[t], v)

    def header(self, n_tensors, n_kv):
        """The magic, the version and the two counts."""
        self.buf += b"GGUF"
        self.put("I", self.version)
        self.count(n_tensors)
        self.count(n_kv)

    def kv(self, key, t, v):
        """One key/value pair: v is a value of type t (see value)."""
        self.string(key)
        self.put("I", t)
        self.value(t, v)

    def kv_raw(self, key, t, raw):
        """One key/value pair whose value is already encoded (raw bytes)."""
        self.string(key)
        self.put("I", t)
        self.buf += raw

    def tensor_info(self, name, ne, ggml_type, offset):
        """One tensor info: name, dimensions, ggml type, offset in the data section."""
        self.string(name)
        self.put("I", len(ne))
        for d in ne:
            self.count(d)
        self.put("I", ggml_type)
        self.put("Q", offset)

    def pad(self, align):
        """Zeros up to the next multiple of align."""
        self.buf += bytes(-len(self.buf) % align)
