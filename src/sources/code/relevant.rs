//! When the code lane answers "nothing relevant" instead of the nearest chunks.
//!
//! The vector arm always has a nearest chunk, and the lexical arm's loosest tier matches any one
//! word, so a question about something the code does not hold used to get the closest code back.
//! The lane is empty (and says why) when no lexical hit holds most of the query's words and the
//! best chunk's cosine is no better than the best an unrelated query would reach in a store of
//! this size (and at least the vector arm's own floor, `vectors::MIN_COSINE`).
//!
//! That bar is measured on the embedding table, never on questions: the cosine between bags of
//! words drawn at random from the table (a query-sized bag against a window-sized one) is
//! roughly normal with mean `mu` and deviation `sigma`; the best of `n` unrelated chunks then
//! reaches about `mu + sigma * sqrt(2 ln n)` (the expected maximum of `n` normal draws). It is
//! computed from whatever table is compiled in, once per store, so a new table brings its own.

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension};

use crate::text::embed::{self, Embedder, WINDOW_WORDS};

/// Random pairs measured for the unrelated-cosine distribution.
const PAIRS: usize = 256;
/// Words in an unrelated query bag (a short question's content words).
const QUERY_WORDS: usize = 3;
/// Lexical hits checked for holding most of the query's words.
const HOLDER_CANDIDATES: usize = 20;

/// Mean and deviation of the cosine between unrelated texts under `emb`'s table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unrelated {
    pub mu: f32,
    pub sigma: f32,
}

impl Unrelated {
    /// Measured on `emb`'s own rows with a fixed seed (the same table gives the same bar).
    pub fn measure(emb: &Embedder) -> Option<Unrelated> {
        let table = emb.table();
        let n = table.english_len();
        if n < 2 * WINDOW_WORDS {
            return None;
        }
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            // xorshift64*: a fixed, dependency-free sequence.
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        };
        let mut bag = |words: usize| {
            let mut acc = vec![0f32; emb.dims()];
            for _ in 0..words {
                table.add_row(table.english(next()).0, &mut acc);
            }
            let norm = acc.iter().map(|x| x * x).sum::<f32>().sqrt();
            (norm > 0.0).then(|| acc.iter().map(|x| x / norm).collect::<Vec<f32>>())
        };
        let mut cosines = Vec::with_capacity(PAIRS);
        for _ in 0..PAIRS {
            if let (Some(q), Some(w)) = (bag(QUERY_WORDS), bag(WINDOW_WORDS)) {
                cosines.push(embed::dot(&q, &w));
            }
        }
        if cosines.len() < PAIRS / 2 {
            return None;
        }
        let len = cosines.len() as f32;
        let mu = cosines.iter().sum::<f32>() / len;
        let var = cosines.iter().map(|c| (c - mu) * (c - mu)).sum::<f32>() / len;
        Some(Unrelated {
            mu,
            sigma: var.sqrt(),
        })
    }

    /// The best cosine an unrelated query reaches among `chunks` chunk vectors.
    pub fn best_of(&self, chunks: usize) -> f32 {
        let n = chunks.max(2) as f32;
        self.mu + self.sigma * (2.0 * n.ln()).sqrt()
    }
}

/// Whether one of the first lexical hits (`ids`, best first) holds most of `terms` in its body,
/// symbol or path: at least half of them, and two when the query has two or more.
pub(super) fn holds_most_terms(
    c: &Connection,
    terms: &[String],
    ids: &[i64],
) -> rusqlite::Result<bool> {
    let n = terms.len();
    if n == 0 {
        return Ok(false);
    }
    let needed = n.div_ceil(2).max(n.min(2));
    let mut stmt = c.prepare_cached(
        "SELECT terms || ' ' || sym_terms || ' ' || path_terms FROM chunks WHERE id=?1",
    )?;
    for id in ids.iter().take(HOLDER_CANDIDATES) {
        let Some(text) = stmt.query_row([id], |r| r.get::<_, String>(0)).optional()? else {
            continue;
        };
        let held: HashSet<&str> = text.split_whitespace().collect();
        if terms.iter().filter(|t| held.contains(t.as_str())).count() >= needed {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unrelated_bar_rises_with_the_store_and_stays_below_one() {
        let Ok(emb) = embed::shared() else {
            return;
        };
        let u = Unrelated::measure(emb).expect("the compiled-in table measures");
        assert_eq!(Some(u), Unrelated::measure(emb), "a fixed seed");
        assert!(u.sigma > 0.0 && u.mu.abs() < 0.9, "{u:?}");
        let (small, large) = (u.best_of(10), u.best_of(100_000));
        assert!(small < large && large < 1.0, "{small} {large}");
    }
}
