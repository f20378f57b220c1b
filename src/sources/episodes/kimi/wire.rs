//! The times of a Kimi CLI session, from the `wire.jsonl` beside its `context.jsonl`.
//!
//! `context.jsonl` holds no times; since 0.4x Kimi CLI also appends every wire message to
//! `wire.jsonl` (`wire/file.py`): a `{type:"metadata", protocol_version}` header, then
//! `{timestamp (float seconds), message{type, payload}}` records. Each prompt the person sends
//! opens a turn with `TurnBegin{user_input}` (a follow-up typed into a running turn is
//! `SteerInput{user_input}`), so a user message of the context takes the time of the turn its
//! text began, and what the agent did after it takes that time too; the session spans the first
//! and the last wire record.
//!
//! The wire is append-only, like the context: a read that continues the context continues the
//! wire from where the last one stopped ([`WireCursor`], kept in the context's cursor), with
//! the turns read but not yet matched to a prompt, so the wire is read once however often the
//! context grows, and a prompt sent twice takes its second turn's time the second time.
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::agent::{EventSink, SessionStart};
use super::super::lines::{read_lines, LineItem};
use super::super::model::{ParsedEvent, SessionMeta};
use super::super::outcome::Outcome;
use super::super::parser::{content_text, text_hash};

/// Turns remembered per wire file.
const MAX_TURNS: usize = 100_000;
/// Unmatched turns a cursor keeps (a turn whose prompt never reached the context is dropped
/// once this many newer ones wait).
const MAX_PENDING: usize = 1_000;
/// Bytes at the start and before a cursor's offset whose hash tells an appended wire from a
/// rewritten one.
const TAIL_BYTES: u64 = 64;

/// Where a read of a wire file stopped, kept in the context's cursor. Prompts are kept as
/// hashes: a cursor holds no text of the session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct WireCursor {
    /// Bytes of the wire read (complete lines).
    offset: u64,
    /// Hash of the wire's first bytes and those before `offset` ([`tail_hash`]).
    tail: u64,
    first: Option<String>,
    last: Option<String>,
    /// The time the last event read took: events that continue its turn take it too.
    current: Option<String>,
    /// Turns read but not matched to a prompt yet, oldest first: (prompt hash, begin time).
    pending: Vec<(u64, String)>,
}

/// What a session's `wire.jsonl` says of its times.
#[derive(Debug, Default)]
pub(crate) struct WireTimes {
    /// Each turn's prompt hash → (order, begin time) of its turns not matched yet, in order.
    turns: HashMap<u64, VecDeque<(u64, String)>>,
    /// Turns seen (the order of the next).
    seq: u64,
    first: Option<String>,
    last: Option<String>,
    last_turn: Option<String>,
    /// Bytes of the wire read so far, and the hash of what ends them.
    offset: u64,
    tail: u64,
    /// Bytes this read took from the wire file (what the tests check resuming by).
    #[cfg(test)]
    pub(crate) bytes_read: u64,
    /// The time events continuing the last read's turn take (from its cursor).
    resumed_current: Option<String>,
}

