//! Pi (pi-mono coding agent) sessions: `~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl`
//! (`PI_CODING_AGENT_DIR` replaces `~/.pi/agent`), written by `core/session-manager.ts`.
//!
//! Line 1 is a `session` header `{id, timestamp, cwd, version?}`; every later line is an entry
//! `{type, id, parentId, timestamp}` (v1 entries have no ids and chain in file order). Entries
//! form a tree: Pi appends each entry as a child of its current leaf, and going back to an
//! earlier entry (`/tree`, a `branch_summary`) makes the next entry a child of that one. When
//! Pi opens a file its leaf is the last entry, so the conversation is the path from the last
//! entry to the root; the entries of a branch the person left stay in the file, and here they
//! stay searchable in file order but are marked abandoned and no longer count for the outcome
//! (what ran there did run; see `conversation`). `message` entries carry `user`, `assistant`
//! (text, thinking and `toolCall` blocks, a `stopReason`), `toolResult`, `bashExecution` (a
//! person's `!` command) and `custom` roles; `compaction` and `branch_summary` hold summaries,
//! `session_info` the session's name.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume,
};
use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::model::{EventType, Fact, ParsedEvent};
use super::parser::{
    cap_chars, command_program, content_text, norm_time, render_tool_input, str_of, Ctx, Handled,
    TranscriptParser,
};

/// Pi-specific state kept between lines: the leaf (saved), and, for one whole read, the tree
/// surveyed and the entries found off the conversation (not saved).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PiState {
    /// The last entry read: an entry appended after it continues the conversation when it is
    /// its child.
    leaf: Option<String>,
    /// An entry read since the state was restored was not a child of the leaf (a branch).
    #[serde(skip)]
    branched: bool,
    /// `(id, parentId)` of every entry read, in file order (the survey of a whole read).
    #[serde(skip)]
    tree: Vec<(String, Option<String>)>,
    /// Entries off the path from the last entry to the root (set by [`PiState::adopt`]).
    #[serde(skip)]
    off: HashSet<String>,
}

impl PiState {
    pub(crate) fn rewrites_past(&self) -> bool {
        self.branched
    }

    /// Takes the tree `survey` read: every entry not on the path from its last entry to the
    /// root is off the conversation. True when there is one.
    pub(crate) fn adopt(&mut self, survey: &mut PiState) -> bool {
        let tree = std::mem::take(&mut survey.tree);
        let parents: HashMap<&str, Option<&str>> = tree
            .iter()
            .map(|(id, parent)| (id.as_str(), parent.as_deref()))
            .collect();
        let mut on_path: HashSet<&str> = HashSet::new();
        let mut at = tree.last().map(|(id, _)| id.as_str());
        while let Some(id) = at {
            if !on_path.insert(id) {
                break; // a cycle: a hand-edited file
            }
            at = parents.get(id).copied().flatten();
        }
        self.off = tree
            .iter()
            .filter(|(id, _)| !on_path.contains(id.as_str()))
            .map(|(id, _)| id.clone())
            .collect();
        !self.off.is_empty()
    }

