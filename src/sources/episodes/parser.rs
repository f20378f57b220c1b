//! The format-neutral transcript parser the indexer drives line by line.
//!
//! [`TranscriptParser`] hides which agent wrote a file: it recovers records from torn, spliced
//! or NUL-filled lines, dispatches them to the Claude Code or Codex rules, and keeps the shared
//! bookkeeping (session meta, counters, outcome signals, the bounded tool-id → name map). Its
//! whole state is serde-serialisable and small, so the indexer can store it with the file offset
//! and resume a growing transcript later with exactly the events a single pass would give.

use std::collections::VecDeque;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{EventSink, ReadEnd, ReadLimits, Resume};
use super::discover::TranscriptFile;
use super::line_rules::LineState;
use super::lines::{read_all_lines, LineItem, DEFAULT_MAX_LINE_BYTES};
use super::model::{EventType, Fact, ParseStats, ParsedEvent, SessionMeta, TranscriptKind};
pub use super::outcome::Outcome;
use super::outcome::OutcomeTracker;
pub(crate) use super::tool_text::{command_program, patch_files, render_tool_input};
use super::{bounds, lines};
use crate::sources::regular_file;

/// Cap of one event's text; longer text is cut at a char boundary.
pub const MAX_EVENT_TEXT: usize = 64 * 1024;
const MAX_TOOL_NAMES: usize = 200;
const MAX_PENDING_FACTS: usize = 32;
const MAX_LINKED_AGENTS: usize = 64;
const MAX_DEDUPE: usize = 48;
/// Attempts to find the start of a full record inside a torn line.
const MAX_RECOVERY_ATTEMPTS: usize = 16;

/// How a record was handled, for the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handled {
    /// A known record; if it produced no event it is counted as `ignored`.
    Known,
    /// Valid JSON of a type this parser does not know.
    Unknown,
    /// A known type with a malformed body (no `message`, `content:null`, …).
    Broken,
}

/// Parses one transcript, line by line, into [`ParsedEvent`]s. Never panics, never fails.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TranscriptParser {
    kind: TranscriptKind,
    cx: Ctx,
    format: LineState,
}

impl TranscriptParser {
    pub fn new(kind: TranscriptKind) -> Self {
        TranscriptParser {
            kind,
            cx: Ctx::default(),
            format: LineState::new(kind),
        }
    }

    pub fn kind(&self) -> TranscriptKind {
        self.kind
    }

    /// Feeds one physical line (without `'\n'`). Bad lines are counted in [`ParseStats`].
    pub fn feed(&mut self, line: &[u8], out: &mut Vec<ParsedEvent>) {
        self.cx.stats.lines += 1;
        if bounds::too_many_containers(line) {
            self.cx.stats.skipped_oversized += 1;
            return;
        }
        let (records, broken) = split_records(&bounds::valid_utf8(line));
        self.cx.stats.skipped_broken += broken;
        for record in &records {
            self.feed_record(record, out);
        }
        bounds::bound_meta(&mut self.cx.meta);
    }

    /// Feeds one record already parsed (a line's, or one element of a whole-file JSON document
    /// such as a legacy Gemini CLI session), counting it like a line's.
    pub fn feed_record(&mut self, record: &Value, out: &mut Vec<ParsedEvent>) {
        if bounds::has_absurd_id(record) {
            self.cx.stats.skipped_bad_id += 1;
            return;
        }
        let before = out.len();
        let handled = self.format.feed(&mut self.cx, record, out);
        match handled {
            Handled::Known if out.len() == before => self.cx.stats.ignored += 1,
            Handled::Known => {}
            Handled::Unknown => self.cx.stats.skipped_unknown += 1,
            Handled::Broken => self.cx.stats.skipped_broken += 1,
        }
        bounds::bound_meta(&mut self.cx.meta);
    }

    /// Counts one record of a whole-file document, as [`TranscriptParser::feed`] counts a line.
    pub fn count_line(&mut self) {
        self.cx.stats.lines += 1;
    }

