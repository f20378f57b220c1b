//! The episodes lane's lexical arm around the full-text index (`sources::lexical`): the query's
//! terms as weighted groups, the request's session filters as session keys, the noise floor, and
//! the check of each ranked row against the reader's snapshot of the store. Kept apart from the
//! store's reader (`search.rs`), which fuses this arm with the vector and gist arms.

use std::collections::HashSet;

use rusqlite::{params_from_iter, types::Value as SqlValue, Connection, OptionalExtension};
use tantivy::Searcher;

use super::search::{push_filters, EpisodeQuery, EpisodeStoreError};
use crate::sources::lexical::{LexicalIndex, Ranked, TermGroup};

/// The lexical arm's terms as the index asks them: each a group of its own, a question's own
/// term at full weight, a cross-lingual expansion at [`EXPANSION_WEIGHT`].
pub(super) fn term_groups(q: &EpisodeQuery) -> Vec<TermGroup> {
    q.terms
        .iter()
        .map(|t| TermGroup {
            terms: vec![t.clone()],
            weight: if q.own_terms.is_empty() || q.own_terms.contains(t) {
                1.0
            } else {
                EXPANSION_WEIGHT
            },
        })
        .collect()
}

/// A lexical hit scoring below this share of the best one matched only words nearly every event
/// holds (their IDF is next to nothing): not evidence, so not a lexical hit that could rank above
/// what the vector arm found. No relevance set moved with it at 0.02 or 0.10 (docs/RANKING.md).
pub(super) const NOISE_FLOOR: f64 = 0.02;

/// The weight of a cross-lingual expansion term against a question's own term (issue 33's
/// spike, docs/RANKING.md).
const EXPANSION_WEIGHT: f32 = 0.5;

/// The keys of the sessions the request's workspace, session and outcome filters allow
/// (`None`: no such filter); the time filter is the index's own.
pub(super) fn session_filter(
    c: &Connection,
    q: &EpisodeQuery,
) -> Result<Option<HashSet<u64>>, EpisodeStoreError> {
    if q.workspaces.is_empty() && q.session_ids.is_empty() && q.outcome.is_none() {
        return Ok(None);
    }
    let mut sql = "SELECT k.key FROM session_keys k JOIN sessions s ON s.session_id = k.session_id
                   WHERE 1"
        .to_string();
    let mut args: Vec<SqlValue> = Vec::new();
    let only_sessions = EpisodeQuery {
        since_ms: None,
        until_ms: None,
        ..q.clone()
    };
    push_filters(&mut sql, &mut args, &only_sessions);
    let mut stmt = c.prepare_cached(&sql)?;
    let keys = stmt
        .query_map(params_from_iter(args.iter()), |r| r.get::<_, i64>(0))?
        .map(|k| k.map(|k| k as u64))
        .collect::<Result<HashSet<u64>, _>>()?;
    Ok(Some(keys))
}

/// The ranked rows that are events of their session in this snapshot of the store (the index
/// may be a commit ahead of it, or behind it while the writer commits).
pub(super) fn stored_now(
    c: &Connection,
    ranked: Vec<Ranked>,
) -> Result<Vec<Ranked>, EpisodeStoreError> {
    let mut stmt = c.prepare_cached("SELECT session_key FROM event_rows WHERE id = ?1")?;
    let mut out = Vec::with_capacity(ranked.len());
    for r in ranked {
        let key: Option<i64> = stmt.query_row([r.id], |row| row.get(0)).optional()?;
        if key == Some(r.key as i64) {
            out.push(r);
        }
    }
    Ok(out)
}

/// The lexical arm's answer and the index it came from, for the rerank's questions about which
/// of its rows hold which words.
pub(super) struct LexicalHits<'a> {
    pub index: &'a LexicalIndex,
    pub searcher: &'a Searcher,
    pub ranked: &'a [Ranked],
}

impl LexicalHits<'_> {
    /// (event id, BM25) of each row, best first.
    pub fn pairs(&self) -> Vec<(i64, f64)> {
        self.ranked.iter().map(|r| (r.id, r.score)).collect()
    }
}