    /// Notes an entry's place in the tree; true when it is off the conversation.
    fn place(&mut self, rec: &Value) -> bool {
        let Some(id) = str_of(rec, "id") else {
            return false; // a v1 entry: chained in file order
        };
        if let Some(parent) = rec.get("parentId") {
            let parent = parent.as_str();
            if parent != self.leaf.as_deref() {
                self.branched = true;
            }
            self.tree.push((id.to_string(), parent.map(str::to_string)));
        }
        self.leaf = Some(id.to_string());
        self.off.contains(id)
    }
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for PiState {
    const FORMAT: &'static str = "pi";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
    fn rewrites_past(&self) -> bool {
        PiState::rewrites_past(self)
    }
    fn adopt(&mut self, survey: &mut PiState) -> bool {
        PiState::adopt(self, survey)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut PiState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    if str_of(rec, "type") == Some("session") || !st.place(rec) {
        return entry(cx, rec, out);
    }
    let mut handled = Handled::Known;
    super::conversation::aside(cx, out, "branch", |cx, out| handled = entry(cx, rec, out));
    handled
}

fn entry(cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
    let time = norm_time(rec.get("timestamp"));
    cx.touch_time(time.as_deref());
    match str_of(rec, "type").unwrap_or("") {
        "session" => {
            let meta = &mut cx.meta;
            if meta.session_id.is_none() {
                meta.session_id = str_of(rec, "id").map(str::to_string);
            }
            if meta.cwd.is_none() {
                meta.cwd = str_of(rec, "cwd").map(str::to_string);
            }
            if let Some(v) = rec.get("version").and_then(Value::as_u64) {
                meta.version = Some(v.to_string());
            }
            if let Some(m) = str_of(rec, "modelId") {
                meta.model = Some(cap_chars(m, 200));
            }
            Handled::Known
        }
        "message" => match rec.get("message").filter(|m| m.is_object()) {
            Some(m) => message(cx, m, time, out),
            None => Handled::Broken,
        },
        "compaction" | "branch_summary" => {
            if let Some(s) = str_of(rec, "summary") {
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::SystemSummary, time, s.to_string()),
                );
            }
            Handled::Known
        }
        "session_info" => {
            if let Some(name) = str_of(rec, "name") {
                cx.set_title(name, 3);
            }
            Handled::Known
        }
        "custom_message" => {
            let text = content_text(rec.get("content").unwrap_or(&Value::Null));
            cx.emit(out, ParsedEvent::new(EventType::SystemContext, time, text));
            Handled::Known
        }
        "model_change" => {
            if let Some(m) = str_of(rec, "modelId") {
                cx.meta.model = Some(cap_chars(m, 200));
            }
            Handled::Known
        }
        "thinking_level_change" | "label" | "custom" => Handled::Known,
        _ => Handled::Unknown,
    }
}

fn message(cx: &mut Ctx, m: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) -> Handled {
    let content = m.get("content").unwrap_or(&Value::Null);
    match str_of(m, "role").unwrap_or("") {
        "user" => {
            let text = content_text(content);
            let kind = if text.trim_start().starts_with('/') {
                EventType::UserCommand
            } else {
                EventType::UserMessage
            };
            cx.emit(out, ParsedEvent::new(kind, time, text));
        }
        "assistant" => assistant(cx, m, content, time, out),
        "toolResult" => {
            let mut ev = ParsedEvent::new(EventType::ToolResult, time, content_text(content));
            ev.tool_use_id = str_of(m, "toolCallId").map(str::to_string);
            ev.tool_name = str_of(m, "toolName")
                .map(str::to_string)
                .or_else(|| ev.tool_use_id.as_deref().and_then(|id| cx.tool_name(id)));
            ev.is_error = m.get("isError").and_then(Value::as_bool) == Some(true);
            cx.emit(out, ev);
        }
        "bashExecution" => {
            let command = str_of(m, "command").unwrap_or("");
            let mut typed =
                ParsedEvent::new(EventType::UserCommand, time.clone(), format!("!{command}"));
            if let Some(program) = command_program(command) {
                typed.facts.push(Fact::Command { program });
            }
            cx.emit(out, typed);
            let mut ev = ParsedEvent::new(
                EventType::ToolResult,
                time,
                str_of(m, "output").unwrap_or("").to_string(),
            );
            ev.tool_name = Some("bash".into());
            ev.is_error = m
                .get("exitCode")
                .and_then(Value::as_i64)
                .is_some_and(|c| c != 0)
                || m.get("cancelled").and_then(Value::as_bool) == Some(true);
            cx.emit(out, ev);
        }
        "custom" | "hookMessage" => {
            cx.emit(
                out,
                ParsedEvent::new(EventType::SystemHook, time, content_text(content)),
            );
        }
        _ => return Handled::Unknown,
    }
    Handled::Known
}

