#!/usr/bin/env python3
"""Run every conformance vector (conformance/manifest.json) through the
independent decoder ibp_decode.py.

Run from the repository root:  python3 conformance/independent/run_vectors.py [ID ...]
Prints one line per vector (id, expected, got, PASS/FAIL) and "N passed, M failed";
exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ibp_decode  # noqa: E402

CONF = os.path.normpath(os.path.join(HERE, ".."))  # conformance/


def check_valid(vec: dict, entries) -> list[str]:
    """Compare decoded entries with the manifest's `entries` (README: valid outcome)."""
    problems = []
    want = vec["entries"]
    if len(entries) != len(want):
        return [f"{len(entries)} entries, expected {len(want)}"]
    for k, (e, w) in enumerate(zip(entries, want)):
        got_meta = (e.name, e.dtype, list(e.shape), e.row_count, e.row_bytes)
        want_meta = (w["name"], w["dtype"], list(w["shape"]), w["row_count"], w["row_bytes"])
        if got_meta != want_meta:
            problems.append(f"entry {k}: {got_meta} != {want_meta}")
        if len(e.data) != w["decoded_len"]:
            problems.append(f"entry {k}: decoded_len {len(e.data)} != {w['decoded_len']}")
        if f"{zlib.crc32(e.data) & 0xFFFFFFFF:08x}" != w["crc32"].lower():
            problems.append(f"entry {k}: crc32 mismatch")
        if hashlib.sha256(e.data).hexdigest() != w["sha256"].lower():
            problems.append(f"entry {k}: sha256 mismatch")
        if w.get("raw_file"):
            with open(os.path.join(CONF, w["raw_file"]), "rb") as fh:
                if fh.read() != e.data:
                    problems.append(f"entry {k}: differs from {w['raw_file']}")
    return problems


def run_one(vec: dict) -> tuple[str, str, bool, str]:
    """Returns (expected, got, passed, note)."""
    path = os.path.join(CONF, vec["file"])
    with open(path, "rb") as fh:
        data = fh.read()
    note = ""
    if len(data) != vec["file_len"] or hashlib.sha256(data).hexdigest() != vec["file_sha256"]:
        note = "file length/SHA-256 differ from manifest; "
    try:
        entries = ibp_decode.decode_bytes(data)
        got, err = "ok", None
    except ibp_decode.IBPError as e:
        entries, got, err = None, e.code, e

    outcome = vec["outcome"]
    if outcome == "valid":
        expected = "ok"
        if err is not None:
            return expected, got, False, note + err.detail
        problems = check_valid(vec, entries)
        return expected, got, not problems and not note, note + "; ".join(problems)
    if outcome == "invalid":
        expected = vec["error"]
        return expected, got, got == expected and not note, note + (err.detail if err else "")
    if outcome == "implementation-defined":
        # README: either a listed valid result or a listed error conforms.
        expected = "ok|" + str(vec.get("error"))
        if err is None:
            ok = "entries" not in vec or not check_valid(vec, entries)
        else:
            ok = got == vec.get("error")
        return expected, got, ok and not note, note
    return outcome, got, False, "unknown outcome"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ids", nargs="*", help="only these vector ids")
    ap.add_argument("-v", "--verbose", action="store_true", help="show decoder detail on every line")
    args = ap.parse_args()

    manifest_path = os.path.join(CONF, "manifest.json")
    with open(manifest_path, "rb") as fh:
        raw = fh.read()
    manifest = json.loads(raw)
    if manifest.get("format") != "ibp-conformance-manifest" or manifest.get("manifest_version") != 1:
        print("unsupported manifest format/version")
        return 2
    print(f"spec_version {manifest['spec_version']}, manifest sha256 {hashlib.sha256(raw).hexdigest()}")

    passed = failed = 0
    for vec in manifest["vectors"]:
        if args.ids and vec["id"] not in args.ids:
            continue
        expected, got, ok, note = run_one(vec)
        passed += ok
        failed += not ok
        line = f"{vec['id']}  expected {expected:<22} got {got:<22} {'PASS' if ok else 'FAIL'}"
        if note and (args.verbose or not ok):
            line += f"  ({note})"
        print(line)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
