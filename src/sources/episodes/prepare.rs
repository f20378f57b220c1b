//! The CPU-heavy half of indexing one store, with no database access: decide from the
//! fingerprint whether it changed, have its agent's reader read what is new (resuming from the
//! reader's saved cursor), and, as the reader's sink, bound and redact each event and make its
//! search terms. Workers run this in
//! parallel while one writer stores the results in file order (see `index.rs`).

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::agent::{AgentReader, EventSink, ReadLimits, Resume, SessionStart, StoreKind};
use super::agents::Agent;
use super::bounds;
use super::discover::TranscriptFile;
use super::meta_redact;
use super::model::{Fact, ParseStats, ParsedEvent, SessionMeta};
use super::outcome::Outcome;
use crate::sources::{packed, regular_file};
use crate::text::{redact, tokens};

/// What the episodes index already knows of a transcript file: its session, its fingerprint and
/// where a resumed read starts.
#[derive(Debug, Clone)]
pub struct TranscriptRow {
    pub session_id: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub head_hash: String,
    /// Hash of the bytes just before `offset` (see [`resume_hash`]); empty when unknown.
    pub resume_hash: String,
    pub offset: u64,
    /// The saved parser; empty for a file whose events are another file's (a copy).
    pub parser_state: String,
    /// The agent whose reader read it (`None`: a name this build no longer knows).
    pub kind: Option<Agent>,
}

/// What the index knows of every file, for the workers' fingerprint checks.
pub(super) fn load_file_rows(
    conn: &Connection,
) -> rusqlite::Result<HashMap<String, TranscriptRow>> {
    let mut stmt = conn.prepare(&format!("SELECT path, {FILE_ROW_COLS} FROM files"))?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, file_row(r, 1)?)))?;
    rows.collect()
}

/// What the index knows of one file (`None`: never indexed).
pub(super) fn load_file_row(
    conn: &Connection,
    path: &str,
) -> rusqlite::Result<Option<TranscriptRow>> {
    conn.query_row(
        &format!("SELECT {FILE_ROW_COLS} FROM files WHERE path=?1"),
        [path],
        |r| file_row(r, 0),
    )
    .optional()
}

/// `parser_state` is stored packed like event text (a cursor holds every tool id of its
/// session, 5–8 KB a file, most of it shared prefixes).
const FILE_ROW_COLS: &str = "session_id, size, mtime_ns, head_hash, resume_hash, offset,
     CASE WHEN typeof(parser_state) = 'blob' THEN unpack_text(parser_state) ELSE parser_state END,
     kind";

