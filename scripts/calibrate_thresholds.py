#!/usr/bin/env python3
"""Carry the semantic arm's cosine thresholds from one embedding table to another.

Run by a person, never by the build, when `assets/embeddings/table.kemb` is replaced. Each
threshold of the semantic arm says "this close is more than chance" for the table it was set on;
a new table spreads its cosines differently (a sharper teacher puts unrelated texts nearer 0, or
nearer each other), so the numbers cannot be kept as they are. Nor may they be re-tuned on the
relevance benchmark's questions (that is what the benchmark judges). The rule here looks at no
question and no fixture:

- text thresholds (`MIN_COSINE` and `CONFIDENT_COSINE` of the vector arms,
  `MIN_GIST_COSINE[_TRANSLATED]` of the gists) keep their *quantile among unrelated pairs*:
  a query-sized text (the first 12 words of a paragraph of this project's own documentation,
  `docs/*.md` and `README.md`) against an event-sized one (the first 80 words, one embedding
  window, of a paragraph of another file); under the old table these cosines give the share
  of unrelated pairs each threshold lets through; the new threshold lets the same share
  through under the new table;
- the expansion threshold (`EXPAND_MIN_COSINE`) keeps the *share of Russian stems it translates*:
  under the old table a share of a fixed random sample of the table's Russian stems has its
  nearest English row at or above the threshold; the new threshold keeps that share.

    python3 scripts/calibrate_thresholds.py OLD.kemb NEW.kemb
    python3 scripts/calibrate_thresholds.py OLD.kemb OLD.kemb --gist-head HEAD.bin

With `--gist-head` (scripts/fit_gist_head.py), only the gist thresholds are carried, from the
table's cosines to the cosines of the head's vectors (gists and the query's gist vector go
through the head; nothing else does).

Run inside the build's virtual environment (`snowballstemmer`, `numpy`), e.g.
`/tmp/kemb-build/venv/bin/python`.
"""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import numpy as np
import snowballstemmer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_embeddings import StaticEmbedder  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# The thresholds as they are set for the shipped (old) table; see the Rust constants. The gist
# thresholds are those on the table's own vectors, from which `--gist-head` carries the shipped ones.
TEXT_THRESHOLDS = {
    "MIN_COSINE (src/sources/vectors.rs)": 0.35,
    "CONFIDENT_COSINE (src/sources/vectors.rs)": 0.7,
    "MIN_GIST_COSINE (src/sources/episodes/gist.rs)": 0.36,
    "MIN_GIST_COSINE_TRANSLATED (src/sources/episodes/gist.rs)": 0.27,
}
EXPAND = ("EXPAND_MIN_COSINE (src/text/embed/expand.rs)", 0.7)
PAIRS = 20000
STEMS = 3000
SEED = 19


def load(path: Path) -> StaticEmbedder:
    b = path.read_bytes()
    assert b[:4] == b"KEMB", f"{path}: not a KEMB table"
    version, dims, n_p, n_w, n_s, slen = struct.unpack_from("<6I", b, 4)
    assert version == 2, f"{path}: KEMB version {version}"
    n = n_p + n_w + n_s
    at = 28
    scale = np.frombuffer(b, "<f4", n, at)
    at += 4 * n
    rows = np.frombuffer(b, np.int8, n * dims, at).reshape(n, dims).astype(np.float32)
    at += n * dims
    strings = b[at:at + slen].decode("utf-8").split("\n")[:n]
    emb = StaticEmbedder(np, strings, n_p, n_w, rows * scale[:, None],
                         snowballstemmer.stemmer("russian"))
    emb.n_pieces, emb.n_words, emb.n_stems = n_p, n_w, n_s
    return emb


QUERY_WORDS = 12
WINDOW_WORDS = 80  # src/text/embed/mod.rs


