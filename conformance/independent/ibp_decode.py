#!/usr/bin/env python3
"""Independent IBP 1.0-draft decoder, written from spec/SPEC.md alone.

Python 3.11, standard library only. It validates a whole container in the order
of SPEC section 11.1 and either returns every entry's decoded bytes or raises
IBPError carrying the spec's error code (section 11.2).

Section numbers in comments ("§5.3") refer to spec/SPEC.md. Where the first
draft of the spec was silent or ambiguous, the spec now states the rule (see
README.md) and the comment cites it.

Command line (also the reference runner's --external protocol, conformance/README.md):
    ibp_decode.py FILE [OUTDIR]
accept: exit 0 (and write OUTDIR/<k>.bin per entry when OUTDIR is given);
reject: exit 1, last line of stdout starts with the error code.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import zlib
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------
# §1 Conventions
# ---------------------------------------------------------------------------

U64_LIMIT = 1 << 64


class IBPError(Exception):
    """A rejection; `code` is one of the error codes of §11.2."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code} {detail}".strip())
        self.code = code
        self.detail = detail


def fail(code: str, detail: str = ""):
    raise IBPError(code, detail)


def checked(value: int, code: str, what: str) -> int:
    """§1.6: a sum or product that overflows 64 bits is an out-of-range value,
    reported with the code of the check being made."""
    if value >= U64_LIMIT:
        fail(code, f"{what}: 64-bit overflow")
    return value


def align_up(x: int, a: int) -> int:  # §1.3
    return (x + a - 1) // a * a


def ceil_div(x: int, y: int) -> int:  # §1.3
    return (x + y - 1) // y


def popcount(x: int) -> int:  # §1.3
    return bin(x).count("1")


def crc32(*parts: bytes) -> int:  # §1.7: CRC-32/ISO-HDLC (zlib)
    c = 0
    for p in parts:
        c = zlib.crc32(p, c)
    return c & 0xFFFFFFFF


assert crc32(b"123456789") == 0xCBF43926  # §1.7 check value


def u8(b, o):
    return b[o]


def u16(b, o):  # §1.2: little-endian
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


# ---------------------------------------------------------------------------
# §2 Data model
# ---------------------------------------------------------------------------

# §2.2 dtype code -> (name, element size in bytes)
DTYPES = {
    1: ("bool", 1), 2: ("u8", 1), 3: ("i8", 1), 4: ("u16", 2), 5: ("i16", 2),
    6: ("u32", 4), 7: ("i32", 4), 8: ("i64", 8), 9: ("f16", 2), 10: ("bf16", 2),
    11: ("f32", 4), 12: ("f64", 8), 13: ("f8_e4m3", 1), 14: ("f8_e5m2", 1),
    15: ("u64", 8),
}

# ---------------------------------------------------------------------------
# §10 Limits
# ---------------------------------------------------------------------------

MAX_ENTRIES = 65536
MAX_ROW_BYTES = 1 << 24
MAX_CHUNK_ROWS = 1 << 20
MAX_CHUNK_DECODED = 1 << 32
MAX_GROUPS = 256
MAX_RANK = 8
MAX_NAME_LEN = 1024

# ---------------------------------------------------------------------------
# §4 Header, §8 Footer, §5.1 Chunk header: constants
# ---------------------------------------------------------------------------

HEADER_LEN = 32
FOOTER_LEN = 32
MAGIC = bytes([0x89, 0x49, 0x42, 0x50, 0x0D, 0x0A, 0x1A, 0x0A])
END_MAGIC = b"IBPEND\r\n"
CHUNK_MAGIC = b"IBPC"
CHUNK_HEADER_LEN = 48
IMPLEMENTED_REQUIRED_FEATURES = 0  # §4.2: 1.0 defines none


@dataclass
class ChunkRef:  # §7 chunk reference (24 bytes)
    offset: int
    byte_len: int
    row_count: int


@dataclass
class Entry:  # §2.1 / §7 entry record
    name: str
    dtype_code: int
    dtype: str
    dtype_size: int
    shape: list
    row_count: int
    row_bytes: int
    chunks: list = field(default_factory=list)
    data: bytes = b""


# ---------------------------------------------------------------------------
# §11.1 step 2 / §4: Header
# ---------------------------------------------------------------------------

