//! Continue (continuedev/continue: the VS Code and JetBrains extensions and the `cn` CLI)
//! sessions: `$CONTINUE_GLOBAL_DIR` (default `~/.continue`) `/sessions/<sessionId>.json`, one
//! JSON document per session, rewritten whole on every save (`core/util/history.ts`
//! `HistoryManager.save`: `JSON.stringify(session, undefined, 2)`), beside the index
//! `sessions/sessions.json` that the IDE extensions and the CLI share.
//!
//! A session is `{sessionId, title, workspaceDirectory, history[], mode?, chatModelTitle?,
//! usage?}` (`core/index.d.ts` `Session`); each history item `{message, contextItems[],
//! toolCallStates?, reasoning?, conversationSummary?, editorState?, promptLogs?}`
//! (`ChatHistoryItem`), its `message` one of the roles `user`, `assistant` (`toolCalls?`),
//! `thinking`, `tool` (`toolCallId`) and `system`, `content` a string or text/image parts. A
//! tool call's state (`toolCallStates[]`: `toolCallId`, `toolCall.function{name, arguments}`,
//! `parsedArgs`, `status` generating|generated|calling|errored|done|canceled, `output[]` of
//! context items) sits on the assistant item that made the call. The IDE also appends a `tool`
//! message holding the same output (`gui/src/redux/thunks/streamResponseAfterToolCall.ts`); the
//! CLI does not (`extensions/cli/src/services/ChatHistoryService.ts` `addToolResult`). So a
//! result is read from its call's state, right after the call, and a `tool` message only when
//! no state gave its call a result.
//!
//! **Times.** The items carry none. The session's start is `dateCreated` (epoch ms, as a string)
//! of its entry in `sessions.json`, its last activity the file's mtime (the file is rewritten on
//! every save); the events have no time of their own, except reasoning shown in the IDE
//! (`reasoning.startAt`, epoch ms). The `system` message (the system prompt; the CLI drops it
//! before saving) and `contextItems` (files and snippets attached to a prompt, not what was
//! typed) are not indexed.
//!
//! **Working directory.** `workspaceDirectory`: the CLI writes `process.cwd()`, the IDE its
//! first workspace folder as a URI (`file:///home/me/repo%20x`, decoded to a path; another
//! scheme, a remote workspace, is kept as written).
//!
//! **Subagents.** None are stored: the CLI's `Subagent` tool runs its agent in memory
//! (`extensions/cli/src/subagent/executor.ts`) and only its answer comes back as the call's
//! result, so the call is read as a spawn fact.
//!
//! **Resume.** `cn --resume` takes no id (it opens the latest session); `cn --fork <sessionId>`
//! continues a given session as a new one, the only command that takes an id.
//!
//! Checked against continuedev/continue @ d0a3c0b626b5 (`core/util/paths.ts`,
//! `core/index.d.ts`, `core/util/history.ts`, `extensions/cli/src/session.ts`, the tool
//! definitions in `core/tools/` and `extensions/cli/src/tools/`). Not confirmed: no real session
//! file was available (none is committed under a licence this project may use), so the fixtures
//! follow the writers' code, not a capture; sessions written before `HistoryManager.save` fixed
//! the key order, or by older releases (an index entry with `session_id` is one of those), are
//! read by the same rules and may hold shapes not seen here; whether the JetBrains plugin
//! writes `workspaceDirectory` as a URI or a path (both are read).

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    file_mtime, read_json_document, AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits,
    Recognised, Resume, SessionStart, StoreKind,
};
use super::agents::Agent;
use super::bounds::records::{with_records, Record};
use super::discover::{Layout, TranscriptFile};
use super::model::{EventType, Fact, ParsedEvent, SessionMeta};
use super::outcome::Outcome;
use super::parser::{
    cap_chars, command_program, content_text, file_uri_path, render_tool_input, str_of, Ctx,
    Handled, TranscriptParser,
};
use crate::sources::agent_knowledge::ms_to_rfc3339;

/// Largest session read (it is parsed whole; attached files make sessions large); a larger one
/// is counted oversized.
const MAX_JSON_BYTES: u64 = 64 * 1024 * 1024;
/// Calls remembered (a `tool` message follows the item of its call).
const MAX_CALLS: usize = 256;
/// The titles Continue gives a session before it has one (IDE, CLI).
const PLACEHOLDER_TITLES: [&str; 2] = ["New Session", "Untitled Session"];

/// A tool call seen on an assistant item.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Call {
    id: String,
    /// Its state said `errored` or `canceled`.
    failed: bool,
    /// Its result was read from the state (a `tool` message for it repeats it).
    answered: bool,
}

