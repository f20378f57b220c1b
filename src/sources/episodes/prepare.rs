//! The CPU-heavy half of indexing one transcript, with no database access: decide from the
//! fingerprint whether the file changed, parse the new lines (resuming a growing file from its
//! saved parser state), redact each event and make its search terms. Workers run this in
//! parallel while one writer stores the results in file order (see `index.rs`).

use std::io::Read;
use std::path::Path;
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use super::discover::{Layout, TranscriptFile};
use super::lines::{read_lines, LineItem};
use super::model::{Fact, ParseStats, ParsedEvent};
use super::parser::TranscriptParser;
use crate::sources::regular_file;
use crate::text::{redact, tokens};

/// What the index already knows of a file.
#[derive(Debug, Clone)]
pub struct FileRow {
    pub session_id: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub head_hash: String,
    /// Hash of the bytes just before `offset` (see [`resume_hash`]); empty when unknown.
    pub resume_hash: String,
    pub offset: u64,
    /// The saved parser; empty for a file whose events are another file's (a copy).
    pub parser_state: String,
}

impl FileRow {
    /// True when the file at `path` (now `size` bytes) still holds the bytes this row indexed,
    /// at its start and just before its resume point: anything after `offset` is an append.
    pub fn still_prefix_of(&self, path: &Path, size: u64) -> std::io::Result<bool> {
        if size < self.offset || size < self.size.min(4096) || self.resume_hash.is_empty() {
            return Ok(false);
        }
        Ok(head_hash(path, self.size)? == self.head_hash
            && resume_hash(path, self.offset)? == self.resume_hash)
    }
}

/// An event ready to store: redacted text, stemmed terms, parsed time.
pub struct PreparedEvent {
    pub event: ParsedEvent,
    pub terms: String,
    pub time_ms: Option<i64>,
    pub facts: Option<String>,
}

/// A changed file, parsed and prepared.
pub struct Work {
    pub size: u64,
    pub mtime_ns: i64,
    pub live: bool,
    pub head_hash: String,
    pub resume_hash: String,
    /// True when the file grew and was read from its saved offset.
    pub appended: bool,
    pub parser: TranscriptParser,
    pub events: Vec<PreparedEvent>,
    pub secrets: u64,
    pub start: u64,
    pub end: u64,
    pub lines: ParseStats,
}

pub enum Prepared {
    Unchanged,
    Changed(Box<Work>),
}

