//! Text vectors for the semantic arm of the episodes and code lanes, offline and multilingual.
//!
//! A static table distilled from a multilingual sentence encoder (USE-multilingual v3, see
//! `scripts/build_embeddings.py` and `assets/embeddings/NOTICE`) holds one row per word and per
//! SentencePiece piece in the encoder's additive space, so a text's vector is the normalised sum
//! of its words' rows: a Russian question and an English event land near each other without a
//! neural network at run time. Every word has a vector: its own row, else (a Russian word) the
//! row of its Snowball stem, which the table holds for every inflection of a dictionary word,
//! else the rows of its pieces (greedy longest match). The table and its lookup layout (derived
//! at build time, [`layout`]) are compiled into the binary and read in place: a one-shot call
//! parses nothing and touches only the rows of its own words.

mod expand;
pub mod hamming;
pub mod layout;
mod table;
mod words;

use std::ops::ControlFlow;
use std::sync::OnceLock;

pub use expand::{EXPAND_MIN_COSINE, EXPAND_PER_WORD};
pub use table::{Table, TableError};
pub use words::{for_each_word, MAX_WORD_CHARS};

use crate::text::tokens::FastMap;

static TABLE_BYTES: &[u8] = include_bytes!("../../../assets/embeddings/table.kemb");

/// The lookup layout `build.rs` derived from [`TABLE_BYTES`] ([`layout`]); empty when the build
/// found the table unreadable (opening it then reports why).
static TABLE_LAYOUT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/table.kemi"));

/// Words per window: a long event or chunk gets one vector per window, because a sum over
/// thousands of words drifts to the average of everything.
pub const WINDOW_WORDS: usize = 80;

/// Windows kept per text; a tool output longer than this is represented by its beginning.
pub const MAX_WINDOWS: usize = 4;

/// A unit-length text vector.
pub type Vector = Vec<f32>;

/// The embedder over a table read in place.
pub struct Embedder {
    table: Table,
}

/// The shared embedder, opened on first use (a header check: the table and its layout are read
/// in place); `None` (with the reason) when the compiled-in table is unusable, so the lanes
/// answer lexically instead.
pub fn shared() -> Result<&'static Embedder, &'static TableError> {
    static CELL: OnceLock<Result<Embedder, TableError>> = OnceLock::new();
    CELL.get_or_init(|| Table::with_layout(TABLE_BYTES, TABLE_LAYOUT).map(Embedder::from_table))
        .as_ref()
}

/// What the semantic arm adds to a query whose lexical terms are `terms`: the English terms of
/// its Russian words (appended to `terms`) and its vector (`None` without a usable table or
/// without a known word).
pub fn prepare_query(query: &str, terms: &mut Vec<String>) -> Option<Vector> {
    let emb = shared().ok()?;
    let extra = emb.cross_lingual_terms(query, terms);
    terms.extend(extra);
    emb.embed_query(query)
}

impl Embedder {
    pub fn from_table(table: Table) -> Self {
        Embedder { table }
    }

    pub fn dims(&self) -> usize {
        self.table.dims()
    }

    /// The table read in place (its rows, for a caller that measures the table itself).
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The vector of `text`, or `None` when none of its words has a row.
    pub fn embed(&self, text: &str) -> Option<Vector> {
        let mut acc = vec![0f32; self.dims()];
        let mut any = false;
        for_each_word(text, |w| {
            any |= self.add_word(w, &mut acc);
            ControlFlow::Continue(())
        });
        any.then(|| normalise(acc)).flatten()
    }

    /// The vector of a query: the rows of its words that have their own row or a Russian stem
    /// row (as an indexed text has them). A word known only by its pieces (`qwxzvbnmkjh`, a
    /// hash) adds nothing, so a query of made-up words has no vector and lanes nothing matches
    /// stay empty.
    pub fn embed_query(&self, text: &str) -> Option<Vector> {
        let mut acc = vec![0f32; self.dims()];
        let mut any = false;
        for_each_word(text, |w| {
            if matches!(self.word_source(w), WordSource::Row | WordSource::Stem) {
                any |= self.add_word(w, &mut acc);
            }
            ControlFlow::Continue(())
        });
        any.then(|| normalise(acc)).flatten()
    }

    /// One vector per window of [`WINDOW_WORDS`] words, at most [`MAX_WINDOWS`]; windows with
    /// no known word are skipped (their index is kept so a window can be found again).
    pub fn embed_windows(&self, text: &str) -> Vec<(usize, Vector)> {
        let mut out = Vec::new();
        let mut acc = vec![0f32; self.dims()];
        let (mut window, mut in_window, mut any) = (0usize, 0usize, false);
        for_each_word(text, |w| {
            if window >= MAX_WINDOWS {
                return ControlFlow::Break(());
            }
            any |= self.add_word(w, &mut acc);
            in_window += 1;
            if in_window == WINDOW_WORDS {
                if let Some(v) = any.then(|| normalise(std::mem::take(&mut acc))).flatten() {
                    out.push((window, v));
                }
                acc = vec![0f32; self.dims()];
                (window, in_window, any) = (window + 1, 0, false);
            }
            ControlFlow::Continue(())
        });
        if window < MAX_WINDOWS && in_window > 0 {
            if let Some(v) = any.then(|| normalise(acc)).flatten() {
                out.push((window, v));
            }
        }
        out
    }

