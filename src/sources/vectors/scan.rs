//! The reader side of the vector arm: the Hamming scan over a store's packed sign codes.
//!
//! Two ways to scan, by how long the process lives. A long-running front end (the explorer,
//! the MCP server) calls [`VectorIndex::warm`] at start: the codes are then copied once per index
//! revision into memory (20 bytes a window) and every query scans that copy. A one-shot CLI call
//! never warms: each query streams the blocks straight from SQLite (one BLOB per 1,024 rows) and
//! keeps only its best candidates, so it pays one sequential read and holds no copy of the codes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension};

use super::write::{parse_entries, CODE_BYTES, ENTRY_BYTES};
use super::VectorTable;
use crate::sources::sqlite;
use crate::text::embed;
use crate::text::embed::hamming::{distance, with_popcnt};

/// 64-bit words of a code in the scan.
const CODE_WORDS: usize = CODE_BYTES / 8;

/// The codes of one store in memory, for the resident scan: 20 bytes a window (a million
/// windows fit in 20 MB).
struct Codes {
    rev: String,
    ids: Vec<u32>,
    words: Vec<[u64; CODE_WORDS]>,
}

/// Candidates a streamed scan keeps: a caller deepening under filters (32, then 128, 512 …)
/// is served from them without streaming the blocks again.
const STREAM_KEEP: usize = 4096;

/// The ranking of the last streamed scan, for the same query asking for more.
struct Streamed {
    rev: String,
    query: [u64; CODE_WORDS],
    /// Vector ids, nearest first.
    ranked: Vec<u32>,
    /// Whether `ranked` holds every stored vector.
    complete: bool,
}

/// The reader side of one store's vectors: the scan cache and the nearest-neighbour query.
pub struct VectorIndex {
    table: VectorTable,
    resident: AtomicBool,
    cache: Mutex<Option<Arc<Codes>>>,
    last_stream: Mutex<Option<Streamed>>,
}

/// The best `want` (distance, vector id) pairs seen so far; ties go to the lower id.
struct Nearest {
    want: usize,
    /// Pairs held before the worst are dropped (twice `want`, so dropping is amortised).
    cap: usize,
    /// Once `want` pairs are kept, a farther one can never make it: it is not even held.
    bound: u32,
    seen: Vec<(u32, u32)>,
}

impl Nearest {
    fn new(want: usize) -> Self {
        Nearest {
            want,
            cap: 2 * want.max(512),
            bound: u32::MAX,
            seen: Vec::new(),
        }
    }

    fn push(&mut self, distance: u32, id: u32) {
        if distance > self.bound {
            return;
        }
        self.seen.push((distance, id));
        if self.seen.len() >= self.cap {
            self.keep_best();
        }
    }

    fn keep_best(&mut self) {
        if self.want == 0 {
            self.seen.clear();
        } else if self.seen.len() > self.want {
            self.seen.select_nth_unstable(self.want - 1);
            self.seen.truncate(self.want);
            self.bound = self.seen[self.want - 1].0;
        }
    }

    fn sorted(mut self) -> Vec<(u32, u32)> {
        self.keep_best();
        self.seen.sort_unstable();
        self.seen
    }
}

