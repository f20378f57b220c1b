//! Reading a JSONL session whose conversation is not simply its lines in order.
//!
//! Pi keeps a tree of entries and only the branch ending at the last entry is the conversation;
//! Gemini CLI rewinds (`$rewindTo`), checkpoints (`$set.messages`) and re-appends messages
//! under their id. A line read today can therefore leave the conversation because of a line
//! appended tomorrow. The read stays in file order (so an event's `seq` is the same whether
//! the file was read at once or as it grew, see docs/EVENTS.md "Event identity") and marks what
//! is not in the conversation with [`super::model::Fact::Abandoned`], which no longer counts
//! for the outcome:
//!
//! - a full read runs the agent's line rules once; they survey what the conversation is
//!   (`line_rules::LineState::adopt_conversation`). When something read is not in it, the file is read a
//!   second time with that knowledge, and the marks are set there; otherwise the first pass's
//!   events are the answer (the common case costs one pass);
//! - a resumed read of what was appended is kept only when the new lines leave the
//!   conversation read so far as it was (`LineRules::rewrites_past`): a Pi branch, a Gemini
//!   rewind or checkpoint turns it into a full re-read, whose events the indexer merges (stored
//!   events keep their seq and take their new marks).

use std::io;

use super::agent::{EventSink, ReadEnd, ReadLimits, Resume};
use super::discover::TranscriptFile;
use super::model::{Fact, ParsedEvent, SessionMeta};
use super::outcome::Outcome;
use super::parser::{read_jsonl_keep, Ctx, TranscriptParser};

/// Event text a first pass keeps in memory before it gives up and reads a second time.
const MAX_BUFFERED_TEXT: usize = 64 * 1024 * 1024;

/// Reads `file` as [`super::parser::read_jsonl`] does, with the conversation rules above.
pub(crate) fn read_conversation(
    file: &TranscriptFile,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
    fresh: impl Fn() -> TranscriptParser,
) -> io::Result<ReadEnd> {
    if let Some(resume) = from {
        let mut buf = Buffer::default();
        let (end, mut parser) = read_jsonl_keep(file, Some(resume), limits, &mut buf, &fresh)?;
        if end.resumed && !parser.line_state_mut().rewrites_past() && !buf.overflowed {
            buf.forward(sink);
            return Ok(end);
        }
    }
    let mut buf = Buffer::default();
    let (end, mut survey) = read_jsonl_keep(file, None, limits, &mut buf, &fresh)?;
    let mut second = fresh();
    let marks = second
        .line_state_mut()
        .adopt_conversation(survey.line_state_mut());
    if !marks && !buf.overflowed {
        buf.forward(sink);
        return Ok(end);
    }
    read_jsonl_keep(file, None, limits, sink, || second).map(|(end, _)| end)
}

/// A sink that holds one file's events until the read knows they are final.
#[derive(Default)]
struct Buffer {
    events: Vec<ParsedEvent>,
    text: usize,
    overflowed: bool,
    end: Option<(SessionMeta, Outcome)>,
}

impl Buffer {
    fn forward(self, sink: &mut dyn EventSink) {
        for ev in self.events {
            sink.event(ev);
        }
        if let Some((meta, outcome)) = self.end {
            sink.end_session(meta, outcome);
        }
    }
}

impl EventSink for Buffer {
    fn session(&mut self, _start: super::agent::SessionStart) {}

    fn event(&mut self, event: ParsedEvent) {
        if self.overflowed {
            return;
        }
        self.text += event.text.len();
        if self.text > MAX_BUFFERED_TEXT {
            self.overflowed = true;
            self.events = Vec::new();
            return;
        }
        self.events.push(event);
    }

    fn end_session(&mut self, meta: SessionMeta, outcome: Outcome) {
        self.end = Some((meta, outcome));
    }
}

/// Runs `f` over records that are off the conversation: every event it emits is marked with
/// `reason` ([`Fact::Abandoned`]), and the outcome signals it gave are undone.
pub(crate) fn aside(
    cx: &mut Ctx,
    out: &mut Vec<ParsedEvent>,
    reason: &str,
    f: impl FnOnce(&mut Ctx, &mut Vec<ParsedEvent>),
) {
    let outcome = cx.outcome.clone();
    let before = out.len();
    f(cx, out);
    cx.outcome = outcome;
    for ev in out.iter_mut().skip(before) {
        ev.facts.push(Fact::Abandoned {
            reason: reason.to_string(),
        });
    }
}
