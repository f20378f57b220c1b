//! Sentence vectors of the messages of every session: the episodes lane's semantic arm.
//!
//! Why: a question in other words than its session, or in Russian about an English one, shares
//! few or no words with it; the full sentence encoder (`text::encoder`) puts both near each other,
//! and people ask about the middle of a session, so every user prompt, subagent prompt and
//! assistant text message gets its own vector (a long one a vector per window of
//! [`embed::WINDOW_PIECES`] pieces). Tool calls and tool output stay lexical.
//!
//! Storage is derived from `episodes.sqlite` alone (the stored, already redacted text) and kept in
//! a flat file beside it ([`file`]), mapped by a reader without a parse. The indexer names each
//! session whose events it writes in `vector_pending` (from which seq), in the same SQLite
//! transaction; the embed pass ([`embed`]) runs after the full-text index is committed, appends
//! the session's vectors, makes them durable, and only then forgets the session. A run killed in
//! between embeds the session again behind a tombstone, so nothing answers twice.
//! A vector is int8 with its scale and the message's hub terms ([`hub`]); the scan ([`scan`]) is
//! a brute-force int8 dot product over every live record.

pub mod arm;
pub mod embed;
pub mod file;
pub mod hub;
pub mod scan;
#[cfg(test)]
mod tests;

use rusqlite::{Connection, OptionalExtension, Transaction};

/// The event types that are messages: what a person or a parent agent asked, what the assistant
/// answered in words.
pub const MESSAGE_TYPES: &str = "'user/message', 'agent/prompt', 'assistant/message'";

/// Creates `vector_pending` if the store has none yet, naming every stored session (a store
/// indexed before message vectors gets them all on its next run).
pub fn ensure_schema(conn: &Connection) -> rusqlite::Result<()> {
    let exists: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vector_pending'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if exists.is_none() {
        conn.execute_batch(
            "BEGIN;
             CREATE TABLE vector_pending(key INTEGER PRIMARY KEY, from_seq INTEGER NOT NULL);
             INSERT INTO vector_pending(key, from_seq) SELECT key, 0 FROM session_keys;
             COMMIT;",
        )?;
    }
    Ok(())
}

/// Names session `key` as needing vectors from `from_seq` on, in the caller's transaction (the
/// lower seq wins when it is already named).
pub(super) fn mark(tx: &Transaction<'_>, key: i64, from_seq: i64) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO vector_pending(key, from_seq) VALUES(?1, ?2)
         ON CONFLICT(key) DO UPDATE SET from_seq = min(from_seq, excluded.from_seq)",
    )?
    .execute([key, from_seq.max(0)])?;
    Ok(())
}

/// The store's meta key holding the id its vectors file is built from.
const STORE_ID: &str = "vectors_store_id";

/// The id of this store (made on first use): the vectors file carries the id of the store it
/// was built from, so one left beside a store made anew is never read as its vectors.
pub(super) fn store_id(conn: &Connection) -> rusqlite::Result<String> {
    if let Some(id) = stored_id(conn) {
        return Ok(id);
    }
    let id: String = conn.query_row("SELECT lower(hex(randomblob(12)))", [], |r| r.get(0))?;
    super::store::meta_set(conn, STORE_ID, &id)?;
    Ok(id)
}

/// The id a reader checks the vectors file against (`None`: the store has no vectors yet).
pub fn stored_id(conn: &Connection) -> Option<String> {
    super::store::meta_get(conn, STORE_ID)
}

/// How many of the stored messages have their vectors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Coverage {
    pub embedded: u64,
    pub messages: u64,
}

impl Coverage {
    pub fn complete(&self) -> bool {
        self.embedded >= self.messages
    }

    /// "vectors: 61,200 of 64,000 messages".
    pub fn describe(&self) -> String {
        format!(
            "vectors: {} of {} messages",
            thousands(self.embedded),
            thousands(self.messages)
        )
    }
}

/// `n` with a comma between each group of three digits.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The SQL condition (over `event_rows e`) of a message with text.
fn message_sql() -> String {
    format!(
        "e.type_key IN (SELECT key FROM event_types WHERE name IN ({MESSAGE_TYPES}))
         AND (typeof(e.text) = 'blob' OR e.text <> '')"
    )
}

/// Whether any session waits for its vectors (cheap: one row looked at). A store without the
/// table (indexed before message vectors) waits for all of them.
pub fn any_pending(conn: &Connection) -> rusqlite::Result<bool> {
    match conn.query_row("SELECT EXISTS (SELECT 1 FROM vector_pending)", [], |r| {
        r.get(0)
    }) {
        Ok(b) => Ok(b),
        Err(_) => Ok(true),
    }
}

/// The messages stored and those of them with vectors (every message of a session not named in
/// `vector_pending`, and those below its `from_seq` of one that is).
pub fn coverage(conn: &Connection) -> rusqlite::Result<Coverage> {
    let messages: i64 = conn.query_row(
        &format!("SELECT count(*) FROM event_rows e WHERE {}", message_sql()),
        [],
        |r| r.get(0),
    )?;
    let waiting: i64 = match conn.query_row(
        &format!(
            "SELECT count(*) FROM event_rows e JOIN vector_pending p ON p.key = e.session_key
             WHERE e.seq >= p.from_seq AND {}",
            message_sql()
        ),
        [],
        |r| r.get(0),
    ) {
        Ok(n) => n,
        Err(_) => messages,
    };
    Ok(Coverage {
        embedded: (messages - waiting).max(0) as u64,
        messages: messages as u64,
    })
}
