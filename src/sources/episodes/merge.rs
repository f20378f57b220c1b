//! Event identity across re-reads: an `ep:<session>:<seq>` once given names the same text for
//! good.
//!
//! A transcript is re-read in full when it is not a plain append: touched, shortened, edited,
//! moved, copied and continued elsewhere. Deleting the session and storing the re-read anew
//! used to renumber it, so `ep:s:5` (an assistant reply an evidence link or an assignment
//! named) could come to name the next line appended. Here a re-read is merged instead: each
//! event already stored in the session (same type, time and text, counted as a multiset) keeps
//! its `seq`, events that vanished from the file stay (as a deleted transcript's do), and only
//! events not stored yet are appended after the last `seq`. See `docs/EVENTS.md`.

use std::collections::HashMap;

use rusqlite::Transaction;

use super::index::append_events;
use super::parser::text_hash;
use super::prepare::PreparedEvent;
use crate::sources::vectors::Builder;

/// Stores `events` as the whole of `session_id` without changing what any stored `seq` names.
/// Returns how many were new (appended).
pub(super) fn merge_events<'a>(
    tx: &Transaction<'_>,
    session_id: &str,
    events: impl Iterator<Item = &'a PreparedEvent>,
    vectors: Option<&mut Builder>,
) -> rusqlite::Result<u64> {
    let mut stored: HashMap<u64, u32> = HashMap::new();
    {
        let mut stmt =
            tx.prepare_cached("SELECT event_type, time, text FROM events WHERE session_id=?1")?;
        let rows = stmt.query_map([session_id], |r| {
            Ok(identity(
                &r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?.as_deref(),
                &r.get::<_, String>(2)?,
            ))
        })?;
        for key in rows {
            *stored.entry(key?).or_default() += 1;
        }
    }
    let fresh = events.filter(|p| {
        let key = identity(
            p.event.event_type.as_str(),
            p.event.time.as_deref(),
            &p.event.text,
        );
        match stored.get_mut(&key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        }
    });
    append_events(tx, session_id, fresh, vectors)
}

/// What makes two events the same event: type, time and (stored, redacted) text.
fn identity(event_type: &str, time: Option<&str>, text: &str) -> u64 {
    let kind = format!("{event_type}\u{0}{}", time.unwrap_or(""));
    text_hash(&kind, text)
}