def paragraphs() -> list[tuple[str, str]]:
    """(file, paragraph) of the project's documentation, prose only (no tables)."""
    out = []
    for md in sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"]):
        if not md.is_file():
            continue
        for p in re.split(r"\n\s*\n", md.read_text(encoding="utf-8")):
            if len(re.findall(r"[^\W\d_]{3,}", p)) >= 8 and not p.lstrip().startswith("|"):
                out.append((md.name, p))
    return out


def text_cosines(emb: StaticEmbedder, texts: list[tuple[str, str]], pairs) -> np.ndarray:
    def first(t: str, n: int) -> str:
        return " ".join(re.findall(r"[^\W_]+", t)[:n])

    queries = np.stack([emb.embed(first(t, QUERY_WORDS)) for _, t in texts])
    windows = np.stack([emb.embed(first(t, WINDOW_WORDS)) for _, t in texts])
    return np.einsum("ij,ij->i", queries[pairs[:, 0]], windows[pairs[:, 1]])


def best_english(emb: StaticEmbedder, stems: list[str]) -> np.ndarray:
    english = np.stack([emb.rows[emb.words[w]] for w in emb.words])
    english /= np.maximum(np.linalg.norm(english, axis=1, keepdims=True), 1e-12)
    q = np.stack([emb.rows[emb.stems[s]] for s in stems])
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    return (q @ english.T).max(axis=1)


def gist_head_cosines(emb: StaticEmbedder, head_path: Path, texts, pairs) -> np.ndarray:
    import fit_gist_head as fg

    def first(t: str, n: int) -> str:
        return " ".join(re.findall(r"[^\W_]+", t)[:n])

    head = fg.read_head(np, head_path)
    queries = fg.headed(np, emb, head, [first(t, QUERY_WORDS) for _, t in texts])
    windows = fg.headed(np, emb, head, [first(t, WINDOW_WORDS) for _, t in texts])
    return np.einsum("ij,ij->i", queries[pairs[:, 0]], windows[pairs[:, 1]])


def main() -> None:
    args = sys.argv[1:]
    head_path = None
    if "--gist-head" in args:
        at = args.index("--gist-head")
        head_path = Path(args[at + 1])
        del args[at:at + 2]
    old, new = load(Path(args[0])), load(Path(args[1]))
    rng = np.random.default_rng(SEED)
    texts = paragraphs()
    pairs = rng.integers(0, len(texts), size=(PAIRS * 2, 2))
    files = np.array([f for f, _ in texts])
    pairs = pairs[files[pairs[:, 0]] != files[pairs[:, 1]]][:PAIRS]
    c_old, c_new = text_cosines(old, texts, pairs), text_cosines(new, texts, pairs)
    print(f"{len(texts)} paragraphs of docs/, {len(pairs)} random pairs")
    print(f"  unrelated pairs: old mean {c_old.mean():.3f} sd {c_old.std():.3f}; "
          f"new mean {c_new.mean():.3f} sd {c_new.std():.3f}")
    if head_path is not None:
        c_new = gist_head_cosines(new, head_path, texts, pairs)
        print(f"  through the gist head: mean {c_new.mean():.3f} sd {c_new.std():.3f}")
    for name, t in TEXT_THRESHOLDS.items():
        if head_path is not None and "GIST" not in name:
            continue
        share = float((c_old >= t).mean())
        mapped = float(np.quantile(c_new, 1 - share))
        print(f"{name}: {t:.2f} lets {share:.2%} of unrelated pairs through -> {mapped:.3f}")

    if head_path is not None:
        return
    shared = sorted(set(old.stems) & set(new.stems))
    sample = [shared[i] for i in rng.choice(len(shared), size=min(STEMS, len(shared)),
                                             replace=False)]
    b_old, b_new = best_english(old, sample), best_english(new, sample)
    name, t = EXPAND
    share = float((b_old >= t).mean())
    mapped = float(np.quantile(b_new, 1 - share))
    print(f"{name}: {t:.2f} translates {share:.2%} of {len(sample)} random Russian stems "
          f"-> {mapped:.3f}")


if __name__ == "__main__":
    main()