fn secs_to_rfc3339(v: &Value) -> Option<String> {
    let secs = v.as_f64().filter(|s| s.is_finite() && *s > 0.0)?;
    crate::sources::agent_knowledge::ms_to_rfc3339((secs * 1000.0).round() as i64)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn prompt_key(prompt: &str) -> u64 {
    text_hash("kimi-turn", prompt)
}

/// The hash of the first and the last [`TAIL_BYTES`] of `f` up to `offset` (the end of what a
/// read consumed): a wire rewritten rather than appended to differs in them.
fn tail_hash(f: &mut std::fs::File, offset: u64) -> Option<u64> {
    let mut buf = Vec::new();
    for from in [0, offset.saturating_sub(TAIL_BYTES)] {
        let want = TAIL_BYTES.min(offset - from);
        f.seek(SeekFrom::Start(from)).ok()?;
        let before = buf.len();
        f.by_ref().take(want).read_to_end(&mut buf).ok()?;
        if (buf.len() - before) as u64 != want {
            return None;
        }
    }
    Some(text_hash("kimi-wire-ends", &String::from_utf8_lossy(&buf)))
}

/// The `timestamp` a record opens with (`{"timestamp": 1761.5, "message": …}`, the order
/// Kimi CLI's `json.dumps` of the record model writes).
fn head_timestamp(line: &[u8]) -> Option<String> {
    let rest = line.strip_prefix(b"{\"timestamp\":")?;
    let rest = rest.trim_ascii_start();
    let end = rest
        .iter()
        .position(|b| {
            !(b.is_ascii_digit()
                || *b == b'.'
                || *b == b'e'
                || *b == b'E'
                || *b == b'+'
                || *b == b'-')
        })
        .unwrap_or(rest.len());
    let secs: f64 = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
    secs_to_rfc3339(&Value::from(secs))
}

impl WireTimes {
    /// The times of the wire file next to `context` (none when it is absent or unreadable),
    /// read from where `from` stopped when the wire only grew since, else whole. Lines over
    /// `max_line_bytes` are skipped.
    pub(crate) fn beside(
        context: &Path,
        from: Option<WireCursor>,
        max_line_bytes: usize,
    ) -> WireTimes {
        let mut out = WireTimes::default();
        if context.file_name().is_none_or(|n| n != "context.jsonl") {
            return out;
        }
        let path = context.with_file_name("wire.jsonl");
        let Ok(mut f) = crate::sources::regular_file::open(&path) else {
            return out;
        };
        let len = f.metadata().map_or(0, |m| m.len());
        if let Some(c) = from {
            out.resumed_current = c.current.clone();
            let appended = c.offset <= len && tail_hash(&mut f, c.offset) == Some(c.tail);
            if appended {
                out.restore(c);
            }
        }
        let start = out.offset;
        let mut turns = out.turns.values().map(VecDeque::len).sum::<usize>();
        let end = read_lines(&mut f, start, max_line_bytes, |item| {
            let LineItem::Line(line) = item else { return };
            out.line(line, &mut turns);
        });
        if let Ok(end) = end {
            #[cfg(test)]
            {
                out.bytes_read = end - start;
            }
            out.offset = end;
            out.tail = tail_hash(&mut f, end).unwrap_or(0);
        }
        out
    }

    /// Takes back what a cursor kept of the wire's start.
    fn restore(&mut self, c: WireCursor) {
        self.offset = c.offset;
        self.tail = c.tail;
        self.first = c.first;
        self.last = c.last;
        for (key, time) in c.pending {
            self.push_turn(key, time);
        }
    }

    fn push_turn(&mut self, key: u64, time: String) {
        self.seq += 1;
        self.turns
            .entry(key)
            .or_default()
            .push_back((self.seq, time.clone()));
        self.last_turn = Some(time);
    }

    /// One wire record.
    fn line(&mut self, line: &[u8], turns: &mut usize) {
        // Most records are streamed parts: only the few holding a turn's input are parsed
        // whole; the others give their time from the line's head.
        let turn = contains(line, b"\"TurnBegin\"") || contains(line, b"\"SteerInput\"");
        if !turn {
            if let Some(time) = head_timestamp(line) {
                self.first.get_or_insert_with(|| time.clone());
                self.last = Some(time);
            }
            return;
        }
        let Ok(rec) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(time) = rec.get("timestamp").and_then(secs_to_rfc3339) else {
            return;
        };
        self.first.get_or_insert_with(|| time.clone());
        self.last = Some(time.clone());
        let msg = rec.get("message").unwrap_or(&Value::Null);
        let kind = msg.get("type").and_then(Value::as_str);
        if matches!(kind, Some("TurnBegin") | Some("SteerInput")) && *turns < MAX_TURNS {
            *turns += 1;
            let input = msg.pointer("/payload/user_input").unwrap_or(&Value::Null);
            self.push_turn(prompt_key(&content_text(input)), time);
        }
    }

    /// What the next read continues from: the turns still unmatched, and the time of the
    /// turn the events read last belong to.
    fn cursor(&self, current: Option<String>) -> WireCursor {
        let mut pending: Vec<(u64, u64, String)> = self
            .turns
            .iter()
            .flat_map(|(key, q)| q.iter().map(|(seq, t)| (*seq, *key, t.clone())))
            .collect();
        pending.sort_unstable_by_key(|(seq, _, _)| *seq);
        let skip = pending.len().saturating_sub(MAX_PENDING);
        WireCursor {
            offset: self.offset,
            tail: self.tail,
            first: self.first.clone(),
            last: self.last.clone(),
            current,
            pending: pending
                .into_iter()
                .skip(skip)
                .map(|(_, key, t)| (key, t))
                .collect(),
        }
    }

    /// The begin time of the turn `prompt` opened (each turn is matched once).
    fn turn_of(&mut self, prompt: &str) -> Option<String> {
        let key = prompt_key(prompt);
        let q = self.turns.get_mut(&key)?;
        let (_, time) = q.pop_front()?;
        if q.is_empty() {
            self.turns.remove(&key);
        }
        Some(time)
    }
}

/// Gives each timeless event of a Kimi CLI context the time its turn began, and the session
/// the span of its wire file.
pub(crate) struct WireTimeSink<'a> {
    pub inner: &'a mut dyn EventSink,
    pub times: WireTimes,
    /// The time of the turn the events being read belong to: on a resumed read, the last turn
    /// the wire began (the one being appended to).
    pub current: Option<String>,
}