    /// Counts a line that was over the size cap and skipped unread.
    pub fn feed_oversized(&mut self, _len: u64) {
        self.cx.stats.lines += 1;
        self.cx.stats.skipped_oversized += 1;
    }

    /// Feeds one item from [`super::lines::read_lines`].
    pub fn feed_item(&mut self, item: LineItem<'_>, out: &mut Vec<ParsedEvent>) {
        match item {
            LineItem::Line(bytes) => self.feed(bytes, out),
            LineItem::Oversized { len } => self.feed_oversized(len),
        }
    }

    /// Applies a Claude `agent-<id>.meta.json` sidecar (`agentType`, `description`, `toolUseId`).
    /// Malformed sidecars are ignored.
    pub fn apply_sidecar(&mut self, sidecar_json: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(sidecar_json) else {
            return;
        };
        let meta = &mut self.cx.meta;
        if let Some(s) = str_of(&v, "agentType") {
            meta.agent_preset = Some(s.to_string());
        }
        if let Some(s) = str_of(&v, "description") {
            meta.agent_description = Some(s.to_string());
        }
        if let Some(s) = str_of(&v, "toolUseId") {
            meta.spawn_tool_use_id = Some(s.to_string());
        }
        if let Some(s) = str_of(&v, "name").or_else(|| str_of(&v, "agentName")) {
            meta.agent_name = Some(s.to_string());
        }
        bounds::bound_meta(meta);
    }

    pub fn meta(&self) -> &SessionMeta {
        &self.cx.meta
    }

    pub fn stats(&self) -> &ParseStats {
        &self.cx.stats
    }

    pub fn outcome(&self) -> Outcome {
        self.cx.outcome.outcome()
    }

    /// Whether the line state is its agent's (a damaged cursor may name another's rules, which
    /// would read this file's lines as that agent's): a saved parser that is not is not resumed.
    pub(crate) fn rules_are_its_agents(&self) -> bool {
        self.format.format() == LineState::new(self.kind).format()
    }

    /// The agent's own line state (what its rules remember between lines).
    pub(crate) fn line_state_mut(&mut self) -> &mut LineState {
        &mut self.format
    }
}

/// Parses a whole (finished) file, applying a sibling `<stem>.meta.json` sidecar if there is one.
/// A last line without `'\n'` is parsed too.
pub fn parse_file(
    path: &Path,
    kind: TranscriptKind,
) -> io::Result<(Vec<ParsedEvent>, SessionMeta, ParseStats, Outcome)> {
    let file = regular_file::open(path)?;
    let mut parser = TranscriptParser::new(kind);
    let sidecar = path.with_extension("meta.json");
    if let Ok(bytes) = regular_file::read_limited(&sidecar, regular_file::SIDE_FILE_LIMIT) {
        parser.apply_sidecar(&bytes);
    }
    let mut events = Vec::new();
    read_all_lines(
        io::BufReader::new(file),
        0,
        DEFAULT_MAX_LINE_BYTES,
        |item| parser.feed_item(item, &mut events),
    )?;
    let outcome = parser.outcome();
    Ok((events, parser.cx.meta, parser.cx.stats, outcome))
}

/// The read of every JSONL agent driven by the line parser: resumes the saved parser (the
/// cursor) at the saved offset, or starts `fresh()` at 0 when there is none or it no longer
/// parses; feeds the complete lines and pushes each event into `sink` as it is made; the
/// cursor handed back is the parser's state.
pub(crate) fn read_jsonl(
    file: &TranscriptFile,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
    fresh: impl FnOnce() -> TranscriptParser,
) -> io::Result<ReadEnd> {
    read_jsonl_keep(file, from, limits, sink, fresh).map(|(end, _)| end)
}

