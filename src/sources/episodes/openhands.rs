//! OpenHands CLI (V1, built on the software-agent-sdk) conversations:
//! `$OPENHANDS_CONVERSATIONS_DIR/<conversation id as 32 hex>/` (default
//! `$OPENHANDS_PERSISTENCE_DIR/conversations`, else `~/.openhands/conversations`), one folder per
//! conversation holding `base_state.json` (the conversation's state, rewritten in place) and
//! `events/event-<idx:05d>-<event id>.json`, one immutable event per file (the index is padded to
//! five digits and may grow past them).
//!
//! `base_state.json` is `{id (uuid), agent{kind, llm{model, …}, tools}, workspace{kind,
//! working_dir}, persistence_dir, max_iterations, execution_status, leaf_event_id?, stats, …}`.
//! An event is `{kind, id, timestamp (ISO 8601 without a zone: the writer's local
//! `datetime.now()`), source: user|agent|environment, parent_id?}` and by kind:
//! `MessageEvent{llm_message{role, content[{type:"text", text}], reasoning_content?,
//! thinking_blocks[]}, activated_skills[], sender?}`, `ActionEvent{thought[{type, text}],
//! reasoning_content?, thinking_blocks[], action{kind, …} | null, tool_name, tool_call_id,
//! tool_call{id, name, arguments (JSON text)}}`, `ObservationEvent{observation{kind,
//! content[{type, text}], is_error, exit_code? (terminal)}, tool_name, tool_call_id, action_id}`,
//! `AgentErrorEvent{error, tool_name, tool_call_id}`, `UserRejectObservation{rejection_reason,
//! tool_name, tool_call_id}`, `ConversationErrorEvent{code, detail}`, `Condensation{summary?}`,
//! `PauseEvent`, `InterruptEvent`, and kinds that carry nothing to read (`SystemPromptEvent`,
//! `ConversationStateUpdateEvent`, `TokenEvent`, `CondensationRequest`, …).
//!
//! Events map to: a user message → `user/message` (`/…`: `user/command`; one with a `sender`,
//! written by another agent, → `agent/prompt`), an agent message → `assistant/message`, its
//! reasoning (`reasoning_content`, else the text of `thinking_blocks`) → `assistant/thinking`;
//! an action's reasoning, its `thought` text (`assistant/message`) and the call
//! (`assistant/tool_use`, named `tool_name`, its input the `action` without `kind`, else the
//! call's `arguments`); an observation → `tool/result` named by its call, failed on `is_error`
//! or a terminal's non-zero `exit_code`; an agent error and a rejected action → failed
//! `tool/result`s; a conversation error → `system/error`; a condensation's summary →
//! `system/summary`; a pause or interrupt is an abort, the `finish` tool a task reported
//! complete. Facts: `terminal` (`execute_bash`, `bash`) → command; `file_editor`
//! (`str_replace_editor`, `planning_file_editor`) with `create`/`str_replace`/`insert`/
//! `undo_edit` → file edit, `apply_patch` → file edit per patched file; `task` → spawn
//! (`subagent_type`, `description`), `delegate` → a spawn per task; `invoke_skill` and a
//! message's `activated_skills` → skill use.
//!
//! Times: an event's `timestamp` carries no zone; it is read as UTC (the writer's local clock,
//! which on a machine not on UTC shifts every time by its offset: no zone is written anywhere to
//! correct it), normalised to milliseconds. The session id is `base_state.id` (the folder's
//! name is the same uuid as hex, used when the state cannot be read), the cwd
//! `workspace.working_dir`, the model `agent.llm.model`. Resume: `openhands --resume <id>`.
//!
//! The store is `base_state.json` ([`StoreKind::Rewritten`]): the events folder is read beside
//! it, and counts in its fingerprint through [`AgentReader::parts_modified`] (the folder's
//! mtime, which a new or removed event file moves, and the mtime of the last event file, the
//! only one a writer can still be filling: the SDK writes one event at a time under a lock and
//! never rewrites one). Any change re-reads the conversation whole. An event file that is
//! torn, too large, not a regular file (a FIFO) or unreadable is counted and skipped.
//! Conversations are trees in newer SDKs (`parent_id`; `base_state.leaf_event_id` is the head):
//! when the head is among the events, those off its branch are read and marked abandoned.
//!
//! Checked against the software-agent-sdk source (read, nothing copied):
//! `conversation/persistence_const.py` (names), `conversation/event_store.py` (the writer),
//! `conversation/state.py`, `event/**` and the tools' definitions; the CLI's `locations.py` for
//! the folders and its hint for the resume command. No real conversation folder was available
//! (../shared/realdata has no OpenHands sample), so not confirmed: the exact bytes the CLI
//! writes (that `kind` is on every event and action, as the SDK's discriminated models
//! serialise); what releases before the event tree wrote; sub-conversations a `task` or
//! `delegate` tool keeps in `subagents/<hex>/` (seen in a third-party reader only: each is read
//! as a conversation of its own, not linked to its parent); the meaning of a `sender` on a
//! user message; tools of other toolsets (browser, Gemini-style file tools) beyond their name
//! and input.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume, StoreKind,
};
use super::agents::{Agent, LineState};
use super::discover::{Layout, TranscriptFile};
use super::model::{EventType, Fact, ParsedEvent, SessionMeta};
use super::parser::{
    cap_chars, command_program, content_text, patch_files, render_tool_input, str_of, Ctx, Handled,
    TranscriptParser,
};

