//! Aider's chat history: `.aider.chat.history.md`, append-only Markdown holding every run.
//!
//! Aider (`aider/io.py`) appends one file per repository: each run starts with `# aider chat
//! started at YYYY-MM-DD HH:MM:SS` (local time, no zone), a person's input is `#### ` lines,
//! tool and system output is a `> ` blockquote, and the model's reply is plain Markdown between
//! them. Nothing carries a session id, a per-message time or a tool-call structure, and a
//! reply's Markdown may itself start lines with `#` or `>`. What tells them apart is how the
//! writer writes: every `####` and `>` line it writes ends with two spaces (a Markdown hard
//! break), a multi-line tool message gets `> ` on its first line only and the two spaces on its
//! last, a reply is preceded by one blank line and followed by another, and a person's input
//! after a reply by two. Files written without the trailing spaces (hand-made, other tools) are
//! read by line prefix alone. Each run becomes a session `aider-<hash of the file's path>-<start>`;
//! the read resumes at the last complete line with the parser state in the cursor.

mod reader;
#[cfg(test)]
mod tests;

pub use reader::Reader;

use serde::{Deserialize, Serialize};

use super::agent::{EventSink, SessionStart};
use super::model::{EventType, Fact, ParseStats, ParsedEvent};
use super::parser::{cap_chars, Ctx};

/// The longest block kept as one event (a pasted log, a repo map); the rest is cut.
const MAX_BLOCK_BYTES: usize = 64 * 1024;
/// A multi-line tool message whose closing line never comes ends here.
const MAX_CONTINUATION_LINES: u32 = 5_000;

/// Tool output lines that say an edit or a command failed.
const ERROR_MARKERS: [&str; 9] = [
    "Did not apply edit",
    "The LLM did not conform to the edit format",
    "SearchReplaceNoExactMatch",
    "Failed to apply edit",
    "Unexpected error",
    "Traceback (most recent call last)",
    "Unable to ",
    "Error: ",
    "litellm.APIError",
];

/// What kind of block the lines being read belong to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    #[default]
    None,
    User,
    Assistant,
    Tool,
    /// Inside a multi-line tool message: every line belongs to it until one ends with the hard
    /// break.
    ToolCont,
}

/// One run being read: its session id and the shared bookkeeping (meta, outcome).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Run {
    id: String,
    cx: Ctx,
    /// The run's start as RFC 3339 (every event's time: Aider records no per-message time).
    time: Option<String>,
    /// Whether the person or the model spoke yet: tool output before that is the startup
    /// banner (version, model, repository, files added).
    turns: bool,
    /// Whether a prompt (not a command) named the run.
    titled: bool,
    /// Whether the run has events stored (a header-only run is no session).
    stored: bool,
    /// Whether this read told the sink about the run (not saved: each read tells it anew).
    #[serde(skip)]
    announced: bool,
}

impl Run {
    /// Tells the sink that the events that follow are this run's: the whole run when nothing of
    /// it is stored yet, else a continuation.
    fn announce(&mut self, sink: &mut dyn EventSink) {
        if !self.announced {
            sink.session(SessionStart {
                session_id: self.id.clone(),
                replace: !self.stored,
            });
            self.announced = true;
            self.stored = true;
        }
    }

    fn end(&self, sink: &mut dyn EventSink) {
        if self.announced {
            sink.end_session(self.cx.meta.clone(), self.cx.outcome.outcome());
        }
    }
}

/// The whole parser state: small and serialisable, saved as the read's cursor.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct AiderParser {
    /// The short hash of the file's path that prefixes its session ids.
    file_key: String,
    /// The file's directory: every run's working directory.
    cwd: Option<String>,
    run: Option<Run>,
    /// The start time of the last run header and how many headers had it (same-second runs).
    last_start: Option<String>,
    same_start: u32,
    mode: Mode,
    /// Blank lines since the last non-blank line.
    blanks: u32,
    /// Inside a fenced block or a SEARCH/REPLACE block of a reply.
    fence: bool,
    search_replace: bool,
    /// The file uses the writer's trailing two spaces (every real Aider file does).
    hard_breaks: bool,
    continuation_lines: u32,
    /// The block being gathered; flushed as one event.
    block: Vec<String>,
    block_bytes: usize,
    stats: ParseStats,
}

impl AiderParser {
    pub(crate) fn new(file_key: String, cwd: Option<String>) -> Self {
        AiderParser {
            file_key,
            cwd,
            ..AiderParser::default()
        }
    }

    pub(crate) fn stats(&self) -> &ParseStats {
        &self.stats
    }

    /// Counts a line over the size cap, skipped unread.
    pub(crate) fn feed_oversized(&mut self) {
        self.stats.lines += 1;
        self.stats.skipped_oversized += 1;
    }

