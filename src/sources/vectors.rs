//! The vector arm shared by the episodes and code stores: how text vectors are stored beside the
//! rows they describe, how `knowledge index` fills them in, how a query finds its nearest
//! neighbours, and how the arm's ranking is fused with the lexical one inside a lane.
//!
//! A row (event or chunk) gets one vector per window of its text ([`embed::WINDOW_WORDS`]),
//! stored as one sign bit per dimension (16 bytes for the 128-d table) under `parent_id * 8 + window`; a row whose text has no
//! known word gets an empty code, so it is not embedded again. Delete and update triggers drop a
//! row's codes with it, so ids reused later never inherit a stale vector. The scan runs on an
//! in-memory copy of the codes (loaded once per index revision) by Hamming distance; the few best
//! candidates are then re-embedded from their stored text and ranked by exact cosine, after the
//! store has applied the request's filters to them in SQL, exactly as for lexical hits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension};

use crate::sources::sqlite;
use crate::text::embed::{self, Embedder};

/// Windows per row are numbered below this (vector id = parent id × 8 + window).
const IDS_PER_ROW: i64 = 8;

/// Rows embedded per writer transaction.
const BATCH: usize = 2048;

/// The vectors of one kind of row.
#[derive(Debug, Clone, Copy)]
pub struct VectorTable {
    /// The codes table.
    pub name: &'static str,
    /// The table of the rows described (`id INTEGER PRIMARY KEY`).
    pub parent: &'static str,
    /// SQL expression over the parent row (aliased `c`): the text that is embedded.
    pub text_sql: &'static str,
    /// Parent columns whose change invalidates the vectors.
    pub text_cols: &'static str,
}

pub const EVENTS: VectorTable = VectorTable {
    name: "event_vecs",
    parent: "events",
    text_sql: "c.text",
    text_cols: "text",
};

pub const CHUNKS: VectorTable = VectorTable {
    name: "chunk_vecs",
    parent: "chunks",
    text_sql: "c.path || ' ' || coalesce(c.symbol, '') || ' ' || c.text",
    text_cols: "text, path, symbol",
};

/// The parent row and window a vector id stands for.
pub fn split_id(vector_id: i64) -> (i64, usize) {
    (
        vector_id.div_euclid(IDS_PER_ROW),
        vector_id.rem_euclid(IDS_PER_ROW) as usize,
    )
}

/// Create the codes table and its triggers (writer side). A store rebuilt under a new schema
/// version loses its `meta` row, and then stale codes are dropped too.
pub fn ensure_schema(conn: &Connection, t: &VectorTable) -> rusqlite::Result<()> {
    let marker = format!("{}_schema", t.name);
    if sqlite::meta_get(conn, &marker).is_none() {
        conn.execute_batch(&format!("DROP TABLE IF EXISTS {};", t.name))?;
    }
    let (name, parent, cols) = (t.name, t.parent, t.text_cols);
    conn.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {name}(id INTEGER PRIMARY KEY, code BLOB NOT NULL);
         CREATE TRIGGER IF NOT EXISTS {name}_del AFTER DELETE ON {parent} BEGIN
             DELETE FROM {name} WHERE id BETWEEN old.id * 8 AND old.id * 8 + 7;
         END;
         CREATE TRIGGER IF NOT EXISTS {name}_upd AFTER UPDATE OF {cols} ON {parent} BEGIN
             DELETE FROM {name} WHERE id BETWEEN old.id * 8 AND old.id * 8 + 7;
         END;"
    ))?;
    sqlite::meta_set(conn, &marker, "1")
}

/// Drop every vector (writer side): `[search] semantic = false` keeps the store lexical.
pub fn drop_all(conn: &Connection, t: &VectorTable) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "DROP TRIGGER IF EXISTS {0}_del; DROP TRIGGER IF EXISTS {0}_upd; DROP TABLE IF EXISTS {0};",
        t.name
    ))?;
    conn.execute(
        "DELETE FROM meta WHERE key IN (?1, ?2)",
        [format!("{}_schema", t.name), format!("{}_rev", t.name)],
    )?;
    Ok(())
}

