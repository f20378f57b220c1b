//! Session gists: one vector per session for what it was about — its title, what the person
//! asked and what the agent answered in the end — so a question in other words ("where did we
//! stop the logs from filling the disk?") finds the session as a whole, not only the one event
//! whose few words happen to be near it.
//!
//! Why: an event's vector sums the rows of at most [`embed::WINDOW_WORDS`] words, so a paraphrase
//! lands near whichever tool output shares a few common words with it. A session's prompts and
//! final answers name its topic several times in different words; their sum stands out from the
//! other sessions. Gists are written by `knowledge index` from stored (redacted) text, like the
//! event vectors ([`backfill`]), and kept in memory per index revision by [`GistIndex`].
//!
//! The same scan says when nothing is relevant: a query whose nearest gist is below
//! [`MIN_GIST_COSINE`] is about nothing in the index (unless its words match outright).

use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection};

use crate::sources::sqlite;
use crate::text::embed::{self, Embedder};

/// The gists table (writer side creates it).
const TABLE: &str = "session_gists";

/// The `meta` key that changes whenever gists are written.
const GISTS_REV_META: &str = "session_gists_rev";

/// The person's prompts that make up a gist (the first ones: what the session set out to do).
const HUMAN_TEXTS: usize = 6;

/// The agent's final messages that make up a gist (the last ones: what was done).
const FINAL_TEXTS: usize = 2;

/// Create the gists table (writer side).
pub fn ensure_schema(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {TABLE}(
             session_id TEXT PRIMARY KEY, events INTEGER NOT NULL, vec BLOB NOT NULL)"
    ))
}

/// Drop every gist (`[search] semantic = false`).
pub fn drop_all(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("DROP TABLE IF EXISTS {TABLE}"))?;
    conn.execute("DELETE FROM meta WHERE key = ?1", [GISTS_REV_META])?;
    Ok(())
}