/// The conversation's state file, the store.
const BASE_STATE: &str = "base_state.json";
/// The folder of its events.
const EVENTS_DIR: &str = "events";
/// Largest `base_state.json` read (a few KB in practice; its `stats` grow with use).
const MAX_STATE_BYTES: u64 = 16 * 1024 * 1024;
/// Most event bytes held for one conversation; the event files past it are counted oversized.
const MAX_CONVERSATION_BYTES: u64 = 512 * 1024 * 1024;
/// The SDK's `ROOT_PARENT_ID`: a `parent_id` that says "a root", not a parent's id.
const ROOT_PARENT: &str = "__root__";

/// What the rules keep for one read: the ids of the events off the conversation's active branch
/// (set by the reader before the events are fed).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpenHandsState {
    off_branch: BTreeSet<String>,
}

/// An event's `timestamp` as UTC RFC 3339 with milliseconds: a time without a zone is read as
/// UTC; one with a zone is converted.
fn utc_time(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    let utc = match chrono::DateTime::parse_from_rfc3339(s) {
        Ok(t) => t.with_timezone(&chrono::Utc),
        Err(_) => chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
            .ok()?
            .and_utc(),
    };
    // A year RFC 3339 cannot write (`-0001`, `+10000`) is no time.
    let year = chrono::Datelike::year(&utc);
    (0..=9999)
        .contains(&year)
        .then(|| utc.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// A conversation folder's name as its id: 32 hex digits (`uuid.hex`) → the dashed uuid;
/// a dashed uuid as it is.
fn conversation_id(name: &str) -> Option<String> {
    let hex: String = name.chars().filter(|c| *c != '-').collect();
    let dashes = name.len() - hex.len();
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) || !matches!(dashes, 0 | 4) {
        return None;
    }
    if dashes == 4 {
        return Some(name.to_ascii_lowercase());
    }
    let h = hex.to_ascii_lowercase();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

/// Whether `dir` is named as a conversation folder.
fn is_conversation_dir(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| n.to_str())
        .and_then(conversation_id)
        .is_some()
}

/// `<conversation>/base_state.json`.
fn is_base_state(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == BASE_STATE)
        && path.parent().is_some_and(is_conversation_dir)
}

/// The index of an event file's name (`event-<5+ digits>-<id>.json`, the SDK's
/// `EVENT_NAME_RE`), or `None` for any other name.
fn event_index(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("event-")?.strip_suffix(".json")?;
    let (idx, id) = rest.split_once('-')?;
    let ok = idx.len() >= 5
        && idx.len() <= 19
        && idx.bytes().all(|b| b.is_ascii_digit())
        && id.len() >= 8
        && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    ok.then(|| idx.parse().ok()).flatten()
}

/// `<conversation>/events/event-….json`: the conversation's `base_state.json`.
fn base_state_of_event(path: &Path) -> Option<PathBuf> {
    event_index(path.file_name()?.to_str()?)?;
    let events = path.parent()?;
    let conversation = events.parent()?;
    (events.file_name()? == EVENTS_DIR && is_conversation_dir(conversation))
        .then(|| conversation.join(BASE_STATE))
}

/// A conversation's event files, in index order.
fn event_files(events: &Path) -> Vec<(u64, PathBuf)> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(events)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let idx = event_index(e.file_name().to_str()?)?;
            Some((idx, e.path()))
        })
        .collect();
    files.sort();
    files
}

/// One record: the conversation's state (the header), or one event.
pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut OpenHandsState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let is_event = rec.get("source").is_some() || rec.get("timestamp").is_some();
    if !is_event
        && ["agent", "workspace", "execution_status"]
            .iter()
            .any(|k| rec.get(*k).is_some())
    {
        header(cx, rec);
        return Handled::Known;
    }
    let Some(kind) = str_of(rec, "kind") else {
        return if is_event {
            Handled::Broken
        } else {
            Handled::Unknown
        };
    };
    if str_of(rec, "id").is_some_and(|id| st.off_branch.contains(id)) {
        let mut handled = Handled::Known;
        super::conversation::aside(cx, out, "another branch", |cx, out| {
            handled = event(cx, kind, rec, out);
        });
        return handled;
    }
    event(cx, kind, rec, out)
}