fn assistant(
    cx: &mut Ctx,
    m: &Value,
    content: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    if let Some(model) = str_of(m, "model") {
        cx.meta.model = Some(cap_chars(model, 200));
    }
    for block in content.as_array().into_iter().flatten() {
        let t = time.clone();
        match str_of(block, "type").unwrap_or("") {
            "text" => {
                let text = str_of(block, "text").unwrap_or("").to_string();
                cx.emit(out, ParsedEvent::new(EventType::AssistantMessage, t, text));
            }
            "thinking" if block.get("redacted").and_then(Value::as_bool) != Some(true) => {
                let text = str_of(block, "thinking").unwrap_or("").to_string();
                cx.emit(out, ParsedEvent::new(EventType::AssistantThinking, t, text));
            }
            "toolCall" => {
                let name = str_of(block, "name").unwrap_or("tool");
                let id = str_of(block, "id").unwrap_or("");
                let args = match block.get("arguments") {
                    Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
                    Some(v) => v.clone(),
                    None => Value::Null,
                };
                cx.remember_tool(id, name);
                let mut ev = ParsedEvent::new(
                    EventType::AssistantToolUse,
                    t,
                    render_tool_input(name, &args),
                );
                ev.tool_name = Some(name.to_string());
                ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
                let arg = |k: &str| str_of(&args, k).map(str::to_string);
                match name {
                    "bash" => {
                        if let Some(program) = arg("command").as_deref().and_then(command_program) {
                            ev.facts.push(Fact::Command { program });
                        }
                    }
                    "edit" | "write" => {
                        if let Some(path) = arg("path") {
                            ev.facts.push(Fact::FileEdit { path });
                        }
                    }
                    _ => {}
                }
                cx.emit(out, ev);
            }
            _ => {}
        }
    }
    match str_of(m, "stopReason") {
        Some("aborted") => {
            cx.outcome.aborted();
        }
        Some("error") => {
            let text = str_of(m, "errorMessage").unwrap_or("error").to_string();
            cx.emit(out, ParsedEvent::new(EventType::SystemError, time, text));
        }
        _ => {}
    }
}

/// The Pi reader.
pub struct Reader;