/// Continue-specific state kept between records: the recent tool calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ContinueState {
    calls: VecDeque<Call>,
}

impl ContinueState {
    fn note(&mut self, call: Call) {
        if self.calls.len() >= MAX_CALLS {
            self.calls.pop_front();
        }
        self.calls.push_back(call);
    }

    fn call(&self, id: &str) -> Option<&Call> {
        self.calls.iter().rev().find(|c| c.id == id)
    }
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for ContinueState {
    const FORMAT: &'static str = "continue";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

/// One record of a session: the document's header (everything but `history`), or one history
/// item.
pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut ContinueState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    if let Some(message) = rec.get("message") {
        return item(cx, st, rec, message, out);
    }
    if rec.get("sessionId").is_some() || rec.get("workspaceDirectory").is_some() {
        header(cx, rec);
        return Handled::Known;
    }
    // A history item (every one has `contextItems`) without its message.
    if rec.get("contextItems").is_some() {
        return Handled::Broken;
    }
    Handled::Unknown
}

fn header(cx: &mut Ctx, rec: &Value) {
    let m = &mut cx.meta;
    if let Some(id) = str_of(rec, "sessionId").filter(|s| !s.trim().is_empty()) {
        m.session_id = Some(id.to_string());
    }
    if let Some(dir) = str_of(rec, "workspaceDirectory").filter(|d| !d.trim().is_empty()) {
        m.cwd = Some(file_uri_path(dir));
    }
    if let Some(model) = str_of(rec, "chatModelTitle") {
        m.model = Some(cap_chars(model, 200));
    }
    if let Some(mode) = str_of(rec, "mode") {
        m.agent_preset = Some(mode.to_string());
    }
    if let Some(title) = str_of(rec, "title").filter(|t| !PLACEHOLDER_TITLES.contains(t)) {
        cx.set_title(title, 2);
    }
}

fn item(
    cx: &mut Ctx,
    st: &mut ContinueState,
    rec: &Value,
    message: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let Some(role) = str_of(message, "role") else {
        return Handled::Broken;
    };
    let content = || message.get("content").map(content_text).unwrap_or_default();
    match role {
        "user" => {
            let text = content();
            let kind = if text.trim_start().starts_with('/') {
                EventType::UserCommand
            } else {
                EventType::UserMessage
            };
            cx.emit(out, ParsedEvent::new(kind, None, text));
        }
        "assistant" => {
            if let Some(r) = rec.get("reasoning") {
                let time = r
                    .get("startAt")
                    .and_then(Value::as_i64)
                    .and_then(ms_to_rfc3339);
                cx.touch_time(time.as_deref());
                let text = str_of(r, "text").unwrap_or("").to_string();
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::AssistantThinking, time, text),
                );
            }
            cx.emit(
                out,
                ParsedEvent::new(EventType::AssistantMessage, None, content()),
            );
            match rec.get("toolCallStates").and_then(Value::as_array) {
                Some(states) if !states.is_empty() => {
                    for state in states {
                        call(cx, st, state, state.get("toolCall"), out);
                    }
                }
                _ => {
                    let calls = message.get("toolCalls").and_then(Value::as_array);
                    for c in calls.into_iter().flatten() {
                        call(cx, st, &Value::Null, Some(c), out);
                    }
                }
            }
        }
        "thinking" => {
            // A redacted block's content is Continue's placeholder, not the model's text.
            if message.get("redactedThinking").is_none() {
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::AssistantThinking, None, content()),
                );
            }
        }
        "tool" => {
            let id = str_of(message, "toolCallId").unwrap_or("");
            let known = st.call(id).cloned();
            if !known.as_ref().is_some_and(|c| c.answered) {
                let mut ev = ParsedEvent::new(EventType::ToolResult, None, content());
                ev.tool_name = cx.tool_name(id);
                ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
                ev.is_error = known.is_some_and(|c| c.failed);
                cx.emit(out, ev);
            }
        }
        // The system prompt: the same in every session.
        "system" => {}
        _ => return Handled::Unknown,
    }
    if let Some(summary) = str_of(rec, "conversationSummary") {
        cx.emit(
            out,
            ParsedEvent::new(EventType::SystemSummary, None, summary.to_string()),
        );
    }
    Handled::Known
}

