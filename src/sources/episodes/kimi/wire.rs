//! The times of a Kimi CLI session, from the `wire.jsonl` beside its `context.jsonl`.
//!
//! `context.jsonl` holds no times; since 0.4x Kimi CLI also appends every wire message to
//! `wire.jsonl` (`wire/file.py`): a `{type:"metadata", protocol_version}` header, then
//! `{timestamp (float seconds), message{type, payload}}` records. Each prompt the person sends
//! opens a turn with `TurnBegin{user_input}` (a follow-up typed into a running turn is
//! `SteerInput{user_input}`), so a user message of the context takes the time of the turn its
//! text began, and what the agent did after it takes that time too; the session spans the first
//! and the last wire record.

use std::collections::{HashMap, VecDeque};
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::super::agent::{EventSink, SessionStart};
use super::super::model::{ParsedEvent, SessionMeta};
use super::super::outcome::Outcome;
use super::super::parser::content_text;

/// A wire file over this size is not read for times (they are then the file's mtime).
const MAX_WIRE_BYTES: u64 = 256 * 1024 * 1024;
/// Turns remembered per wire file.
const MAX_TURNS: usize = 100_000;

/// What a session's `wire.jsonl` says of its times.
#[derive(Debug, Default)]
pub(crate) struct WireTimes {
    /// Each turn's prompt text → its begin times, in order.
    turns: HashMap<String, VecDeque<String>>,
    first: Option<String>,
    last: Option<String>,
    last_turn: Option<String>,
}

fn secs_to_rfc3339(v: &Value) -> Option<String> {
    let secs = v.as_f64().filter(|s| s.is_finite() && *s > 0.0)?;
    crate::sources::agent_knowledge::ms_to_rfc3339((secs * 1000.0).round() as i64)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
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
    /// The times of the wire file next to `context` (none when it is absent or unreadable).
    pub(crate) fn beside(context: &Path) -> WireTimes {
        let mut out = WireTimes::default();
        if context.file_name().is_none_or(|n| n != "context.jsonl") {
            return out;
        }
        let path = context.with_file_name("wire.jsonl");
        let Ok(f) = crate::sources::regular_file::open(&path) else {
            return out;
        };
        if !f.metadata().is_ok_and(|m| m.len() <= MAX_WIRE_BYTES) {
            return out;
        }
        let mut turns = 0usize;
        for line in std::io::BufReader::new(f)
            .split(b'\n')
            .map_while(Result::ok)
        {
            // Most records are streamed parts: only the few holding a turn's input are parsed
            // whole; the others give their time from the line's head.
            let turn = contains(&line, b"\"TurnBegin\"") || contains(&line, b"\"SteerInput\"");
            if !turn {
                if let Some(time) = head_timestamp(&line) {
                    out.first.get_or_insert_with(|| time.clone());
                    out.last = Some(time);
                }
                continue;
            }
            let Ok(rec) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            let Some(time) = rec.get("timestamp").and_then(secs_to_rfc3339) else {
                continue;
            };
            out.first.get_or_insert_with(|| time.clone());
            out.last = Some(time.clone());
            let msg = rec.get("message").unwrap_or(&Value::Null);
            let kind = msg.get("type").and_then(Value::as_str);
            if matches!(kind, Some("TurnBegin") | Some("SteerInput")) && turns < MAX_TURNS {
                turns += 1;
                let input = msg.pointer("/payload/user_input").unwrap_or(&Value::Null);
                out.turns
                    .entry(content_text(input).trim().to_string())
                    .or_default()
                    .push_back(time.clone());
                out.last_turn = Some(time);
            }
        }
        out
    }

    /// The begin time of the turn `prompt` opened (each turn is matched once).
    fn turn_of(&mut self, prompt: &str) -> Option<String> {
        self.turns.get_mut(prompt.trim())?.pop_front()
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
    pub(crate) fn new(inner: &'a mut dyn EventSink, times: WireTimes, resumed: bool) -> Self {
        let current = if resumed {
            times.last_turn.clone()
        } else {
            None
        };
        WireTimeSink {
            inner,
            times,
            current,
        }
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
            meta.created_at = self.times.first.take();
        }
        if meta.last_event_at.is_none() {
            meta.last_event_at = self.times.last.take();
        }
        self.inner.end_session(meta, outcome);
    }
}
