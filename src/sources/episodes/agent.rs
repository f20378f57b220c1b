//! The one interface every agent's reader implements, and the sink the indexer gives it.
//!
//! In the spirit of ripgrep's `Sink` and atuin's importers: a reader knows its agent's stores
//! (where they are by default, how to recognise one, how to read it from an opaque resume
//! cursor) and nothing of SQLite, redaction or search; it pushes sessions and events into an
//! [`EventSink`] that the writer implements, and the sink applies the bounds, once, for every
//! agent. A store is either one append-only file holding one session (Claude Code, Codex, Gemini
//! CLI JSONL, …), a file rewritten whole on every turn (legacy Gemini `.json`), or a database
//! holding many sessions (OpenCode, Cursor): [`StoreKind`] says which, and the indexer's
//! fingerprint, append and identity rules follow from it. The registry that lists the readers
//! is [`super::agents`].

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::lines::{read_all_lines, LineItem};
use super::model::{ParseStats, ParsedEvent, SessionMeta};
use super::outcome::Outcome;

/// How much of a file's head is read to recognise its format.
const SNIFF_BYTES: u64 = 256 * 1024;
/// How many of the head's records are parsed for recognition.
const SNIFF_RECORDS: usize = 8;

/// How an agent keeps its sessions; decides how the indexer detects a change and re-reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// One file per session, only ever appended to: a grown file whose indexed bytes are
    /// unchanged is read from where the last run stopped; anything else is re-read in full.
    AppendOnly,
    /// One file per session, rewritten whole on every change (legacy Gemini CLI `.json`): any
    /// change re-reads it in full.
    Rewritten,
    /// One database holding many sessions (OpenCode, Cursor). It is opened read-only, its
    /// `-wal` file counts as part of it, and the reader gets its cursor back on every change:
    /// it pushes each session that changed, in full ([`SessionStart::replace`]).
    Database,
}

/// Where a run left a store: the reader's own opaque cursor plus the bytes consumed.
#[derive(Debug, Clone, Copy)]
pub struct Resume<'a> {
    /// Bytes of the store already read (a file reader's offset; a database reader may ignore it).
    pub offset: u64,
    /// What the reader returned last time in [`ReadEnd::cursor`]; never parsed by anyone else.
    pub cursor: &'a str,
}

/// What one read did.
#[derive(Debug, Clone, Default)]
pub struct ReadEnd {
    /// Where the read started (0 unless it resumed).
    pub start: u64,
    /// Offset after the last complete record read: the next run resumes here.
    pub end: u64,
    /// True when the read continued from the given [`Resume`] (its events append to what is
    /// stored); false when it started over (a cursor that no longer parses is a full re-read).
    pub resumed: bool,
    /// The cursor to hand back next time.
    pub cursor: String,
    /// Counters of this read only (not cumulative).
    pub lines: ParseStats,
    /// Counters since the store was first read (cumulative across resumed reads).
    pub total: ParseStats,
}

/// The cursor of a store that holds many sessions (a database): each session's fingerprint at
/// the last read, so a re-read pushes only the sessions that changed. A cursor that no longer
/// parses is a full re-read.
pub struct SessionFingerprints {
    old: Option<std::collections::BTreeMap<String, String>>,
    now: std::collections::BTreeMap<String, String>,
}

impl SessionFingerprints {
    /// The fingerprints the last read left in `from`'s cursor.
    pub fn resume(from: Option<Resume<'_>>) -> SessionFingerprints {
        SessionFingerprints {
            old: from.and_then(|r| serde_json::from_str(r.cursor).ok()),
            now: std::collections::BTreeMap::new(),
        }
    }

    /// Keep `fingerprint` for session `id`; true when it differs from the last read's.
    pub fn changed(&mut self, id: &str, fingerprint: String) -> bool {
        let same = self.old.as_ref().and_then(|o| o.get(id)) == Some(&fingerprint);
        self.now.insert(id.to_string(), fingerprint);
        !same
    }

    /// The end of the read: its counters and the fingerprints for the next one.
    pub fn finish(self, stats: ParseStats) -> ReadEnd {
        ReadEnd {
            start: 0,
            end: 0,
            resumed: self.old.is_some(),
            cursor: serde_json::to_string(&self.now).unwrap_or_default(),
            lines: stats,
            total: stats,
        }
    }
}