/// Write the gist of every session that has none or has gained events since its gist was
/// written, and drop the gists of sessions no longer indexed. Returns the sessions embedded.
pub fn backfill(conn: &mut Connection, emb: &Embedder) -> rusqlite::Result<u64> {
    ensure_schema(conn)?;
    let stale: Vec<(String, i64)> = {
        let mut stmt = conn.prepare(&format!(
            "SELECT s.session_id, s.events FROM sessions s
             LEFT JOIN {TABLE} g ON g.session_id = s.session_id
             WHERE g.session_id IS NULL OR g.events <> s.events"
        ))?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    let tx = conn.transaction()?;
    let gone = tx.execute(
        &format!("DELETE FROM {TABLE} WHERE session_id NOT IN (SELECT session_id FROM sessions)"),
        [],
    )?;
    for (session, events) in &stale {
        let parts = gist_texts(&tx, session)?;
        match gist_vector(emb, &parts) {
            Some(v) => {
                tx.execute(
                    &format!(
                        "INSERT OR REPLACE INTO {TABLE}(session_id, events, vec) VALUES(?1, ?2, ?3)"
                    ),
                    params![session, events, embed::to_le_bytes(&v)],
                )?;
            }
            None => {
                tx.execute(
                    &format!("DELETE FROM {TABLE} WHERE session_id = ?1"),
                    [session],
                )?;
            }
        }
    }
    if !stale.is_empty() || gone > 0 || sqlite::meta_get(&tx, GISTS_REV_META).is_none() {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        sqlite::meta_set(&tx, GISTS_REV_META, &stamp.to_string())?;
    }
    tx.commit()?;
    Ok(stale.len() as u64)
}

/// The texts a session's gist is made of: its title and subagent description, its first
/// prompts, its last answers (stored text, redacted at index time).
fn gist_texts(c: &Connection, session: &str) -> rusqlite::Result<Vec<String>> {
    let (title, description): (Option<String>, Option<String>) = c.query_row(
        "SELECT title, agent_description FROM sessions WHERE session_id = ?1",
        [session],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut parts: Vec<String> = title.into_iter().chain(description).collect();
    let mut human = c.prepare_cached(
        "SELECT text FROM events WHERE session_id = ?1 AND human = 1 AND text <> ''
         ORDER BY seq LIMIT ?2",
    )?;
    let rows = human.query_map(params![session, HUMAN_TEXTS as i64], |r| r.get(0))?;
    parts.extend(rows.collect::<Result<Vec<String>, _>>()?);
    let mut last = c.prepare_cached(
        "SELECT text FROM events WHERE session_id = ?1 AND event_type = 'assistant/message'
         AND text <> '' ORDER BY seq DESC LIMIT ?2",
    )?;
    let rows = last.query_map(params![session, FINAL_TEXTS as i64], |r| r.get(0))?;
    parts.extend(rows.collect::<Result<Vec<String>, _>>()?);
    Ok(parts)
}

/// The gist of a session's texts: the normalised sum of each text's own unit vector (its first
/// window), so a long prompt weighs as much as a short title and no text drowns the others.
pub fn gist_vector(emb: &Embedder, parts: &[String]) -> Option<embed::Vector> {
    let mut acc = vec![0f32; emb.dims()];
    let mut any = false;
    for p in parts {
        if let Some(v) = emb.embed_window(p, 0) {
            acc.iter_mut().zip(&v).for_each(|(a, x)| *a += x);
            any = true;
        }
    }
    if !any {
        return None;
    }
    let norm = embed::dot(&acc, &acc).sqrt();
    (norm > 0.0 && norm.is_finite()).then(|| acc.iter().map(|x| x / norm).collect())
}

/// Every session's gist, as loaded for one index revision.
pub struct Gists {
    rev: String,
    sessions: Vec<String>,
    dims: usize,
    vecs: Vec<f32>,
}

/// Below this cosine between the query and the nearest session gist, nothing in the index is
/// about the query (unless an event holds every word of it). Calibrated on the tuning set's
/// "absent" questions against its answered ones (`docs/RELEVANCE.md`, issue 19 part 2): their
/// best gists reach 0.21–0.56, the best gists of answered questions 0.38 and more.
pub const MIN_GIST_COSINE: f32 = 0.36;

/// [`MIN_GIST_COSINE`] for a query with cross-lingual expansions (its lexical matches are
/// translations): the tuning set's answered Russian questions reach down to 0.28.
pub const MIN_GIST_COSINE_TRANSLATED: f32 = 0.27;

impl Gists {
    /// (session id, cosine) of every session with a gist, in storage order.
    pub fn cosines(&self, query: &[f32]) -> Vec<(&str, f32)> {
        if query.len() != self.dims || self.dims == 0 {
            return Vec::new();
        }
        self.vecs
            .chunks_exact(self.dims)
            .zip(&self.sessions)
            .map(|(v, s)| (s.as_str(), embed::dot(query, v)))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// The gists of one store, reloaded when the index changes.
#[derive(Default)]
pub struct GistIndex {
    cache: Mutex<Option<Arc<Gists>>>,
}

impl GistIndex {
    /// The current gists (`None`: the store has none — semantic search off, or an index built
    /// before gists existed).
    pub fn load(&self, c: &Connection) -> rusqlite::Result<Option<Arc<Gists>>> {
        let Some(rev) = sqlite::meta_get(c, GISTS_REV_META) else {
            return Ok(None);
        };
        let rev = format!(
            "{rev}:{}",
            sqlite::meta_get(c, "index_rev").unwrap_or_default()
        );
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(g) = cache.as_ref().filter(|g| g.rev == rev) {
            return Ok(Some(g.clone()));
        }
        let mut stmt = c.prepare(&format!("SELECT session_id, vec FROM {TABLE}"))?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })?;
        let (mut sessions, mut vecs, mut dims) = (Vec::new(), Vec::new(), 0usize);
        for row in rows {
            let (s, b) = row?;
            let v = embed::from_le_bytes(&b);
            if dims == 0 {
                dims = v.len();
            }
            if v.len() == dims && dims > 0 {
                sessions.push(s);
                vecs.extend(v);
            }
        }
        let g = Arc::new(Gists {
            rev,
            sessions,
            dims,
            vecs,
        });
        *cache = Some(g.clone());
        Ok(Some(g))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_through_their_blob() {
        let v = vec![0.5f32, -0.25, 1.0];
        assert_eq!(embed::from_le_bytes(&embed::to_le_bytes(&v)), v);
    }
}
