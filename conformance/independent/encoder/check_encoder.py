#!/usr/bin/env python3
"""Round-trip check of ibp_encode.py against the project's decoders.

Generates a deterministic set of cases (random.Random(SEED)), encodes each with ibp_encode.encode
into a temporary folder and decodes every file with

  1. the reference decoder:  target/release/ibp-conformance decode FILE OUTDIR
  2. the independent Python decoder: python3 conformance/independent/ibp_decode.py FILE OUTDIR

(protocol of conformance/README.md: exit 0 and OUTDIR/k.bin per entry, or non-zero exit and the
error code as the first word of the last stdout line). Every decoded entry must be byte-identical
to the input. It also rebuilds spec/example.md's file byte for byte, checks the worked example of
spec 6.4, and checks that both decoders reject a file with one damaged payload byte (so the harness
cannot pass vacuously).

Usage (from anywhere):
    python3 conformance/independent/encoder/check_encoder.py [-v] [--no-python] [--keep DIR]
"""

import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
import ibp_encode as E  # noqa: E402

SEED = 0x1BB5EED
REF_BIN = os.path.join(ROOT, "target", "release", "ibp-conformance")
PY_DEC = os.path.join(ROOT, "conformance", "independent", "ibp_decode.py")
import random  # noqa: E402

# ---------------------------------------------------------------- data generation

F32_SPECIAL = [0x7FC00001, 0x7F800001, 0xFFC12345, 0x80000000, 0x7F800000, 0xFF800000,
               0x00000001, 0x7F7FFFFF, 0xC7000000]
F16_SPECIAL = [0x7E01, 0x7C01, 0xFE55, 0x8000, 0x7C00, 0xFC00, 0x0001, 0x7BFF]
BF16_SPECIAL = [0x7FC1, 0x7F81, 0xFFA5, 0x8000, 0x7F80, 0xFF80, 0x0001, 0x7F7F]
F64_SPECIAL = [0x7FF8000000000001, 0x7FF0000000000001, 0xFFF0000000000123, 0x8000000000000000,
               0x7FF0000000000000, 0x0000000000000001, 0xC0F0000000000000]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def gen_elem(dtype, rng, outlier):
    """One element's bytes. Normal rows: values with invariant exponent/high bits; outlier rows:
    wild bit patterns, NaN payloads, -0.0, infinities."""
    if dtype == "f32":
        if outlier or rng.random() < 0.01:
            v = rng.choice(F32_SPECIAL) if rng.random() < 0.6 else rng.getrandbits(32)
            return struct.pack("<I", v)
        return struct.pack("<f", rng.uniform(1.0, 1.999))
    if dtype == "f16":
        if outlier or rng.random() < 0.01:
            v = rng.choice(F16_SPECIAL) if rng.random() < 0.6 else rng.getrandbits(16)
            return struct.pack("<H", v)
        return struct.pack("<e", rng.uniform(0.5, 0.999))
    if dtype == "bf16":
        if outlier or rng.random() < 0.01:
            v = rng.choice(BF16_SPECIAL) if rng.random() < 0.6 else rng.getrandbits(16)
            return struct.pack("<H", v)
        return struct.pack("<H", f32_bits(rng.uniform(-0.25, -0.126)) >> 16)
    if dtype == "f64":
        if outlier or rng.random() < 0.01:
            v = rng.choice(F64_SPECIAL) if rng.random() < 0.6 else rng.getrandbits(64)
            return struct.pack("<Q", v)
        return struct.pack("<d", rng.uniform(2.0, 3.999))
    if dtype in ("u8", "f8_e4m3", "f8_e5m2"):
        if outlier:
            return bytes([rng.getrandbits(8)])
        return bytes([0x38 + rng.randrange(4)])
    if dtype == "i8":
        return struct.pack("<b", rng.randrange(-128, 128) if outlier else rng.randrange(0, 8))
    if dtype == "bool":
        return bytes([1 if rng.random() < (0.5 if outlier else 0.05) else 0])
    if dtype in ("u16", "i16"):
        return struct.pack("<H", rng.getrandbits(16) if outlier else 0x1200 + rng.randrange(16))
    if dtype in ("u32", "i32"):
        return struct.pack("<I", rng.getrandbits(32) if outlier else 70000 + rng.randrange(64))
    if dtype in ("i64", "u64"):
        if outlier:
            return struct.pack("<q", rng.randrange(-(1 << 63), 1 << 63))
        return struct.pack("<q", rng.randrange(-50, 1000))
    raise ValueError(dtype)


