//! The episodes lane's final order: events that hold every word of the query first, in BM25
//! order, then the rest ranked by what they and their session are about, or nothing at all when
//! nothing in the index is about the question.
//!
//! Why: a question in other words shares only a few common words with its session, so the
//! lexical arm's partial matches (any one word) used to fill the lane before the vector arm had a
//! say, and a question about something not in the index always got the nearest events back.
//! Here a partial lexical match, an event the vector arm found and a session whose gist
//! ([`super::gist`]) is near the query each add a reciprocal-rank share, so an event of the
//! session the question is about rises above events that merely share a word. An event that holds
//! a rare word the question names ([`super::rare`]) stays above everything only those arms
//! reached. A message whose sentence vector is near the query (`messages`, its score the cosine
//! minus its hub term) adds its own share, and from [`STRONG_MESSAGE_SCORE`] stands above every
//! partial lexical match, so many weak lexical matches never bury a strong semantic one. When no
//! event holds every word of the query or a rare one of them, no message is strongly near it and
//! no session's gist is near it, the lane is empty and says why.

use std::collections::{HashMap, HashSet};

use rusqlite::{params_from_iter, types::Value as SqlValue, Connection, OptionalExtension};

use super::gist::{self, Gists};
use super::messages::arm::MessageHit;
use super::search::{push_filters, EpisodeQuery, EpisodeStoreError, LexicalHits};
use super::store;
use crate::sources::vectors::{slot, FusedRow, MIN_COSINE};

/// Reciprocal-rank constant of this fusion: small, so a first rank counts clearly more than a
/// tenth (the lists are short: a lane's depth).
const K: f64 = 10.0;

/// Weight of a session's gist rank relative to a partial lexical match's rank.
const GIST_WEIGHT: f64 = 1.0;

/// Weight of an event's vector rank relative to a partial lexical match's rank.
const VECTOR_WEIGHT: f64 = 0.8;

/// Weight of an event's message-arm rank (its sentence vector's score, `messages`) relative to a
/// partial lexical match's rank.
const MESSAGE_WEIGHT: f64 = 1.0;

/// A message-arm score (cosine − hub term) from which the event counts at all: below it the
/// arm's ranks are noise (a neighbouring session's filler outranked the session a paraphrase
/// was about, `tests/session_gists.rs`).
const MIN_MESSAGE_SCORE: f32 = 0.3;

/// A message-arm score from which the event stands above every partial lexical match: a strong
/// semantic match is not buried under many weak lexical ones.
const STRONG_MESSAGE_SCORE: f32 = 0.35;

/// What a strong message-arm match adds: more than every partial share together, far less than
/// the rare-word tier (1e3).
const STRONG_TIER: f64 = 10.0;

/// Sessions taken from the gist ranking (each brings its best event when no arm found one).
const GIST_DEPTH: usize = 10;

/// The order of the lane, or why nothing is relevant.
pub(super) enum Reranked {
    Ranked(Vec<FusedRow>),
    NothingRelevant(String),
}

