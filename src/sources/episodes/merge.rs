//! Event identity across re-reads: an `ep:<session>:<seq>` once given names the same text for
//! good.
//!
//! A transcript is re-read in full when it is not a plain append: touched, shortened, edited,
//! moved, copied and continued elsewhere. Deleting the session and storing the re-read anew
//! used to renumber it, so `ep:s:5` (an assistant reply an evidence link or an assignment
//! named) could come to name the next line appended. Here a re-read is merged instead: each
//! event already stored in the session (same type, time and text, counted as a multiset) keeps
//! its `seq` (and takes the facts the re-read gave it), events that vanished from the file stay
//! (as a deleted transcript's do), and only events not stored yet are appended after the last
//! `seq`. See `docs/EVENTS.md`.

use std::collections::{HashMap, VecDeque};

use rusqlite::Transaction;

use super::index::{append_events, Sinks, WriteError};
use super::parser::text_hash;
use super::prepare::PreparedEvent;

/// Stores `events` as the whole of `session_id` without changing what any stored `seq` names.
/// An event already stored takes the facts the re-read gave it (a Pi branch left, a Gemini
/// rewind: the mark that it is off the conversation). Returns how many were new (appended).
pub(super) fn merge_events<'a>(
    tx: &Transaction<'_>,
    session_id: &str,
    events: impl Iterator<Item = &'a PreparedEvent>,
    sinks: &mut Sinks<'_>,
) -> Result<u64, WriteError> {
    // Identity → the stored copies (row id, facts), in seq order.
    let mut stored: HashMap<u64, VecDeque<(i64, Option<String>)>> = HashMap::new();
    {
        let mut stmt = tx.prepare_cached(
            "SELECT id, event_type, time, text, facts FROM events WHERE session_id=?1
             ORDER BY seq",
        )?;
        let rows = stmt.query_map([session_id], |r| {
            let key = identity(
                &r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?.as_deref(),
                &r.get::<_, String>(3)?,
            );
            Ok((key, r.get::<_, i64>(0)?, r.get::<_, Option<String>>(4)?))
        })?;
        for row in rows {
            let (key, id, facts) = row?;
            stored.entry(key).or_default().push_back((id, facts));
        }
    }
    if stored.is_empty() {
        // A session read for the first time: every event is new, and hashing each text for an
        // identity nothing is compared with was 2 % of a fresh index (docs/PERFORMANCE.md).
        return append_events(tx, session_id, events, sinks);
    }
    let mut refacts: Vec<(i64, Option<String>)> = Vec::new();
    let fresh = events.filter(|p| {
        let key = identity(
            p.event.event_type.as_str(),
            p.event.time.as_deref(),
            &p.event.text,
        );
        match stored.get_mut(&key).and_then(VecDeque::pop_front) {
            Some((id, facts)) => {
                if facts != p.facts {
                    refacts.push((id, p.facts.clone()));
                }
                false
            }
            None => true,
        }
    });
    let fresh: Vec<&PreparedEvent> = fresh.collect();
    if !refacts.is_empty() {
        let mut update = tx.prepare_cached("UPDATE event_rows SET facts=?2 WHERE id=?1")?;
        for (id, facts) in &refacts {
            update.execute(rusqlite::params![id, facts])?;
        }
    }
    append_events(tx, session_id, fresh.into_iter(), sinks)
}

/// What makes two events the same event: type, time and (stored, redacted) text.
fn identity(event_type: &str, time: Option<&str>, text: &str) -> u64 {
    let kind = format!("{event_type}\u{0}{}", time.unwrap_or(""));
    text_hash(&kind, text)
}