fn file_row(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<TranscriptRow> {
    Ok(TranscriptRow {
        session_id: r.get(at)?,
        size: r.get::<_, i64>(at + 1)? as u64,
        mtime_ns: r.get(at + 2)?,
        head_hash: r.get(at + 3)?,
        resume_hash: r.get(at + 4)?,
        offset: r.get::<_, i64>(at + 5)? as u64,
        parser_state: r.get(at + 6)?,
        kind: Agent::from_source(&r.get::<_, String>(at + 7)?),
    })
}

impl TranscriptRow {
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

/// An event ready to store: redacted text (and its packed form, see `sources::packed`),
/// stemmed terms, parsed time.
pub struct PreparedEvent {
    pub event: ParsedEvent,
    /// The text as stored when packing pays; `None`: stored as it is.
    pub packed: Option<Vec<u8>>,
    pub terms: String,
    pub time_ms: Option<i64>,
    pub facts: Option<String>,
}

/// One session of a prepared store, as its reader pushed it.
pub struct SessionWork {
    /// Set for a session of a many-session store; `None` for a file's one session.
    pub start: Option<SessionStart>,
    pub events: Vec<PreparedEvent>,
    pub meta: SessionMeta,
    pub outcome: Outcome,
}

/// A changed store, read and prepared.
pub struct Work {
    pub size: u64,
    pub mtime_ns: i64,
    pub live: bool,
    pub head_hash: String,
    pub resume_hash: String,
    /// True when the store was read on from its saved cursor (its events append).
    pub appended: bool,
    /// The sessions the reader pushed, in order (a one-session file: exactly one).
    pub sessions: Vec<SessionWork>,
    /// The reader's cursor for the next run.
    pub cursor: String,
    pub secrets: u64,
    pub start: u64,
    pub end: u64,
    /// Counters of this read.
    pub lines: ParseStats,
    /// Counters since the store was first read.
    pub total: ParseStats,
}

impl Work {
    /// The one session of a one-session file (what the reader said of it when it pushed none).
    pub fn file_session(&self) -> (SessionMeta, Outcome) {
        self.sessions
            .last()
            .map(|s| (s.meta.clone(), s.outcome))
            .unwrap_or((SessionMeta::default(), Outcome::Unknown))
    }

    /// True when the store holds many sessions, each named by its reader.
    pub fn many_sessions(&self) -> bool {
        self.sessions.iter().any(|s| s.start.is_some())
    }
}

pub enum Prepared {
    Unchanged,
    Changed(Box<Work>),
}

/// Size and mtime of a store; a database counts its `-wal` file too (a write lands there
/// first), and the mtime is the latest of the files its reader reads beside it
/// ([`super::agent::AgentReader::parts_modified`]).
fn fingerprint(path: &Path, reader: &dyn AgentReader) -> std::io::Result<(u64, SystemTime)> {
    fingerprint_of(path, &std::fs::metadata(path)?, reader)
}

/// [`fingerprint`] from the store's metadata, already read (discovery has it).
fn fingerprint_of(
    path: &Path,
    meta: &std::fs::Metadata,
    reader: &dyn AgentReader,
) -> std::io::Result<(u64, SystemTime)> {
    let kind = reader.store_kind(path);
    let mut size = meta.len();
    let mut modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    if kind == StoreKind::Database {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        if let Ok(w) = std::fs::metadata(Path::new(&wal)) {
            size += w.len();
            modified = modified.max(w.modified().unwrap_or(SystemTime::UNIX_EPOCH));
        }
    }
    if let Some(parts) = reader.parts_modified(path) {
        modified = modified.max(parts);
    }
    Ok((size, modified))
}

/// The size the index records for a store (a database's counts its `-wal`), so a check that
/// compares it with the disk (doctor) agrees with the indexer.
pub fn store_size(file: &TranscriptFile) -> Option<u64> {
    fingerprint(&file.path, file.kind.reader())
        .ok()
        .map(|(size, _)| size)
}

fn mtime_ns(modified: SystemTime) -> i64 {
    modified
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

impl TranscriptRow {
    /// True when the store at `path` (whose metadata discovery read: `meta`) has the size and
    /// mtime this row indexed, as the store of the agent that read it: [`prepare`] would skip
    /// it, so discovery need not read its head to tell its agent.
    /// A file with several hard links is left to the full path (`identity::drop_hard_links`
    /// chooses which of its names is read).
    pub fn unchanged(&self, path: &Path, meta: &std::fs::Metadata) -> bool {
        let Some(agent) = self.kind else {
            return false;
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if meta.nlink() > 1 {
                return false;
            }
        }
        fingerprint_of(path, meta, agent.reader())
            .is_ok_and(|(size, modified)| self.size == size && self.mtime_ns == mtime_ns(modified))
    }
}

/// True when the store at `path` is gone: deleted, or renamed (an agent rotating or archiving
/// it; the next run finds it by its new name), between discovery and reading. A read that
/// failed so is not a failure of the run: the store is skipped and counted.
pub fn vanished(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// Prepare one store against what the index knows of it.
pub fn prepare(
    file: &TranscriptFile,
    old: Option<&TranscriptRow>,
    max_line_bytes: usize,
    live_window: Duration,
) -> std::io::Result<Prepared> {
    let reader = file.kind.reader();
    let store = reader.store_kind(&file.path);
    let (size, modified) = fingerprint(&file.path, reader)?;
    let mtime_ns = mtime_ns(modified);
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
    // or bytes changed at the resume point (lines inserted or edited) is a rewrite, re-read. A
    // database reader always gets its cursor: it knows which of its sessions changed.
    let resume = match (old, store) {
        (Some(o), StoreKind::AppendOnly)
            if size > o.size && o.still_prefix_of(&file.path, size)? =>
        {
            Some(o)
        }
        (Some(o), StoreKind::Database) => Some(o),
        _ => None,
    };
    let from = resume.map(|o| Resume {
        offset: o.offset,
        cursor: &o.parser_state,
    });
    let mut sink = PrepareSink::default();
    let end = reader.read(file, from, ReadLimits { max_line_bytes }, &mut sink)?;
    let (head_hash, resume_hash) = match store {
        StoreKind::Database => (String::new(), String::new()),
        _ => (
            head_hash(&file.path, size)?,
            resume_hash(&file.path, end.end)?,
        ),
    };
    Ok(Prepared::Changed(Box::new(Work {
        size,
        mtime_ns,
        live,
        head_hash,
        resume_hash,
        appended: end.resumed,
        sessions: sink.sessions,
        cursor: end.cursor,
        secrets: sink.secrets,
        start: end.start,
        end: end.end,
        lines: end.lines,
        total: end.total,
    })))
}

/// The indexer's side of the reader interface: every event of every agent passes here, where
/// it is bounded, redacted and given its search terms, before the writer sees it; so does every
/// session's metadata (redacted too, `meta_redact`).
#[derive(Default)]
struct PrepareSink {
    sessions: Vec<SessionWork>,
    secrets: u64,
}

impl PrepareSink {
    fn current(&mut self) -> &mut SessionWork {
        if self.sessions.is_empty() {
            self.sessions.push(SessionWork {
                start: None,
                events: Vec::new(),
                meta: SessionMeta::default(),
                outcome: Outcome::Unknown,
            });
        }
        let last = self.sessions.len() - 1;
        &mut self.sessions[last]
    }
}

impl EventSink for PrepareSink {
    fn session(&mut self, mut start: SessionStart) {
        // A database reader names the session by its row's id: the key it is stored under.
        if let std::borrow::Cow::Owned(safe) = bounds::safe_id(&start.session_id) {
            start.session_id = safe;
        }
        self.sessions.push(SessionWork {
            start: Some(start),
            events: Vec::new(),
            meta: SessionMeta::default(),
            outcome: Outcome::Unknown,
        });
    }

    fn event(&mut self, mut ev: ParsedEvent) {
        bounds::bound_event(&mut ev);
        // The tool's name is stored, shown and searched beside the text: redacted like it.
        self.secrets += meta_redact::event(&mut ev) as u64;
        let red = redact::redact(&ev.text);
        self.secrets += red.count as u64;
        ev.text = red.text;
        // A "program" the parser split out of a secret (`P=ab&cd` runs `cd`) went with it.
        ev.facts.retain(|f| match f {
            Fact::Command { program } => red.count == 0 || has_word(&ev.text, program),
            _ => true,
        });
        let terms = event_terms(&ev.text, ev.tool_name.as_deref());
        let prepared = PreparedEvent {
            time_ms: ev.time.as_deref().and_then(parse_time_ms),
            facts: (!ev.facts.is_empty())
                .then(|| serde_json::to_string(&ev.facts).ok())
                .flatten()
                .map(|f| redact::redact(&f).text),
            terms,
            packed: packed::pack_bytes(&ev.text),
            event: ev,
        };
        self.current().events.push(prepared);
    }

    fn end_session(&mut self, mut meta: SessionMeta, outcome: Outcome) {
        bounds::bound_meta(&mut meta);
        bounds::sanitize_meta(&mut meta);
        self.secrets += meta_redact::session(&mut meta) as u64;
        let s = self.current();
        s.meta = meta;
        s.outcome = outcome;
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

/// The terms an event is found by: its (redacted) text's and its tool name's, as the full-text
/// index holds them (`lexical_sync` makes them again from the store with this same function).
pub(crate) fn event_terms(text: &str, tool_name: Option<&str>) -> String {
    let mut terms = tokens::index_text(text);
    if let Some(tool) = tool_name {
        terms.push(' ');
        terms.push_str(&tokens::index_text(tool));
    }
    terms
}
