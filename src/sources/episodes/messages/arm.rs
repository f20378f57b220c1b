//! The episodes lane's message arm: the query's sentence vector against every message vector,
//! each found event checked against the store's snapshot and the request's filters, at most
//! [`PER_SESSION_CAP`] events a session.
//!
//! Why apart from `search.rs`: the lane asks it for one ranked list; how the file is mapped,
//! scanned and checked is this module's business.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use rusqlite::{params_from_iter, types::Value as SqlValue, Connection, OptionalExtension};

use super::scan::{nearest, MessageIndex, ScanQuery};
use crate::sources::episodes::search::{push_filters, EpisodeQuery, PER_SESSION_CAP};
use crate::text::encoder::{Encoder, DIMS};

/// A query's sentence vector, and which hub term corrects it.
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceQuery {
    pub vector: [f32; DIMS],
    pub russian: bool,
}

impl SentenceQuery {
    /// The query's vector, when the encoder's assets are there.
    pub fn of(text: &str) -> Option<Arc<SentenceQuery>> {
        let enc = Encoder::shared().ok()?;
        Some(Arc::new(SentenceQuery {
            vector: enc.encode(text),
            russian: super::hub::is_russian(text),
        }))
    }
}

/// A request's sentence vector, encoded by whichever lane asks first and shared with the
/// others (a clone of the request shares it), so a question is encoded once however many lanes
/// read it. It holds the text it encoded: a request whose query was changed after a clone
/// encodes its own.
#[derive(Debug, Clone, Default)]
pub struct SentenceCell(Arc<OnceLock<(String, Option<Arc<SentenceQuery>>)>>);

impl SentenceCell {
    /// The vector of `query`, encoded on first use.
    pub fn get(&self, query: &str) -> Option<Arc<SentenceQuery>> {
        let (text, sq) = self
            .0
            .get_or_init(|| (query.to_string(), SentenceQuery::of(query)));
        match text == query {
            true => sq.clone(),
            false => SentenceQuery::of(query),
        }
    }
}

/// An event the arm found: (event id, score = cosine − hub, cosine).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MessageHit {
    pub id: i64,
    pub score: f32,
    pub cosine: f32,
}

/// Records scanned for, before the store's checks, per event wanted.
const DEPTH_FACTOR: usize = 4;

/// The events nearest to `sq`, best first, under `q`'s filters (`keys`: the sessions the filters
/// allow, when they name some), at most `q.limit`.
pub fn ranking(
    c: &Connection,
    index: &MessageIndex,
    db: &Path,
    sq: &SentenceQuery,
    q: &EpisodeQuery,
    keys: Option<&HashSet<u64>>,
) -> rusqlite::Result<Vec<MessageHit>> {
    let Some(store_id) = super::stored_id(c) else {
        return Ok(Vec::new());
    };
    let Ok(Some(mapped)) = index.mapped(db, &store_id) else {
        return Ok(Vec::new());
    };
    let found = nearest(
        &mapped,
        &ScanQuery {
            vector: &sq.vector,
            russian: sq.russian,
            keys,
            depth: q.limit.max(1) * DEPTH_FACTOR,
        },
    );
    let mut sql = "SELECT e.session_id FROM events e
                   JOIN sessions s ON s.session_id = e.session_id
                   JOIN session_keys k ON k.session_id = e.session_id
                   WHERE e.id = ? AND e.seq = ? AND k.key = ?"
        .to_string();
    let mut args = vec![SqlValue::Null, SqlValue::Null, SqlValue::Null];
    push_filters(&mut sql, &mut args, q);
    let mut stmt = c.prepare_cached(&sql)?;
    let mut per_session: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for n in found {
        args[0] = SqlValue::Integer(n.event);
        args[1] = SqlValue::Integer(n.seq as i64);
        args[2] = SqlValue::Integer(n.key);
        // A record of an event the store no longer holds as it was (rewritten, rolled back) or
        // outside the filters is skipped.
        let session: Option<String> = stmt
            .query_row(params_from_iter(args.iter()), |r| r.get(0))
            .optional()?;
        let Some(session) = session else { continue };
        let count = per_session.entry(session).or_default();
        if *count >= PER_SESSION_CAP {
            continue;
        }
        *count += 1;
        out.push(MessageHit {
            id: n.event,
            score: n.score,
            cosine: n.cosine,
        });
        if out.len() >= q.limit {
            break;
        }
    }
    Ok(out)
}
