//! The writer side of the vector arm's storage: sign codes packed into one BLOB per block of
//! parent rows, so a reader gets a million codes in about a thousand reads instead of a million
//! rows, and an indexer writes a thousand blobs instead of a million rows.
//!
//! Layout (schema 2): `<name>(block INTEGER PRIMARY KEY, codes BLOB)` where block `b` holds the
//! codes of parent rows `b << BLOCK_SHIFT ..= ((b + 1) << BLOCK_SHIFT) - 1`, as entries of
//! [`ENTRY_BYTES`] (u32 vector id, little endian, then the first [`CODE_BYTES`] of the sign code)
//! in vector-id order. `meta` holds `<name>_upto`: every parent row up to that id is embedded
//! (rows whose text has no known word have no entry). Deleting or re-texting a parent row drops
//! its block and records it in `<name>_dirty`, so ids reused later never inherit a stale code; the
//! next [`backfill`] re-embeds a dirty block from stored text. Schema 1 (one row per window, in
//! `<legacy>`) is dropped on upgrade and rebuilt from stored text: no source is re-read.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::{params, Connection, OptionalExtension};

use super::{VectorTable, IDS_PER_ROW};
use crate::sources::sqlite;
use crate::text::embed::{self, Embedder};

/// Parent rows per block: 2^10, so a block holds at most 4,096 windows (80 KB).
pub(super) const BLOCK_SHIFT: u32 = 10;

/// Bytes of a code kept for the scan: 128 bits (a wider table is scanned on its first 128
/// dimensions, the ones PCA ranks first).
pub(super) const CODE_BYTES: usize = 16;

/// Bytes of one packed entry: u32 vector id + code.
pub(super) const ENTRY_BYTES: usize = 4 + CODE_BYTES;

/// The storage layout written by this build.
const SCHEMA: &str = "2";

/// Rows read back and embedded per writer transaction by [`backfill`].
const BATCH: usize = 4096;

/// Rows handed to an embedding thread at a time by a [`Builder`].
const SEND_ROWS: usize = 256;

/// One packed code: vector id and the scanned bits.
pub(super) type Entry = (u32, [u8; CODE_BYTES]);

fn block_of(parent_id: i64) -> i64 {
    parent_id >> BLOCK_SHIFT
}

/// Create the blocks table, its dirty list and the triggers (writer side). A store written
/// under another layout, or rebuilt under a new schema version (its `meta` row is gone), loses
/// its codes here and gets them again from stored text.
pub fn ensure_schema(conn: &Connection, t: &VectorTable) -> rusqlite::Result<()> {
    let marker = format!("{}_schema", t.name);
    if sqlite::meta_get(conn, &marker).as_deref() != Some(SCHEMA) {
        drop_all(conn, t)?;
    } else {
        // An older build run on this store since may have added the first layout again.
        drop_layout(conn, t.legacy)?;
    }
    let (name, parent, cols, s) = (t.name, t.parent, t.text_cols, BLOCK_SHIFT);
    let invalidate = format!(
        "DELETE FROM {name} WHERE block = old.id >> {s};
         INSERT OR IGNORE INTO {name}_dirty(block) VALUES(old.id >> {s});"
    );
    conn.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {name}(block INTEGER PRIMARY KEY, codes BLOB NOT NULL);
         CREATE TABLE IF NOT EXISTS {name}_dirty(block INTEGER PRIMARY KEY);
         CREATE TRIGGER IF NOT EXISTS {name}_del AFTER DELETE ON {parent} BEGIN {invalidate} END;
         CREATE TRIGGER IF NOT EXISTS {name}_upd AFTER UPDATE OF {cols} ON {parent} BEGIN
             {invalidate}
         END;"
    ))?;
    sqlite::meta_set(conn, &marker, SCHEMA)
}

/// Drop every vector, of this layout and the older one (writer side): `[search] semantic =
/// false` keeps the store lexical, and a layout change starts from nothing.
pub fn drop_all(conn: &Connection, t: &VectorTable) -> rusqlite::Result<()> {
    drop_layout(conn, t.name)?;
    drop_layout(conn, t.legacy)
}

/// Drop the codes table `name`, its dirty list, triggers and `meta` keys.
fn drop_layout(conn: &Connection, name: &str) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "DROP TRIGGER IF EXISTS {name}_del; DROP TRIGGER IF EXISTS {name}_upd;
         DROP TABLE IF EXISTS {name}; DROP TABLE IF EXISTS {name}_dirty;"
    ))?;
    conn.execute(
        "DELETE FROM meta WHERE key IN (?1, ?2, ?3)",
        [
            format!("{name}_schema"),
            format!("{name}_rev"),
            format!("{name}_upto"),
        ],
    )?;
    Ok(())
}

fn upto(conn: &Connection, t: &VectorTable) -> i64 {
    sqlite::meta_get(conn, &format!("{}_upto", t.name))
        .and_then(|s| s.parse().ok())
        .unwrap_or(-1)
}