/// Whether a head record is a Pi session header.
fn is_pi_header(v: &Value) -> bool {
    str_of(v, "type") == Some("session") && v.get("id").is_some() && v.get("cwd").is_some()
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<PiState>()
    }
    fn agent(&self) -> Agent {
        Agent::Pi
    }

    fn name(&self) -> &'static str {
        "pi"
    }

    fn label(&self) -> &'static str {
        "Pi"
    }

    /// `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir("PI_CODING_AGENT_DIR")
            .or_else(|| env.home().map(|h| h.join(".pi/agent")))
            .map(|d| vec![d.join("sessions")])
            .unwrap_or_default()
    }

    /// Any `.jsonl` whose head is a Pi `session` header (the folder and file names are lossy).
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        if path.extension()? != "jsonl" {
            return None;
        }
        let i = head.first(is_pi_header)?;
        Some(Recognised {
            layout: Layout::Main,
            rank: Rank::Record(i),
        })
    }

    /// In file order, the entries off the branch that ends at the last entry marked (see
    /// `conversation`).
    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        super::conversation::read_conversation(file, from, limits, sink, || {
            TranscriptParser::new(Agent::Pi)
        })
    }

    /// Pi resumes by picking from the sessions of the directory it starts in.
    fn resume_command(&self, _quoted_session_id: &str) -> Option<String> {
        Some("pi --resume".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::episodes::agent::read_whole;
    use crate::sources::episodes::outcome::Outcome;
    use crate::sources::episodes::parser::test_support::{assert_resumable, parse_str};

    #[test]
    fn a_left_branch_is_marked_and_its_failure_recovers_nothing() {
        let text = [
            r#"{"type":"session","version":3,"id":"p-2","timestamp":"2026-05-12T01:00:00.000Z","cwd":"/w/app"}"#,
            r#"{"type":"message","id":"b1","parentId":null,"timestamp":"2026-05-12T01:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"make the build pass"}],"timestamp":1}}"#,
            r#"{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-05-12T01:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"make"}}],"model":"m","stopReason":"toolUse","timestamp":2}}"#,
            r#"{"type":"message","id":"b3","parentId":"b2","timestamp":"2026-05-12T01:00:03.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"make: *** Error 2"}],"isError":true,"timestamp":3}}"#,
            r#"{"type":"branch_summary","id":"b4","parentId":"b1","timestamp":"2026-05-12T01:00:04.000Z","fromId":"b1","summary":"make failed; trying cargo"}"#,
            r#"{"type":"message","id":"b5","parentId":"b4","timestamp":"2026-05-12T01:00:05.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t2","name":"bash","arguments":{"command":"cargo build"}}],"model":"m","stopReason":"toolUse","timestamp":5}}"#,
            r#"{"type":"message","id":"b6","parentId":"b5","timestamp":"2026-05-12T01:00:06.000Z","message":{"role":"toolResult","toolCallId":"t2","toolName":"bash","content":[{"type":"text","text":"Finished"}],"isError":false,"timestamp":6}}"#,
        ]
        .join("\n");
        // In file order the failed `make` would be "recovered" by the cargo build.
        let (_, one_pass) = parse_str(Agent::Pi, &text);
        assert_eq!(one_pass.outcome(), Outcome::Success);
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, format!("{text}\n")).expect("write");
        let file = TranscriptFile {
            path,
            kind: Agent::Pi,
            layout: Layout::Main,
        };
        let (sink, _) = read_whole(&file).expect("read");
        let s = &sink.sessions[0];
        let marked: Vec<&str> = s
            .events
            .iter()
            .filter(|e| {
                e.facts.contains(&Fact::Abandoned {
                    reason: "branch".into(),
                })
            })
            .map(|e| e.text.as_str())
            .collect();
        assert_eq!(marked.len(), 2, "the call and the result of b2, b3");
        assert!(marked[1].contains("Error 2"));
        // The conversation never failed: nothing was recovered.
        assert_eq!(s.outcome, Some(Outcome::Unknown));
        assert_eq!(s.events.len(), 6);
    }

    #[test]
    fn entries_become_events_and_bad_lines_are_counted() {
        let text = [
            r#"{"type":"session","version":3,"id":"p-1","timestamp":"2026-05-12T01:02:27.657Z","cwd":"/w/app"}"#,
            r#"{"type":"session_info","id":"a1","parentId":null,"timestamp":"2026-05-12T01:02:27.660Z","name":"login fix"}"#,
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-05-12T01:02:28.000Z","message":{"role":"user","content":[{"type":"text","text":"fix the login bug"}],"timestamp":1778547748000}}"#,
            r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-05-12T01:02:29.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"check auth.go","thinkingSignature":"s"},{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"go test ./..."}}],"model":"m","stopReason":"toolUse","timestamp":1}}"#,
            r#"{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-05-12T01:02:30.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"FAIL auth"}],"isError":true,"timestamp":2}}"#,
            r#"{"type":"message","id":"a5","parentId":"a4","timestamp":"2026-05-12T01:02:31.000Z","message":{"role":"bashExecution","command":"git status","output":"clean","exitCode":0,"cancelled":false,"truncated":false,"timestamp":3}}"#,
            r#"{"type":"compaction","id":"a6","parentId":"a5","timestamp":"2026-05-12T01:02:32.000Z","summary":"fixing login","firstKeptEntryId":"a2","tokensBefore":9}"#,
            r#"{"type":"unknown_future_entry_type","id":"a7","parentId":"a6","timestamp":"2026-05-12T01:02:33.000Z"}"#,
            r#"{"type":"message","id":"a8"#,
        ]
        .join("\n");
        let (events, parser) = parse_str(Agent::Pi, &text);
        let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types,
            vec![
                "user/message",
                "assistant/thinking",
                "assistant/tool_use",
                "tool/result",
                "user/command",
                "tool/result",
                "system/summary"
            ]
        );
        assert!(events[3].is_error && !events[5].is_error);
        let m = parser.meta();
        assert_eq!(m.session_id.as_deref(), Some("p-1"));
        assert_eq!(m.cwd.as_deref(), Some("/w/app"));
        assert_eq!(m.title.as_deref(), Some("login fix"));
        assert_eq!(parser.stats().skipped_unknown, 1);
        assert_eq!(parser.stats().skipped_broken, 1);
        assert_resumable(Agent::Pi, &text);
    }
}