/// [`read_jsonl`], also handing back the parser as the read left it.
pub(crate) fn read_jsonl_keep(
    file: &TranscriptFile,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
    fresh: impl FnOnce() -> TranscriptParser,
) -> io::Result<(ReadEnd, TranscriptParser)> {
    let resumed = from.and_then(|r| {
        serde_json::from_str::<TranscriptParser>(r.cursor)
            .ok()
            .filter(|p| p.kind == file.kind && p.rules_are_its_agents())
            .map(|p| (p, r.offset))
    });
    let was_resumed = resumed.is_some();
    let (mut parser, start) = resumed.unwrap_or_else(|| (fresh(), 0));
    let before = *parser.stats();
    let mut events: Vec<ParsedEvent> = Vec::new();
    let end = lines::read_lines(
        regular_file::open(&file.path)?,
        start,
        limits.max_line_bytes,
        |item| {
            parser.feed_item(item, &mut events);
            for ev in events.drain(..) {
                sink.event(ev);
            }
        },
    )?;
    sink.end_session(parser.meta().clone(), parser.outcome());
    let end = ReadEnd {
        start,
        end,
        resumed: was_resumed,
        cursor: serde_json::to_string(&parser).unwrap_or_default(),
        lines: parser.stats().since(&before),
        total: *parser.stats(),
    };
    Ok((end, parser))
}

/// Shared bookkeeping of both formats.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Ctx {
    pub meta: SessionMeta,
    pub stats: ParseStats,
    pub outcome: OutcomeTracker,
    /// Recent tool call id → tool name, oldest first, bounded.
    tool_names: VecDeque<(String, String)>,
    /// Facts found on records that produced no event, for the next emitted event.
    pending_facts: Vec<Fact>,
    /// Agent ids already linked (so repeated progress records link once).
    linked_agents: VecDeque<String>,
    /// 0 none, 1 `summary`, 2 `ai-title`/thread name, 3 `custom-title`.
    title_rank: u8,
}

impl Ctx {
    pub fn remember_tool(&mut self, id: &str, name: &str) {
        if id.is_empty() {
            return;
        }
        if self.tool_names.len() >= MAX_TOOL_NAMES {
            self.tool_names.pop_front();
        }
        self.tool_names
            .push_back((id.to_string(), name.to_string()));
    }

    pub fn tool_name(&self, id: &str) -> Option<String> {
        self.tool_names
            .iter()
            .rev()
            .find(|(i, _)| i == id)
            .map(|(_, n)| n.clone())
    }

    /// Updates first/last times from a record's time.
    pub fn touch_time(&mut self, time: Option<&str>) {
        let Some(t) = time else { return };
        if self.meta.created_at.is_none() {
            self.meta.created_at = Some(t.to_string());
        }
        let later = match &self.meta.last_event_at {
            // Same shape (both UTC `Z`, same length): compare as text, tolerating slight disorder.
            Some(prev) if prev.len() == t.len() && prev.ends_with('Z') && t.ends_with('Z') => {
                t >= prev.as_str()
            }
            _ => true,
        };
        if later {
            self.meta.last_event_at = Some(t.to_string());
        }
    }

    pub fn set_title(&mut self, title: &str, rank: u8) {
        let title = title.trim();
        if !title.is_empty() && rank >= self.title_rank {
            self.title_rank = rank;
            self.meta.title = Some(cap_chars(title, 500));
        }
    }

    /// Records an agent link; returns whether the agent id was new.
    pub fn note_agent(&mut self, agent_id: &str) -> bool {
        if self.linked_agents.iter().any(|a| a == agent_id) {
            return false;
        }
        if self.linked_agents.len() >= MAX_LINKED_AGENTS {
            self.linked_agents.pop_front();
        }
        self.linked_agents.push_back(agent_id.to_string());
        true
    }

    /// Keeps a fact for the next emitted event (bounded).
    pub fn defer_fact(&mut self, fact: Fact) {
        if self.pending_facts.len() < MAX_PENDING_FACTS {
            self.pending_facts.push(fact);
        }
    }

