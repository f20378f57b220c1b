//! Cross-lingual query expansion for the lexical arm.
//!
//! BM25 is precise once a query's words occur in the text, but a Russian question shares no word
//! with an English session. The table puts a Russian word's row near the rows of its English
//! translations (both live in the encoder's additive space), so each Russian word of a query is
//! mapped to its nearest English rows above a cosine threshold, and their search terms join the
//! lexical query as alternatives. The vector arm then only has to add what no word can match.

use std::ops::ControlFlow;

use super::{for_each_word, Embedder, Vector};
use super::{hamming, layout};
use crate::text::tokens;

/// Below this cosine an English row is not a translation of the Russian word but a neighbour
/// of its topic (calibrated on the relevance benchmark, see `docs/RELEVANCE.md`).
pub const EXPAND_MIN_COSINE: f32 = 0.7;

/// English rows kept per Russian word: a translation and its closest synonym or inflection.
pub const EXPAND_PER_WORD: usize = 3;

/// Shorter words (and stems) are too ambiguous to translate.
const MIN_WORD_CHARS: usize = layout::EXPANSION_MIN_CHARS;

/// Candidates kept from the Hamming pre-scan for exact rescoring: the sign codes put a word's
/// translations among its nearest few dozen rows, so a search scans 16 bytes a row, not 128.
const RESCORE: usize = 128;

/// One bit per dimension (set when positive), as 64-bit words.
fn code_of(v: &[f32], words: usize) -> Vec<u64> {
    let mut out = vec![0u64; words];
    for (i, x) in v.iter().enumerate() {
        if *x > 0.0 {
            out[i / 64] |= 1 << (i % 64);
        }
    }
    out
}

fn is_russian(word: &str) -> bool {
    word.chars().all(|c| matches!(c, 'а'..='я' | 'ё'))
}

impl Embedder {
    /// The direction of one lowercased word, as an indexed text would see it (its row, its
    /// Russian stem's row, else its pieces); `None` only for a word with no known piece.
    pub fn word_vector(&self, word: &str) -> Option<Vector> {
        self.embed(word)
    }

    /// The `k` English rows nearest to the unit vector `v` with cosine at least `min`, nearest
    /// first: a Hamming pre-scan of the sign codes, then exact cosines of the best [`RESCORE`].
    /// The rows an expansion may pick are the table's English word rows (its pieces also hold
    /// other languages' fragments, `limpia`, `viaggio`, which are not translations anyone
    /// searches for), in word order, so equal cosines always resolve the same way; their sign
    /// codes are part of the table's lookup layout (about 1 MB for 60k rows, read in place).
    pub fn english_neighbours(&self, v: &[f32], k: usize, min: f32) -> Vec<(&'static str, f32)> {
        let table = &self.table;
        let words = layout::code_words(table.dims());
        let q = code_of(v, words);
        let mut code = vec![0u64; words];
        let mut near: Vec<(u32, u32)> = hamming::with_popcnt(|| {
            (0..table.english_len())
                .map(|i| {
                    table.english_code(i, &mut code);
                    (hamming::distance(&code, &q), i as u32)
                })
                .collect()
        });
        if near.len() > RESCORE {
            near.select_nth_unstable(RESCORE - 1);
            near.truncate(RESCORE);
        }
        let mut best: Vec<(f32, usize)> = near
            .into_iter()
            .map(|(_, i)| {
                let (row, _) = table.english(i as usize);
                let norm = table.row_norm(row);
                let cos = if norm > 0.0 {
                    table.row_dot(row, v) / norm
                } else {
                    0.0
                };
                (cos, i as usize)
            })
            .filter(|(cos, _)| *cos >= min)
            .collect();
        best.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        best.truncate(k);
        best.into_iter()
            .map(|(c, i)| (table.english(i).1, c))
            .collect()
    }

    /// Search terms to add to a query whose own terms are `terms`: for each Russian word that
    /// is one of them (stopwords are not), the terms of its nearest English rows. Terms already
    /// in the query are not repeated.
    pub fn cross_lingual_terms(&self, query: &str, terms: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for_each_word(query, |w| {
            if !is_russian(w) || w.chars().count() < MIN_WORD_CHARS || seen.iter().any(|s| s == w) {
                return ControlFlow::Continue(());
            }
            seen.push(w.to_string());
            if !tokens::query_terms(w).iter().all(|t| terms.contains(t)) {
                return ControlFlow::Continue(());
            }
            let Some(v) = self.word_vector(w) else {
                return ControlFlow::Continue(());
            };
            for (english, _) in self.english_neighbours(&v, EXPAND_PER_WORD, EXPAND_MIN_COSINE) {
                if tokens::is_stopword(english) {
                    continue;
                }
                for t in tokens::query_terms(english) {
                    if !terms.contains(&t) && !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
            ControlFlow::Continue(())
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::shared;

    #[test]
    fn a_russian_word_expands_to_its_english_translation() {
        let e = shared().expect("table");
        let terms = crate::text::tokens::query_terms("ошибку в тестах");
        let added = e.cross_lingual_terms("ошибку в тестах", &terms);
        assert!(added.iter().any(|t| t == "error"), "{added:?}");
        assert!(added.iter().any(|t| t == "test"), "{added:?}");
    }

    #[test]
    fn english_and_stopwords_are_not_expanded() {
        let e = shared().expect("table");
        let q = "fix the failing tests где";
        let terms = crate::text::tokens::query_terms(q);
        assert!(e.cross_lingual_terms(q, &terms).is_empty());
    }

    #[test]
    fn an_inflected_word_without_a_row_takes_its_stem_row() {
        let e = shared().expect("table");
        for word in ["изменения", "сертификата", "аккаунта", "резервное"]
        {
            assert!(e.table.word(word).is_none(), "{word} has its own row");
            let stem = super::super::russian_stem(word).unwrap();
            assert!(
                e.table.stem(&stem).is_some(),
                "{word}: no row for stem {stem}"
            );
        }
        let v = e.word_vector("изменения").expect("stem row");
        let near = e.english_neighbours(&v, 3, 0.5);
        assert!(near.iter().any(|(w, _)| w.starts_with("chang")), "{near:?}");
    }
}