def gen_data(dtype, n_elems, row_bytes, rng, outlier_frac=0.08, identical=False, random_bits=False):
    size = E.DTYPES[dtype][1]
    per_row = row_bytes // size
    rows = []
    for r in range(n_elems // per_row if per_row else 0):
        if random_bits:
            rows.append(bytes(rng.getrandbits(8) for _ in range(row_bytes)))
            continue
        if identical and rows:
            rows.append(rows[0])
            continue
        out = rng.random() < outlier_frac
        rows.append(b"".join(gen_elem(dtype, rng, out) for _ in range(per_row)))
    return b"".join(rows)


def entry(name, dtype, shape, row_bytes, rng, **kw):
    n = 1
    for d in shape:
        n *= d
    size = E.DTYPES[dtype][1]
    assert row_bytes % size == 0 and (n * size) % row_bytes == 0, (name, shape, row_bytes)
    return (name, dtype, list(shape), row_bytes, gen_data(dtype, n, row_bytes, rng, **kw))


# ---------------------------------------------------------------- cases

ALIGNS = [1, 4, 16, 128]
WIDTHS = [8, 16, 32, 64]


def build_cases():
    rng = random.Random(SEED)
    cases = []  # (label, entries, options)

    # A. row lengths x word widths (u8 rows; partial last words whenever W/8 does not divide rb);
    #    alignment and G rotate so that every (W, A) pair and every G occur.
    k = 0
    for ri, rb in enumerate([1, 7, 8, 31, 32, 33, 257, 300]):
        for wi, W in enumerate(WIDTHS):
            A = ALIGNS[(ri + wi) % 4]
            G = [1, 3, 0][k % 3]
            nrows = [1, 60, 150][k % 3] if rb < 257 else [1, 40, 25][k % 3]
            e = entry("rows", "u8", [nrows, rb], rb, rng)
            cases.append(("A rb=%d W=%d A=%d G=%d rows=%d" % (rb, W, A, G, nrows), [e],
                          dict(word_bits=W, align=A, groups=G, rows_per_chunk=64)))
            k += 1

    # B. dtypes, several chunks per entry, W/A/G cycled per chunk
    dt_rows = [("f32", 33), ("f32", 8), ("f16", 7), ("f16", 16), ("bf16", 4), ("bf16", 150),
               ("f64", 5), ("f64", 1), ("i64", 3), ("u64", 2), ("u8", 31), ("i8", 33),
               ("bool", 32), ("f8_e4m3", 7), ("f8_e5m2", 9), ("u16", 13), ("i16", 8),
               ("u32", 9), ("i32", 1)]
    for i, (dt, elems) in enumerate(dt_rows):
        size = E.DTYPES[dt][1]
        rb = elems * size
        nrows = 97 if rb < 200 else 41
        e = entry("t.%s" % dt, dt, [nrows, elems], rb, rng)
        opts = dict(word_bits=WIDTHS[i % 4:] + WIDTHS[:i % 4], align=ALIGNS[::-1] if i % 2 else ALIGNS,
                    groups=[1, 3, 0], rows_per_chunk=[13, 32, 50][i % 3], threshold=0.9)
        cases.append(("B %s row=%dB rows=%d chunks<=%d" % (dt, rb, nrows, opts["rows_per_chunk"]),
                      [e], opts))

    # C. several entries in one file, including empty and rank-0 / rank-8 ones
    ents = [
        entry("layer0.weight", "f32", [40, 33], 132, rng),
        entry("empty.f16", "f16", [0, 8], 16, rng),
        entry("scalar", "f64", [], 8, rng),
        entry("rank8", "u8", [1, 2, 1, 3, 1, 2, 1, 2], 3, rng),
        entry("\u00fc/\u5c42.weight", "bf16", [64, 12], 8, rng),
        entry("empty.u8", "u8", [4, 0, 3], 5, rng),
        entry("flat.i64", "i64", [60], 24, rng),
    ]
    for i, W in enumerate(WIDTHS):
        cases.append(("C multi-entry W=%d A=%d G=[0,1,3] 7 entries" % (W, ALIGNS[i]), ents,
                      dict(word_bits=W, align=ALIGNS[i], groups=[3, 0, 1], rows_per_chunk=16)))
    cases.append(("C multi-entry mixed W/A per chunk", ents,
                  dict(word_bits=[64, 8, 32, 16, 16], align=[128, 1, 4, 16, 2, 8, 32, 64],
                       groups=[1, 3], rows_per_chunk=7)))

    # D/E. no entries; only empty entries; single-row and single-element entries
    cases.append(("D zero entries", [], dict()))
    cases.append(("E only empty entries", [entry("e0", "f32", [0], 4, rng),
                                           entry("e1", "u8", [5, 0], 7, rng)], dict(groups=3)))
    for W in WIDTHS:
        cases.append(("J one row W=%d" % W, [entry("one", "f32", [1, 9], 36, rng)],
                      dict(word_bits=W, align=1, groups=1)))
    cases.append(("J one element u8 G=3", [entry("b", "u8", [1], 1, rng)], dict(groups=3)))

    # F. thresholds
    for th in (0.3, 0.5, 0.75, 0.9, 1.0):
        cases.append(("F threshold=%.2f f32 W=32" % th, [entry("f", "f32", [120, 20], 80, rng)],
                      dict(word_bits=32, align=1, groups=1, threshold=th, rows_per_chunk=50)))

    # G. group counts and assignments
    for G, how in ((2, "first_byte"), (3, "first_byte"), (17, "first_byte"), (256, "first_byte"),
                   (5, "round_robin"), (256, "round_robin")):
        for W in (16, 64):
            cases.append(("G G=%d %s W=%d" % (G, how, W),
                          [entry("g", "bf16", [300, 10], 20, rng, outlier_frac=0.02)],
                          dict(word_bits=W, align=2, groups=G, group_assign=how, rows_per_chunk=300)))
    cases.append(("G G=3 with 2 rows", [entry("g", "f32", [2, 4], 16, rng)],
                  dict(word_bits=32, groups=3)))

    # H. wide row-length fields (length_bytes 2 and 4)
    cases.append(("H length_bytes=2 (600-byte rows, A=1)",
                  [entry("h", "u8", [12, 600], 600, rng, outlier_frac=0.3)],
                  dict(word_bits=8, align=1, groups=1, threshold=0.6)))
    h4 = bytearray(entry("h4", "u8", [4, 70000], 70000, rng, identical=True)[4])
    h4[3 * 70000:] = bytes(random.Random(SEED + 4).getrandbits(8) for _ in range(70000))
    cases.append(("H length_bytes=4 (70000-byte rows, A=1, W=64)",
                  [("h4", "u8", [4, 70000], 70000, bytes(h4))],
                  dict(word_bits=64, align=1, groups=1, threshold=0.7)))

    # K/L/M/N. one row per chunk; A=128 with long rows; identical rows; incompressible rows
    cases.append(("K rows_per_chunk=1", [entry("k", "f16", [9, 6], 12, rng)],
                  dict(word_bits=[8, 16, 32, 64], align=[1, 4, 16, 128], groups=[1, 0, 3],
                       rows_per_chunk=1)))
    for W in WIDTHS:
        cases.append(("L A=128 1024-byte f32 rows W=%d" % W,
                      [entry("l", "f32", [24, 256], 1024, rng)],
                      dict(word_bits=W, align=128, groups=[1, 3], rows_per_chunk=10)))
    for W in WIDTHS:
        cases.append(("M identical rows W=%d (rows of 35 B)" % W,
                      [entry("m", "u8", [50, 35], 35, rng, identical=True)],
                      dict(word_bits=W, align=1, groups=1)))
    cases.append(("N incompressible rows G=1", [entry("n", "u8", [40, 64], 64, rng, random_bits=True)],
                  dict(word_bits=32, align=1, groups=1)))
    cases.append(("N row_bytes != last dim (f32 [30,12] as 48-byte rows)",
                  [entry("r", "f32", [30, 12], 48, rng)], dict(word_bits=64, align=4)))
    return cases


# ---------------------------------------------------------------- decoding

def run_decoder(argv, path, outdir, n_entries):
    """Returns (ok, detail, list_of_entry_bytes_or_None)."""
    os.makedirs(outdir, exist_ok=True)
    p = subprocess.run(argv + [path, outdir], capture_output=True, text=True)
    if p.returncode != 0:
        lines = [l for l in p.stdout.splitlines() if l.strip()]
        code = lines[-1].split()[0] if lines else "?"
        last = lines[-1] if lines else (p.stderr.strip().splitlines() or ["?"])[-1]
        return False, "rejected %s (%s)" % (code, last[:160]), None
    got = []
    for k in range(n_entries):
        f = os.path.join(outdir, "%d.bin" % k)
        if not os.path.exists(f):
            return False, "missing %d.bin" % k, None
        with open(f, "rb") as fh:
            got.append(fh.read())
    extra = [f for f in os.listdir(outdir) if f.endswith(".bin") and
             not (f[:-4].isdigit() and int(f[:-4]) < n_entries)]
    if extra:
        return False, "unexpected outputs %s" % extra, None
    return True, "ok", got


def compare(entries, got):
    for k, e in enumerate(entries):
        if got[k] != e[4]:
            a, b = got[k], e[4]
            i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            return "entry %d (%s) differs at byte %d (len %d vs %d)" % (k, e[0], i, len(a), len(b))
    return None


def self_tests():
    """Spec examples: 6.4 worked example and spec/example.md, byte for byte."""
    res = []
    c = E.encode_chunk(32, [bytes([0xA5, 0x3F, 0, 0])], 4, 16, 1, 1, None,
                       [[0xFF00, 0xFFFF]], [[0x3F00, 0]])
    res.append(("S 6.4 worked example coded record = 97 02", c[-2:] == b"\x97\x02"))
    c = E.encode_chunk(32, [bytes([0xA5, 0x3F, 0x34, 0x12])], 4, 16, 1, 1, None,
                       [[0xFF00, 0xFFFF]], [[0x3F00, 0]])
    res.append(("S 6.4 worked example raw record = A5 3F 34 12", c[-4:] == bytes.fromhex("a53f3412")))
    with open(os.path.join(ROOT, "spec", "example.md")) as fh:
        txt = fh.read()
    dump = re.search(r"## Hex dump.*?```\n(.*?)```", txt, re.S).group(1)
    exp = bytes.fromhex("".join(" ".join(l.split()[1:]) for l in dump.strip().splitlines()))
    words = [[0x3F80, 0x3FA0, 0x3FC0, 0x3FE0], [0xC049, 0x447A, 0x3A83, 0x7FC1],
             [0x3F88, 0x3FB0, 0x3FD8, 0x3FC0]]
    data = b"".join(struct.pack("<4H", *r) for r in words)

    def rows0and2(rows, rb, W, n):  # example.md: Mask keeps the bits rows 0 and 2 share
        w0, w2 = struct.unpack("<4H", rows[0]), struct.unpack("<4H", rows[2])
        m = [~(a ^ b) & 0xFFFF for a, b in zip(w0, w2)]
        return m, [a & mm for a, mm in zip(w0, m)]

    got = E.encode([("x", "bf16", [3, 4], 8, data)], word_bits=16, align=1, groups=1,
                   mask_fn=rows0and2)
    res.append(("S spec/example.md rebuilt byte for byte (%d bytes)" % len(exp), got == exp))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-v", action="store_true", help="print encoder statistics per case")
    ap.add_argument("--no-python", action="store_true", help="skip the Python second-opinion decoder")
    ap.add_argument("--keep", help="write the files into this folder and keep them")
    ap.add_argument("--decoder", help="the reference decoder binary (default: target/release/ibp-conformance, "
                    "built if missing)")
    args = ap.parse_args()
    t0 = time.time()

    global REF_BIN
    if args.decoder:
        REF_BIN = os.path.abspath(args.decoder)
    elif not os.path.exists(REF_BIN):
        subprocess.run(["cargo", "build", "--release", "-p", "ibp-conformance"], cwd=ROOT, check=True)

    passed = failed = 0
    for label, ok in self_tests():
        print("%s  %s" % ("pass" if ok else "FAIL", label))
        passed += ok
        failed += not ok

    cases = build_cases()
    tmp_ctx = None
    if args.keep:
        work = os.path.abspath(args.keep)
        os.makedirs(work, exist_ok=True)
    else:
        tmp_ctx = tempfile.TemporaryDirectory(prefix="ibp-enc-")
        work = tmp_ctx.name

    jobs = []
    for i, (label, entries, opts) in enumerate(cases):
        stats = {}
        blob = E.encode(entries, stats=stats, **opts)
        path = os.path.join(work, "case%03d.ibp" % i)
        with open(path, "wb") as fh:
            fh.write(blob)
        jobs.append((i, label, entries, path, len(blob), stats))

    # harness sanity: one damaged payload byte must be rejected by both decoders
    big = max(jobs, key=lambda j: j[4])
    with open(big[3], "rb") as fh:
        dmg = bytearray(fh.read())
    dmg[32 + 48 + 20] ^= 0x01  # a byte inside the first chunk (metadata or payload)
    dmg_path = os.path.join(work, "damaged.ibp")
    with open(dmg_path, "wb") as fh:
        fh.write(dmg)

    decoders = [("ref", [REF_BIN, "decode"])]
    if not args.no_python:
        decoders.append(("py", [sys.executable, PY_DEC]))

    def check(job):
        i, label, entries, path, size, stats = job
        msgs = []
        for dname, argv in decoders:
            ok, detail, got = run_decoder(argv, path, os.path.join(work, "out%03d.%s" % (i, dname)),
                                          len(entries))
            if ok:
                diff = compare(entries, got)
                if diff:
                    ok, detail = False, diff
            msgs.append((dname, ok, detail))
        return job, msgs

    with ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 4)) as ex:
        results = list(ex.map(check, jobs))

    for (i, label, entries, path, size, stats), msgs in results:
        ok = all(m[1] for m in msgs)
        passed += ok
        failed += not ok
        info = "%6d B, coded %d raw %d" % (size, stats.get("coded_rows", 0), stats.get("raw_rows", 0))
        if args.v:
            info += ", partial-coded %d, length_bytes %s" % (
                stats.get("coded_partial_rows", 0), sorted(stats.get("length_bytes", [])))
        dec = "  ".join("%s:%s" % (d, "ok" if o else det) for d, o, det in msgs)
        print("%s  case%03d %-52s %s  [%s]" % ("pass" if ok else "FAIL", i, label, info, dec))

    for dname, argv in decoders:
        ok, detail, _ = run_decoder(argv, dmg_path, os.path.join(work, "out-damaged.%s" % dname), 0)
        good = not ok
        passed += good
        failed += not good
        print("%s  damaged copy of case%03d must be rejected by %s: %s" % (
            "pass" if good else "FAIL", big[0], dname, detail))

    # coverage summary of what the encoder actually produced
    cov_coded_W = set()
    cov_A = set()
    cov_G = set()
    lb = set()
    partial = 0
    for (_, _, _, _, _, stats) in jobs:
        for (W, A, G) in stats.get("chunks", []):
            cov_A.add(A)
            cov_G.add(G)
            cov_coded_W.add(W)
        lb |= stats.get("length_bytes", set())
        partial += stats.get("coded_partial_rows", 0)
    print("coverage: W %s, A %s, G %s, length_bytes %s, coded rows with partial last word %d" % (
        sorted(cov_coded_W), sorted(cov_A), sorted(cov_G), sorted(lb), partial))
    print("%d passed, %d failed  (%.1f s)" % (passed, failed, time.time() - t0))
    if tmp_ctx:
        tmp_ctx.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