    /// Feeds one physical line (without `'\n'`).
    pub(crate) fn feed(&mut self, raw: &[u8], sink: &mut dyn EventSink) {
        self.stats.lines += 1;
        let line = String::from_utf8_lossy(raw);
        let line = line.strip_suffix('\r').unwrap_or(&line);
        let hard = line.ends_with("  ");
        let text = line.trim_end();
        if let Some(start) = run_start(text) {
            self.flush(sink);
            self.start_run(start, sink);
            self.reset_block_state();
            return;
        }
        if self.mode == Mode::ToolCont {
            self.continuation_lines += 1;
            self.push(text);
            if hard || self.continuation_lines >= MAX_CONTINUATION_LINES {
                self.mode = Mode::Tool;
            }
            self.blanks = 0;
            return;
        }
        if text.is_empty() {
            self.blanks += 1;
            return;
        }
        let blanks = std::mem::take(&mut self.blanks);
        let in_reply = self.mode == Mode::Assistant;
        let guarded = in_reply && (self.fence || self.search_replace);
        // Inside a reply a `####`/`>` line is the person or a tool only when the writer's marks
        // say so: the trailing hard break (even inside a fence: a stream cut off by ^C leaves
        // one open), or the two blank lines before a person's input. A file written without the
        // marks (by hand, by another tool) goes by prefix alone.
        let marked = !in_reply
            || (self.hard_breaks && hard)
            || (!guarded && (!self.hard_breaks || blanks >= 2));
        if let Some(input) = user_line(text).filter(|_| marked) {
            if hard {
                self.hard_breaks = true;
            }
            if self.mode != Mode::User || blanks > 0 {
                self.flush(sink);
                self.mode = Mode::User;
            }
            self.push(input);
            return;
        }
        if let Some(out) = tool_line(text).filter(|_| marked || text == ">") {
            if hard {
                self.hard_breaks = true;
            }
            if self.mode != Mode::Tool || blanks > 0 {
                self.flush(sink);
                self.mode = Mode::Tool;
            }
            self.push(out);
            if self.hard_breaks && !hard && text != ">" {
                self.mode = Mode::ToolCont;
                self.continuation_lines = 0;
            }
            return;
        }
        match self.mode {
            Mode::Tool if blanks == 0 => self.push(text),
            Mode::Assistant => {
                for _ in 0..blanks {
                    self.push("");
                }
                self.track_fences(text);
                self.push(text);
            }
            // Leading text of a history that begins mid-run (an editor mode line).
            Mode::None if self.run.is_none() => self.stats.ignored += 1,
            _ => {
                self.flush(sink);
                self.mode = Mode::Assistant;
                self.track_fences(text);
                self.push(text);
            }
        }
    }

    /// Ends the read: the block being gathered is complete (Aider writes a reply or an input
    /// in one write), so it is pushed, and the run's meta with it. A later append starts a new
    /// block.
    pub(crate) fn finish(&mut self, sink: &mut dyn EventSink) {
        self.flush(sink);
        if let Some(run) = &self.run {
            run.end(sink);
        }
    }

    /// Continues the run a resumed read starts in: its events append to what is stored.
    pub(crate) fn resume(&mut self, sink: &mut dyn EventSink) {
        if let Some(run) = self.run.as_mut().filter(|r| r.stored) {
            run.announce(sink);
        }
    }

    fn reset_block_state(&mut self) {
        self.mode = Mode::None;
        self.blanks = 0;
        self.fence = false;
        self.search_replace = false;
    }

    fn track_fences(&mut self, text: &str) {
        let t = text.trim_start();
        if t.starts_with("```") {
            self.fence = !self.fence;
        } else if t.starts_with("<<<<<<< SEARCH") {
            self.search_replace = true;
        } else if t.starts_with(">>>>>>> REPLACE") {
            self.search_replace = false;
        }
    }

    fn push(&mut self, text: &str) {
        if self.block_bytes > MAX_BLOCK_BYTES {
            return;
        }
        self.block_bytes += text.len() + 1;
        self.block.push(text.to_string());
    }

    fn start_run(&mut self, start: &str, sink: &mut dyn EventSink) {
        self.end_run(sink);
        if self.last_start.as_deref() == Some(start) {
            self.same_start += 1;
        } else {
            self.last_start = Some(start.to_string());
            self.same_start = 1;
        }
        let stamp: String = start.chars().filter(char::is_ascii_digit).collect();
        let mut id = format!("aider-{}-{}", self.file_key, stamp);
        if self.same_start > 1 {
            id.push_str(&format!("-{}", self.same_start));
        }
        self.open_run(id, local_time(start));
    }

    /// The lines before a file's first header (a history that begins mid-run) are a run of
    /// their own.
    fn ensure_run(&mut self) {
        if self.run.is_none() {
            let id = format!("aider-{}-0", self.file_key);
            self.open_run(id, None);
        }
    }

    fn open_run(&mut self, id: String, time: Option<String>) {
        let mut cx = Ctx::default();
        cx.meta.session_id = Some(id.clone());
        cx.meta.cwd = self.cwd.clone();
        cx.touch_time(time.as_deref());
        self.run = Some(Run {
            id,
            cx,
            time,
            turns: false,
            titled: false,
            stored: false,
            announced: false,
        });
    }