/// Record how far the codes reach and give readers a new revision to reload on.
fn mark_written(conn: &Connection, t: &VectorTable, upto: i64) -> rusqlite::Result<()> {
    sqlite::meta_set(conn, &format!("{}_upto", t.name), &upto.to_string())?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    sqlite::meta_set(conn, &format!("{}_rev", t.name), &format!("{upto}:{stamp}"))
}

/// Embed every row that has no codes yet — rows past `<name>_upto` (new rows, or a store
/// indexed before vectors existed) and the rows of dirty blocks — from stored text only, never
/// the sources. Returns the number of rows embedded.
pub fn backfill(conn: &mut Connection, t: &VectorTable, emb: &Embedder) -> rusqlite::Result<u64> {
    ensure_schema(conn, t)?;
    let mut upto = upto(conn, t);
    let mut done = 0u64;
    let dirty: Vec<i64> = {
        let mut stmt = conn.prepare(&format!("SELECT block FROM {}_dirty", t.name))?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    for blocks in dirty.chunks(4) {
        let tx = conn.transaction()?;
        for &b in blocks {
            let (lo, hi) = (b << BLOCK_SHIFT, ((b + 1) << BLOCK_SHIFT) - 1);
            let rows = read_rows(&tx, t, lo - 1, hi.min(upto), usize::MAX)?;
            done += rows.len() as u64;
            let mut entries = embed_rows(emb, &rows);
            // Codes appended past `upto` after the block went dirty are still valid.
            let kept = read_block(&tx, t, b)?;
            entries.extend(
                kept.into_iter()
                    .filter(|e| i64::from(e.0) / IDS_PER_ROW > upto),
            );
            write_block(&tx, t, b, &entries)?;
            tx.execute(&format!("DELETE FROM {}_dirty WHERE block=?1", t.name), [b])?;
        }
        mark_written(&tx, t, upto)?;
        tx.commit()?;
    }
    loop {
        let rows = read_rows(conn, t, upto, i64::MAX, BATCH)?;
        let Some(last) = rows.last().map(|r| r.0) else {
            break;
        };
        let entries = embed_rows(emb, &rows);
        let tx = conn.transaction()?;
        append(&tx, t, &entries)?;
        mark_written(&tx, t, last)?;
        tx.commit()?;
        done += rows.len() as u64;
        upto = last;
    }
    Ok(done)
}

/// (id, embedded text) of parent rows with `after < id <= upto`, in id order, at most `limit`.
fn read_rows(
    conn: &Connection,
    t: &VectorTable,
    after: i64,
    upto: i64,
    limit: usize,
) -> rusqlite::Result<Vec<(i64, String)>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT c.id, {} FROM {} c WHERE c.id > ?1 AND c.id <= ?2 ORDER BY c.id LIMIT ?3",
        t.text_sql, t.parent
    ))?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(params![after, upto, limit], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// The packed entries of every window of `text` (row `id`); vector ids past u32 are not stored.
fn embed_one(emb: &Embedder, id: i64, text: &str, out: &mut Vec<Entry>) {
    for (w, v) in emb.embed_windows(text) {
        let Ok(vid) = u32::try_from(id * IDS_PER_ROW + w as i64) else {
            continue;
        };
        let code = embed::sign_code(&v);
        let mut bits = [0u8; CODE_BYTES];
        let n = code.len().min(CODE_BYTES);
        bits[..n].copy_from_slice(&code[..n]);
        out.push((vid, bits));
    }
}

/// Entries of `rows` (in id order), embedded on two threads.
fn embed_rows(emb: &Embedder, rows: &[(i64, String)]) -> Vec<Entry> {
    let one = |part: &[(i64, String)]| {
        let mut out = Vec::with_capacity(part.len());
        for (id, text) in part {
            embed_one(emb, *id, text, &mut out);
        }
        out
    };
    let (a, b) = rows.split_at(rows.len() / 2);
    std::thread::scope(|s| {
        let h = s.spawn(|| one(b));
        let mut out = one(a);
        out.extend(h.join().unwrap_or_default());
        out
    })
}

pub(super) fn parse_entries(blob: &[u8]) -> impl Iterator<Item = Entry> + '_ {
    blob.chunks_exact(ENTRY_BYTES).map(|e| {
        let mut bits = [0u8; CODE_BYTES];
        bits.copy_from_slice(&e[4..]);
        (u32::from_le_bytes([e[0], e[1], e[2], e[3]]), bits)
    })
}

fn read_block(conn: &Connection, t: &VectorTable, block: i64) -> rusqlite::Result<Vec<Entry>> {
    let blob: Option<Vec<u8>> = conn
        .query_row(
            &format!("SELECT codes FROM {} WHERE block=?1", t.name),
            [block],
            |r| r.get(0),
        )
        .optional()?;
    Ok(blob.map_or_else(Vec::new, |b| parse_entries(&b).collect()))
}