def check_header(f: bytes) -> None:
    if f[0:8] != MAGIC:
        fail("E_MAGIC", "header magic")
    if u16(f, 8) != 1:  # §4.1 (minor_version: any value is read)
        fail("E_VERSION", f"major_version {u16(f, 8)}")
    if crc32(f[0:28]) != u32(f, 28):
        fail("E_HEADER_CRC", "header_crc")
    req = u32(f, 12)
    if req & ~IMPLEMENTED_REQUIRED_FEATURES:  # §4.2
        fail("E_REQUIRED_FEATURE", f"required_features {req:#x}")
    # §4.3 optional_features (offset 16): unknown bits are ignored.
    if any(f[20:28]):  # §1.4 reserved
        fail("E_RESERVED", "header reserved bytes 20..27")


# ---------------------------------------------------------------------------
# §11.1 step 3 / §8: Footer
# ---------------------------------------------------------------------------

def check_footer(f: bytes) -> tuple[int, int, int]:
    flen = len(f)
    foot = f[flen - FOOTER_LEN:]
    if foot[24:32] != END_MAGIC:  # §8.2
        fail("E_TRUNCATED", "file does not end with IBPEND\\r\\n")
    if crc32(foot[0:20]) != u32(foot, 20):
        fail("E_FOOTER_CRC", "footer_crc")
    dir_off, dir_len, dir_crc = u64(foot, 0), u64(foot, 8), u32(foot, 16)
    # §8.1 (with §1.6 overflow check)
    end = checked(checked(dir_off + dir_len, "E_LAYOUT", "directory end") + FOOTER_LEN,
                  "E_LAYOUT", "directory end")
    if end != flen:
        fail("E_LAYOUT", "directory_offset + directory_len + 32 != file length")
    if dir_off < HEADER_LEN:
        fail("E_LAYOUT", "directory_offset < 32")
    return dir_off, dir_len, dir_crc


# ---------------------------------------------------------------------------
# §11.1 step 4 / §7: Directory (and §2.3, §3.1)
# ---------------------------------------------------------------------------