/// How much a reader may buffer.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    /// Longest line (or row) kept; longer ones are skipped and counted as oversized.
    pub max_line_bytes: usize,
}

/// One session of a store holding many: the reader names it by the agent's own session id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStart {
    /// The agent's own session id (what its resume command takes).
    pub session_id: String,
    /// The events that follow are the whole session: what was stored of it is replaced. False
    /// when they continue what the last read of this session pushed.
    pub replace: bool,
}

/// What a reader pushes into. The indexer's sink redacts, bounds and stores; a test's sink
/// collects. A one-session file never calls [`EventSink::session`]: its session is the file's.
pub trait EventSink {
    /// The events that follow belong to this session of a many-session store.
    fn session(&mut self, start: SessionStart);
    /// One event of the current session, in order.
    fn event(&mut self, event: ParsedEvent);
    /// What is known of the current session once its events are pushed (called once per
    /// session, after its events).
    fn end_session(&mut self, meta: SessionMeta, outcome: Outcome);
}

/// How sure a reader is that a file is its agent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rank {
    /// The name or place says so (`rollout-*.jsonl`, `chats/session-*.jsonl`).
    Name,
    /// The head record at this index is in the agent's format.
    Record(usize),
    /// A `.jsonl` nobody recognised: read as this agent's, its unknown lines counted.
    Fallback,
}

/// A reader's claim on a file: its place in the agent's layout and how sure the claim is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognised {
    pub layout: Layout,
    pub rank: Rank,
}

impl Recognised {
    /// A database store's claim (Goose, Crush, Zed, OpenCode): by its own place
    /// ([`Rank::Name`]), else any `.db` file holding the agent's tables (`has_schema`: a moved
    /// data folder, a copy named with `--sessions`), opened only then.
    pub fn database(
        path: &Path,
        in_place: bool,
        has_schema: impl FnOnce(&Path) -> bool,
    ) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        let rank = if in_place {
            Rank::Name
        } else if name.ends_with(".db") && has_schema(path) {
            Rank::Record(0)
        } else {
            return None;
        };
        Some(Recognised {
            layout: Layout::Main,
            rank,
        })
    }
}

/// The head of a file, read and parsed only when a reader asks (most claims go by name).
pub struct Head<'a> {
    path: &'a Path,
    records: Option<Vec<Value>>,
}

impl<'a> Head<'a> {
    pub fn new(path: &'a Path) -> Self {
        Head {
            path,
            records: None,
        }
    }

    /// The first JSON records of the file (up to 8 lines, 256 KB); empty when unreadable.
    pub fn records(&mut self) -> &[Value] {
        let path = self.path;
        self.records.get_or_insert_with(|| sniff(path))
    }

    /// The index of the first head record `is_mine` accepts.
    pub fn first(&mut self, is_mine: impl Fn(&Value) -> bool) -> Option<usize> {
        self.records().iter().position(is_mine)
    }
}

fn sniff(path: &Path) -> Vec<Value> {
    let Ok(file) = crate::sources::regular_file::open(path) else {
        return Vec::new();
    };
    let Ok(head) = read_head(file) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen = 0;
    let _ = read_all_lines(io::Cursor::new(&head), 0, head.len() + 1, |item| {
        let LineItem::Line(bytes) = item else { return };
        if seen >= SNIFF_RECORDS {
            return;
        }
        seen += 1;
        // Records spliced onto one line (a torn write) are told apart, as the parser does.
        out.extend(super::parser::split_records(bytes).0);
    });
    out
}