impl VectorIndex {
    pub fn new(table: VectorTable) -> Self {
        VectorIndex {
            table,
            resident: AtomicBool::new(false),
            cache: Mutex::new(None),
            last_stream: Mutex::new(None),
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

    /// Every stored block, in block (and so vector id) order, to `each`.
    fn for_each_block(
        &self,
        conn: &Connection,
        mut each: impl FnMut(&[u8]),
    ) -> rusqlite::Result<()> {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT codes FROM {} ORDER BY block",
            self.table.name
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            each(r.get_ref(0)?.as_blob()?);
        }
        Ok(())
    }

    /// Changes whenever the stored codes may have.
    fn revision(&self, conn: &Connection) -> String {
        format!(
            "{}|{}",
            sqlite::meta_get(conn, "index_rev").unwrap_or_default(),
            sqlite::meta_get(conn, &format!("{}_rev", self.table.name)).unwrap_or_default()
        )
    }

    fn resident_codes(&self, conn: &Connection) -> rusqlite::Result<Arc<Codes>> {
        let rev = self.revision(conn);
        // Held while loading, so concurrent first queries (or the warm-up) load once.
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = cache.as_ref().filter(|c| c.rev == rev) {
            return Ok(c.clone());
        }
        // Drop the old copy first: two copies at once would double the peak.
        *cache = None;
        let (mut ids, mut words) = (Vec::new(), Vec::new());
        self.for_each_block(conn, |blob| {
            ids.reserve(blob.len() / ENTRY_BYTES);
            words.reserve(blob.len() / ENTRY_BYTES);
            for (id, bits) in parse_entries(blob) {
                ids.push(id);
                words.push(words_at(&bits));
            }
        })?;
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
        let mut q = [0u8; CODE_BYTES];
        let code = embed::sign_code(query);
        let n = code.len().min(CODE_BYTES);
        q[..n].copy_from_slice(&code[..n]);
        let q = words_at(&q);
        if !self.resident.load(Ordering::Relaxed) {
            return self.streamed(conn, q, skip, k);
        }
        let mut best = Nearest::new(skip + k);
        let codes = self.resident_codes(conn)?;
        with_popcnt(|| {
            for (w, id) in codes.words.iter().zip(&codes.ids) {
                best.push(distance(w, &q), *id);
            }
        });
        Ok(best
            .sorted()
            .into_iter()
            .skip(skip)
            .map(|(_, id)| i64::from(id))
            .collect())
    }

    /// [`VectorIndex::nearest`] by streaming the blocks (no copy of the codes is kept), or from
    /// the last streamed ranking when the same query asks for more.
    fn streamed(
        &self,
        conn: &Connection,
        q: [u64; CODE_WORDS],
        skip: usize,
        k: usize,
    ) -> rusqlite::Result<Vec<i64>> {
        let rev = self.revision(conn);
        let mut last = self
            .last_stream
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let reusable = last.as_ref().is_some_and(|s| {
            s.rev == rev && s.query == q && (s.complete || skip + k <= s.ranked.len())
        });
        if !reusable {
            let keep = (skip + k).max(STREAM_KEEP);
            let mut best = Nearest::new(keep);
            let mut total = 0usize;
            self.for_each_block(conn, |blob| {
                with_popcnt(|| {
                    for e in blob.chunks_exact(ENTRY_BYTES) {
                        let id = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                        best.push(distance(&words_at(&e[4..]), &q), id);
                        total += 1;
                    }
                })
            })?;
            *last = Some(Streamed {
                rev,
                query: q,
                ranked: best.sorted().into_iter().map(|(_, id)| id).collect(),
                complete: total <= keep,
            });
        }
        Ok(last.as_ref().map_or_else(Vec::new, |s| {
            s.ranked
                .iter()
                .skip(skip)
                .take(k)
                .map(|&id| i64::from(id))
                .collect()
        }))
    }

    /// Keep the codes in memory from now on and load them now (a long-running front end calls
    /// this at start, so no query pays for it); nothing is loaded when the store holds no
    /// vectors.
    pub fn warm(&self, conn: &Connection) -> rusqlite::Result<()> {
        self.resident.store(true, Ordering::Relaxed);
        if self.present(conn)? {
            self.resident_codes(conn)?;
        }
        Ok(())
    }

    /// How many vectors the scan holds (for deepening: stop when all were seen).
    pub fn len(&self, conn: &Connection) -> rusqlite::Result<usize> {
        if self.resident.load(Ordering::Relaxed) {
            return Ok(self.resident_codes(conn)?.ids.len());
        }
        let bytes: i64 = conn.query_row(
            &format!(
                "SELECT coalesce(sum(length(codes)), 0) FROM {}",
                self.table.name
            ),
            [],
            |r| r.get(0),
        )?;
        Ok(usize::try_from(bytes).unwrap_or(0) / ENTRY_BYTES)
    }
}

fn words_at(bits: &[u8]) -> [u64; CODE_WORDS] {
    let mut w = [0u64; CODE_WORDS];
    for (i, chunk) in bits.chunks_exact(8).take(CODE_WORDS).enumerate() {
        w[i] = u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::Nearest;

    #[test]
    fn the_bounded_selection_keeps_exactly_the_nearest() {
        let pairs: Vec<(u32, u32)> = (0..20_000u32).map(|i| ((i * 7919) % 97, i)).collect();
        let mut best = Nearest::new(700);
        for &(d, id) in &pairs {
            best.push(d, id);
        }
        let mut all = pairs.clone();
        all.sort_unstable();
        all.truncate(700);
        assert_eq!(best.sorted(), all);
    }
}
