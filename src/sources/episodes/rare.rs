//! The lexical candidates that hold a rare word of the question: matches no vector or gist
//! evidence may push below an event those arms alone reached.
//!
//! Why: people ask whole questions that name one specific thing (a tool, a config key, an error
//! code, a function) among a dozen ordinary words, most of which the session never said. Such an
//! event matches only part of the question, so [`super::rerank`] used to give it one partial
//! lexical share, and an event of another session that the vector and gist arms both placed
//! first outranked it: the session was first for the lexical arm alone 93 % of the time and for
//! the lane 54 % (docs/RANKING.md, "Rare words"). A word that occurs in a handful of events of
//! one session in hundreds is what BM25's IDF is for: when the question names it, the session
//! that holds it is the answer before anything that is merely near.
//!
//! Only identifiers count (`tokens::identifier_terms`: a compound, a word of letters and digits,
//! or words joined as a file name, a path or a flag, matched as a phrase, as the question spells
//! it): in a history of a few dozen sessions every ordinary word
//! of a paraphrase is held by one session or two, so rarity alone promoted the wrong sessions
//! (tuning split: paraphrase MRR 0.43 → 0.39, cross-lingual 0.63 → 0.58). Rare is counted in
//! root sessions, not events (an identifier recurs through its one session and its subagents):
//! at most [`MAX_EVENTS`] events hold it, and they belong to at most one root session in
//! [`SESSIONS_PER_RARE`] (at least one).

use std::collections::HashSet;

use rusqlite::Connection;

use crate::sources::fts;

/// Identifiers held by more events than this are not rare (their matches are walked no further).
const MAX_EVENTS: u64 = 500;

/// A rare term's sessions: at most one in this many of the index's sessions (at least one).
const SESSIONS_PER_RARE: u64 = 200;

/// The ids of `lexical` that hold a rare identifier of the query (see the module docs).
pub(super) fn rare_term_events(
    c: &Connection,
    own_terms: &[String],
    identifiers: &[String],
    lexical: &[(i64, f64)],
) -> rusqlite::Result<HashSet<i64>> {
    let mut out = HashSet::new();
    // With one word every lexical match holds all of the question: nothing to protect.
    if own_terms.len() < 2 || identifiers.is_empty() || lexical.is_empty() {
        return Ok(out);
    }
    let sessions: i64 = c.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))?;
    let allowed = (sessions.max(0) as u64 / SESSIONS_PER_RARE).max(1) as usize;
    let wanted: HashSet<i64> = lexical.iter().map(|(id, _)| *id).collect();
    // A subagent's events are its root session's: an identifier its parent passed on to it is
    // still held by one session.
    // At most one event past the limit is read: a common identifier costs no more than that.
    let mut stmt = c.prepare_cached(
        "SELECT f.rowid, coalesce(s.parent_session_id, e.session_id)
         FROM (SELECT rowid FROM events_fts WHERE events_fts MATCH ?1 LIMIT ?2) f
              JOIN events e ON e.id = f.rowid
              LEFT JOIN sessions s ON s.session_id = e.session_id",
    )?;
    for term in identifiers {
        let mut held: Vec<i64> = Vec::new();
        let mut in_sessions: HashSet<String> = HashSet::new();
        let mut rows = stmt.query(rusqlite::params![fts::quote(term), MAX_EVENTS + 1])?;
        while let Some(r) = rows.next()? {
            held.push(r.get(0)?);
            let session: String = r.get(1)?;
            let root = session.split('/').next().unwrap_or(&session);
            in_sessions.insert(root.to_string());
            if in_sessions.len() > allowed {
                break;
            }
        }
        if in_sessions.len() <= allowed && held.len() as u64 <= MAX_EVENTS {
            out.extend(held.into_iter().filter(|id| wanted.contains(id)));
        }
    }
    Ok(out)
}
