//! The embed pass: the messages of every session named in `vector_pending` get their vectors,
//! from the stored (redacted) text, on every core, appended to the file beside the store.
//!
//! It runs after the index run has committed the store and its full-text index, so the lane is
//! searchable while it works. Work is flushed in batches: each batch's records are appended and
//! made durable (fsync) before the sessions it finished are deleted from `vector_pending`, so a
//! run killed at any point loses at most a batch, which the next run embeds again behind a
//! tombstone ([`super::file`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::Connection;

use super::file::{quantize, Appender, VectorRecord};
use super::hub::HubCentres;
use super::{ensure_schema, message_sql};
use crate::text::encoder::Encoder;

/// Pieces of a window: a longer message gets a vector per window of this many pieces.
pub const WINDOW_PIECES: usize = 256;
/// Windows embedded of one message at most (its first [`WINDOW_PIECES`] × this many pieces).
pub const MAX_WINDOWS: usize = 8;
/// Bytes of a message's text read at most (a pasted log past this adds nothing the windows keep).
const MAX_TEXT_BYTES: usize = 32 * 1024;
/// Messages encoded between two durable flushes.
const BATCH: usize = 256;

/// What the pass did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct EmbedSummary {
    pub sessions: u64,
    pub messages: u64,
    pub vectors: u64,
    /// The file was rewritten with only its live records.
    pub compacted: bool,
    pub elapsed_ms: u64,
}