/// The bytes a sniff parses: at most [`SNIFF_BYTES`], and only until they hold
/// [`SNIFF_RECORDS`] complete non-empty lines, the most the sniff looks at (reading the whole
/// 256 KB of every new file's head was most of telling its agent).
fn read_head(file: impl Read) -> io::Result<Vec<u8>> {
    let mut limited = file.take(SNIFF_BYTES);
    let mut head = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let (mut lines, mut line_start) = (0, 0);
    loop {
        let n = match limited.read(&mut buf) {
            Ok(0) => return Ok(head),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let from = head.len();
        head.extend_from_slice(&buf[..n]);
        for (i, _) in head
            .iter()
            .enumerate()
            .skip(from)
            .filter(|(_, &b)| b == b'\n')
        {
            // Counted as the line reader delivers them: a blank (or `\r`-only) line is skipped.
            let line = &head[line_start..i];
            if !line.strip_suffix(b"\r").unwrap_or(line).is_empty() {
                lines += 1;
            }
            line_start = i + 1;
        }
        if lines >= SNIFF_RECORDS {
            return Ok(head);
        }
    }
}

/// The environment a reader resolves its default roots from (so tests can fake a home).
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: Vec<(String, PathBuf)>,
}

impl Env {
    /// This process's environment.
    pub fn current() -> Self {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, PathBuf::from(v))))
            .collect();
        Env { vars }
    }

    /// An environment holding only `vars` (tests).
    pub fn of(vars: &[(&str, &Path)]) -> Self {
        Env {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_path_buf()))
                .collect(),
        }
    }

    /// A non-empty variable as a path.
    pub fn dir(&self, key: &str) -> Option<PathBuf> {
        self.vars
            .iter()
            .find(|(k, v)| k == key && !v.as_os_str().is_empty())
            .map(|(_, v)| v.clone())
    }

    /// The home directory (`HOME`, else `USERPROFILE`).
    pub fn home(&self) -> Option<PathBuf> {
        self.dir("HOME").or_else(|| self.dir("USERPROFILE"))
    }

    /// `$key`, else `~/<fallback>`.
    pub fn dir_or_home(&self, key: &str, fallback: &str) -> Option<PathBuf> {
        self.dir(key)
            .or_else(|| self.home().map(|h| h.join(fallback)))
    }
}

/// One agent's reader. Implementations are unit structs listed in [`super::agents`].
pub trait AgentReader: Sync {
    /// The registry key of this agent.
    fn agent(&self) -> Agent;

    /// The stable short name: stored as each session's `source`, shown as its surface.
    fn name(&self) -> &'static str;

    /// The agent's product name, for people (`Claude Code`, `Gemini CLI`).
    fn label(&self) -> &'static str;

    /// How this agent keeps the sessions of the store at `path` (one agent may have several
    /// eras). Decided by the path alone: discovery asks it before a store's head is read.
    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::AppendOnly
    }

    /// The default roots on this machine (existing or not), env overrides honoured.
    fn roots(&self, env: &Env) -> Vec<PathBuf>;

    /// The stores this agent keeps inside a project directory (Aider's history file in each
    /// repository), existing or not; most agents keep none.
    fn project_stores(&self, _project: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Whether `path` is one of this agent's stores, and where it sits in the layout.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised>;

    /// Whether `path` is a file this agent keeps beside its stores that holds no session of its
    /// own (Kimi CLI's `wire.jsonl`, read with its `context.jsonl`): no reader may claim it,
    /// not even as another agent's fallback.
    fn is_aside(&self, _path: &Path) -> bool {
        false
    }

    /// This agent's line rules, fresh, for the shared line parser (`line_rules`); a reader
    /// that reads no JSONL lines (a database, Markdown) has none.
    fn line_state(&self) -> super::line_rules::LineState {
        super::line_rules::LineState::not_lines()
    }

    /// Reads `file` from `from` (or from the start), pushing into `sink`. By default a JSONL
    /// file through the shared line parser, driven by this agent's line rules
    /// ([`AgentReader::line_state`]); a reader of another shape (a database, Markdown)
    /// overrides it.
    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let agent = self.agent();
        super::parser::read_jsonl(file, from, limits, sink, || {
            super::parser::TranscriptParser::new(agent)
        })
    }

    /// The session id of a one-session file's main session; by default the one the records
    /// name, else the file stem made safe ([`super::bounds::safe_id`]: a file name may hold an
    /// escape sequence).
    fn file_session_id(&self, file: &TranscriptFile, meta: &SessionMeta) -> Option<String> {
        meta.session_id.clone().or_else(|| {
            let stem = file.path.file_stem()?.to_string_lossy();
            Some(super::bounds::safe_id(&stem).into_owned())
        })
    }

    /// The command that resumes a root session in the agent (copied, never run); `None` when
    /// the agent has none. The id is already shell-quoted.
    fn resume_command(&self, quoted_session_id: &str) -> Option<String>;

    /// The latest change of the files a store's reader reads besides the store itself (an
    /// OpenCode tree session's message and part files): it counts in the store's fingerprint,
    /// so a file written there without the store changing is still seen. `None` when there
    /// are none.
    fn parts_modified(&self, _path: &Path) -> Option<std::time::SystemTime> {
        None
    }

    /// Folders outside `root` that its stores are read from (an OpenCode tree's `storage/`,
    /// whose `message/` and `part/` hold what a session file under the `storage/session` root
    /// does not): watch mode follows them too, and maps their changes with
    /// [`AgentReader::store_of_change`]. None by default.
    fn watch_beside(&self, _root: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// The store a changed path belongs to (watch mode): a database's `-wal` maps to the
    /// database; by default a `.jsonl` file is its own store. A folder means any store under
    /// it may have changed (a change the reader knows is its own but cannot map to one store:
    /// watch mode then runs a pass over every root, which skips unchanged stores).
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        changed
            .extension()
            .is_some_and(|e| e == "jsonl")
            .then(|| changed.to_path_buf())
    }
}

