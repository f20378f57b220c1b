//! The code lane's vector arm: the chunks nearest to the query's vector, under exactly the
//! filters the lexical arm applies (the same SQL conditions, checked for every candidate).

use std::collections::{HashMap, HashSet};

use rusqlite::{params_from_iter, types::Value as SqlValue, Connection, OptionalExtension};

use super::model::CodeQuery;
use super::search::{candidate_row, push_filters, Candidate, CAND_COLS, CAND_TAIL};
use crate::sources::vectors::{split_id, VectorIndex, CHUNKS};
use crate::text::embed::{self, Embedder};

/// Candidates taken from the Hamming scan before exact rescoring.
const SCAN_DEPTH: usize = 32;

fn filtered(q: &CodeQuery) -> bool {
    !(q.workspaces.is_empty() && q.paths.is_empty() && q.since_ms.is_none() && q.until_ms.is_none())
}

/// `SELECT … FROM chunks c JOIN files f … WHERE c.id = ? AND <filters>` with `extra` columns.
fn by_id_sql(q: &CodeQuery, extra: &str) -> (String, Vec<SqlValue>) {
    let mut sql = format!(
        "SELECT {CAND_COLS}, 0.0, {CAND_TAIL}{extra} FROM chunks c
         JOIN files f ON f.id = c.file_id WHERE c.id = ?"
    );
    let mut args = vec![SqlValue::Null];
    push_filters(&mut sql, &mut args, q, "c");
    (sql, args)
}

/// (chunk row id, cosine) of the nearest chunks, best first, at most `limit`.
pub(super) fn ranking(
    c: &Connection,
    index: &VectorIndex,
    emb: &Embedder,
    query: &[f32],
    q: &CodeQuery,
    limit: usize,
) -> rusqlite::Result<Vec<(i64, f32)>> {
    let (sql, mut args) = by_id_sql(q, &format!(", {}", CHUNKS.text_sql));
    let mut stmt = c.prepare_cached(&sql)?;
    let total = index.len(c)?;
    let mut best: HashMap<i64, f32> = HashMap::new();
    let (mut skip, mut depth) = (
        0,
        if filtered(q) {
            SCAN_DEPTH * 8
        } else {
            SCAN_DEPTH
        },
    );
    loop {
        for vid in index.nearest(c, query, skip, depth)? {
            let (chunk, window) = split_id(vid);
            args[0] = SqlValue::Integer(chunk);
            let text: Option<String> = stmt
                .query_row(params_from_iter(args.iter()), |r| r.get(15))
                .optional()?;
            let Some(text) = text else { continue };
            let Some(v) = emb.embed_window(&text, window) else {
                continue;
            };
            let cos = embed::dot(query, &v);
            let slot = best.entry(chunk).or_insert(f32::MIN);
            *slot = slot.max(cos);
        }
        skip += depth;
        if best.len() >= limit || skip >= total {
            break;
        }
        depth *= 4;
    }
    let mut ranked: Vec<(i64, f32)> = best.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(limit);
    Ok(ranked)
}

/// The candidate for a chunk only the vector arm found (`None` when the filters exclude it).
pub(super) fn candidate(
    c: &Connection,
    id: i64,
    q: &CodeQuery,
    qset: &HashSet<&str>,
) -> rusqlite::Result<Option<Candidate>> {
    let (sql, mut args) = by_id_sql(q, "");
    args[0] = SqlValue::Integer(id);
    let mut stmt = c.prepare_cached(&sql)?;
    stmt.query_row(params_from_iter(args.iter()), |r| candidate_row(r, qset))
        .optional()
}