    /// Emits an event: feeds outcome signals, caps the text, attaches deferred facts. An event
    /// with blank text is not emitted; its facts wait for the next one.
    pub fn emit(&mut self, out: &mut Vec<ParsedEvent>, mut ev: ParsedEvent) {
        if ev.event_type.is_assistant() {
            self.outcome.assistant_activity();
        } else if ev.event_type == EventType::ToolResult {
            self.outcome.tool_result(ev.is_error);
        } else if ev.event_type == EventType::UserMessage {
            self.outcome.human_message(&ev.text);
        }
        if ev.text.trim().is_empty() {
            for f in std::mem::take(&mut ev.facts) {
                self.defer_fact(f);
            }
            return;
        }
        cap_in_place(&mut ev.text, MAX_EVENT_TEXT);
        if !self.pending_facts.is_empty() {
            let mut facts = std::mem::take(&mut self.pending_facts);
            facts.append(&mut ev.facts);
            ev.facts = facts;
        }
        bounds::bound_event(&mut ev);
        self.stats.events += 1;
        out.push(ev);
    }
}

/// Remembers recent texts from up to 8 sources so a text written twice by different sources
/// (Codex `response_item` + `event_msg`, Claude queued prompt + user line) is indexed once, while
/// the same text typed twice by a person is kept twice.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct PairDedupe {
    entries: VecDeque<(u64, u8)>,
}

impl PairDedupe {
    /// True when `hash` was already seen from another source (the two are then paired up).
    pub fn is_duplicate(&mut self, hash: u64, source: u8) -> bool {
        if let Some(entry) = self
            .entries
            .iter_mut()
            .find(|(h, mask)| *h == hash && mask & source == 0)
        {
            entry.1 |= source;
            return true;
        }
        self.push(hash, source);
        false
    }

    /// Consumes a pending entry of `hash` without recording this sighting.
    pub fn take(&mut self, hash: u64) -> bool {
        match self.entries.iter().position(|(h, _)| *h == hash) {
            Some(i) => {
                self.entries.remove(i);
                true
            }
            None => false,
        }
    }

    pub fn push(&mut self, hash: u64, source: u8) {
        if self.entries.len() >= MAX_DEDUPE {
            self.entries.pop_front();
        }
        self.entries.push_back((hash, source));
    }
}

