#!/usr/bin/env python3
"""Unit tests for the parsers and converters in tools/datasets.py (no network, no cache needed).

Run: python3 -m unittest discover -s tools -p 'test_*.py'   (or python3 tools/test_datasets.py)
"""

from __future__ import annotations

import gzip
import io
import json
import math
import random
import struct
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds  # noqa: E402


def bf16_reference(x: float) -> int:
    """bf16 bits of a float32 value by exact rational arithmetic (independent of the bit trick)."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if math.isnan(x):
        return (bits >> 16) | 0x40
    sign = bits >> 31
    mag = bits & 0x7FFFFFFF
    lo, hi = mag >> 16, (mag >> 16) + 1  # the two bf16 candidates bracketing |x|
    rem = mag - (lo << 16)  # distance to the lower one, in units of 2^-16 bf16 ulps
    if rem > 0x8000 or (rem == 0x8000 and lo & 1):
        lo = hi
    return (sign << 15) | lo


class Bf16Tests(unittest.TestCase):
    def test_matches_reference_on_special_and_random_values(self):
        rng = random.Random(7)
        specials = [0.0, -0.0, 1.0, -1.0, 1.00390625, 1.01171875, 3.0e38, -3.4e38, float("inf"),
                    float("-inf"), 1e-40, -1e-45, 65504.0, 2.0 ** -126]
        words = [rng.getrandbits(32) for _ in range(20000)]
        # ties: low half exactly 0x8000, with both parities of the kept part
        words += [(rng.getrandbits(16) << 16) | 0x8000 for _ in range(2000)]
        vals = np.array(specials, dtype=np.float32)
        vals = np.concatenate([vals, np.array(words, dtype=np.uint32).view(np.float32)])
        got = ds.f32_to_bf16_bits(vals)
        for v, g in zip(vals.tolist(), got.tolist()):
            want = bf16_reference(v)
            if math.isnan(v):
                self.assertTrue((g & 0x7F80) == 0x7F80 and (g & 0x7F) != 0, hex(g))
            self.assertEqual(g, want, f"value {v!r}")

    def test_ties_go_to_even(self):
        self.assertEqual(ds.f32_to_bf16_bits(np.array([1.00390625], np.float32))[0], 0x3F80)
        self.assertEqual(ds.f32_to_bf16_bits(np.array([1.01171875], np.float32))[0], 0x3F82)


class NpyWriterTests(unittest.TestCase):
    def test_round_trip_and_alignment(self):
        rng = np.random.default_rng(1)
        arrays = [rng.standard_normal((7, 5)).astype(np.float32), rng.integers(0, 255, (3, 784), dtype=np.uint8),
                  rng.integers(0, 65535, (11, 32), dtype=np.uint16), np.zeros((0, 4), np.float32)]
        with tempfile.TemporaryDirectory() as tmp:
            for i, a in enumerate(arrays):
                p = Path(tmp) / f"a{i}.npy"
                digest = ds.write_npy(p, a)
                self.assertEqual(digest, ds.sha256_file(p))
                back = np.load(p, allow_pickle=False)
                self.assertEqual(back.dtype, a.dtype.newbyteorder("<"))
                self.assertTrue(np.array_equal(back, a))
                raw = p.read_bytes()
                hlen = struct.unpack("<H", raw[8:10])[0]
                self.assertEqual((10 + hlen) % 64, 0)
                self.assertEqual(len(raw), 10 + hlen + a.nbytes)

    def test_big_endian_input_is_stored_little_endian(self):
        a = np.arange(6, dtype=">f4").reshape(2, 3)
        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "be.npy"
            ds.write_npy(p, a)
            back = np.load(p)
            self.assertEqual(back.dtype.str, "<f4")
            self.assertTrue(np.array_equal(back, a))


def safetensors_blob(tensors: dict[str, np.ndarray]) -> bytes:
    header, body, off = {"__metadata__": {"format": "pt"}}, b"", 0
    for name, a in tensors.items():
        b = a.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        body += b
        off += len(b)
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + body


class SafetensorsTests(unittest.TestCase):
    def test_parses_tensors(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        b = np.array([1.5, -2.0], dtype=np.float32)
        got = ds.read_safetensors(safetensors_blob({"a": a, "b": b}))
        self.assertTrue(np.array_equal(got["a"], a))
        self.assertTrue(np.array_equal(got["b"], b))

    def test_rejects_corrupt_input(self):
        good = safetensors_blob({"a": np.ones((2, 2), np.float32)})
        with self.assertRaises(SystemExit):
            ds.read_safetensors(good[:-1])  # data shorter than the offsets say
        with self.assertRaises(SystemExit):
            ds.read_safetensors(struct.pack("<Q", 1 << 40) + good[8:])  # header length past the end
        with self.assertRaises(SystemExit):
            ds.read_safetensors(b"\x01\x00")
        (hlen,) = struct.unpack("<Q", good[:8])
        header = json.loads(good[8:8 + hlen])
        header["a"]["shape"] = [2, 3]  # no longer matches its byte range
        h = json.dumps(header).encode()
        with self.assertRaises(SystemExit):
            ds.read_safetensors(struct.pack("<Q", len(h)) + h + good[8 + hlen:])


class WordPieceTests(unittest.TestCase):
    VOCAB = "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "hello", ",", "!", "cafe",
                       "run", "##ning", "東"])

    def test_basic_and_wordpiece(self):
        tok = ds.WordPiece(self.VOCAB)
        v = tok.vocab
        self.assertEqual(tok.encode("UNaffable, hello!"), [v["un"], v["##aff"], v["##able"], v[","], v["hello"], v["!"]])
        self.assertEqual(tok.encode("Café running"), [v["cafe"], v["run"], v["##ning"]])  # accents stripped
        self.assertEqual(tok.encode("東x"), [v["東"], tok.unk])  # CJK split off, 'x' unknown
        self.assertEqual(tok.encode("unknownword"), [tok.unk])
        self.assertEqual(tok.encode("a" * 101), [tok.unk])
        self.assertEqual(tok.encode("\u200bhello\x00"), [v["hello"]])  # format/control chars dropped


class IdxAndDebTests(unittest.TestCase):
    def test_idx_images(self):
        pix = np.arange(2 * 3 * 4, dtype=np.uint8)
        raw = struct.pack(">IIII", 0x803, 2, 3, 4) + pix.tobytes()
        got = ds.read_idx_images(gzip.compress(raw), "t")
        self.assertEqual(got.shape, (2, 12))
        self.assertTrue(np.array_equal(got.ravel(), pix))
        with self.assertRaises(SystemExit):
            ds.read_idx_images(gzip.compress(raw[:-1]), "t")
        with self.assertRaises(SystemExit):
            ds.read_idx_images(gzip.compress(struct.pack(">I", 0x801) + raw[4:]), "t")

    @staticmethod
    def make_deb(files: dict[str, bytes]) -> bytes:
        tar_buf = io.BytesIO()
        with tarfile.open(fileobj=tar_buf, mode="w:xz") as tf:
            for name, data in files.items():
                info = tarfile.TarInfo("./" + name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        out = b"!<arch>\n"
        for name, body in (("debian-binary", b"2.0\n"), ("control.tar.xz", b"x"), ("data.tar.xz", tar_buf.getvalue())):
            out += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode()
            out += body + (b"\n" if len(body) & 1 else b"")
        return out

    def test_deb_member(self):
        deb = self.make_deb({"usr/share/x/a.bin": b"hello", "usr/share/x/b.bin": b"world!"})
        self.assertEqual(ds.ar_deb_member(deb, "usr/share/x/b.bin"), b"world!")
        with self.assertRaises(SystemExit):
            ds.ar_deb_member(deb, "usr/share/x/missing")
        with self.assertRaises(SystemExit):
            ds.ar_deb_member(deb[:56] + b"9999999999`\n", "usr/share/x/a.bin")  # size past the end
        with self.assertRaises(SystemExit):
            ds.ar_deb_member(b"PK\x03\x04" + deb[4:], "usr/share/x/a.bin")


class MathTests(unittest.TestCase):
    def test_erf_close_to_math_erf(self):
        xs = np.linspace(-7, 7, 20001)
        got = ds._erf(xs)
        want = np.array([math.erf(x) for x in xs])
        self.assertLess(float(np.max(np.abs(got - want))), 2e-7)

    def test_layer_norm_normalises(self):
        x = np.random.default_rng(3).standard_normal((4, 384)).astype(np.float32) * 5 + 2
        y = ds.layer_norm(x, np.ones(384, np.float32), np.zeros(384, np.float32), 1e-12)
        self.assertTrue(np.allclose(y.mean(-1), 0, atol=1e-5))
        self.assertTrue(np.allclose(y.std(-1), 1, atol=1e-3))


if __name__ == "__main__":
    unittest.main()