/// Store block `block` as exactly `entries` (sorted here); an empty block has no row.
fn write_block(
    conn: &Connection,
    t: &VectorTable,
    block: i64,
    entries: &[Entry],
) -> rusqlite::Result<()> {
    if entries.is_empty() {
        conn.execute(&format!("DELETE FROM {} WHERE block=?1", t.name), [block])?;
        return Ok(());
    }
    let mut sorted = entries.to_vec();
    sorted.sort_unstable_by_key(|e| e.0);
    let mut blob = Vec::with_capacity(sorted.len() * ENTRY_BYTES);
    for (id, bits) in &sorted {
        blob.extend_from_slice(&id.to_le_bytes());
        blob.extend_from_slice(bits);
    }
    conn.prepare_cached(&format!(
        "INSERT OR REPLACE INTO {}(block, codes) VALUES(?1, ?2)",
        t.name
    ))?
    .execute(params![block, blob])?;
    Ok(())
}

/// Add `entries` (sorted by vector id, all past every stored code) to their blocks.
fn append(conn: &Connection, t: &VectorTable, entries: &[Entry]) -> rusqlite::Result<()> {
    let block = |e: &Entry| block_of(i64::from(e.0) / IDS_PER_ROW);
    for group in entries.chunk_by(|a, b| block(a) == block(b)) {
        let b = block(&group[0]);
        let mut all = read_block(conn, t, b)?;
        all.extend_from_slice(group);
        write_block(conn, t, b, &all)?;
    }
    Ok(())
}

/// Index-time vectors: an indexer hands each row it inserts (id and the exact text the table's
/// `text_sql` yields) to [`Builder::add`]; threads beside the indexer embed them while it goes on
/// parsing, and [`Builder::finish`] packs the codes into blocks. The text is already in memory,
/// so nothing is read back. When the rows past `<name>_upto` turn out not to be exactly the rows
/// added (an id reused, a row inserted elsewhere), nothing is stored and [`backfill`] embeds them
/// from stored text instead: the fast path can only be skipped, never wrong.
pub struct Builder {
    table: VectorTable,
    upto: i64,
    send: Option<SyncSender<Vec<(i64, String)>>>,
    batch: Vec<(i64, String)>,
    last_id: i64,
    rows: u64,
    in_order: bool,
    threads: Vec<JoinHandle<Vec<Entry>>>,
}

impl Builder {
    /// Prepare the store's vector tables and start the embedding threads.
    pub fn start(
        conn: &Connection,
        table: VectorTable,
        emb: &'static Embedder,
    ) -> rusqlite::Result<Builder> {
        ensure_schema(conn, &table)?;
        let upto = upto(conn, &table);
        let (send, recv) = sync_channel::<Vec<(i64, String)>>(8);
        let recv = Arc::new(Mutex::new(recv));
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 2));
        let threads = (0..workers)
            .map(|_| {
                let recv = recv.clone();
                std::thread::spawn(move || embed_received(emb, &recv))
            })
            .collect();
        Ok(Builder {
            table,
            upto,
            send: Some(send),
            batch: Vec::with_capacity(SEND_ROWS),
            last_id: upto,
            rows: 0,
            in_order: true,
            threads,
        })
    }

    /// A row the indexer just inserted, with the text its vectors are made of.
    pub fn add(&mut self, id: i64, text: String) {
        self.in_order &= id > self.last_id;
        self.last_id = id;
        self.rows += 1;
        self.batch.push((id, text));
        if self.batch.len() >= SEND_ROWS {
            self.send_batch();
        }
    }

    fn send_batch(&mut self) {
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(SEND_ROWS));
        if let Some(send) = &self.send {
            // A send fails only when every thread is gone; `finish` then finds codes missing.
            let _ = send.send(batch);
        }
    }

    /// Wait for the codes and store them; returns the rows whose vectors were stored (0 when
    /// the fast path was skipped and [`backfill`] must embed them).
    pub fn finish(mut self, conn: &mut Connection) -> rusqlite::Result<u64> {
        self.send_batch();
        self.send = None;
        let mut entries = Vec::new();
        let mut complete = true;
        for t in self.threads.drain(..) {
            match t.join() {
                Ok(e) => entries.extend(e),
                Err(_) => complete = false,
            }
        }
        if self.rows == 0 || !complete || !self.in_order {
            return Ok(0);
        }
        let t = &self.table;
        let past: i64 = conn.query_row(
            &format!("SELECT count(*) FROM {} WHERE id > ?1", t.parent),
            [self.upto],
            |r| r.get(0),
        )?;
        if u64::try_from(past).ok() != Some(self.rows) {
            return Ok(0);
        }
        entries.sort_unstable_by_key(|e| e.0);
        let tx = conn.transaction()?;
        append(&tx, t, &entries)?;
        mark_written(&tx, t, self.last_id)?;
        tx.commit()?;
        Ok(self.rows)
    }
}

/// An embedding thread: rows in, entries out, until the builder hangs up.
fn embed_received(emb: &Embedder, recv: &Mutex<Receiver<Vec<(i64, String)>>>) -> Vec<Entry> {
    let mut out = Vec::new();
    loop {
        let batch = match recv.lock() {
            Ok(r) => r.recv(),
            Err(_) => break,
        };
        let Ok(batch) = batch else { break };
        for (id, text) in &batch {
            embed_one(emb, *id, text, &mut out);
        }
    }
    out
}