/// Rerank `lexical` (event, BM25; best first) and `nearest` (event, cosine; best first) with the
/// gists of `gists` for query vector `vector`.
pub(super) fn rerank(
    c: &Connection,
    q: &EpisodeQuery,
    lex: &LexicalHits<'_>,
    nearest: &[(i64, f32)],
    messages: &[MessageHit],
    gists: Option<&Gists>,
) -> Result<Reranked, EpisodeStoreError> {
    let pairs = lex.pairs();
    let lexical = pairs.as_slice();
    let full = full_matches(lex, &q.own_terms)?;
    let rare = super::rare::rare_term_events(c, lex, &q.own_terms, &q.identifiers)?;
    let session_gists = match (gists, q.vector.as_deref()) {
        (Some(g), Some(v)) if !g.is_empty() => g.cosines(v),
        _ => Vec::new(),
    };
    if full.is_empty() && !session_gists.is_empty() {
        let best = session_gists
            .iter()
            .map(|(_, c)| *c)
            .fold(f32::MIN, f32::max);
        // A query whose words were translated has lexical matches in another language: its
        // gist may be far while a translation matches, so it needs a farther gist to be empty.
        let expanded = q.terms.len() > q.own_terms.len();
        let needed = if expanded {
            gist::MIN_GIST_COSINE_TRANSLATED
        } else {
            gist::MIN_GIST_COSINE
        };
        let strong = messages
            .first()
            .is_some_and(|m| m.score >= STRONG_MESSAGE_SCORE);
        if best < needed && !strong && rare.is_empty() && !holds_most_words(lex, &q.own_terms)? {
            return Ok(Reranked::NothingRelevant(format!(
                "{}: no event holds most of the query's words; nearest gist {best:.2} < {needed:.2}",
                crate::sources::NOTHING_RELEVANT
            )));
        }
    }
    let mut gist_ranked: Vec<(&str, f32)> = session_gists;
    gist_ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    gist_ranked.truncate(GIST_DEPTH);
    let gist_rank: HashMap<&str, (usize, f32)> = gist_ranked
        .iter()
        .enumerate()
        .map(|(i, (s, c))| (*s, (i, *c)))
        .collect();

    let mut by_id: HashMap<i64, FusedRow> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    let mut partial_rank = 0usize;
    for (id, score) in lexical {
        let f = slot(&mut by_id, &mut order, *id);
        f.lexical = Some(*score);
        if full.contains(id) {
            // Above every partial match, in BM25 order.
            f.score = 1e6 - order_score(f.id, lexical);
        } else if rare.contains(id) {
            // Below the full matches, above whatever only the vector and gist arms reached.
            f.score = 1e3 - order_score(f.id, lexical);
        } else {
            f.score += 1.0 / (K + partial_rank as f64 + 1.0);
            partial_rank += 1;
        }
    }
    let protected = |id: &i64| full.contains(id) || rare.contains(id);
    for (rank, (id, cos)) in nearest.iter().filter(|(_, c)| *c >= MIN_COSINE).enumerate() {
        let f = slot(&mut by_id, &mut order, *id);
        f.cosine = Some(*cos);
        if !protected(id) {
            f.score += VECTOR_WEIGHT / (K + rank as f64 + 1.0);
        }
    }
    for (rank, m) in messages
        .iter()
        .filter(|m| m.score >= MIN_MESSAGE_SCORE)
        .enumerate()
    {
        let strong = m.score >= STRONG_MESSAGE_SCORE;
        let f = slot(&mut by_id, &mut order, m.id);
        f.cosine = Some(f.cosine.map_or(m.cosine, |c| c.max(m.cosine)));
        if !protected(&m.id) {
            f.score += MESSAGE_WEIGHT / (K + rank as f64 + 1.0);
            if strong {
                f.score += STRONG_TIER;
            }
        }
    }
    // Every candidate's session adds its gist share; a session near the query that no arm
    // reached brings its first prompt.
    let mut session_of = c.prepare_cached("SELECT session_id FROM events WHERE id = ?1")?;
    let mut seen: HashSet<String> = HashSet::new();
    let ids: Vec<i64> = order.clone();
    for id in ids {
        let session: String = session_of.query_row([id], |r| r.get(0))?;
        if let Some((rank, cos)) = gist_rank.get(session.as_str()) {
            let f = by_id.get_mut(&id).expect("entry");
            if !protected(&id) {
                f.score += GIST_WEIGHT / (K + *rank as f64 + 1.0);
            }
            f.cosine.get_or_insert(*cos);
        }
        seen.insert(session);
    }
    for (rank, (session, cos)) in gist_ranked.iter().enumerate() {
        if seen.contains(*session) {
            continue;
        }
        let Some(id) = first_prompt(c, q, session)? else {
            continue;
        };
        order.push(id);
        by_id.insert(
            id,
            FusedRow {
                id,
                lexical: None,
                cosine: Some(*cos),
                score: GIST_WEIGHT / (K + rank as f64 + 1.0),
            },
        );
    }
    let mut out: Vec<FusedRow> = order
        .into_iter()
        .filter_map(|id| by_id.remove(&id))
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(Reranked::Ranked(out))
}