fn header(cx: &mut Ctx, rec: &Value) {
    if let Some(id) = str_of(rec, "id").and_then(conversation_id) {
        cx.meta.session_id = Some(id);
    }
    if let Some(dir) = rec
        .pointer("/workspace/working_dir")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
    {
        cx.meta.cwd = Some(dir.to_string());
    }
    if let Some(model) = rec.pointer("/agent/llm/model").and_then(Value::as_str) {
        cx.meta.model = Some(cap_chars(model, 200));
    }
}

fn event(cx: &mut Ctx, kind: &str, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
    let time = utc_time(rec.get("timestamp"));
    cx.touch_time(time.as_deref());
    match kind {
        "MessageEvent" => message(cx, rec, time, out),
        "ActionEvent" => action(cx, rec, time, out),
        "ObservationEvent" => {
            let Some(obs) = rec.get("observation").filter(|o| o.is_object()) else {
                return Handled::Broken;
            };
            let text = obs.get("content").map(content_text).unwrap_or_default();
            let exit = obs.get("exit_code").and_then(Value::as_i64);
            let failed = obs.get("is_error").and_then(Value::as_bool) == Some(true)
                || exit.is_some_and(|c| c != 0);
            result(cx, rec, time, text, failed, out);
            Handled::Known
        }
        "AgentErrorEvent" => {
            let text = str_of(rec, "error").unwrap_or("error").to_string();
            result(cx, rec, time, text, true, out);
            Handled::Known
        }
        "UserRejectObservation" => {
            let reason = str_of(rec, "rejection_reason").unwrap_or("");
            result(cx, rec, time, format!("[rejected] {reason}"), true, out);
            Handled::Known
        }
        "ConversationErrorEvent" => {
            let text = [str_of(rec, "code"), str_of(rec, "detail")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(": ");
            cx.emit(out, ParsedEvent::new(EventType::SystemError, time, text));
            Handled::Known
        }
        "Condensation" | "CondensationSummaryEvent" => {
            let text = str_of(rec, "summary").unwrap_or("").to_string();
            cx.emit(out, ParsedEvent::new(EventType::SystemSummary, time, text));
            Handled::Known
        }
        "PauseEvent" | "InterruptEvent" => {
            cx.outcome.aborted();
            Handled::Known
        }
        "SystemPromptEvent"
        | "ConversationStateUpdateEvent"
        | "TokenEvent"
        | "StreamingDeltaEvent"
        | "LLMCompletionLogEvent"
        | "CondensationRequest"
        | "HookExecutionEvent"
        | "ACPToolCallEvent" => Handled::Known,
        _ => Handled::Unknown,
    }
}

/// The reasoning of an LLM turn: `reasoning_content`, else its thinking blocks' text.
fn reasoning(v: &Value) -> String {
    if let Some(r) = str_of(v, "reasoning_content").filter(|r| !r.trim().is_empty()) {
        return r.to_string();
    }
    v.get("thinking_blocks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| str_of(b, "thinking"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn message(cx: &mut Ctx, rec: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) -> Handled {
    let Some(msg) = rec.get("llm_message").filter(|m| m.is_object()) else {
        return Handled::Broken;
    };
    let text = msg.get("content").map(content_text).unwrap_or_default();
    let skills: Vec<Fact> = rec
        .get("activated_skills")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|name| Fact::SkillUse {
            name: name.to_string(),
            via: "activated".into(),
        })
        .collect();
    let kind = match (str_of(rec, "source"), str_of(msg, "role")) {
        (Some("user"), _) | (None, Some("user")) => {
            if rec.get("sender").is_some_and(|s| !s.is_null()) {
                EventType::AgentPrompt
            } else if text.trim_start().starts_with('/') {
                EventType::UserCommand
            } else {
                EventType::UserMessage
            }
        }
        (Some("agent"), _) | (None, Some("assistant")) => {
            let thinking = reasoning(msg);
            cx.emit(
                out,
                ParsedEvent::new(EventType::AssistantThinking, time.clone(), thinking),
            );
            EventType::AssistantMessage
        }
        (Some("environment"), _) => EventType::SystemContext,
        _ => return Handled::Unknown,
    };
    let mut ev = ParsedEvent::new(kind, time, text);
    ev.facts = skills;
    cx.emit(out, ev);
    Handled::Known
}

fn action(cx: &mut Ctx, rec: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) -> Handled {
    let Some(name) = str_of(rec, "tool_name").or_else(|| rec.pointer("/tool_call/name")?.as_str())
    else {
        return Handled::Broken;
    };
    let thinking = reasoning(rec);
    cx.emit(
        out,
        ParsedEvent::new(EventType::AssistantThinking, time.clone(), thinking),
    );
    let thought = rec.get("thought").map(content_text).unwrap_or_default();
    cx.emit(
        out,
        ParsedEvent::new(EventType::AssistantMessage, time.clone(), thought),
    );
    let id = str_of(rec, "tool_call_id")
        .or_else(|| rec.pointer("/tool_call/id")?.as_str())
        .unwrap_or("");
    let input = match rec.get("action").filter(|a| a.is_object()) {
        Some(Value::Object(map)) => {
            let mut map = map.clone();
            map.remove("kind");
            Value::Object(map)
        }
        _ => rec
            .pointer("/tool_call/arguments")
            .and_then(Value::as_str)
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
            .unwrap_or(Value::Null),
    };
    cx.remember_tool(id, name);
    let mut ev = ParsedEvent::new(
        EventType::AssistantToolUse,
        time,
        render_tool_input(name, &input),
    );
    ev.tool_name = Some(name.to_string());
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.facts = call_facts(name, id, &input);
    cx.emit(out, ev);
    if name == "finish" {
        cx.outcome.task_complete(false);
    }
    Handled::Known
}

/// A call's answer, named by its call.
fn result(
    cx: &mut Ctx,
    rec: &Value,
    time: Option<String>,
    text: String,
    is_error: bool,
    out: &mut Vec<ParsedEvent>,
) {
    let id = str_of(rec, "tool_call_id").unwrap_or("");
    let mut ev = ParsedEvent::new(EventType::ToolResult, time, text);
    ev.tool_name = str_of(rec, "tool_name")
        .map(str::to_string)
        .or_else(|| cx.tool_name(id));
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.is_error = is_error;
    cx.emit(out, ev);
}

/// Facts of a call, by the SDK's tool names.
fn call_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(input, k).map(str::to_string);
    let spawn =
        |name: Option<String>, subagent_type: Option<String>, description: Option<String>| {
            Fact::Spawn {
                tool_use_id: (!id.is_empty()).then(|| id.to_string()),
                subagent_type,
                name,
                description: description.map(|d| cap_chars(&d, 500)),
                team_name: None,
            }
        };
    match name {
        "terminal" | "execute_bash" | "bash" => arg("command")
            .as_deref()
            .and_then(command_program)
            .map(|program| Fact::Command { program })
            .into_iter()
            .collect(),
        "file_editor" | "str_replace_editor" | "planning_file_editor" => {
            match arg("command").as_deref() {
                Some("create" | "str_replace" | "insert" | "undo_edit") => arg("path")
                    .map(|path| Fact::FileEdit { path })
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            }
        }
        "apply_patch" => arg("patch")
            .map(|p| patch_files(&p))
            .unwrap_or_default()
            .into_iter()
            .map(|path| Fact::FileEdit { path })
            .collect(),
        "task" => vec![spawn(
            None,
            arg("subagent_type"),
            arg("description").or_else(|| arg("prompt")),
        )],
        "delegate" => input
            .get("tasks")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(agent, task)| {
                spawn(Some(agent.clone()), None, task.as_str().map(str::to_string))
            })
            .collect(),
        "invoke_skill" => arg("name")
            .map(|name| Fact::SkillUse {
                name,
                via: "tool".into(),
            })
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// The ids of the events off the branch that ends at `leaf` (the SDK's `path_to_root`: an
/// event's parent is its `parent_id`, `__root__` none, and an event without one follows the
/// event before it). Empty when `leaf` is not among the events.
fn off_branch(events: &[Value], leaf: &str) -> BTreeSet<String> {
    let ids: Vec<Option<&str>> = events.iter().map(|e| str_of(e, "id")).collect();
    let index: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .filter_map(|(i, id)| Some(((*id)?, i)))
        .collect();
    let Some(&start) = index.get(leaf) else {
        return BTreeSet::new();
    };
    let mut on = vec![false; events.len()];
    let mut cur = Some(start);
    while let Some(i) = cur {
        if on[i] {
            break; // a cycle
        }
        on[i] = true;
        cur = match events[i].get("parent_id") {
            Some(Value::String(p)) if p == ROOT_PARENT => None,
            Some(Value::String(p)) => index.get(p.as_str()).copied(),
            _ => i.checked_sub(1),
        };
    }
    ids.iter()
        .zip(on)
        .filter(|(_, on)| !on)
        .filter_map(|(id, _)| id.map(str::to_string))
        .collect()
}

/// Reads one conversation: its state, then its events in index order.
fn read_conversation(
    file: &TranscriptFile,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let f = crate::sources::regular_file::open(&file.path)?;
    let size = f.metadata()?.len();
    drop(f);
    let mut parser = TranscriptParser::new(Agent::OpenHands);
    let mut out: Vec<ParsedEvent> = Vec::new();
    let state = match crate::sources::regular_file::read_limited(&file.path, MAX_STATE_BYTES) {
        Ok(bytes) => match super::bounds::json_document(&bytes) {
            Some(v @ Value::Object(_)) => Some(v),
            _ => {
                parser.feed(b"{", &mut out);
                None
            }
        },
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            parser.feed_oversized(size);
            None
        }
        Err(e) => return Err(e),
    };
    let dir = file.path.parent().unwrap_or(Path::new("."));
    let mut events: Vec<Value> = Vec::new();
    let mut held: u64 = 0;
    for (_, path) in event_files(&dir.join(EVENTS_DIR)) {
        let left = MAX_CONVERSATION_BYTES.saturating_sub(held);
        let limit = (limits.max_line_bytes as u64).min(left);
        match crate::sources::regular_file::read_limited(&path, limit) {
            Ok(bytes) => match super::bounds::json_document(&bytes) {
                Some(v @ Value::Object(_)) => {
                    held += bytes.len() as u64;
                    events.push(v);
                }
                // Torn (a writer still filling it), empty or not an object.
                _ => parser.feed(b"{", &mut out),
            },
            Err(e) if e.kind() == io::ErrorKind::InvalidData => parser.feed_oversized(0),
            // Not a regular file, gone since the listing, unreadable: counted, never fatal.
            Err(_) => parser.feed(b"{", &mut out),
        }
    }
    if let Some(leaf) = state.as_ref().and_then(|s| str_of(s, "leaf_event_id")) {
        let off = off_branch(&events, leaf);
        if let LineState::OpenHands(st) = parser.line_state_mut() {
            st.off_branch = off;
        }
    }
    if let Some(state) = &state {
        parser.count_line();
        parser.feed_record(state, &mut out);
    }
    for ev in &events {
        parser.count_line();
        parser.feed_record(ev, &mut out);
    }
    for ev in out {
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

/// The OpenHands CLI reader.
pub struct Reader;

impl AgentReader for Reader {
    fn agent(&self) -> Agent {
        Agent::OpenHands
    }

    fn name(&self) -> &'static str {
        "openhands"
    }

    fn label(&self) -> &'static str {
        "OpenHands CLI"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Rewritten
    }

    /// `$OPENHANDS_CONVERSATIONS_DIR`, else `$OPENHANDS_PERSISTENCE_DIR/conversations`, else
    /// `~/.openhands/conversations`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir("OPENHANDS_CONVERSATIONS_DIR")
            .or_else(|| {
                env.dir_or_home("OPENHANDS_PERSISTENCE_DIR", ".openhands")
                    .map(|d| d.join("conversations"))
            })
            .into_iter()
            .collect()
    }

    /// A conversation's `base_state.json`, by its name and its folder's (a torn one too).
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        is_base_state(path).then_some(Recognised {
            layout: Layout::Main,
            rank: Rank::Name,
        })
    }

    /// An event file is read with its conversation's state, never on its own.
    fn is_aside(&self, path: &Path) -> bool {
        base_state_of_event(path).is_some()
    }

    fn read(
        &self,
        file: &TranscriptFile,
        _from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        read_conversation(file, limits, sink)
    }

    /// `base_state.id`, else the folder's name as a uuid (never the file's stem).
    fn file_session_id(&self, file: &TranscriptFile, meta: &SessionMeta) -> Option<String> {
        meta.session_id.clone().or_else(|| {
            file.path
                .parent()?
                .file_name()?
                .to_str()
                .and_then(conversation_id)
        })
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("openhands --resume {quoted_session_id}"))
    }

    /// The events folder's mtime (a new or removed event moves it) and the last event file's (a
    /// writer may still be filling it): one listing and two `stat`s, no read.
    fn parts_modified(&self, path: &Path) -> Option<std::time::SystemTime> {
        if !is_base_state(path) {
            return None;
        }
        let events = path.parent()?.join(EVENTS_DIR);
        let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let last = event_files(&events).pop().and_then(|(_, p)| mtime(&p));
        mtime(&events).max(last)
    }

    /// The state file, or an event file: its conversation's state file.
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        if is_base_state(changed) {
            return Some(changed.to_path_buf());
        }
        base_state_of_event(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::episodes::agent::read_whole;
    use serde_json::json;

    const HEX: &str = "0a1b2c3d4e5f40718293a4b5c6d7e8f9";
    const ID: &str = "0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9";

    fn conversation(root: &Path, state: &Value, events: &[Value]) -> TranscriptFile {
        let dir = root.join("conversations").join(HEX);
        std::fs::create_dir_all(dir.join(EVENTS_DIR)).expect("mkdir");
        for (i, ev) in events.iter().enumerate() {
            let id = str_of(ev, "id").unwrap_or("ffffffff");
            let name = format!("event-{i:05}-{id}.json");
            std::fs::write(
                dir.join(EVENTS_DIR).join(name),
                serde_json::to_vec(ev).expect("json"),
            )
            .expect("write");
        }
        let path = dir.join(BASE_STATE);
        std::fs::write(&path, serde_json::to_vec(state).expect("json")).expect("write");
        let file = super::super::agents::recognise(&path).expect("recognised");
        assert_eq!(file.kind, Agent::OpenHands);
        file
    }

    fn state() -> Value {
        json!({"id": ID, "agent": {"kind": "Agent", "llm": {"model": "anthropic/claude-sonnet-4-5"}},
            "workspace": {"kind": "LocalWorkspace", "working_dir": "/home/dev/shop"},
            "execution_status": "finished", "max_iterations": 500})
    }

    fn ev(id: &str, ts: &str, kind: &str, source: &str, body: Value) -> Value {
        let mut v = json!({"id": id, "timestamp": ts, "source": source, "kind": kind});
        if let (Some(m), Value::Object(b)) = (v.as_object_mut(), body) {
            m.extend(b);
        }
        v
    }

    fn text(t: &str) -> Value {
        json!([{"type": "text", "text": t}])
    }

    #[test]
    fn events_map_to_turns_calls_results_and_facts() {
        let dir = tempfile::tempdir().expect("tmp");
        let events = [
            ev(
                "00000000-0000-4000-8000-000000000000",
                "2026-03-01T10:00:00.000001",
                "SystemPromptEvent",
                "agent",
                json!({"system_prompt": {"type": "text", "text": "You are"}}),
            ),
            ev(
                "00000000-0000-4000-8000-000000000001",
                "2026-03-01T10:00:01.5",
                "MessageEvent",
                "user",
                json!({"llm_message": {"role": "user", "content": text("fix the cart total")}, "activated_skills": ["python-tests"]}),
            ),
            ev(
                "00000000-0000-4000-8000-000000000002",
                "2026-03-01T10:00:05",
                "ActionEvent",
                "agent",
                json!({"thought": text("Running the tests."), "reasoning_content": "tests first",
                    "action": {"kind": "TerminalAction", "command": "cd /home/dev/shop && pytest -q", "is_input": false},
                    "tool_name": "terminal", "tool_call_id": "toolu_1",
                    "tool_call": {"id": "toolu_1", "name": "terminal", "arguments": "{}", "origin": "completion"},
                    "llm_response_id": "r1"}),
            ),
            ev(
                "00000000-0000-4000-8000-000000000003",
                "2026-03-01T10:00:09.250",
                "ObservationEvent",
                "environment",
                json!({"observation": {"kind": "TerminalObservation", "content": text("1 failed"), "is_error": false, "exit_code": 1},
                    "tool_name": "terminal", "tool_call_id": "toolu_1", "action_id": "00000000-0000-4000-8000-000000000002"}),
            ),
            ev(
                "00000000-0000-4000-8000-000000000004",
                "2026-03-01T10:00:12",
                "ActionEvent",
                "agent",
                json!({"thought": [], "action": {"kind": "FileEditorAction", "command": "str_replace", "path": "/home/dev/shop/cart.py", "old_str": "a", "new_str": "b"},
                    "tool_name": "file_editor", "tool_call_id": "toolu_2"}),
            ),
            ev(
                "00000000-0000-4000-8000-000000000005",
                "2026-03-01T10:00:13",
                "AgentErrorEvent",
                "agent",
                json!({"error": "file changed on disk", "tool_name": "file_editor", "tool_call_id": "toolu_2"}),
            ),
            ev(
                "00000000-0000-4000-8000-000000000006",
                "2026-03-01T10:00:20",
                "ActionEvent",
                "agent",
                json!({"action": {"kind": "TaskAction", "prompt": "review", "description": "Review the fix", "subagent_type": "reviewer"},
                    "tool_name": "task", "tool_call_id": "toolu_3"}),
            ),
            ev(
                "00000000-0000-4000-8000-000000000007",
                "2026-03-01T10:01:00",
                "MessageEvent",
                "agent",
                json!({"llm_message": {"role": "assistant", "content": text("Fixed.")}}),
            ),
            ev(
                "00000000-0000-4000-8000-000000000008",
                "2026-03-01T10:01:01",
                "MysteryEvent",
                "agent",
                json!({}),
            ),
            json!({"id": "00000000-0000-4000-8000-000000000009", "timestamp": "2026-03-01T10:01:02", "source": "user"}),
        ];
        let file = conversation(dir.path(), &state(), &events);
        let (sink, end) = read_whole(&file).expect("read");
        let s = &sink.sessions[0];
        let types: Vec<&str> = s.events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types,
            [
                "user/message",
                "assistant/thinking",
                "assistant/message",
                "assistant/tool_use",
                "tool/result",
                "assistant/tool_use",
                "tool/result",
                "assistant/tool_use",
                "assistant/message",
            ]
        );
        assert_eq!(
            s.events[0].time.as_deref(),
            Some("2026-03-01T10:00:01.500Z")
        );
        assert_eq!(
            s.events[0].facts,
            vec![Fact::SkillUse {
                name: "python-tests".into(),
                via: "activated".into()
            }]
        );
        assert_eq!(
            s.events[3].facts,
            vec![Fact::Command {
                program: "pytest".into()
            }]
        );
        assert!(
            s.events[3].text.contains("pytest -q") && !s.events[3].text.contains("TerminalAction")
        );
        assert!(s.events[4].is_error, "exit code 1");
        assert_eq!(s.events[4].tool_name.as_deref(), Some("terminal"));
        assert_eq!(
            s.events[5].facts,
            vec![Fact::FileEdit {
                path: "/home/dev/shop/cart.py".into()
            }]
        );
        assert!(s.events[6].is_error && s.events[6].text == "file changed on disk");
        assert!(matches!(&s.events[7].facts[0],
            Fact::Spawn { subagent_type: Some(t), description: Some(d), .. } if t == "reviewer" && d == "Review the fix"));
        let m = &s.meta;
        assert_eq!(m.session_id.as_deref(), Some(ID));
        assert_eq!(m.cwd.as_deref(), Some("/home/dev/shop"));
        assert_eq!(m.model.as_deref(), Some("anthropic/claude-sonnet-4-5"));
        assert_eq!(m.created_at.as_deref(), Some("2026-03-01T10:00:00.000Z"));
        assert_eq!(m.last_event_at.as_deref(), Some("2026-03-01T10:01:01.000Z"));
        assert_eq!(
            (end.total.skipped_unknown, end.total.skipped_broken),
            (1, 1),
            "an unknown kind and an event without one"
        );
    }

    #[test]
    fn torn_fifo_and_oversized_events_are_counted_and_skipped() {
        let dir = tempfile::tempdir().expect("tmp");
        let events = [ev(
            "00000000-0000-4000-8000-00000000000a",
            "2026-03-01T10:00:00",
            "MessageEvent",
            "user",
            json!({"llm_message": {"role": "user", "content": text("hello")}}),
        )];
        let file = conversation(dir.path(), &state(), &events);
        let evdir = file.path.parent().expect("dir").join(EVENTS_DIR);
        std::fs::write(
            evdir.join("event-00001-00000000-0000-4000-8000-00000000000b.json"),
            b"{\"id\": \"0",
        )
        .expect("torn");
        std::fs::write(
            evdir.join("event-00002-00000000-0000-4000-8000-00000000000c.json"),
            vec![b' '; 2 * 1024 * 1024],
        )
        .expect("big");
        #[cfg(unix)]
        {
            let fifo = evdir.join("event-00003-00000000-0000-4000-8000-00000000000d.json");
            let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("c");
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        std::fs::write(evdir.join(".eventlog.lock"), b"").expect("lock");
        let mut sink = crate::sources::episodes::agent::CollectSink::default();
        let end = Reader
            .read(
                &file,
                None,
                ReadLimits {
                    max_line_bytes: 1024 * 1024,
                },
                &mut sink,
            )
            .expect("read");
        assert_eq!(sink.sessions[0].events.len(), 1);
        let broken = if cfg!(unix) { 2 } else { 1 };
        assert_eq!(
            (end.total.skipped_broken, end.total.skipped_oversized),
            (broken, 1),
            "{:?}",
            end.total
        );
    }

    #[test]
    fn a_torn_state_keeps_the_events_and_the_folders_id() {
        let dir = tempfile::tempdir().expect("tmp");
        let events = [ev(
            "00000000-0000-4000-8000-00000000000a",
            "2026-03-01T10:00:00",
            "MessageEvent",
            "user",
            json!({"llm_message": {"role": "user", "content": text("hello")}}),
        )];
        let file = conversation(dir.path(), &state(), &events);
        std::fs::write(&file.path, b"{\"id\": \"0a1b").expect("torn");
        let (sink, end) = read_whole(&file).expect("read");
        assert_eq!(sink.sessions[0].events.len(), 1);
        assert_eq!(end.total.skipped_broken, 1);
        assert_eq!(
            Reader
                .file_session_id(&file, &sink.sessions[0].meta)
                .as_deref(),
            Some(ID)
        );
    }

    #[test]
    fn events_off_the_active_branch_are_marked() {
        let dir = tempfile::tempdir().expect("tmp");
        let msg = |id: &str, parent: Option<&str>, t: &str| {
            let mut v = ev(
                id,
                "2026-03-01T10:00:00",
                "MessageEvent",
                "user",
                json!({"llm_message": {"role": "user", "content": text(t)}}),
            );
            if let Some(p) = parent {
                v["parent_id"] = p.into();
            }
            v
        };
        let events = [
            msg("aaaaaaaa-0000-4000-8000-000000000001", None, "first"),
            msg(
                "aaaaaaaa-0000-4000-8000-000000000002",
                Some("aaaaaaaa-0000-4000-8000-000000000001"),
                "abandoned",
            ),
            msg(
                "aaaaaaaa-0000-4000-8000-000000000003",
                Some("aaaaaaaa-0000-4000-8000-000000000001"),
                "kept",
            ),
        ];
        let mut st = state();
        st["leaf_event_id"] = "aaaaaaaa-0000-4000-8000-000000000003".into();
        let file = conversation(dir.path(), &st, &events);
        let (sink, _) = read_whole(&file).expect("read");
        let marked: Vec<(&str, bool)> = sink.sessions[0]
            .events
            .iter()
            .map(|e| {
                let off = e.facts.iter().any(|f| matches!(f, Fact::Abandoned { .. }));
                (e.text.as_str(), off)
            })
            .collect();
        assert_eq!(
            marked,
            [("first", false), ("abandoned", true), ("kept", false)]
        );
    }

    #[test]
    fn names_roots_times_and_changes() {
        assert_eq!(conversation_id(HEX).as_deref(), Some(ID));
        assert_eq!(conversation_id(ID).as_deref(), Some(ID));
        assert_eq!(conversation_id("not-a-conversation"), None);
        assert_eq!(event_index("event-00012-0a1b2c3d-aaaa.json"), Some(12));
        assert_eq!(event_index("event-123456-0a1b2c3d.json"), Some(123456));
        assert_eq!(event_index("event-12-0a1b2c3d.json"), None);
        assert_eq!(event_index(".eventlog.lock"), None);
        assert_eq!(
            utc_time(Some(&json!("2026-03-01T10:00:00.123456"))).as_deref(),
            Some("2026-03-01T10:00:00.123Z")
        );
        assert_eq!(
            utc_time(Some(&json!("2026-03-01T12:00:00+02:00"))).as_deref(),
            Some("2026-03-01T10:00:00.000Z")
        );
        assert_eq!(utc_time(Some(&json!("yesterday"))), None);
        let env = Env::of(&[("HOME", Path::new("/home/me"))]);
        assert_eq!(
            Reader.roots(&env),
            vec![PathBuf::from("/home/me/.openhands/conversations")]
        );
        let env = Env::of(&[
            ("HOME", Path::new("/home/me")),
            ("OPENHANDS_PERSISTENCE_DIR", Path::new("/p")),
        ]);
        assert_eq!(Reader.roots(&env), vec![PathBuf::from("/p/conversations")]);
        let env = Env::of(&[
            ("OPENHANDS_PERSISTENCE_DIR", Path::new("/p")),
            ("OPENHANDS_CONVERSATIONS_DIR", Path::new("/c")),
        ]);
        assert_eq!(Reader.roots(&env), vec![PathBuf::from("/c")]);
        let conv = PathBuf::from("/c").join(HEX);
        let event = conv.join("events/event-00003-0a1b2c3d-0000.json");
        assert_eq!(Reader.store_of_change(&event), Some(conv.join(BASE_STATE)));
        assert!(Reader.is_aside(&event));
        assert_eq!(
            Reader.store_of_change(&conv.join(BASE_STATE)),
            Some(conv.join(BASE_STATE))
        );
        assert_eq!(
            Reader.store_of_change(&conv.join("events/.eventlog.lock")),
            None
        );
        assert_eq!(
            Reader.store_of_change(Path::new("/c/notes/base_state.json")),
            None
        );
    }
}