/// A sink that keeps what it is given (tests, one-off parses).
#[derive(Debug, Default)]
pub struct CollectSink {
    pub sessions: Vec<CollectedSession>,
}

/// One session as a [`CollectSink`] received it.
#[derive(Debug, Default, Clone)]
pub struct CollectedSession {
    pub start: Option<SessionStart>,
    pub events: Vec<ParsedEvent>,
    pub meta: SessionMeta,
    pub outcome: Option<Outcome>,
}

impl CollectSink {
    fn current(&mut self) -> &mut CollectedSession {
        if self.sessions.last().is_none_or(|s| s.outcome.is_some()) {
            self.sessions.push(CollectedSession::default());
        }
        let last = self.sessions.len() - 1;
        &mut self.sessions[last]
    }
}

impl EventSink for CollectSink {
    fn session(&mut self, start: SessionStart) {
        self.sessions.push(CollectedSession {
            start: Some(start),
            ..CollectedSession::default()
        });
    }

    fn event(&mut self, event: ParsedEvent) {
        self.current().events.push(event);
    }

    fn end_session(&mut self, meta: SessionMeta, outcome: Outcome) {
        let s = self.current();
        s.meta = meta;
        s.outcome = Some(outcome);
    }
}

/// Reads a whole store with a fresh cursor into a [`CollectSink`] (tests, one-off tools).
pub fn read_whole(file: &TranscriptFile) -> io::Result<(CollectSink, ReadEnd)> {
    let mut sink = CollectSink::default();
    let limits = ReadLimits {
        max_line_bytes: super::lines::DEFAULT_MAX_LINE_BYTES,
    };
    let end = file.kind.reader().read(file, None, limits, &mut sink)?;
    Ok((sink, end))
}

/// The file next to `path` named `name`, read as trimmed text when it is small (a layout's
/// sidecar: Gemini `.project_root`).
pub fn small_sidecar(path: &Path, name: &str) -> Option<String> {
    let bytes = crate::sources::regular_file::read_limited(&path.with_file_name(name), 64 * 1024);
    let text = String::from_utf8(bytes.ok()?).ok()?;
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// A sink wrapper that fills the working directory a reader found beside the records (a Gemini
/// slot's `.project_root`, a Copilot `workspace.yaml`) when the records carry none.
pub struct FillCwd<'a> {
    pub inner: &'a mut dyn EventSink,
    pub cwd: Option<String>,
}

impl EventSink for FillCwd<'_> {
    fn session(&mut self, start: SessionStart) {
        self.inner.session(start);
    }

    fn event(&mut self, event: ParsedEvent) {
        self.inner.event(event);
    }

    fn end_session(&mut self, mut meta: SessionMeta, outcome: Outcome) {
        if meta.cwd.is_none() {
            meta.cwd = self.cwd.take();
        }
        self.inner.end_session(meta, outcome);
    }
}

