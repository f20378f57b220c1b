//! The vector arm shared by the episodes and code stores: how text vectors are stored beside the
//! rows they describe, how `knowledge index` fills them in, how a query finds its nearest
//! neighbours, and how the arm's ranking is fused with the lexical one inside a lane.
//!
//! A row (event or chunk) gets one vector per window of its text ([`embed::WINDOW_WORDS`]),
//! kept as one sign bit per dimension (the first 128) under `parent_id * 8 + window`, packed into
//! one BLOB per block of 1,024 rows ([`write`]: the indexer embeds rows as it stores them, and
//! `knowledge index` fills in what is missing from stored text). Delete and update triggers drop
//! a row's block and mark it for re-embedding, so ids reused later never inherit a stale vector.
//! The scan ([`scan`]) ranks the codes by Hamming distance, from memory in a long-running
//! process and streamed from the blocks in a one-shot call; the few best candidates are then
//! re-embedded from their stored text and ranked by exact cosine, after the store has applied
//! the request's filters to them in SQL, exactly as for lexical hits.

use std::collections::HashMap;

pub mod export;
mod scan;
#[cfg(test)]
mod storage_tests;
mod write;

pub use scan::VectorIndex;
pub use write::{backfill, drop_all, ensure_schema, Builder};

/// Windows per row are numbered below this (vector id = parent id × 8 + window).
const IDS_PER_ROW: i64 = 8;

/// The vectors of one kind of row.
#[derive(Debug, Clone, Copy)]
pub struct VectorTable {
    /// The codes table (packed blocks, see [`write`]).
    pub name: &'static str,
    /// The codes table of the first layout (one row per window), dropped on upgrade.
    pub legacy: &'static str,
    /// The table of the rows described (`id INTEGER PRIMARY KEY`).
    pub parent: &'static str,
    /// SQL expression over the parent row (aliased `c`): the text that is embedded.
    pub text_sql: &'static str,
    /// Parent columns whose change invalidates the vectors.
    pub text_cols: &'static str,
}

pub const EVENTS: VectorTable = VectorTable {
    name: "event_vec_blocks",
    legacy: "event_vecs",
    parent: crate::sources::episodes::store::EVENT_ROWS,
    text_sql: "CASE WHEN typeof(c.text) = 'blob' THEN unpack_text(c.text) ELSE c.text END",
    text_cols: "text",
};

pub const CHUNKS: VectorTable = VectorTable {
    name: "chunk_vec_blocks",
    legacy: "chunk_vecs",
    parent: "chunks",
    text_sql: "c.path || ' ' || coalesce(c.symbol, '') || ' ' || c.text",
    text_cols: "text, path, symbol",
};

/// The text of a chunk that is embedded, as [`CHUNKS`]`.text_sql` yields it from the stored row
/// (the indexer embeds it before the row is read back, so both must agree).
pub fn chunk_text(path: &str, symbol: Option<&str>, text: &str) -> String {
    format!("{path} {} {text}", symbol.unwrap_or(""))
}

/// The parent row and window a vector id stands for.
pub fn split_id(vector_id: i64) -> (i64, usize) {
    (
        vector_id.div_euclid(IDS_PER_ROW),
        vector_id.rem_euclid(IDS_PER_ROW) as usize,
    )
}

/// Reciprocal-rank fusion constant inside a lane (the contract's lanes use 60 too).
pub const RRF_K: f64 = 60.0;

/// The weight of a vector-only hit above [`CONFIDENT_COSINE`] relative to a lexical hit.
pub const VEC_WEIGHT: f64 = 0.8;

/// A vector hit below this cosine is noise, not a paraphrase: it is not fused at all.
pub const MIN_COSINE: f32 = 0.35;

/// A vector-only hit at or above this cosine competes with lexical hits by RRF; below it, it
/// enters after every lexical hit (calibrated on the relevance benchmark, `docs/RELEVANCE.md`).
pub const CONFIDENT_COSINE: f32 = 0.7;

/// One fused row: its id, its lexical rank and score, its cosine.
#[derive(Debug, Clone, PartialEq)]
pub struct FusedRow {
    pub id: i64,
    pub lexical: Option<f64>,
    pub cosine: Option<f32>,
    pub score: f64,
}

/// The fused entry of `id`, created (and its first-seen order noted) when new.
pub(crate) fn slot<'a>(
    by_id: &'a mut HashMap<i64, FusedRow>,
    order: &mut Vec<i64>,
    id: i64,
) -> &'a mut FusedRow {
    by_id.entry(id).or_insert_with(|| {
        order.push(id);
        FusedRow {
            id,
            lexical: None,
            cosine: None,
            score: 0.0,
        }
    })
}

/// Fuse the lexical ranking (id, score; best first) with the vector ranking (id, cosine; best
/// first). Lexical hits keep their order: BM25 is precise when the query's words (or their
/// cross-lingual expansions) occur, and a vector arm that reordered them cost the questions
/// lexical search already answers. A vector-only hit competes with them by weighted RRF only
/// when its cosine is at least [`CONFIDENT_COSINE`]; a weaker one (down to [`MIN_COSINE`]) fills
/// in after them, in vector order. A lexical hit the vector arm also found carries its cosine.
pub fn fuse(lexical: &[(i64, f64)], vector: &[(i64, f32)]) -> Vec<FusedRow> {
    let mut by_id: HashMap<i64, FusedRow> = HashMap::new();
    let mut order = Vec::new();
    for (rank, (id, score)) in lexical.iter().enumerate() {
        let f = slot(&mut by_id, &mut order, *id);
        f.lexical = Some(*score);
        f.score = 1.0 / (RRF_K + rank as f64 + 1.0);
    }
    for (rank, (id, cos)) in vector.iter().filter(|(_, c)| *c >= MIN_COSINE).enumerate() {
        let f = slot(&mut by_id, &mut order, *id);
        f.cosine = Some(*cos);
        if f.lexical.is_none() {
            f.score = if *cos >= CONFIDENT_COSINE {
                VEC_WEIGHT / (RRF_K + rank as f64 + 1.0)
            } else {
                // Negative: after every lexical hit, in vector order.
                -((rank + 1) as f64)
            };
        }
    }
    let mut out: Vec<FusedRow> = order
        .into_iter()
        .filter_map(|id| by_id.remove(&id))
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        assert_eq!(split_id(13 * 8 + 3), (13, 3));
    }

    #[test]
    fn fusion_keeps_lexical_order_and_adds_confident_vector_hits() {
        let lex = [(1, 9.0), (2, 5.0)];
        let vec = [(3, 0.8), (1, 0.6), (4, 0.1)];
        let fused = fuse(&lex, &vec);
        let ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
        assert_eq!(ids[0], 1, "found by both arms");
        assert!(ids.contains(&3));
        assert!(!ids.contains(&4), "a weak neighbour is not fused");
        assert_eq!(fused[0].lexical, Some(9.0));
        assert_eq!(fused[0].cosine, Some(0.6));
    }

    #[test]
    fn a_weak_vector_only_hit_fills_in_after_every_lexical_hit() {
        let lex = [(1, 9.0), (2, 5.0), (3, 1.0)];
        let vec = [(7, CONFIDENT_COSINE - 0.05), (3, 0.9), (8, MIN_COSINE)];
        let ids: Vec<i64> = fuse(&lex, &vec).iter().map(|f| f.id).collect();
        assert_eq!(
            ids,
            [1, 2, 3, 7, 8],
            "lexical order kept, weak neighbours after it"
        );
        assert!(
            fuse(&[], &[(5, MIN_COSINE - 0.01)]).is_empty(),
            "noise is no answer"
        );
    }
}