def parse_directory(d: bytes, dir_crc: int) -> list[Entry]:
    if crc32(d) != dir_crc:  # §9.2
        fail("E_DIRECTORY_CRC", "directory_crc")
    # the 8-byte preamble fits (§11.1 step 4)
    if len(d) < 8:
        fail("E_DIRECTORY", "directory shorter than its 8-byte preamble")
    entry_count = u32(d, 0)
    if u32(d, 4) != 0:
        fail("E_RESERVED", "directory preamble reserved field")

    entries: list[Entry] = []
    names: set[bytes] = set()
    pos = 8
    # Records are parsed one by one; the loop stops at the first that does not
    # fit, so a huge entry_count cannot make us allocate (§10.1). The entry
    # limit itself is checked after the fill rule, as 11.1 orders.
    for idx in range(entry_count):
        start = pos
        # fixed fields fit (24 bytes)
        if len(d) - pos < 24:
            fail("E_DIRECTORY", f"entry {idx}: fixed fields run past the directory")
        name_len = u16(d, pos)
        dtype_code = u8(d, pos + 2)
        rank = u8(d, pos + 3)
        chunk_count = u32(d, pos + 4)
        row_count = u64(d, pos + 8)
        row_bytes = u64(d, pos + 16)
        # dtype (§2.2)
        if dtype_code not in DTYPES:
            fail("E_DTYPE", f"entry {idx}: dtype code {dtype_code}")
        dtype_name, dsize = DTYPES[dtype_code]
        # rank (§10)
        if rank > MAX_RANK:
            fail("E_LIMIT", f"entry {idx}: rank {rank}")
        # shape bytes, then name bytes, fit (§11.1 step 4.4)
        shape_off = pos + 24
        name_off = shape_off + 8 * rank
        if len(d) < name_off + name_len:
            fail("E_DIRECTORY", f"entry {idx}: shape/name run past the directory")
        # name (§7.1, §11.1 step 4.5): length, then UTF-8, then uniqueness
        if name_len == 0 or name_len > MAX_NAME_LEN:
            fail("E_NAME", f"entry {idx}: name_len {name_len}")
        raw_name = bytes(d[name_off:name_off + name_len])
        try:
            name = raw_name.decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            fail("E_NAME", f"entry {idx}: name is not UTF-8")
        # uniqueness is byte equality, no Unicode normalisation (§7.1)
        if raw_name in names:
            fail("E_NAME", f"entry {idx}: duplicate name {name!r}")
        names.add(raw_name)
        shape = [u64(d, shape_off + 8 * k) for k in range(rank)]

        # shape and row rules §2.3 (E_SHAPE), overflow per §1.6
        element_count = 1
        for dim in shape:  # left-to-right checked product
            element_count = checked(element_count * dim, "E_SHAPE", "element_count")
        total = checked(element_count * dsize, "E_SHAPE", "element_count * dtype_size")
        if row_bytes < 1 or row_bytes % dsize != 0:
            fail("E_SHAPE", f"entry {idx}: row_bytes {row_bytes}")
        if checked(row_count * row_bytes, "E_SHAPE", "row_count * row_bytes") != total:
            fail("E_SHAPE", f"entry {idx}: row_count * row_bytes != element_count * dtype_size")
        if element_count == 0 and row_count != 0:  # implied by the line above; kept for clarity
            fail("E_SHAPE", f"entry {idx}: empty entry with rows")
        # row_bytes limit (§10)
        if row_bytes > MAX_ROW_BYTES:
            fail("E_LIMIT", f"entry {idx}: row_bytes {row_bytes}")
        # padding to a multiple of 8 bytes from the record's start
        name_end = name_off + name_len
        pad_end = start + align_up(name_end - start, 8)
        # padding fits (E_DIRECTORY), then is zero (§11.1 step 4.7)
        if len(d) < pad_end:
            fail("E_DIRECTORY", f"entry {idx}: padding runs past the directory")
        if any(d[name_end:pad_end]):
            fail("E_PADDING", f"entry {idx}: non-zero record padding")
        pos = pad_end
        # chunk references fit
        if (len(d) - pos) // 24 < chunk_count:
            fail("E_DIRECTORY", f"entry {idx}: chunk references run past the directory")
        refs = []
        for k in range(chunk_count):
            o = pos + 24 * k
            refs.append((u64(d, o), u64(d, o + 8), u32(d, o + 16), u32(d, o + 20)))
        # each chunk reference in order: reserved field, row_count >= 1 (E_LAYOUT),
        # row_count <= 2^20 (E_LIMIT); then their sum equals the entry's row_count
        # (§7, §7.1, §11.1 steps 4.9-4.10)
        rows_sum = 0
        for k, r in enumerate(refs):
            if r[3] != 0:
                fail("E_RESERVED", f"entry {idx} chunk {k}: reference reserved field")
            if r[2] == 0:
                fail("E_LAYOUT", f"entry {idx} chunk {k}: row_count 0")
            if r[2] > MAX_CHUNK_ROWS:
                fail("E_LIMIT", f"entry {idx} chunk {k}: row_count {r[2]}")
            rows_sum += r[2]
        if rows_sum != row_count:
            fail("E_LAYOUT", f"entry {idx}: chunk row counts sum to {rows_sum}, not {row_count}")
        pos += 24 * chunk_count
        entries.append(Entry(name, dtype_code, dtype_name, dsize, shape, row_count, row_bytes,
                             [ChunkRef(r[0], r[1], r[2]) for r in refs]))

    # §7.1 fill rule
    if pos != len(d):
        fail("E_DIRECTORY", "entry records do not fill directory_len")
    # §10 entries per file
    if entry_count > MAX_ENTRIES:
        fail("E_LIMIT", f"entry_count {entry_count}")
    return entries


def check_layout(entries: list[Entry], dir_off: int) -> None:
    """§3.1: no holes; chunks in directory order; directory right after."""
    expected = HEADER_LEN
    for e in entries:
        for k, ref in enumerate(e.chunks):
            if ref.offset != expected:
                fail("E_LAYOUT", f"entry {e.name!r} chunk {k}: offset {ref.offset}, expected {expected}")
            expected = checked(ref.offset + ref.byte_len, "E_LAYOUT", "chunk end")
    if expected != dir_off:
        fail("E_LAYOUT", f"directory at {dir_off}, chunks end at {expected}")


# ---------------------------------------------------------------------------
# §11.1 step 5 / §5, §6: Chunks and rows
# ---------------------------------------------------------------------------

def pdep(field_value: int, free_positions: list[int]) -> int:
    """§6.2: field bit b goes to the b-th lowest zero bit of the Mask."""
    out = 0
    for b, pos in enumerate(free_positions):
        if (field_value >> b) & 1:
            out |= 1 << pos
    return out


