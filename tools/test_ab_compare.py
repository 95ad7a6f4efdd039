#!/usr/bin/env python3
"""Unit tests for tools/ab_compare.py's log parser (stdlib only, no device files needed).

Run: python3 tools/test_ab_compare.py   (CI runs it)
"""

from __future__ import annotations

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ab_compare as ab  # noqa: E402

LOG = """device 0: NVIDIA H200 (sm_90, 132 SMs), 1 device(s)

## f32-normal-q4 256 B rows, A=16: 524288 rows, 128 MiB raw, 18.8 % saved, 4 chunk(s) of W={64} (prepared in 0.2 s)
batch 1024: IBP zc 16.5 | raw zc 19.4 | CPU+memcpy 8.3 | ideal 19.3 | IBP dev 28.7 | D2D 41.0 GB/s
batch 4096: IBP zc 34.6 | raw zc 36.5 | CPU+memcpy 8.7 | ideal 37.6 | IBP dev 83.6 | D2D 155.3 GB/s
whole entry from device memory: decode 1208 GB/s, D2D copy 1903 GB/s

## glove-6b-50d-f32+gpu 200 B rows, A=16: 655360 rows, 125 MiB raw, 11.8 % saved, 1 chunk(s) of W={64} (prepared in 0.2 s)
whole entry from device memory: decode 1000 GB/s, D2D copy 2000 GB/s

| dataset | row B | A | batch | IBP host | raw host | IBP events | raw events | IBP queued | raw queued | queued IBP/raw time |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| f32-normal-q4 | 256 | 16 | 1024 | 4.9 | 4.5 | 15.9 | 13.5 | 12.2 | 10.4 | 1.18 |
"""


class ParseTest(unittest.TestCase):
    def test_reads_gathers_decode_and_queued_times(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(LOG)
        gathers, decode, queued = ab.parse(f.name)
        Path(f.name).unlink()
        raw_ratio, ideal_ratio = gathers[("f32-normal-q4 256 B A=16", 1024)]
        self.assertAlmostEqual(raw_ratio, 16.5 / 19.4)
        self.assertAlmostEqual(ideal_ratio, 16.5 / 19.3)
        self.assertEqual(len(gathers), 2)
        self.assertAlmostEqual(decode["f32-normal-q4 256 B A=16"], 1208 / 1903)
        # A dataset name with "+gpu" keeps it; its decode line belongs to it, not the one before.
        self.assertAlmostEqual(decode["glove-6b-50d-f32+gpu 200 B A=16"], 0.5)
        self.assertEqual(queued[("f32-normal-q4 256 B A=16", 1024)], (12.2, 10.4))
        # The header row and separator of the table are not rows.
        self.assertEqual(len(queued), 1)


class ArgsTest(unittest.TestCase):
    def test_what_with_a_space_or_an_equals_sign(self):
        runs, what = ab.parse_args(["a=x.log", "--what", "decode", "b=y.log"])
        self.assertEqual(runs, [("a", "x.log"), ("b", "y.log")])
        self.assertEqual(what, "decode")
        self.assertEqual(ab.parse_args(["a=x.log", "--what=queued"])[1], "queued")
        self.assertEqual(ab.parse_args(["a=x.log"])[1], "all")

    def test_rejects_what_it_cannot_use(self):
        for argv in (["a=x.log", "--what", "nothing"], ["x.log"], [], ["--what", "decode"]):
            with self.assertRaises(ValueError):
                ab.parse_args(argv)


if __name__ == "__main__":
    unittest.main()