/// Stable 64-bit FNV-1a of a text (stable across builds: it is stored in parser state).
pub(crate) fn text_hash(kind: &str, text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in kind.bytes().chain([0u8]).chain(text.trim().bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Splits a physical line into JSON object records, recovering full records from torn lines
/// (a truncated stub followed by a full record), NUL runs and concatenated records.
/// Returns the records and the number of broken fragments.
pub(crate) fn split_records(line: &[u8]) -> (Vec<Value>, u64) {
    let mut records = Vec::new();
    let mut broken = 0u64;
    let mut had_text = false;
    for segment in line.split(|&b| b == 0) {
        let segment = segment.trim_ascii();
        if segment.is_empty() {
            continue;
        }
        had_text = true;
        parse_segment(segment, &mut records, &mut broken);
    }
    if !had_text && line.contains(&0) {
        broken += 1;
    }
    (records, broken)
}

fn parse_segment(segment: &[u8], records: &mut Vec<Value>, broken: &mut u64) {
    let mut rest = segment;
    loop {
        rest = rest.trim_ascii();
        if rest.is_empty() {
            return;
        }
        if let Some((value, used)) = first_object(rest) {
            records.push(value);
            rest = rest.get(used..).unwrap_or(&[]);
            continue;
        }
        *broken += 1;
        match next_record_start(rest) {
            Some(i) => rest = rest.get(i..).unwrap_or(&[]),
            None => return,
        }
    }
}

/// Parses one JSON object at the start of `bytes`; returns it and the bytes it used.
///
/// A record that fails only because of a lone UTF-16 surrogate escape is read with the
/// surrogate replaced by `\ufffd`, an escape of the same length, so byte offsets still match.
fn first_object(bytes: &[u8]) -> Option<(Value, usize)> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) if v.is_object() => Some((v, stream.byte_offset())),
        Some(Err(e)) if e.is_syntax() => {
            let repaired = bounds::repair_lone_surrogates(bytes)?;
            let mut stream = serde_json::Deserializer::from_slice(&repaired).into_iter::<Value>();
            match stream.next() {
                Some(Ok(v)) if v.is_object() => Some((v, stream.byte_offset())),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The first `{"` after position 0 where a whole object parses.
fn next_record_start(bytes: &[u8]) -> Option<usize> {
    let mut attempts = 0;
    let mut i = 1;
    while i + 1 < bytes.len() && attempts < MAX_RECOVERY_ATTEMPTS {
        if bytes.get(i) == Some(&b'{') && bytes.get(i + 1) == Some(&b'"') {
            attempts += 1;
            if first_object(bytes.get(i..).unwrap_or(&[])).is_some() {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A record time if it looks like an ISO-8601 date (`YYYY-MM-…`); anything else is dropped.
pub(crate) fn norm_time(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?;
    // Only a real RFC 3339 time is kept: anything else (an escape sequence glued to a time,
    // a number) is dropped rather than carried to a terminal or a filter.
    chrono::DateTime::parse_from_rfc3339(s)
        .is_ok()
        .then(|| s.to_string())
}

/// `file:///home/me/repo%20x` → `/home/me/repo x`: a workspace folder as an editor writes it
/// (Cursor's `workspace.json`, Continue's `workspaceDirectory`, Amp's `trees[].uri`). Other
/// URIs (`vscode-remote://…`) and plain paths are kept as written.
pub(crate) fn file_uri_path(uri: &str) -> String {
    let Some(rest) = uri.strip_prefix("file://") else {
        return uri.to_string();
    };
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).to_string()
}

/// Cuts `s` to at most `max` bytes at a char boundary. A text that is cut is redacted first:
/// a cut that lands inside a secret (`https://deploy:pw` before its `@host`, a token's first
/// characters) leaves a part no rule recognises, which the later redaction would keep.
pub(crate) fn cap_in_place(s: &mut String, max: usize) {
    if s.len() > max {
        let (red, n) = crate::text::redact::redact_cow(s);
        if n > 0 {
            *s = red.into_owned();
        }
    }
    if s.len() > max {
        let mut cut = max;
        while cut > 0 && !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
}

pub(crate) fn cap_chars(s: &str, max_bytes: usize) -> String {
    let mut out = s.to_string();
    cap_in_place(&mut out, max_bytes);
    out
}

/// The readable text of a content value: a string, a block, or a list of blocks. Images,
/// base64 data and encrypted content are skipped.
pub(crate) fn content_text(v: &Value) -> String {
    let mut out = String::new();
    collect_text(v, &mut out, 0);
    out
}

fn collect_text(v: &Value, out: &mut String, depth: u8) {
    if depth > 3 {
        return;
    }
    let mut push = |s: &str| {
        if s.trim().is_empty() {
            return;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(s);
    };
    match v {
        Value::String(s) => push(s),
        Value::Array(items) => {
            for item in items {
                collect_text(item, out, depth + 1);
            }
        }
        Value::Object(map) => {
            let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
            if matches!(
                ty,
                "image" | "input_image" | "encrypted_content" | "redacted_thinking"
            ) || map.contains_key("data") && !map.contains_key("text")
            {
                return;
            }
            if let Some(s) = map.get("text").and_then(Value::as_str) {
                push(s);
            } else if let Some(c) = map.get("content") {
                collect_text(c, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// Helpers for the unit tests of the format modules.
#[cfg(test)]
pub(crate) mod test_support;

#[cfg(test)]
mod tests;
