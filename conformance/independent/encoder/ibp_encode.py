"""IBP 1.0-draft encoder written from spec/SPEC.md alone (standard library only).

Section numbers in comments refer to spec/SPEC.md. Wherever the spec leaves the encoder a choice,
or was silent, the code carries an ``ASSUMPTION`` / ``CHOICE`` comment.

API::

    encode(entries, word_bits=32, align=1, threshold=0.9, groups=1, rows_per_chunk=1024,
           group_assign="round_robin", mask_fn=None) -> bytes

``entries`` is a list of ``(name, dtype_name, shape, row_bytes, data_bytes)``.

``word_bits``, ``align`` and ``groups`` may each be a single value or a list/tuple; a list is cycled
over the chunks of the file (chunk k of the file uses element ``k % len``), so one file can mix word
widths, alignments and group counts between chunks (5.1 makes them per-chunk fields).

``threshold`` is a fraction in (0, 1]: within one group of one chunk, bit ``b`` of word position
``j`` is invariant (set in ``Mask[g][j]``) when at least ``ceil(threshold * rows_in_group)`` of the
group's rows agree on its value; ``Bitval`` takes that value (the majority value).
"""

import math
import struct
import zlib

# 2.2 dtype codes and element sizes.
DTYPES = {
    "bool": (1, 1), "u8": (2, 1), "i8": (3, 1), "u16": (4, 2), "i16": (5, 2),
    "u32": (6, 4), "i32": (7, 4), "i64": (8, 8), "f16": (9, 2), "bf16": (10, 2),
    "f32": (11, 4), "f64": (12, 8), "f8_e4m3": (13, 1), "f8_e5m2": (14, 1), "u64": (15, 8),
}

MAGIC = b"\x89IBP\r\n\x1a\n"          # 4
CHUNK_MAGIC = b"IBPC"                  # 5.1
END_MAGIC = b"IBPEND\r\n"              # 8

# 10. Limits
MAX_ENTRIES = 65536
MAX_ROW_BYTES = 1 << 24
MAX_CHUNK_ROWS = 1 << 20
MAX_CHUNK_DECODED = 1 << 32
MAX_GROUPS = 256
MAX_RANK = 8
MAX_NAME = 1024


class EncodeError(ValueError):
    pass


def crc32(*parts):
    """1.7: CRC-32/ISO-HDLC (zlib's crc32), over the concatenation of parts."""
    c = 0
    for p in parts:
        c = zlib.crc32(p, c)
    return c & 0xFFFFFFFF


def align_up(x, a):
    """1.3"""
    return (x + a - 1) // a * a


def ceil_div(x, y):
    """1.3"""
    return (x + y - 1) // y


def _pick(value, k):
    if isinstance(value, (list, tuple)):
        return value[k % len(value)]
    return value


