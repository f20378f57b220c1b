//! Cursor agent transcripts (`~/.cursor/projects/<slug>/agent-transcripts/<id>.jsonl`): one
//! record → zero or more [`ParsedEvent`]s, driven by the shared line parser.
//!
//! A line is `{role: user|assistant, message:{content:[blocks]}}` with no ids and no times; the
//! first prompt is wrapped in `<user_query>`, assistant text is often the literal `[REDACTED]`,
//! tool calls (`tool_use`, older `tool_call`) rarely have results, and a `{type:"turn_ended"}`
//! line closes a turn. Unknown block types with visible text are kept as the speaker's text.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::sources::episodes::model::{EventType, Fact, ParsedEvent};
use crate::sources::episodes::parser::{
    cap_chars, command_program, content_text, render_tool_input, str_of, Ctx, Handled,
};

/// What Cursor writes instead of assistant text it does not keep.
const REDACTED: &str = "[REDACTED]";

/// Per-file state: whether the first prompt (the task, for a subagent) was seen.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CursorState {
    seen_prompt: bool,
}

/// Whether a record is a Cursor transcript line (role + message, none of the envelopes of the
/// agents that also write `role`).
pub(crate) fn is_cursor_record(v: &Value) -> bool {
    v.get("role").and_then(Value::as_str).is_some()
        && v.get("message").is_some_and(Value::is_object)
        && v.get("type").is_none()
        && v.get("sessionId").is_none()
        && v.get("uuid").is_none()
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for CursorState {
    const FORMAT: &'static str = "cursor";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut CursorState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    if str_of(rec, "type") == Some("turn_ended") {
        match str_of(rec, "status") {
            Some("error") | Some("failed") => cx.outcome.task_complete(true),
            Some("aborted") | Some("cancelled") => cx.outcome.aborted(),
            Some("success") => cx.outcome.task_complete(false),
            _ => {}
        }
        return Handled::Known;
    }
    let Some(role) = str_of(rec, "role") else {
        return Handled::Unknown;
    };
    if let Some(m) = str_of(rec, "model") {
        cx.meta.model = Some(m.to_string());
    }
    let Some(content) = rec.pointer("/message/content") else {
        return Handled::Broken;
    };
    let blocks: Vec<&Value> = match content {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    match role {
        "user" => {
            for b in blocks {
                user_block(cx, st, b, out);
            }
            Handled::Known
        }
        "assistant" => {
            for b in blocks {
                assistant_block(cx, b, out);
            }
            Handled::Known
        }
        _ => Handled::Unknown,
    }
}

fn user_block(cx: &mut Ctx, st: &mut CursorState, b: &Value, out: &mut Vec<ParsedEvent>) {
    let ty = str_of(b, "type").unwrap_or("text");
    if matches!(ty, "tool_result" | "tool-result") {
        let failed = b.get("is_error").and_then(Value::as_bool) == Some(true)
            || str_of(b, "status") == Some("error");
        let mut ev = ParsedEvent::new(
            EventType::ToolResult,
            None,
            content_text(b.get("content").unwrap_or(&Value::Null)),
        );
        ev.tool_name = str_of(b, "name").map(str::to_string);
        ev.tool_use_id = str_of(b, "tool_use_id").map(str::to_string);
        ev.is_error = failed;
        cx.emit(out, ev);
        return;
    }
    let raw = content_text(b);
    let text = unwrap_query(&raw);
    if !st.seen_prompt && !text.trim().is_empty() {
        st.seen_prompt = true;
        // The task, for a subagent's transcript (the reader keeps it only there).
        cx.meta.agent_description = Some(cap_chars(text.trim(), 300));
    }
    cx.emit(out, ParsedEvent::new(EventType::UserMessage, None, text));
}

fn assistant_block(cx: &mut Ctx, b: &Value, out: &mut Vec<ParsedEvent>) {
    match str_of(b, "type").unwrap_or("text") {
        "thinking" | "reasoning" => {
            let text = str_of(b, "thinking")
                .or_else(|| str_of(b, "text"))
                .unwrap_or("");
            cx.emit(
                out,
                ParsedEvent::new(EventType::AssistantThinking, None, text.to_string()),
            );
        }
        "tool_use" | "tool_call" => {
            let name = str_of(b, "name").unwrap_or("tool").to_string();
            let input = b.get("input").cloned().unwrap_or(Value::Null);
            let mut ev = ParsedEvent::new(
                EventType::AssistantToolUse,
                None,
                render_tool_input(&name, &input),
            );
            ev.facts = tool_facts(&name, &input);
            ev.tool_use_id = str_of(b, "id").map(str::to_string);
            ev.tool_name = Some(name);
            cx.emit(out, ev);
        }
        _ => {
            let text = content_text(b);
            if text.trim() == REDACTED {
                cx.stats.ignored += 1;
                return;
            }
            cx.emit(
                out,
                ParsedEvent::new(EventType::AssistantMessage, None, text),
            );
        }
    }
}

/// Facts of a Cursor tool call (the transcript and the IDE share tool names).
pub(crate) fn tool_facts(name: &str, input: &Value) -> Vec<Fact> {
    let s = |k: &str| str_of(input, k).map(str::to_string);
    let lower = name.to_ascii_lowercase();
    let mut facts = Vec::new();
    match lower.as_str() {
        "edit_file" | "search_replace" | "write" | "edit" | "multiedit" | "strreplace"
        | "apply_patch" => {
            if let Some(path) = s("target_file")
                .or_else(|| s("file_path"))
                .or_else(|| s("path"))
            {
                facts.push(Fact::FileEdit { path });
            }
        }
        "run_terminal_cmd" | "bash" | "shell" | "run_terminal_command" => {
            if let Some(program) = s("command").as_deref().and_then(command_program) {
                facts.push(Fact::Command { program });
            }
        }
        "task" | "agent" => facts.push(Fact::Spawn {
            tool_use_id: None,
            subagent_type: s("subagent_type"),
            name: None,
            description: s("description").or_else(|| s("prompt").map(|p| cap_chars(&p, 300))),
            team_name: None,
        }),
        _ => {}
    }
    facts
}

/// The text inside `<user_query>…</user_query>`, else the text as written.
fn unwrap_query(text: &str) -> String {
    let t = text.trim();
    match t
        .strip_prefix("<user_query>")
        .and_then(|r| r.strip_suffix("</user_query>"))
    {
        Some(inner) => inner.trim().to_string(),
        None => text.to_string(),
    }
}
