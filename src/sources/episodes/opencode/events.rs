//! One OpenCode message and its parts → [`ParsedEvent`]s.
//!
//! The database rows, the legacy `storage/` JSON tree and `opencode export` all hold the same
//! `MessageV2` shapes (the database only drops `id`/`sessionID`/`messageID` from `data`), so this
//! one mapping serves every era. A message is `role:user|assistant`; what it said is in its parts:
//! `text` (flagged `synthetic` when OpenCode injected it), `reasoning`, `tool` (call and result in
//! one part, `state.status` pending → running → completed | error), and bookkeeping parts
//! (`step-start`, `step-finish`, `snapshot`, `patch`, …) that carry nothing searchable.

use serde_json::{Map, Value};

use crate::sources::agent_knowledge::ms_to_rfc3339;
use crate::sources::episodes::model::{EventType, Fact, ParsedEvent};
use crate::sources::episodes::parser::{command_program, render_tool_input, str_of, Ctx};

/// OpenCode's own spelling of tool input keys → the spelling the shared renderer shows.
const INPUT_ALIASES: &[(&str, &str)] = &[
    ("filePath", "file_path"),
    ("oldString", "old_string"),
    ("newString", "new_string"),
];

/// Epoch milliseconds (a number, as OpenCode writes every time) → RFC 3339.
pub(crate) fn ms_time(v: Option<&Value>) -> Option<String> {
    ms_to_rfc3339(v?.as_i64()?)
}

/// A child session's task from its title: OpenCode titles a child "<description> (@<agent>
/// subagent)".
pub(crate) fn child_description(title: &str) -> String {
    match title.rfind(" (@") {
        Some(at) if title.ends_with(" subagent)") => title[..at].to_string(),
        _ => title.to_string(),
    }
}

/// What a message's parts are read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Speaker {
    /// A root session: `role:user` text is what a person typed.
    Person,
    /// A child session: its `role:user` text is the task its parent agent wrote.
    ParentAgent,
}