impl<'a> WireTimeSink<'a> {
    /// On a resumed read (`resumed`), events before the first new prompt continue the last
    /// read's turn: they take its time, else (a cursor from before the wire was resumed) the
    /// last turn the wire began.
    pub(crate) fn new(inner: &'a mut dyn EventSink, mut times: WireTimes, resumed: bool) -> Self {
        let current = if resumed {
            times
                .resumed_current
                .take()
                .or_else(|| times.last_turn.clone())
        } else {
            None
        };
        WireTimeSink {
            inner,
            times,
            current,
        }
    }

    /// Where the next read continues the wire.
    pub(crate) fn cursor(&self) -> WireCursor {
        self.times.cursor(self.current.clone())
    }
}

impl EventSink for WireTimeSink<'_> {
    fn session(&mut self, start: SessionStart) {
        self.inner.session(start);
    }

    fn event(&mut self, mut event: ParsedEvent) {
        if event.time.is_none() {
            if event.event_type.is_human() {
                if let Some(t) = self.times.turn_of(&event.text) {
                    self.current = Some(t);
                }
            }
            event.time = self.current.clone();
        }
        self.inner.event(event);
    }

    fn end_session(&mut self, mut meta: SessionMeta, outcome: Outcome) {
        if meta.created_at.is_none() {
            meta.created_at = self.times.first.clone();
        }
        if meta.last_event_at.is_none() {
            meta.last_event_at = self.times.last.clone();
        }
        self.inner.end_session(meta, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(secs: f64, text: &str) -> String {
        serde_json::json!({"timestamp": secs, "message": {"type": "TurnBegin",
            "payload": {"user_input": [{"type": "text", "text": text}]}}})
        .to_string()
            + "\n"
    }

    #[test]
    fn a_grown_wire_is_read_from_where_it_stopped_with_its_unmatched_turns() {
        let dir = tempfile::tempdir().unwrap();
        let context = dir.path().join("context.jsonl");
        let wire = dir.path().join("wire.jsonl");
        let head = format!(
            "{}\n{}{}",
            r#"{"type": "metadata", "protocol_version": "1.3"}"#,
            turn(1783323000.0, "go on"),
            r#"{"timestamp": 1783323001.0, "message": {"type": "ContentPart", "payload": {"text": "ok"}}}"#
        ) + "\n";
        std::fs::write(&wire, &head).unwrap();
        let mut first = WireTimes::beside(&context, None, 1 << 20);
        assert_eq!(first.bytes_read, head.len() as u64);
        assert_eq!(
            first.turn_of("go on").as_deref(),
            Some("2026-07-06T07:30:00.000Z")
        );
        let cursor = first.cursor(Some("2026-07-06T07:30:00.000Z".into()));

        // The same prompt again in a new turn, and a record still being written.
        let more = turn(1783323600.0, "go on") + &turn(1783323700.0, "and the docs");
        let mut grown = head.clone() + &more + r#"{"timestamp": 17833"#;
        std::fs::write(&wire, &grown).unwrap();
        let mut second = WireTimes::beside(&context, Some(cursor.clone()), 1 << 20);
        assert_eq!(second.bytes_read, more.len() as u64, "only the new lines");
        assert_eq!(
            second.turn_of("go on").as_deref(),
            Some("2026-07-06T07:40:00.000Z"),
            "the second turn, not the first again"
        );
        assert_eq!(second.first.as_deref(), Some("2026-07-06T07:30:00.000Z"));
        let pending = second.cursor(None).pending;
        assert_eq!(pending.len(), 1, "and the docs");
        assert!(
            !serde_json::to_string(&second.cursor(None))
                .unwrap()
                .contains("docs"),
            "a cursor holds no prompt text"
        );

        // Rewritten (not appended): read whole.
        grown.replace_range(0..1, " ");
        std::fs::write(&wire, &grown).unwrap();
        let whole = WireTimes::beside(&context, Some(cursor), 1 << 20);
        assert_eq!(whole.bytes_read, (head.len() + more.len()) as u64);
    }
}