def decode_chunk(f: bytes, e: Entry, ref: ChunkRef, where: str) -> bytes:
    c = ref.offset
    row_bytes = e.row_bytes
    # 48 header bytes present within the chunk (§5.1)
    if ref.byte_len < CHUNK_HEADER_LEN:
        fail("E_LAYOUT", f"{where}: byte_len {ref.byte_len} < 48")
    h = f[c:c + CHUNK_HEADER_LEN]
    if h[0:4] != CHUNK_MAGIC:
        fail("E_CHUNK_MAGIC", where)
    # reserved fields: byte 7, bytes 10..11, bytes 40..43 (§1.4)
    if h[7] != 0 or u16(h, 10) != 0 or u32(h, 40) != 0:
        fail("E_RESERVED", f"{where}: chunk header reserved field")
    W = h[4]
    align_log2 = h[5]
    length_bytes = h[6]
    G = u16(h, 8)
    row_count = u32(h, 12)
    n = u32(h, 16)
    length_base = u32(h, 20)
    payload_len = u64(h, 24)
    meta_len = u32(h, 32)
    payload_crc = u32(h, 36)
    meta_crc = u32(h, 44)
    # field rules of §5.1 (in table order)
    if W not in (8, 16, 32, 64):
        fail("E_CHUNK_HEADER", f"{where}: word_bits {W}")
    if align_log2 > 7:
        fail("E_CHUNK_HEADER", f"{where}: align_log2 {align_log2}")
    if length_bytes not in (1, 2, 4):
        fail("E_CHUNK_HEADER", f"{where}: length_bytes {length_bytes}")
    if G > MAX_GROUPS:
        fail("E_CHUNK_HEADER", f"{where}: group_count {G}")
    if row_count < 1 or row_count != ref.row_count:
        fail("E_CHUNK_HEADER", f"{where}: row_count {row_count}, directory says {ref.row_count}")
    wb = W // 8
    if n != ceil_div(row_bytes, wb):
        fail("E_CHUNK_HEADER", f"{where}: words_per_row {n}")
    A = 1 << align_log2
    # decoded-size limit (§10)
    if row_count * row_bytes > MAX_CHUNK_DECODED:
        fail("E_LIMIT", f"{where}: decoded size {row_count * row_bytes}")
    # meta_len formula (§5.2): E_LAYOUT, after the decoded-size limit (§5.1, §11.1 step 5)
    want_meta = 2 * G * n * wb + (row_count if G > 1 else 0) + row_count * length_bytes
    if meta_len != want_meta:
        fail("E_LAYOUT", f"{where}: meta_len {meta_len}, formula gives {want_meta}")
    # the chunk's extent (§5.4)
    meta_start = c + CHUNK_HEADER_LEN
    meta_end = meta_start + meta_len
    p = align_up(meta_end, A)
    chunk_end = checked(p + payload_len, "E_LAYOUT", "chunk extent")
    if chunk_end != c + ref.byte_len:
        fail("E_LAYOUT", f"{where}: payload ends at {chunk_end}, chunk at {c + ref.byte_len}")
    # From here all of header, metadata, padding and payload lie inside the
    # chunk, which §3.1 placed inside the file.
    meta = f[meta_start:meta_end]
    padding = f[meta_end:p]
    if crc32(h[0:44], meta, padding) != meta_crc:  # §5.1, §9.2
        fail("E_CHUNK_CRC", where)

    # §5.2 metadata
    mask_words = [int.from_bytes(meta[i * wb:(i + 1) * wb], "little") for i in range(G * n)]
    bv_off = G * n * wb
    bitval_words = [int.from_bytes(meta[bv_off + i * wb:bv_off + (i + 1) * wb], "little")
                    for i in range(G * n)]
    full = (1 << W) - 1
    # §2.6 Bitval invariant
    for i in range(G * n):
        if bitval_words[i] & ~mask_words[i] & full:
            fail("E_BITVAL_OUTSIDE_MASK", f"{where}: group {i // n} word {i % n}")
    gid_off = 2 * bv_off
    if G > 1:
        group_ids = meta[gid_off:gid_off + row_count]
        for i, g in enumerate(group_ids):
            if g >= G:
                fail("E_GROUP_ID", f"{where}: row {i} group {g} >= {G}")
        len_off = gid_off + row_count
    else:
        group_ids = None
        len_off = gid_off
    # §5.4 padding before the payload
    if any(padding):
        fail("E_PADDING", f"{where}: non-zero padding before the payload")

    # §5.3 row index: record lengths
    raw_padded = align_up(row_bytes, A)
    record_lens = []
    for i in range(row_count):
        o = len_off + i * length_bytes
        stored = int.from_bytes(meta[o:o + length_bytes], "little")
        L = (length_base + stored) * A
        if L < 1 or L > raw_padded:
            fail("E_ROW_LENGTH", f"{where}: row {i} record length {L}")
        if G == 0 and L != raw_padded:  # §5.5 raw chunk
            fail("E_ROW_LENGTH", f"{where}: raw chunk row {i} record length {L} != {raw_padded}")
        record_lens.append(L)
    if sum(record_lens) != payload_len:
        fail("E_LAYOUT", f"{where}: record lengths sum to {sum(record_lens)}, payload_len {payload_len}")
    payload = f[p:p + payload_len]
    if crc32(payload) != payload_crc:  # §9.2, §9.3 (whole decode: always checked)
        fail("E_PAYLOAD_CRC", where)

    # §6 row records
    # Per (group, word): number of free bits and their positions (for pdep).
    free_count = [W - popcount(m) for m in mask_words]
    free_pos = [[b for b in range(W) if not (m >> b) & 1] for m in mask_words]
    last_word_bytes = row_bytes - (n - 1) * wb  # §2.4 partial last word
    partial = last_word_bytes < wb
    out = bytearray()
    off = 0
    for i in range(row_count):
        L = record_lens[i]
        R = payload[off:off + L]
        off += L
        rw = f"{where} row {i}"
        if L == raw_padded:
            # §6.1 raw row
            if any(R[row_bytes:L]):
                fail("E_PADDING", f"{rw}: raw record padding")
            out += R[0:row_bytes]
            continue
        # §6.2 coded row (L < raw_padded); G >= 1 here (§5.5)
        g = group_ids[i] if G > 1 else 0
        base = g * n
        stream = int.from_bytes(R, "little")  # stream bit k = bit k of this integer
        nbits = 8 * L
        if nbits < n:  # cannot even hold the participation bits
            fail("E_ROW_LENGTH", f"{rw}: record of {L} bytes shorter than {n} participation bits")
        P = stream & ((1 << n) - 1)
        T = n
        for j in range(n):
            T += free_count[base + j] if (P >> j) & 1 else W
        if L != align_up(ceil_div(T, 8), A):
            fail("E_ROW_LENGTH", f"{rw}: record length {L}, contents require {align_up(ceil_div(T, 8), A)}")
        if stream >> T:  # stream bits T .. 8L-1
            fail("E_PADDING", f"{rw}: non-zero padding bits")
        s = n
        words = []
        for j in range(n):
            if (P >> j) & 1:
                F = free_count[base + j]
                fv = (stream >> s) & ((1 << F) - 1)
                word = bitval_words[base + j] | pdep(fv, free_pos[base + j])
            else:
                F = W
                word = (stream >> s) & full
            s += F
            words.append(word)
        if partial and words[-1] >> (8 * last_word_bytes):  # §2.4
            fail("E_PADDING", f"{rw}: partial last word has bits above the row")
        row = bytearray()
        for word in words:
            row += word.to_bytes(wb, "little")
        out += row[0:row_bytes]
    return bytes(out)