/// One tool call (from its state when the item has one, else from `message.toolCalls`), and
/// its result when the state holds one.
fn call(
    cx: &mut Ctx,
    st: &mut ContinueState,
    state: &Value,
    tool_call: Option<&Value>,
    out: &mut Vec<ParsedEvent>,
) {
    let id = str_of(state, "toolCallId")
        .or_else(|| tool_call.and_then(|c| str_of(c, "id")))
        .unwrap_or("");
    let function = tool_call.and_then(|c| c.get("function"));
    let name = function.and_then(|f| str_of(f, "name")).unwrap_or("tool");
    let args = match state.get("parsedArgs").filter(|a| a.is_object()) {
        Some(a) => a.clone(),
        None => match function.and_then(|f| str_of(f, "arguments")) {
            Some(text) => serde_json::from_str(text).unwrap_or_else(|_| text.into()),
            None => Value::Null,
        },
    };
    cx.remember_tool(id, name);
    let mut ev = ParsedEvent::new(
        EventType::AssistantToolUse,
        None,
        render_tool_input(name, &args),
    );
    ev.tool_name = Some(name.to_string());
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.facts = call_facts(name, id, &args);
    cx.emit(out, ev);

    let status = str_of(state, "status").unwrap_or("");
    let failed = matches!(status, "errored" | "canceled");
    // What Continue renders of the output (`renderContextItems`).
    let output: Vec<&str> = state
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| str_of(item, "content"))
        .collect();
    let text = match output.join("\n\n") {
        t if t.trim().is_empty() && failed => format!("[{status}]"),
        t => t,
    };
    let answered = !text.trim().is_empty();
    if answered {
        let mut ev = ParsedEvent::new(EventType::ToolResult, None, text);
        ev.tool_name = Some(name.to_string());
        ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
        ev.is_error = failed;
        cx.emit(out, ev);
    }
    if !id.is_empty() {
        st.note(Call {
            id: id.to_string(),
            failed,
            answered,
        });
    }
}

/// Facts of a call, by the tool names of the IDE (`core/tools/builtIn.ts`) and the CLI
/// (`extensions/cli/src/tools/builtInToolNames.ts`).
fn call_facts(name: &str, id: &str, args: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(args, k).map(str::to_string);
    let fact = match name {
        "run_terminal_command" | "Bash" => arg("command")
            .as_deref()
            .and_then(command_program)
            .map(|program| Fact::Command { program }),
        "edit_existing_file"
        | "create_new_file"
        | "single_find_and_replace"
        | "multi_edit"
        | "Write"
        | "Edit"
        | "MultiEdit" => arg("filepath")
            .or_else(|| arg("file_path"))
            .map(|path| Fact::FileEdit { path }),
        "read_skill" | "Skills" => {
            arg("skillName")
                .or_else(|| arg("skill_name"))
                .map(|name| Fact::SkillUse {
                    name,
                    via: "tool".into(),
                })
        }
        "Subagent" => Some(Fact::Spawn {
            tool_use_id: (!id.is_empty()).then(|| id.to_string()),
            subagent_type: arg("subagent_name"),
            name: arg("subagent_name"),
            description: arg("description")
                .or_else(|| arg("prompt"))
                .map(|d| cap_chars(&d, 500)),
            team_name: None,
        }),
        _ => None,
    };
    fact.into_iter().collect()
}

/// The Continue reader.
pub struct Reader;

/// `<dir>/sessions/<id>.json`, not the index `sessions.json`.
fn in_sessions(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
        && path.file_stem().is_some_and(|s| s != "sessions")
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "sessions")
}