/// The 0-based BM25 rank of `id` in `lexical`, as a small number to subtract (earlier = larger).
fn order_score(id: i64, lexical: &[(i64, f64)]) -> f64 {
    lexical.iter().position(|(i, _)| *i == id).unwrap_or(0) as f64
}

/// The lexical hits that hold every one of the query's own terms (not its cross-lingual
/// expansions): the matches no other evidence may push down or drop.
fn full_matches(
    lex: &LexicalHits<'_>,
    own_terms: &[String],
) -> Result<HashSet<i64>, EpisodeStoreError> {
    if own_terms.is_empty() || lex.ranked.is_empty() {
        return Ok(HashSet::new());
    }
    let mut out: Option<HashSet<i64>> = None;
    for t in own_terms {
        let held = lex.index.holders(lex.searcher, t, lex.ranked)?;
        let both: HashSet<i64> = match out {
            None => held,
            Some(prev) => prev.intersection(&held).copied().collect(),
        };
        if both.is_empty() {
            return Ok(both);
        }
        out = Some(both);
    }
    Ok(out.unwrap_or_default())
}

/// Lexical candidates looked at for [`holds_most_words`]: the best of the lane's ranking.
const MOST_WORDS_CANDIDATES: usize = 50;

/// Whether one of the best lexical candidates holds most of the query's own words (at least two,
/// and at least half): such an event is about the question even when no event holds every word
/// and the gists are far (small or terse histories: a few sessions, an Aider log), so the lane
/// is not declared empty for it.
fn holds_most_words(
    lex: &LexicalHits<'_>,
    own_terms: &[String],
) -> Result<bool, EpisodeStoreError> {
    let n = own_terms.len();
    if n < 2 || lex.ranked.is_empty() {
        return Ok(false);
    }
    let needed = n.div_ceil(2).max(2);
    let best = &lex.ranked[..lex.ranked.len().min(MOST_WORDS_CANDIDATES)];
    let mut held: HashMap<i64, usize> = HashMap::new();
    for t in own_terms {
        for id in lex.index.holders(lex.searcher, t, best)? {
            let n = held.entry(id).or_default();
            *n += 1;
            if *n >= needed {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The first event a person wrote in `session` (else its first event) under the query's
/// filters: what stands for a session found by its gist.
///
/// It reads the stored texts (`events_packed`), not the `events` view: the view would unpack every packed text of
/// the session only to see that it is not empty, most of a reranked search's SQL. A packed value
/// (a BLOB) is never empty, since only long texts are packed (`sources::packed`). A store of the
/// first schema (one `events` table, no packing) is read as before.
///
/// `human` is 0 or 1 (a bool), so "human first, then by seq" is the first human event by seq,
/// else the first event by seq: two walks in seq order that stop at their first row, where one
/// sort by `human` read every row of the session (overflow pages and all).
fn first_prompt(c: &Connection, q: &EpisodeQuery, session: &str) -> rusqlite::Result<Option<i64>> {
    for human_only in [true, false] {
        let query = |rows: &str, non_empty: &str| {
            let mut sql = format!(
                "SELECT e.id FROM {rows} e JOIN sessions s ON s.session_id = e.session_id
                 WHERE e.session_id = ? AND {non_empty}"
            );
            if human_only {
                sql.push_str(" AND e.human = 1");
            }
            let mut args = vec![SqlValue::Text(session.to_string())];
            push_filters(&mut sql, &mut args, q);
            sql.push_str(" ORDER BY e.seq LIMIT 1");
            (sql, args)
        };
        let (sql, args) = query(
            store::EVENTS_PACKED,
            "(typeof(e.text) = 'blob' OR e.text <> '')",
        );
        let (mut stmt, args) = match c.prepare_cached(&sql) {
            Ok(stmt) => (stmt, args),
            Err(_) => {
                let (sql, args) = query("events", "e.text <> ''");
                (c.prepare_cached(&sql)?, args)
            }
        };
        let found = stmt
            .query_row(params_from_iter(args.iter()), |r| r.get(0))
            .optional()?;
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}