/// Embed every row that has no codes yet (new rows, or a store indexed before vectors existed):
/// only stored text is read, never the sources. Returns the number of rows embedded.
pub fn backfill(conn: &mut Connection, t: &VectorTable, emb: &Embedder) -> rusqlite::Result<u64> {
    ensure_schema(conn, t)?;
    // Rows are embedded in id order and their codes deleted with them, so every row up to the
    // highest embedded one has codes; new rows always get higher ids.
    let mut upto: i64 = conn.query_row(
        &format!("SELECT coalesce(max(id), -1) FROM {}", t.name),
        [],
        |r| r.get(0),
    )?;
    upto = if upto < 0 { -1 } else { split_id(upto).0 };
    let mut done = 0u64;
    loop {
        let rows: Vec<(i64, String)> = {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT c.id, {} FROM {} c WHERE c.id > ?1 ORDER BY c.id LIMIT ?2",
                t.text_sql, t.parent
            ))?;
            let rows =
                stmt.query_map(params![upto, BATCH as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let Some(last) = rows.last().map(|r| r.0) else {
            break;
        };
        let codes = embed_rows(emb, &rows);
        let tx = conn.transaction()?;
        {
            let mut ins = tx.prepare_cached(&format!(
                "INSERT OR REPLACE INTO {}(id, code) VALUES(?1, ?2)",
                t.name
            ))?;
            for (id, code) in codes {
                ins.execute(params![id, code])?;
            }
        }
        tx.commit()?;
        done += rows.len() as u64;
        upto = last;
    }
    if done > 0 {
        let rev = format!("{}:{}", upto, done);
        sqlite::meta_set(conn, &format!("{}_rev", t.name), &rev)?;
    }
    Ok(done)
}

/// (vector id, code) of every window of `rows`, embedded on two threads.
fn embed_rows(emb: &Embedder, rows: &[(i64, String)]) -> Vec<(i64, Vec<u8>)> {
    let one = |part: &[(i64, String)]| {
        let mut out = Vec::with_capacity(part.len());
        for (id, text) in part {
            let windows = emb.embed_windows(text);
            if windows.is_empty() {
                out.push((id * IDS_PER_ROW, Vec::new()));
            }
            for (w, v) in windows {
                out.push((id * IDS_PER_ROW + w as i64, embed::sign_code(&v)));
            }
        }
        out
    };
    let mid = rows.len() / 2;
    let (a, b) = rows.split_at(mid);
    std::thread::scope(|s| {
        let h = s.spawn(|| one(b));
        let mut out = one(a);
        out.extend(h.join().unwrap_or_default());
        out
    })
}

/// 64-bit words of a code in the scan: 128 bits, the shipped table's dimensions (a wider table
/// is scanned on its first 128 dimensions, the ones PCA ranks first).
const CODE_WORDS: usize = 2;

/// The codes of one store in memory, for the Hamming scan: 20 bytes a window (a million
/// windows fit in 20 MB).
struct Codes {
    rev: String,
    ids: Vec<u32>,
    words: Vec<[u64; CODE_WORDS]>,
}

/// The reader side of one store's vectors: the scan cache and the nearest-neighbour query.
pub struct VectorIndex {
    table: VectorTable,
    cache: Mutex<Option<Arc<Codes>>>,
}

impl VectorIndex {
    pub fn new(table: VectorTable) -> Self {
        VectorIndex {
            table,
            cache: Mutex::new(None),
        }
    }

    /// Whether the store holds vectors at all (an old index, or one built with semantic off,
    /// does not: its lane stays lexical).
    pub fn present(&self, conn: &Connection) -> rusqlite::Result<bool> {
        Ok(
            sqlite::meta_get(conn, &format!("{}_rev", self.table.name)).is_some()
                && conn
                    .query_row(
                        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1",
                        [self.table.name],
                        |_| Ok(()),
                    )
                    .optional()?
                    .is_some(),
        )
    }

    fn codes(&self, conn: &Connection) -> rusqlite::Result<Arc<Codes>> {
        let rev = format!(
            "{}|{}",
            sqlite::meta_get(conn, "index_rev").unwrap_or_default(),
            sqlite::meta_get(conn, &format!("{}_rev", self.table.name)).unwrap_or_default()
        );
        // Held while loading, so concurrent first queries (or the warm-up) load once.
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = cache.as_ref().filter(|c| c.rev == rev) {
            return Ok(c.clone());
        }
        let mut stmt = conn.prepare(&format!(
            "SELECT id, code FROM {} WHERE length(code) > 0",
            self.table.name
        ))?;
        let mut ids = Vec::new();
        let mut words = Vec::new();
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            // Vector ids past 2^32 (rows past half a billion) are not scanned.
            let Ok(id) = u32::try_from(r.get::<_, i64>(0)?) else {
                continue;
            };
            ids.push(id);
            words.push(to_words(r.get_ref(1)?.as_blob()?));
        }
        ids.shrink_to_fit();
        words.shrink_to_fit();
        let codes = Arc::new(Codes { rev, ids, words });
        *cache = Some(codes.clone());
        Ok(codes)
    }

    /// The `k` vector ids nearest to `query` by Hamming distance of the sign codes, nearest
    /// first, skipping the first `skip` (a caller deepening under filters asks for the next).
    pub fn nearest(
        &self,
        conn: &Connection,
        query: &[f32],
        skip: usize,
        k: usize,
    ) -> rusqlite::Result<Vec<i64>> {
        let codes = self.codes(conn)?;
        let q = to_words(&embed::sign_code(query));
        let mut scored: Vec<(u32, u32)> = codes
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let d = (w[0] ^ q[0]).count_ones() + (w[1] ^ q[1]).count_ones();
                (d, i as u32)
            })
            .collect();
        let want = (skip + k).min(scored.len());
        if want == 0 {
            return Ok(Vec::new());
        }
        if want < scored.len() {
            scored.select_nth_unstable(want - 1);
            scored.truncate(want);
        }
        scored.sort_unstable();
        Ok(scored
            .into_iter()
            .skip(skip)
            .map(|(_, i)| i64::from(codes.ids[i as usize]))
            .collect())
    }

    /// Load the codes now (a long-running front end calls this at start, so the first query
    /// does not pay for it); nothing happens when the store holds no vectors.
    pub fn warm(&self, conn: &Connection) -> rusqlite::Result<()> {
        if self.present(conn)? {
            self.codes(conn)?;
        }
        Ok(())
    }

    /// How many vectors the scan holds (for deepening: stop when all were seen).
    pub fn len(&self, conn: &Connection) -> rusqlite::Result<usize> {
        Ok(self.codes(conn)?.ids.len())
    }
}

/// The first 128 bits of a sign code as words, zero-padded: padding never adds distance.
fn to_words(code: &[u8]) -> [u64; CODE_WORDS] {
    let mut bytes = [0u8; 8 * CODE_WORDS];
    let n = code.len().min(8 * CODE_WORDS);
    bytes[..n].copy_from_slice(&code[..n]);
    let mut w = [0u64; CODE_WORDS];
    for (i, chunk) in bytes.chunks_exact(8).enumerate() {
        w[i] = u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
    }
    w
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
pub struct Fused {
    pub id: i64,
    pub lexical: Option<f64>,
    pub cosine: Option<f32>,
    pub score: f64,
}

/// The fused entry of `id`, created (and its first-seen order noted) when new.
fn slot<'a>(by_id: &'a mut HashMap<i64, Fused>, order: &mut Vec<i64>, id: i64) -> &'a mut Fused {
    by_id.entry(id).or_insert_with(|| {
        order.push(id);
        Fused {
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
pub fn fuse(lexical: &[(i64, f64)], vector: &[(i64, f32)]) -> Vec<Fused> {
    let mut by_id: HashMap<i64, Fused> = HashMap::new();
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
    let mut out: Vec<Fused> = order
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