/// Whether the file opens as a Continue session: `HistoryManager.save` writes `sessionId`
/// first and `history` after the title and workspace.
fn opens_as_session(path: &Path) -> bool {
    let Ok(file) = crate::sources::regular_file::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(16 * 1024).read_to_end(&mut head).is_err() {
        return false;
    }
    let head = String::from_utf8_lossy(&head);
    head.trim_start().starts_with('{')
        && head.contains("\"sessionId\"")
        && (head.contains("\"history\"") || head.contains("\"workspaceDirectory\""))
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<ContinueState>()
    }
    fn agent(&self) -> Agent {
        Agent::Continue
    }

    fn name(&self) -> &'static str {
        "continue"
    }

    fn label(&self) -> &'static str {
        "Continue"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Rewritten
    }

    /// `$CONTINUE_GLOBAL_DIR/sessions`, else `~/.continue/sessions`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir_or_home("CONTINUE_GLOBAL_DIR", ".continue")
            .map(|d| vec![d.join("sessions")])
            .unwrap_or_default()
    }

    /// `.continue/sessions/<id>.json` by place (a torn one too: it is counted, not skipped);
    /// under another `sessions/` folder (`CONTINUE_GLOBAL_DIR`, a copy) when it opens as one.
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        if !in_sessions(path) {
            return None;
        }
        let home = path.ancestors().nth(2)?.file_name()? == ".continue";
        let rank = if home {
            Rank::Name
        } else if opens_as_session(path) {
            Rank::Record(0)
        } else {
            return None;
        };
        Some(Recognised {
            layout: Layout::Main,
            rank,
        })
    }

    fn read(
        &self,
        file: &TranscriptFile,
        _from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let mut sink = SessionTimes {
            inner: sink,
            created: date_created(&file.path),
            mtime: file_mtime(&file.path),
        };
        let parser = TranscriptParser::new(Agent::Continue);
        let max_record = limits.max_line_bytes;
        read_json_document(
            file,
            MAX_JSON_BYTES,
            max_record,
            parser,
            "history",
            &mut sink,
        )
    }

    /// `cn --resume` opens only the latest session; `--fork` continues the given one.
    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("cn --fork {quoted_session_id}"))
    }

    /// A session file changed (rewritten whole); the index alone changes nothing read.
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        in_sessions(changed).then(|| changed.to_path_buf())
    }
}

/// The session's times, which its items do not carry: its start from the index, its last
/// activity from the file's mtime (when later than any time the items gave).
struct SessionTimes<'a> {
    inner: &'a mut dyn EventSink,
    created: Option<String>,
    mtime: Option<String>,
}

impl EventSink for SessionTimes<'_> {
    fn session(&mut self, start: SessionStart) {
        self.inner.session(start);
    }

    fn event(&mut self, event: ParsedEvent) {
        self.inner.event(event);
    }

    fn end_session(&mut self, mut meta: SessionMeta, outcome: Outcome) {
        if let Some(created) = self.created.take() {
            meta.created_at = Some(created);
        }
        if let Some(mtime) = self.mtime.take() {
            if meta
                .last_event_at
                .as_deref()
                .is_none_or(|t| mtime.as_str() > t)
            {
                meta.last_event_at = Some(mtime);
            }
        }
        self.inner.end_session(meta, outcome);
    }
}

/// `dateCreated` of the session's entry in `sessions.json` beside it (the file is named by the
/// session id): epoch milliseconds as a string (`String(Date.now())`), or a number.
fn date_created(path: &Path) -> Option<String> {
    let id = path.file_stem()?.to_str()?;
    let index = path.with_file_name("sessions.json");
    let ms = *created_by_id(&index)?.get(id)?;
    ms_to_rfc3339(ms)
}

/// The index as it was last read: its path, its file and size and time, and each session's
/// `dateCreated` (ms). One run reads a folder's sessions one after another, so keeping the last
/// index read makes it one parse per folder, not one per session (3,000 sessions beside a 12 MB
/// index took 48 s).
type CreatedIndex = (
    PathBuf,
    Option<(u64, u64)>,
    u64,
    SystemTime,
    Arc<HashMap<String, i64>>,
);

static LAST_INDEX: Mutex<Option<CreatedIndex>> = Mutex::new(None);

fn created_by_id(index: &Path) -> Option<Arc<HashMap<String, i64>>> {
    let meta = std::fs::metadata(index).ok()?;
    let (id, len, modified) = (
        crate::sources::regular_file::file_id(index),
        meta.len(),
        meta.modified().ok()?,
    );
    let mut last = LAST_INDEX.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((p, i, l, m, map)) = last.as_ref() {
        if p == index && *i == id && *l == len && *m == modified {
            return Some(map.clone());
        }
    }
    let bytes = crate::sources::regular_file::read_limited(index, MAX_JSON_BYTES).ok()?;
    // Entry by entry (`bounds::records`: parsed whole, a large index costs many times its size),
    // one of another shape or over the line limit costing itself, not the index.
    let max = super::lines::DEFAULT_MAX_LINE_BYTES;
    let map: HashMap<String, i64> = with_records(&bytes, "", max, |r| {
        r.parsed(max)
            .filter_map(|e| {
                let Record::Parsed(e) = e else { return None };
                let ms = match e.get("dateCreated")? {
                    Value::String(s) => s.trim().parse::<i64>().ok()?,
                    v => v.as_i64()?,
                };
                Some((str_of(&e, "sessionId")?.to_string(), ms))
            })
            .collect()
    })
    .unwrap_or_default();
    let map = Arc::new(map);
    *last = Some((index.to_path_buf(), id, len, modified, map.clone()));
    Some(map)
}

#[cfg(test)]
mod tests;