    fn end_run(&mut self, sink: &mut dyn EventSink) {
        if let Some(run) = self.run.take() {
            run.end(sink);
        }
    }

    /// Pushes the gathered block as one event.
    fn flush(&mut self, sink: &mut dyn EventSink) {
        let mode = std::mem::take(&mut self.mode);
        let lines = std::mem::take(&mut self.block);
        self.block_bytes = 0;
        self.fence = false;
        self.search_replace = false;
        if lines.iter().all(|l| l.trim().is_empty()) {
            return;
        }
        self.ensure_run();
        let Some(run) = self.run.as_mut() else { return };
        let text = cap_chars(lines.join("\n").trim(), MAX_BLOCK_BYTES);
        let mut ev = match mode {
            Mode::User => {
                // A prompt names the run; a command only until a prompt comes.
                let command = text.starts_with('/');
                if !run.titled {
                    run.cx.set_title(text.lines().next().unwrap_or(""), 1);
                    run.titled = !command;
                }
                let kind = if command {
                    EventType::UserCommand
                } else {
                    EventType::UserMessage
                };
                ParsedEvent::new(kind, run.time.clone(), text)
            }
            Mode::Assistant | Mode::None => {
                ParsedEvent::new(EventType::AssistantMessage, run.time.clone(), text)
            }
            Mode::Tool | Mode::ToolCont => {
                let kind = if run.turns {
                    EventType::ToolResult
                } else {
                    read_banner(&lines, &mut run.cx);
                    EventType::SystemContext
                };
                tool_event(kind, &lines, text, run.time.clone())
            }
        };
        ev.human = ev.event_type.is_human();
        run.turns |= ev.event_type.is_human() || ev.event_type.is_assistant();
        let before = run.cx.stats.events;
        let mut out = Vec::with_capacity(1);
        run.cx.emit(&mut out, ev);
        self.stats.events += run.cx.stats.events - before;
        if !out.is_empty() {
            run.announce(sink);
        }
        for ev in out {
            sink.event(ev);
        }
    }
}

/// The start time of a run header line.
fn run_start(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("# aider chat started at ")?.trim();
    let b = rest.as_bytes();
    let shape = b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        });
    shape.then_some(rest)
}

/// A person's input line (`#### text`), without its prefix.
fn user_line(text: &str) -> Option<&str> {
    if text == "####" {
        return Some("");
    }
    let rest = text.strip_prefix("#### ")?;
    Some(if rest.trim() == "<blank>" { "" } else { rest })
}

/// A tool output line (`> text` or a bare `>`), without its prefix.
fn tool_line(text: &str) -> Option<&str> {
    if text == ">" {
        return Some("");
    }
    text.strip_prefix("> ")
}

/// The run's local start time as RFC 3339 with this machine's offset (Aider writes local time
/// without a zone; the history is read where it was written).
fn local_time(start: &str) -> Option<String> {
    use chrono::TimeZone;
    let naive = chrono::NaiveDateTime::parse_from_str(start, "%Y-%m-%d %H:%M:%S").ok()?;
    let local = chrono::Local.from_local_datetime(&naive).earliest()?;
    Some(local.to_rfc3339_opts(chrono::SecondsFormat::Secs, false))
}

/// The version and model named in the startup banner.
fn read_banner(lines: &[String], cx: &mut Ctx) {
    for l in lines {
        if let Some(v) = l.strip_prefix("Aider ") {
            cx.meta.version = Some(cap_chars(v.trim(), 64));
        }
        let model = ["Model: ", "Models: ", "Main model: "]
            .iter()
            .find_map(|p| l.strip_prefix(p));
        if let Some(m) = model {
            let name = m.split(" with ").next().unwrap_or(m).trim();
            if !name.is_empty() && cx.meta.model.is_none() {
                cx.meta.model = Some(cap_chars(name, 200));
            }
        }
    }
}

/// A tool output block: what Aider did (edits applied, commits, command output, errors).
fn tool_event(
    kind: EventType,
    lines: &[String],
    text: String,
    time: Option<String>,
) -> ParsedEvent {
    let mut ev = ParsedEvent::new(kind, time, text);
    if kind == EventType::ToolResult {
        ev.tool_name = Some("aider".to_string());
    }
    for l in lines {
        // A line of a multi-line message keeps its own `> `.
        let l = l.strip_prefix("> ").unwrap_or(l);
        if let Some(path) = l.strip_prefix("Applied edit to ") {
            let path = path.trim();
            if !path.is_empty() {
                ev.facts.push(Fact::FileEdit {
                    path: cap_chars(path, 1024),
                });
            }
        }
        if ERROR_MARKERS.iter().any(|m| l.starts_with(m)) {
            ev.is_error = true;
        }
    }
    ev
}