/// A sink wrapper for transcripts whose lines carry no ids and no times (Cursor, Kimi CLI): the
/// session's last time is the file's mtime when no line gave one; in a subagent's file the
/// prompts are the parent agent's (`agent/prompt`) and the first one, which the rules keep as
/// `agent_description`, is its task; in a main file that description is dropped.
pub struct NoIdsSink<'a> {
    pub inner: &'a mut dyn EventSink,
    pub subagent: bool,
    pub mtime: Option<String>,
}

impl EventSink for NoIdsSink<'_> {
    fn session(&mut self, start: SessionStart) {
        self.inner.session(start);
    }

    fn event(&mut self, mut event: ParsedEvent) {
        if self.subagent && event.event_type.is_human() {
            event.event_type = super::model::EventType::AgentPrompt;
            event.human = false;
        }
        self.inner.event(event);
    }

    fn end_session(&mut self, mut meta: SessionMeta, outcome: Outcome) {
        if !self.subagent {
            meta.agent_description = None;
        }
        if meta.last_event_at.is_none() {
            meta.last_event_at = self.mtime.clone();
        }
        self.inner.end_session(meta, outcome);
    }
}

/// A file's mtime as RFC 3339 (the only time some transcripts have).
pub fn file_mtime(path: &Path) -> Option<String> {
    let t = fs::metadata(path).ok()?.modified().ok()?;
    let ms = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as i64;
    crate::sources::agent_knowledge::ms_to_rfc3339(ms)
}

/// Reads a store parsed whole (a legacy Gemini CLI `.json`, a Cursor `.txt`): at most `max`
/// bytes, else one oversized record; `feed` turns the bytes into records for `parser`. The
/// events are pushed in order and the read never resumes (any change re-reads it).
pub(crate) fn read_document(
    file: &TranscriptFile,
    max: u64,
    mut parser: super::parser::TranscriptParser,
    sink: &mut dyn EventSink,
    feed: impl FnOnce(&[u8], &mut super::parser::TranscriptParser, &mut Vec<ParsedEvent>),
) -> io::Result<ReadEnd> {
    let f = crate::sources::regular_file::open(&file.path)?;
    let size = f.metadata()?.len();
    let mut events: Vec<ParsedEvent> = Vec::new();
    if size > max {
        parser.feed_oversized(size);
    } else {
        let mut bytes = Vec::new();
        f.take(max).read_to_end(&mut bytes)?;
        feed(&bytes, &mut parser, &mut events);
    }
    for ev in events {
        sink.event(ev);
    }
    sink.end_session(parser.meta().clone(), parser.outcome());
    Ok(ReadEnd {
        start: 0,
        end: size,
        resumed: false,
        cursor: String::new(),
        lines: *parser.stats(),
        total: *parser.stats(),
    })
}

// A store that is one JSON document holding a list of records, read a record at a time.
pub(crate) use super::bounds::records::read_json_document;

#[cfg(test)]
mod tests {
    use super::*;

    fn records_of(body: &[u8]) -> Vec<Value> {
        let Some(dir) = tempfile::tempdir().ok() else {
            return Vec::new();
        };
        let path = dir.path().join("s.jsonl");
        assert!(fs::write(&path, body).is_ok());
        Head::new(&path).records().to_vec()
    }

    #[test]
    fn the_head_is_the_first_eight_records_past_blank_lines() {
        let mut body = b"\n\r\n\n".to_vec();
        for i in 0..12 {
            body.extend(format!("{{\"n\":{i}}}\r\n\n").as_bytes());
        }
        // Far past the records the sniff reads, a line longer than the buffer.
        body.extend(vec![b'x'; 100_000]);
        let got: Vec<i64> = records_of(&body)
            .iter()
            .filter_map(|r| r["n"].as_i64())
            .collect();
        assert_eq!(got, (0..8).collect::<Vec<_>>());
        // Fewer records than that, the last without its newline: all of them.
        let got = records_of(b"{\"n\":1}\n\n{\"n\":2}");
        assert_eq!(got.len(), 2);
    }
}
