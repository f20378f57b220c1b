//! The episodes lane's vector arm: the events nearest to the query's vector, under exactly the
//! filters the lexical arm applies (the same SQL conditions, checked for every candidate).

use std::collections::HashMap;

use rusqlite::{params_from_iter, types::Value as SqlValue, Connection, OptionalExtension};

use super::search::{push_filters, EpisodeQuery, PER_SESSION_CAP};
use crate::sources::vectors::{split_id, VectorIndex};
use crate::text::embed::{self, Embedder};

/// Candidates taken from the Hamming scan before exact rescoring (more under filters, since
/// many nearest vectors may fall outside them).
const SCAN_DEPTH: usize = 32;
const SCAN_DEPTH_FILTERED: usize = 256;

/// (event id, cosine) of the nearest events, best first, at most [`PER_SESSION_CAP`] per session
/// and `q.limit` in all.
pub(super) fn ranking(
    c: &Connection,
    index: &VectorIndex,
    emb: &Embedder,
    query: &[f32],
    q: &EpisodeQuery,
    filtered: bool,
) -> rusqlite::Result<Vec<(i64, f32)>> {
    let mut sql = "SELECT e.text, e.session_id FROM events e
                   JOIN sessions s ON s.session_id = e.session_id WHERE e.id = ?"
        .to_string();
    let mut args = vec![SqlValue::Null];
    push_filters(&mut sql, &mut args, q);
    let mut stmt = c.prepare_cached(&sql)?;
    let total = index.len(c)?;
    let mut best: HashMap<i64, (f32, String)> = HashMap::new();
    let (mut skip, mut depth) = (
        0,
        if filtered {
            SCAN_DEPTH_FILTERED
        } else {
            SCAN_DEPTH
        },
    );
    loop {
        for vid in index.nearest(c, query, skip, depth)? {
            let (event, window) = split_id(vid);
            args[0] = SqlValue::Integer(event);
            let row: Option<(String, String)> = stmt
                .query_row(params_from_iter(args.iter()), |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()?;
            let Some((text, session)) = row else { continue };
            let Some(v) = emb.embed_window(&text, window) else {
                continue;
            };
            let cos = embed::dot(query, &v);
            let slot = best.entry(event).or_insert((f32::MIN, session));
            slot.0 = slot.0.max(cos);
        }
        skip += depth;
        if best.len() >= q.limit || skip >= total {
            break;
        }
        depth *= 4;
    }
    let mut ranked: Vec<(i64, f32, String)> = best
        .into_iter()
        .map(|(id, (cos, s))| (id, cos, s))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut per_session: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (id, cos, session) in ranked {
        let n = per_session.entry(session).or_default();
        if *n < PER_SESSION_CAP && out.len() < q.limit {
            *n += 1;
            out.push((id, cos));
        }
    }
    Ok(out)
}