/// Why the pass could not run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("cannot read the stored messages to embed: {0}")]
    Store(#[from] rusqlite::Error),
    #[error("cannot write the message vectors {}", .path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One item of a batch, in the order it is written.
enum Item {
    /// A session begins: its tombstone from its pending seq.
    Start { key: i64, from: u32 },
    Message {
        key: i64,
        event: i64,
        seq: u32,
        text: String,
    },
    /// A session's messages are all in the batches so far.
    End { key: i64 },
}

/// Embeds every pending message of the store at `db`; `progress(done, total)` counts messages.
pub fn embed_pending(
    db: &Path,
    enc: &Encoder,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<EmbedSummary, EmbedError> {
    let started = Instant::now();
    let file_err = |source| EmbedError::File {
        path: super::file::path_for(db),
        source,
    };
    let conn = crate::sources::sqlite::open_writer(db)?;
    ensure_schema(&conn)?;
    let store_id = super::store_id(&conn)?;
    let (mut out, fresh) = Appender::open(db, &store_id).map_err(file_err)?;
    if fresh {
        conn.execute_batch(
            "DELETE FROM vector_pending;
             INSERT INTO vector_pending(key, from_seq) SELECT key, 0 FROM session_keys;",
        )?;
    }
    let pending: Vec<(i64, i64)> = conn
        .prepare("SELECT key, from_seq FROM vector_pending ORDER BY key")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut summary = EmbedSummary::default();
    if pending.is_empty() {
        return Ok(summary);
    }
    let total = super::coverage(&conn)?;
    let total = total.messages - total.embedded;
    let centres = HubCentres::new(enc);
    let mut messages = conn.prepare(&format!(
        "SELECT e.id, e.seq, CASE WHEN typeof(e.text) = 'blob' THEN unpack_text(e.text)
                ELSE e.text END
         FROM event_rows e WHERE e.session_key = ?1 AND e.seq >= ?2 AND {}
         ORDER BY e.seq",
        message_sql()
    ))?;
    let mut batch: Vec<Item> = Vec::new();
    let mut in_batch = 0usize;
    let mut done = 0u64;
    for (key, from) in pending {
        batch.push(Item::Start {
            key,
            from: from.clamp(0, u32::MAX as i64) as u32,
        });
        // Read before any flush: the flush writes on this connection.
        let rows: Vec<(i64, i64, String)> = messages
            .query_map(rusqlite::params![key, from], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        for (event, seq, text) in rows {
            batch.push(Item::Message {
                key,
                event,
                seq: seq.clamp(0, u32::MAX as i64) as u32,
                text: cut(text),
            });
            in_batch += 1;
            if in_batch >= BATCH {
                flush(&conn, &mut out, enc, &centres, &mut batch, &mut summary)
                    .map_err(|e| e.on(db))?;
                done += in_batch as u64;
                in_batch = 0;
                progress(done, total);
            }
        }
        batch.push(Item::End { key });
    }
    flush(&conn, &mut out, enc, &centres, &mut batch, &mut summary).map_err(|e| e.on(db))?;
    done += in_batch as u64;
    progress(done, total);
    summary.compacted = out.compact(db, &store_id).map_err(file_err)?;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// A flush's failure, before it knows the file's path.
enum FlushError {
    Sql(rusqlite::Error),
    Io(std::io::Error),
}

impl FlushError {
    fn on(self, db: &Path) -> EmbedError {
        match self {
            FlushError::Sql(e) => EmbedError::Store(e),
            FlushError::Io(source) => EmbedError::File {
                path: super::file::path_for(db),
                source,
            },
        }
    }
}

/// Encodes the batch's messages, appends them in order (each session's tombstone first), makes
/// them durable, then forgets the sessions the batch finished.
fn flush(
    conn: &Connection,
    out: &mut Appender,
    enc: &Encoder,
    centres: &HubCentres,
    batch: &mut Vec<Item>,
    summary: &mut EmbedSummary,
) -> Result<(), FlushError> {
    let texts: Vec<&str> = batch
        .iter()
        .filter_map(|i| match i {
            Item::Message { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let mut vectors = encode_all(enc, centres, &texts).into_iter();
    let mut finished = Vec::new();
    for item in batch.drain(..) {
        match item {
            Item::Start { key, from } => {
                out.append(Some((key, from)), &[]).map_err(FlushError::Io)?
            }
            Item::Message {
                key, event, seq, ..
            } => {
                let windows = vectors.next().unwrap_or_default();
                let records: Vec<VectorRecord> = windows
                    .into_iter()
                    .enumerate()
                    .map(|(w, (values, scale, (hub_en, hub_ru)))| VectorRecord {
                        event,
                        key,
                        seq,
                        window: w as u8,
                        scale,
                        hub_en,
                        hub_ru,
                        values,
                    })
                    .collect();
                summary.messages += 1;
                summary.vectors += records.len() as u64;
                out.append(None, &records).map_err(FlushError::Io)?;
            }
            Item::End { key } => finished.push(key),
        }
    }
    out.sync().map_err(FlushError::Io)?;
    let forget = || -> rusqlite::Result<()> {
        let tx = conn.unchecked_transaction()?;
        {
            let mut del = tx.prepare_cached("DELETE FROM vector_pending WHERE key = ?1")?;
            for key in &finished {
                del.execute([key])?;
            }
        }
        tx.commit()
    };
    forget().map_err(FlushError::Sql)?;
    summary.sessions += finished.len() as u64;
    Ok(())
}

/// A window's vector: int8 values, scale, (English, Russian) hub terms.
type Window = ([i8; crate::text::encoder::DIMS], f32, (f32, f32));

/// The windows of each text, encoded on every core, in the texts' order.
fn encode_all(enc: &Encoder, centres: &HubCentres, texts: &[&str]) -> Vec<Vec<Window>> {
    crate::text::encoder::on_every_core(texts, |t| windows(enc, centres, t))
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect()
}

/// The vectors of one message: one, or one per window of a long one.
pub fn windows(enc: &Encoder, centres: &HubCentres, text: &str) -> Vec<Window> {
    let pieces = enc.pieces(text);
    let one = |ids: &[u32]| {
        let v = enc.encode_pieces(ids);
        let (values, scale) = quantize(&v);
        (values, scale, centres.terms(&v))
    };
    if pieces.len() <= WINDOW_PIECES + 2 {
        return vec![one(&pieces)];
    }
    let (bos, eos) = (pieces[0], pieces[pieces.len() - 1]);
    pieces[1..pieces.len() - 1]
        .chunks(WINDOW_PIECES)
        .take(MAX_WINDOWS)
        .map(|chunk| {
            let mut ids = Vec::with_capacity(chunk.len() + 2);
            ids.push(bos);
            ids.extend_from_slice(chunk);
            ids.push(eos);
            one(&ids)
        })
        .collect()
}

/// The text cut to [`MAX_TEXT_BYTES`] at a character boundary.
fn cut(mut text: String) -> String {
    if text.len() > MAX_TEXT_BYTES {
        let mut at = MAX_TEXT_BYTES;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
    }
    text
}

/// The pass as `knowledge index` runs it: over the store at `db` if it exists and semantic search
/// is on (`None` otherwise, or when the encoder's assets are missing: the lane then searches
/// lexically and says its vectors do not cover the messages).
pub fn embed_if_on(
    db: &Path,
    semantic: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<EmbedSummary>, EmbedError> {
    if !semantic || !db.exists() {
        return Ok(None);
    }
    match Encoder::shared() {
        Ok(enc) => embed_pending(db, enc, progress).map(Some),
        Err(_) => Ok(None),
    }
}