    /// The vector of window `window` of `text` (as [`Embedder::embed_windows`] cut it).
    pub fn embed_window(&self, text: &str, window: usize) -> Option<Vector> {
        let mut acc = vec![0f32; self.dims()];
        let (mut at, mut any) = (0usize, false);
        let (lo, hi) = (window * WINDOW_WORDS, (window + 1) * WINDOW_WORDS);
        for_each_word(text, |w| {
            if at >= hi {
                return ControlFlow::Break(());
            }
            if at >= lo {
                any |= self.add_word(w, &mut acc);
            }
            at += 1;
            ControlFlow::Continue(())
        });
        any.then(|| normalise(acc)).flatten()
    }

    /// Add the rows of one lowercased word; false when nothing in it is known. The rows of a
    /// word are memoised per thread: the same words recur in every window.
    fn add_word(&self, word: &str, acc: &mut [f32]) -> bool {
        WORD_ROWS.with(|cache| {
            let mut cache = cache.borrow_mut();
            if !cache.contains_key(word) {
                if cache.len() >= WORD_CACHE_MAX {
                    cache.clear();
                }
                let rows = self.rows_of(word);
                cache.insert(word.into(), rows);
            }
            let rows = &cache[word];
            for &row in rows.iter() {
                self.table.add_row(row, acc);
            }
            !rows.is_empty()
        })
    }

    /// The table rows of one word: its own row, else the row of its Russian stem, else its
    /// pieces by greedy longest match.
    fn rows_of(&self, word: &str) -> Box<[u32]> {
        if let Some(row) = self.table.word(word).or_else(|| self.stem_row(word)) {
            return Box::new([row]);
        }
        let mut rows = Vec::new();
        let mut rest = word;
        let mut first = true;
        'outer: while !rest.is_empty() {
            let mut ends: [usize; 64] = [0; 64];
            let mut n = 0;
            for (i, c) in rest
                .char_indices()
                .take(self.table.max_piece_chars().min(64))
            {
                ends[n] = i + c.len_utf8();
                n += 1;
            }
            for &end in ends[..n].iter().rev() {
                if let Some(row) = self.table.piece(&rest[..end], first) {
                    rows.push(row);
                    rest = &rest[end..];
                    first = false;
                    continue 'outer;
                }
            }
            if first {
                // No piece starts a word with this character: try it as a mid-word piece.
                first = false;
            } else {
                // A character no piece covers contributes nothing.
                rest = &rest[ends[0]..];
            }
        }
        rows.into_boxed_slice()
    }
}

/// Where a word's vector comes from (for measuring the vocabulary's coverage).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WordSource {
    /// The word has its own row (or is a word-start piece).
    Row,
    /// A Russian word whose Snowball stem has a row.
    Stem,
    /// Only its pieces are known.
    Pieces,
    /// Nothing in it is known.
    None,
}

impl Embedder {
    /// Where the vector of one lowercased word comes from.
    pub fn word_source(&self, word: &str) -> WordSource {
        if self.table.word(word).is_some() || self.table.piece(word, true).is_some() {
            WordSource::Row
        } else if self.stem_row(word).is_some() {
            WordSource::Stem
        } else if self.rows_of(word).is_empty() {
            WordSource::None
        } else {
            WordSource::Pieces
        }
    }

    /// The row of a Russian word's Snowball stem (after folding `ё`), as the table builder
    /// computed it.
    fn stem_row(&self, word: &str) -> Option<u32> {
        let stem = russian_stem(word)?;
        self.table.stem(&stem)
    }
}

/// The Russian Snowball stem of an all-Cyrillic lowercase word, `ё` folded to `е`
/// (mirrors `russian_stem` in `scripts/build_embeddings.py`); `None` for any other word.
pub fn russian_stem(word: &str) -> Option<String> {
    if word.is_empty() || !word.chars().all(|c| matches!(c, 'а'..='я' | 'ё')) {
        return None;
    }
    thread_local! {
        static RU: rust_stemmers::Stemmer =
            rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::Russian);
    }
    let folded = word.replace('ё', "е");
    Some(RU.with(|ru| ru.stem(&folded).into_owned()))
}

/// Words whose rows are memoised per thread before the memo is cleared.
const WORD_CACHE_MAX: usize = 50_000;

thread_local! {
    static WORD_ROWS: std::cell::RefCell<FastMap<Box<str>, Box<[u32]>>> =
        std::cell::RefCell::new(FastMap::default());
}

fn normalise(mut v: Vector) -> Option<Vector> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Some(v)
}

/// Dot product (the cosine of two unit vectors).
/// A vector as a store's BLOB holds it: little-endian f32s.
pub fn to_le_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The f32s of a BLOB written by [`to_le_bytes`] (a trailing partial value is dropped).
pub fn from_le_bytes(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Bytes of a [`sign_code`] for `dims` dimensions.
pub fn code_len(dims: usize) -> usize {
    dims.div_ceil(8)
}

/// One bit per dimension (set when positive): the compact code the vector arm scans by Hamming
/// distance before rescoring the best candidates exactly.
pub fn sign_code(v: &[f32]) -> Vec<u8> {
    let mut out = vec![0u8; code_len(v.len())];
    for (i, x) in v.iter().enumerate() {
        if *x > 0.0 {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod tests;
