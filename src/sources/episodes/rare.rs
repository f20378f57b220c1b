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
//! or words joined as a file name, a path or a flag, all of whose words one event holds, as the
//! question spells it): in a history of a few dozen sessions every ordinary word
//! of a paraphrase is held by one session or two, so rarity alone promoted the wrong sessions
//! (tuning split: paraphrase MRR 0.43 → 0.39, cross-lingual 0.63 → 0.58). Rare is counted in
//! root sessions, not events (an identifier recurs through its one session and its subagents):
//! at most [`MAX_EVENTS`] events hold it, and they belong to at most one root session in
//! [`SESSIONS_PER_RARE`] (at least one).

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension};

use super::search::{EpisodeStoreError, LexicalHits};

/// Identifiers held by more events than this are not rare (their matches are walked no further).
const MAX_EVENTS: usize = 500;

/// A rare term's sessions: at most one in this many of the index's sessions (at least one).
const SESSIONS_PER_RARE: u64 = 200;

/// The ids of the lexical hits that hold a rare identifier of the query (see the module docs).
pub(super) fn rare_term_events(
    c: &Connection,
    lex: &LexicalHits<'_>,
    own_terms: &[String],
    identifiers: &[String],
) -> Result<HashSet<i64>, EpisodeStoreError> {
    let mut out = HashSet::new();
    // With one word every lexical match holds all of the question: nothing to protect.
    if own_terms.len() < 2 || identifiers.is_empty() || lex.ranked.is_empty() {
        return Ok(out);
    }
    let sessions: i64 = c.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))?;
    let allowed = (sessions.max(0) as u64 / SESSIONS_PER_RARE).max(1) as usize;
    let wanted: HashSet<i64> = lex.ranked.iter().map(|r| r.id).collect();
    // A subagent's events are its root session's: an identifier its parent passed on to it is
    // still held by one session.
    let mut root_of = c.prepare_cached(
        "SELECT coalesce(s.parent_session_id, k.session_id)
         FROM session_keys k LEFT JOIN sessions s ON s.session_id = k.session_id
         WHERE k.key = ?1",
    )?;
    let mut roots: HashMap<u64, String> = HashMap::new();
    for term in identifiers {
        // At most one event past the limit is read: a common identifier costs no more than that.
        let held = lex.index.rows_holding(lex.searcher, term, MAX_EVENTS + 1)?;
        if held.len() > MAX_EVENTS {
            continue;
        }
        let mut in_sessions: HashSet<String> = HashSet::new();
        for (_, key) in &held {
            if !roots.contains_key(key) {
                let session: Option<String> =
                    root_of.query_row([*key as i64], |r| r.get(0)).optional()?;
                let session = session.unwrap_or_default();
                let root = session.split('/').next().unwrap_or(&session).to_string();
                roots.insert(*key, root);
            }
            in_sessions.insert(roots[key].clone());
            if in_sessions.len() > allowed {
                break;
            }
        }
        if in_sessions.len() <= allowed {
            out.extend(
                held.into_iter()
                    .map(|(id, _)| id)
                    .filter(|id| wanted.contains(id)),
            );
        }
    }
    Ok(out)
}