/// Pushes the events of one message (its `data`/`info` and its parts, in order).
pub(crate) fn message_events(
    cx: &mut Ctx,
    info: &Value,
    parts: &[Value],
    speaker: Speaker,
    out: &mut Vec<ParsedEvent>,
) {
    let time = ms_time(info.pointer("/time/created"));
    cx.touch_time(time.as_deref());
    if let Some(done) = ms_time(info.pointer("/time/completed")) {
        cx.touch_time(Some(&done));
    }
    // A message row that cannot be read (or names no role) still has its parts, rows of their
    // own: parts only the assistant writes (a tool call, reasoning, a step) say whose it was.
    let role = match str_of(info, "role") {
        Some(r) => r,
        None if parts.iter().any(|p| {
            matches!(
                str_of(p, "type"),
                Some("tool" | "reasoning" | "step-start" | "step-finish" | "patch" | "snapshot")
            )
        }) =>
        {
            "assistant"
        }
        None => "",
    };
    if role == "assistant" {
        if let Some(m) = str_of(info, "modelID") {
            cx.meta.model = Some(m.to_string());
        }
        if cx.meta.agent_preset.is_none() {
            cx.meta.agent_preset = str_of(info, "agent")
                .or_else(|| str_of(info, "mode"))
                .map(str::to_string);
        }
        if cx.meta.cwd.is_none() {
            cx.meta.cwd = info
                .pointer("/path/cwd")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
    } else if role != "user" {
        cx.stats.skipped_unknown += 1;
        return;
    }
    // A compaction's summary is an assistant message flagged `summary:true`.
    let summary = info.get("summary").and_then(Value::as_bool) == Some(true);
    for part in parts {
        let part_time = ms_time(part.pointer("/time/start")).or_else(|| time.clone());
        part_events(cx, role, summary, speaker, part, part_time, out);
    }
    if let Some(err) = info.get("error").filter(|e| e.is_object()) {
        let name = str_of(err, "name").unwrap_or("error");
        if name == "MessageAbortedError" {
            cx.outcome.aborted();
        }
        let detail = err
            .pointer("/data/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        let text = format!("{name}: {detail}");
        cx.emit(out, ParsedEvent::new(EventType::SystemError, time, text));
    }
}

fn part_events(
    cx: &mut Ctx,
    role: &str,
    summary: bool,
    speaker: Speaker,
    part: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let text = || str_of(part, "text").unwrap_or("").to_string();
    match str_of(part, "type").unwrap_or("") {
        "text" => {
            let injected = part.get("synthetic").and_then(Value::as_bool) == Some(true)
                || part.get("ignored").and_then(Value::as_bool) == Some(true);
            let ty = match (role, injected, speaker) {
                (_, _, _) if summary => EventType::SystemSummary,
                ("user", true, _) => EventType::SystemContext,
                ("user", false, Speaker::Person) => EventType::UserMessage,
                ("user", false, Speaker::ParentAgent) => EventType::AgentPrompt,
                _ => EventType::AssistantMessage,
            };
            cx.emit(out, ParsedEvent::new(ty, time, text()));
        }
        "reasoning" => cx.emit(
            out,
            ParsedEvent::new(EventType::AssistantThinking, time, text()),
        ),
        "tool" => tool_events(cx, part, time, out),
        // A subagent the person asked for with a command: the task it was given.
        "subtask" => {
            let body = [str_of(part, "description"), str_of(part, "prompt")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n");
            cx.emit(out, ParsedEvent::new(EventType::AgentPrompt, time, body));
        }
        "step-start" | "step-finish" | "snapshot" | "patch" | "agent" | "retry" | "file"
        | "compaction" => cx.stats.ignored += 1,
        _ => cx.stats.skipped_unknown += 1,
    }
}

/// A tool part: the call, and its result once it finished.
fn tool_events(cx: &mut Ctx, part: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    let name = str_of(part, "tool").unwrap_or("tool").to_string();
    let call_id = str_of(part, "callID").map(str::to_string);
    let state = part.get("state").cloned().unwrap_or(Value::Null);
    let input = aliased_input(state.get("input").unwrap_or(&Value::Null));
    let mut call = ParsedEvent::new(
        EventType::AssistantToolUse,
        time.clone(),
        render_tool_input(&name, &input),
    );
    call.tool_name = Some(name.clone());
    call.tool_use_id = call_id.clone();
    call.facts = call_facts(&name, call_id.as_deref(), &input, &state);
    cx.emit(out, call);

    let status = str_of(&state, "status").unwrap_or("");
    let (body, failed) = match status {
        // Legacy trees wrote `success`.
        "completed" | "success" => (
            state.get("output").map(value_text).unwrap_or_default(),
            state
                .pointer("/metadata/exit")
                .and_then(Value::as_i64)
                .is_some_and(|code| code != 0),
        ),
        "error" => (state.get("error").map(value_text).unwrap_or_default(), true),
        // Still running (or never finished): no result yet.
        _ => return,
    };
    let end = ms_time(state.pointer("/time/end")).or(time);
    let mut result = ParsedEvent::new(EventType::ToolResult, end, body);
    result.tool_name = Some(name);
    result.tool_use_id = call_id;
    result.is_error = failed;
    cx.emit(out, result);
}

/// Facts of a tool call: files edited, the program run, a skill loaded, a subagent spawned.
fn call_facts(name: &str, call_id: Option<&str>, input: &Value, state: &Value) -> Vec<Fact> {
    let s = |k: &str| str_of(input, k).map(str::to_string);
    let mut facts = Vec::new();
    match name {
        "edit" | "write" | "multiedit" | "patch" => {
            if let Some(path) = s("file_path") {
                facts.push(Fact::FileEdit { path });
            }
        }
        "bash" => {
            if let Some(program) = s("command").as_deref().and_then(command_program) {
                facts.push(Fact::Command { program });
            }
        }
        "skill" => {
            if let Some(name) = s("name") {
                facts.push(Fact::SkillUse {
                    name,
                    via: "skill tool".into(),
                });
            }
        }
        "task" => {
            facts.push(Fact::Spawn {
                tool_use_id: call_id.map(str::to_string),
                subagent_type: s("subagent_type"),
                name: None,
                description: s("description"),
                team_name: None,
            });
            if let Some(child) = spawned_session(state) {
                facts.push(Fact::AgentLink {
                    tool_use_id: call_id.map(str::to_string),
                    agent_id: child,
                });
            }
        }
        _ => {}
    }
    facts
}

/// The child session a `task` call started: `state.metadata.sessionId`, else the `task_id: ses_…`
/// line its output opens with.
pub(crate) fn spawned_session(state: &Value) -> Option<String> {
    if let Some(id) = state.pointer("/metadata/sessionId").and_then(Value::as_str) {
        return Some(id.to_string());
    }
    let out = str_of(state, "output")?;
    let rest = out.strip_prefix("task_id: ")?;
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    id.starts_with("ses_").then_some(id)
}

/// Tool input with OpenCode's camelCase keys renamed to what the shared renderer knows.
fn aliased_input(input: &Value) -> Value {
    let Some(map) = input.as_object() else {
        return input.clone();
    };
    let mut out = Map::new();
    for (k, v) in map {
        let key = INPUT_ALIASES
            .iter()
            .find(|(from, _)| from == k)
            .map_or(k.as_str(), |(_, to)| to);
        out.insert(key.to_string(), v.clone());
    }
    Value::Object(out)
}

/// A tool output or error as text (a string, or JSON of anything else).
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