/// Prepare one file against what the index knows of it.
pub fn prepare(
    file: &TranscriptFile,
    old: Option<&FileRow>,
    max_line_bytes: usize,
    live_window: Duration,
) -> std::io::Result<Prepared> {
    let meta = std::fs::metadata(&file.path)?;
    let size = meta.len();
    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let mtime_ns = modified
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    if let Some(o) = old {
        if o.size == size && o.mtime_ns == mtime_ns {
            return Ok(Prepared::Unchanged);
        }
    }
    let live = SystemTime::now()
        .duration_since(modified)
        .map(|age| age < live_window)
        .unwrap_or(true);
    // An append makes a file longer and leaves every indexed byte in place; a same-size change
    // or bytes changed at the resume point (lines inserted or edited) is a rewrite, re-read.
    let appendable = match old {
        Some(o) if size > o.size => o.still_prefix_of(&file.path, size)?,
        _ => false,
    };
    let resumed = match (old, appendable) {
        (Some(o), true) => serde_json::from_str::<TranscriptParser>(&o.parser_state)
            .ok()
            .map(|p| (p, o.offset)),
        _ => None,
    };
    let appended = resumed.is_some();
    let (mut parser, start) = resumed.unwrap_or_else(|| (new_parser(file), 0));
    let before = *parser.stats();
    let mut events: Vec<ParsedEvent> = Vec::new();
    let end = read_lines(
        regular_file::open(&file.path)?,
        start,
        max_line_bytes,
        |item| match item {
            LineItem::Line(line) => parser.feed(line, &mut events),
            LineItem::Oversized { len } => parser.feed_oversized(len),
        },
    )?;
    let lines = diff(parser.stats(), &before);
    let mut secrets = 0u64;
    let events = events
        .into_iter()
        .map(|mut ev| {
            let red = redact::redact(&ev.text);
            secrets += red.count as u64;
            ev.text = red.text;
            // A "program" the parser split out of a secret (`P=ab&cd` runs `cd`) went with it.
            ev.facts.retain(|f| match f {
                Fact::Command { program } => red.count == 0 || has_word(&ev.text, program),
                _ => true,
            });
            let mut terms = tokens::index_text(&ev.text);
            if let Some(tool) = &ev.tool_name {
                terms.push(' ');
                terms.push_str(&tokens::index_text(tool));
            }
            PreparedEvent {
                time_ms: ev.time.as_deref().and_then(parse_time_ms),
                facts: (!ev.facts.is_empty())
                    .then(|| serde_json::to_string(&ev.facts).ok())
                    .flatten()
                    .map(|f| redact::redact(&f).text),
                terms,
                event: ev,
            }
        })
        .collect();
    Ok(Prepared::Changed(Box::new(Work {
        size,
        mtime_ns,
        live,
        head_hash: head_hash(&file.path, size)?,
        resume_hash: resume_hash(&file.path, end)?,
        appended,
        parser,
        events,
        secrets,
        start,
        end,
        lines,
    })))
}

fn new_parser(file: &TranscriptFile) -> TranscriptParser {
    let mut parser = TranscriptParser::new(file.kind);
    if let Layout::Subagent {
        sidecar: Some(sidecar),
        ..
    } = &file.layout
    {
        if let Ok(bytes) = std::fs::read(sidecar) {
            parser.apply_sidecar(&bytes);
        }
    }
    parser
}

fn diff(after: &ParseStats, before: &ParseStats) -> ParseStats {
    ParseStats {
        lines: after.lines.saturating_sub(before.lines),
        events: after.events.saturating_sub(before.events),
        skipped_broken: after.skipped_broken.saturating_sub(before.skipped_broken),
        skipped_unknown: after.skipped_unknown.saturating_sub(before.skipped_unknown),
        skipped_oversized: after
            .skipped_oversized
            .saturating_sub(before.skipped_oversized),
        ignored: after.ignored.saturating_sub(before.ignored),
        skipped_bad_id: after.skipped_bad_id.saturating_sub(before.skipped_bad_id),
    }
}

/// SHA-256 of the first `min(len, 4096)` bytes: tells an appended file from a rewritten one.
pub fn head_hash(path: &Path, len: u64) -> std::io::Result<String> {
    hash_range(path, 0, len.min(4096))
}

/// SHA-256 of the (up to) 4096 bytes that end at `offset`, the last indexed line(s): an edit or
/// an insertion above the resume point changes them even when the head and the size do not
/// tell.
pub fn resume_hash(path: &Path, offset: u64) -> std::io::Result<String> {
    let from = offset.saturating_sub(4096);
    hash_range(path, from, offset - from)
}

/// A short hex SHA-256 of `len` bytes of the file from `from`.
fn hash_range(path: &Path, from: u64, len: u64) -> std::io::Result<String> {
    use std::io::{Seek, SeekFrom};
    let mut buf = vec![0u8; len as usize];
    let mut f = regular_file::open(path)?;
    f.seek(SeekFrom::Start(from))?;
    f.read_exact(&mut buf)?;
    let digest = Sha256::digest(&buf);
    Ok(digest.iter().take(12).map(|b| format!("{b:02x}")).collect())
}

/// Milliseconds since the epoch of an RFC 3339 time, for range filters.
pub fn parse_time_ms(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Whether `word` occurs in `text` as a whole word (not inside a longer one).
fn has_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(part)
    })
}