class _BitWriter:
    """6.2: stream bit k is bit (k mod 8) of byte k div 8 (LSB first)."""

    def __init__(self):
        self.out = bytearray()
        self.cur = 0
        self.nbits = 0

    def add(self, value, width):
        if width == 0:
            return
        self.cur |= value << self.nbits
        self.nbits += width
        while self.nbits >= 64:
            self.out += (self.cur & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")
            self.cur >>= 64
            self.nbits -= 64

    def finish(self):
        # trailing stream bits up to the byte boundary are zero padding (6.2, 1.5)
        nbytes = ceil_div(self.nbits, 8)
        self.out += self.cur.to_bytes(nbytes, "little") if nbytes else b""
        return bytes(self.out)


def _row_words(row, row_bytes, wb, n):
    """2.4: n little-endian words of wb bytes; a partial last word has zero high bytes."""
    if row_bytes % wb == 0:
        fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[wb]
        return list(struct.unpack("<%d%s" % (n, fmt), row))
    return [int.from_bytes(row[j * wb:(j + 1) * wb], "little") for j in range(n)]


def _free_runs(mask, W):
    """Runs of zero bits of mask (within W bits): list of (shift, run_mask, out_pos)."""
    runs = []
    out = 0
    b = 0
    while b < W:
        if (mask >> b) & 1:
            b += 1
            continue
        s = b
        while b < W and not (mask >> b) & 1:
            b += 1
        ln = b - s
        runs.append((s, (1 << ln) - 1, out))
        out += ln
    return runs


def threshold_masks(group_rows, row_bytes, W, n, threshold):
    """CHOICE (the spec leaves mask selection to the encoder): the threshold rule.

    group_rows: list of row byte strings of one group. Returns (masks, bitvals), each n words.
    Bit counts are taken per byte lane with strided slices, so the cost is mostly C code.
    """
    wb = W // 8
    nrows = len(group_rows)
    masks = [0] * n
    bitvals = [0] * n
    if nrows == 0:
        # ASSUMPTION (spec silent on groups no row uses): Mask 0, Bitval 0 (2.6 holds)
        return masks, bitvals
    need = max(1, math.ceil(threshold * nrows - 1e-9))   # ceil(threshold * rows), float-safe
    blob = b"".join(group_rows)
    bit_tables = [bytes(((v >> b) & 1) for v in range(256)) for b in range(8)]
    for j in range(n):
        m = 0
        bv = 0
        for k in range(wb):
            lane = j * wb + k
            if lane < row_bytes:
                col = blob[lane::row_bytes]
                for b in range(8):
                    ones = col.translate(bit_tables[b]).count(1)
                    zeros = nrows - ones
                    bit = 1 << (8 * k + b)
                    # majority value; a tie goes to 0
                    if ones > zeros:
                        if ones >= need:
                            m |= bit
                            bv |= bit
                    elif zeros >= need:
                        m |= bit
            else:
                # 2.4: missing high bytes of a partial last word are zero in every row.
                # ASSUMPTION (spec silent on Mask/Bitval bits above the row's bytes): mark them
                # invariant with Bitval 0, so they cost no field bits; every row matches them.
                m |= 0xFF << (8 * k)
        masks[j] = m
        bitvals[j] = bv
    return masks, bitvals


def encode_chunk(offset, rows, row_bytes, W, A, G, group_ids=None, masks=None, bitvals=None,
                 threshold=0.9, stats=None):
    """Encode one chunk (section 5) starting at file offset `offset`. Returns the chunk bytes.

    rows: list of row byte strings (each row_bytes long). If G >= 1 and masks/bitvals are None they
    are chosen by threshold_masks per group. group_ids: one int < G per row (G > 1).
    """
    if W not in (8, 16, 32, 64):
        raise EncodeError("word_bits must be 8, 16, 32 or 64")
    if A not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise EncodeError("align must be a power of two 1..128")
    if not 0 <= G <= MAX_GROUPS:
        raise EncodeError("group count out of range")
    row_count = len(rows)
    if not 1 <= row_count <= MAX_CHUNK_ROWS:
        raise EncodeError("chunk row count out of range")
    if row_count * row_bytes > MAX_CHUNK_DECODED:
        raise EncodeError("chunk decoded size over 2^32")
    wb = W // 8
    n = ceil_div(row_bytes, wb)                # 2.4 / 5.1 words_per_row
    align_log2 = A.bit_length() - 1
    raw_padded = align_up(row_bytes, A)        # 6
    raw_pad = bytes(raw_padded - row_bytes)

    if 2 * G * n * wb + (row_count if G > 1 else 0) + row_count > 0xFFFFFFFF:
        # ASSUMPTION (spec silent): meta_len is a u32 (5.1), yet section 10 allows G = 256 with
        # row_bytes = 2^24, i.e. 2*G*n*(W/8) >= 2^33. Such a chunk cannot be written; use fewer groups.
        raise EncodeError("chunk metadata would not fit meta_len (u32); use fewer groups")
    if G > 1:
        if group_ids is None or len(group_ids) != row_count:
            raise EncodeError("group ids required for G > 1")
        if any(not 0 <= gid < G for gid in group_ids):
            raise EncodeError("group id out of range")
    elif G == 1:
        group_ids = [0] * row_count

    if G >= 1 and masks is None:
        masks, bitvals = [], []
        for g in range(G):
            grows = [rows[i] for i in range(row_count) if group_ids[i] == g]
            m, b = threshold_masks(grows, row_bytes, W, n, threshold)
            masks.append(m)
            bitvals.append(b)
    if G == 0:
        # 5.5 raw chunk. ASSUMPTION: word_bits and words_per_row are still written and still obey
        # 5.1's table (W in 8/16/32/64, n = ceil_div(row_bytes, W/8)) though no word is coded.
        masks, bitvals = [], []
    for g in range(G):
        for j in range(n):
            if bitvals[g][j] & ~masks[g][j]:
                raise EncodeError("Bitval outside Mask")      # 2.6

    # per group, per word: free-bit count and pext runs
    free = [[W - bin(masks[g][j]).count("1") for j in range(n)] for g in range(G)]
    runs = [[_free_runs(masks[g][j], W) for j in range(n)] for g in range(G)]

    records = []
    for i, row in enumerate(rows):
        if len(row) != row_bytes:
            raise EncodeError("row of wrong length")
        rec = None
        if G >= 1:
            g = group_ids[i]
            M, B, Fg, Rg = masks[g], bitvals[g], free[g], runs[g]
            words = _row_words(row, row_bytes, wb, n)
            # 6.3: P[j] = 1 exactly when word & Mask == Bitval
            P = [(w & M[j]) == B[j] for j, w in enumerate(words)]
            T = n + sum(Fg[j] if P[j] else W for j in range(n))
            L = align_up(ceil_div(T, 8), A)       # 6.2
            if L < raw_padded:                    # 6.3: otherwise MUST be raw
                bw = _BitWriter()
                pbits = 0
                for j in range(n):
                    if P[j]:
                        pbits |= 1 << j
                bw.add(pbits, n)
                for j, w in enumerate(words):
                    if P[j]:
                        field = 0
                        for (s, rm, o) in Rg[j]:     # pext(w, ~Mask)
                            field |= ((w >> s) & rm) << o
                        bw.add(field, Fg[j])
                    else:
                        bw.add(w, W)
                body = bw.finish()
                assert len(body) == ceil_div(T, 8)
                rec = body + bytes(L - len(body))    # 6.2 padding to align_up(.., A)
        if rec is None:
            rec = row + raw_pad                      # 6.1 raw row
            if stats is not None:
                stats["raw_rows"] = stats.get("raw_rows", 0) + 1
        elif stats is not None:
            stats["coded_rows"] = stats.get("coded_rows", 0) + 1
            if row_bytes % wb:
                stats["coded_partial_rows"] = stats.get("coded_partial_rows", 0) + 1
        records.append(rec)

    # 5.3 row index: record_len(i) = (length_base + row_lengths[i]) * A
    units = [len(r) // A for r in records]
    # CHOICE: length_base = smallest record length in units, length_bytes the smallest of 1/2/4
    # that holds the largest difference.
    length_base = min(units)
    rel = [u - length_base for u in units]
    mx = max(rel)
    if mx < 1 << 8:
        length_bytes = 1
    elif mx < 1 << 16:
        length_bytes = 2
    else:
        length_bytes = 4
    lfmt = {1: "B", 2: "H", 4: "I"}[length_bytes]
    if stats is not None:
        stats.setdefault("length_bytes", set()).add(length_bytes)
        stats.setdefault("chunks", []).append((W, A, G))

    wfmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[wb]
    meta = bytearray()
    if G:
        meta += struct.pack("<%d%s" % (G * n, wfmt), *[masks[g][j] for g in range(G) for j in range(n)])
        meta += struct.pack("<%d%s" % (G * n, wfmt), *[bitvals[g][j] for g in range(G) for j in range(n)])
    if G > 1:
        meta += bytes(group_ids)
    meta += struct.pack("<%d%s" % (row_count, lfmt), *rel)
    meta_len = len(meta)
    assert meta_len == 2 * G * n * wb + (row_count if G > 1 else 0) + row_count * length_bytes

    payload = b"".join(records)
    payload_len = len(payload)
    p = align_up(offset + 48 + meta_len, A)          # 5.4
    padding = bytes(p - (offset + 48 + meta_len))
    payload_crc = crc32(payload)
    hdr = struct.pack("<4sBBBBHHIIIQIII", CHUNK_MAGIC, W, align_log2, length_bytes, 0, G, 0,
                      row_count, n, length_base, payload_len, meta_len, payload_crc, 0)
    assert len(hdr) == 44
    meta_crc = crc32(hdr, meta, padding)             # 5.1 / 9.1
    return hdr + struct.pack("<I", meta_crc) + bytes(meta) + padding + payload


def _assign_groups(rows, G, how):
    if G <= 1:
        return None
    if how == "round_robin":
        return [i % G for i in range(len(rows))]
    if how == "first_byte":
        return [r[0] % G for r in rows]
    if callable(how):
        return [how(i, r) % G for i, r in enumerate(rows)]
    raise EncodeError("unknown group assignment")


def encode(entries, word_bits=32, align=1, threshold=0.9, groups=1, rows_per_chunk=1024,
           group_assign="round_robin", mask_fn=None, minor_version=0, stats=None):
    """Encode entries into one IBP file. See the module docstring.

    mask_fn (optional): callable(group_rows, row_bytes, W, n) -> (masks, bitvals) replacing the
    threshold rule (used by the checker to rebuild spec/example.md byte for byte).
    stats (optional dict): filled with coded_rows, raw_rows, length_bytes used, chunks (W, A, G).
    """
    if len(entries) > MAX_ENTRIES:
        raise EncodeError("too many entries")
    names = set()
    out = bytearray()
    # 4. Header
    hdr = MAGIC + struct.pack("<HHII", 1, minor_version, 0, 0) + bytes(8)
    out += hdr + struct.pack("<I", crc32(hdr))
    assert len(out) == 32

    chunk_index = 0
    dir_records = []
    for (name, dtype_name, shape, row_bytes, data) in entries:
        if dtype_name not in DTYPES:
            raise EncodeError("unknown dtype %r" % dtype_name)
        code, size = DTYPES[dtype_name]
        nb = name.encode("utf-8")
        if not 1 <= len(nb) <= MAX_NAME or nb in names:     # 7.1
            raise EncodeError("bad or duplicate name %r" % name)
        names.add(nb)
        shape = [int(d) for d in shape]
        if len(shape) > MAX_RANK:
            raise EncodeError("rank over 8")
        elem = 1
        for d in shape:
            if not 0 <= d < 1 << 64:
                raise EncodeError("dimension out of range")
            elem *= d
            if elem >= 1 << 64:
                raise EncodeError("element count overflows 64 bits")   # 2.3
        data = bytes(data)
        if len(data) != elem * size:
            raise EncodeError("data length %d != element_count * dtype_size" % len(data))
        if row_bytes < 1 or row_bytes % size or row_bytes > MAX_ROW_BYTES:   # 2.3, 10
            raise EncodeError("bad row_bytes")
        if len(data) % row_bytes:
            raise EncodeError("data not a whole number of rows")
        row_count = len(data) // row_bytes          # 2.3 (0 when element_count = 0)

        rows = [data[i * row_bytes:(i + 1) * row_bytes] for i in range(row_count)]
        refs = []
        # 10: rows per chunk <= 2^20, decoded bytes per chunk <= 2^32
        per = max(1, min(rows_per_chunk, MAX_CHUNK_ROWS, MAX_CHUNK_DECODED // row_bytes))
        for start in range(0, row_count, per):
            crow = rows[start:start + per]
            W = _pick(word_bits, chunk_index)
            A = _pick(align, chunk_index)
            G = _pick(groups, chunk_index)
            gids = _assign_groups(crow, G, group_assign)
            masks = bitvals = None
            if G >= 1 and mask_fn is not None:
                masks, bitvals = [], []
                n = ceil_div(row_bytes, W // 8)
                for g in range(G):
                    grows = [r for k, r in enumerate(crow) if (gids[k] if gids else 0) == g]
                    m, b = mask_fn(grows, row_bytes, W, n)
                    masks.append(m)
                    bitvals.append(b)
            off = len(out)
            chunk = encode_chunk(off, crow, row_bytes, W, A, G, gids, masks, bitvals, threshold,
                                 stats)
            out += chunk          # 3.1: chunks back to back from offset 32, in directory order
            refs.append((off, len(chunk), len(crow)))
            chunk_index += 1

        # 7. Entry record
        rec = bytearray(struct.pack("<HBBIQQ", len(nb), code, len(shape), len(refs), row_count,
                                    row_bytes))
        rec += b"".join(struct.pack("<Q", d) for d in shape)
        rec += nb
        rec += bytes(align_up(len(rec), 8) - len(rec))   # zero padding to a multiple of 8
        for (off, blen, rc) in refs:
            rec += struct.pack("<QQII", off, blen, rc, 0)
        dir_records.append(bytes(rec))

    directory = struct.pack("<II", len(entries), 0) + b"".join(dir_records)
    directory_offset = len(out)      # 3.1: right after the last chunk (32 if none)
    out += directory
    # 8. Footer
    foot = struct.pack("<QQI", directory_offset, len(directory), crc32(directory))
    out += foot + struct.pack("<I", crc32(foot)) + END_MAGIC
    return bytes(out)