# ---------------------------------------------------------------------------
# §11.1: whole-file validation and decode
# ---------------------------------------------------------------------------

def decode_bytes(f: bytes) -> list[Entry]:
    # 1. file length
    if len(f) < HEADER_LEN + FOOTER_LEN:
        fail("E_TRUNCATED", f"file length {len(f)} < 64")
    # 2. header
    check_header(f)
    # 3. footer
    dir_off, dir_len, dir_crc = check_footer(f)
    # 4. directory, then the layout rule §3.1
    entries = parse_directory(f[dir_off:dir_off + dir_len], dir_crc)
    check_layout(entries, dir_off)
    # 5. each chunk in file order (= directory order after §3.1)
    for ei, e in enumerate(entries):
        parts = []
        for k, ref in enumerate(e.chunks):
            parts.append(decode_chunk(f, e, ref, f"entry {ei} ({e.name!r}) chunk {k}"))
        e.data = b"".join(parts)
    return entries


def decode_file(path: str) -> list[Entry]:
    with open(path, "rb") as fh:
        data = fh.read()
    return decode_bytes(data)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Independent IBP decoder (from spec/SPEC.md)")
    ap.add_argument("file")
    ap.add_argument("outdir", nargs="?", help="write entry k's bytes to OUTDIR/<k>.bin")
    args = ap.parse_args(argv)
    try:
        entries = decode_file(args.file)
    except IBPError as err:
        print(f"{err.code} {err.detail}")
        return 1
    for k, e in enumerate(entries):
        print(f"{k}: {e.name} {e.dtype} shape={e.shape} rows={e.row_count} row_bytes={e.row_bytes} "
              f"bytes={len(e.data)} crc32={crc32(e.data):08x}")
        if args.outdir:
            with open(os.path.join(args.outdir, f"{k}.bin"), "wb") as fh:
                fh.write(e.data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
