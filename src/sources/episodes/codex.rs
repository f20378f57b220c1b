//! Codex rollout rules: one JSON record → zero or more [`ParsedEvent`]s.
//!
//! Codex writes each visible message twice (a `response_item` and an `event_msg`, and from 0.147
//! an `item_completed` too), injects `<environment_context>`, IDE context, AGENTS.md and developer
//! text as user/developer messages, and has two file shapes: the `{timestamp,type,payload}`
//! envelope and the legacy rollout (a bare `{id,timestamp,instructions}` first line, then
//! `record_type:state` lines and bare response items). This module pairs the duplicates so each
//! message is indexed once, keeps injected context out of `user/message`, and reads both shapes.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{EventType, Fact, ParsedEvent};
use super::parser::{
    cap_chars, command_program, content_text, norm_time, patch_files, render_tool_input, str_of,
    text_hash, Ctx, Handled, PairDedupe,
};

/// Dedupe sources of one visible text.
const SRC_RESPONSE: u8 = 1;
const SRC_EVENT: u8 = 2;
const SRC_ITEM: u8 = 4;
const MAX_FAILED_CALLS: usize = 32;
/// The IDE extension wraps the typed request after this heading.
const IDE_REQUEST: &str = "## My request for Codex:";

/// Codex-specific state kept between lines (small, serialisable).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CodexState {
    /// The first `session_meta` (or legacy first line) owns identity; later ones are forks.
    seen_meta: bool,
    /// This rollout is a spawned subagent thread: its "user" text was written by the parent.
    subagent: bool,
    dedupe: PairDedupe,
    /// Call ids whose `exec_command_end` / `patch_apply_end` / MCP end reported failure.
    failed_calls: VecDeque<String>,
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for CodexState {
    const FORMAT: &'static str = "codex";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut CodexState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let time = norm_time(rec.get("timestamp").or_else(|| rec.get("created_at")));
    cx.touch_time(time.as_deref());
    let ty = str_of(rec, "type").unwrap_or("");
    if let Some(payload) = rec.get("payload").filter(|p| p.is_object()) {
        return match ty {
            "session_meta" => {
                session_meta(cx, st, payload, time, out);
                Handled::Known
            }
            "response_item" => response_item(cx, st, payload, time, out),
            "event_msg" => event_msg::event_msg(cx, st, payload, time, out),
            "turn_context" => {
                if let Some(m) = str_of(payload, "model") {
                    cx.meta.model = Some(m.to_string());
                }
                if cx.meta.cwd.is_none() {
                    cx.meta.cwd = str_of(payload, "cwd").map(str::to_string);
                }
                Handled::Known
            }
            "compacted" => {
                let text = str_of(payload, "message").unwrap_or("").to_string();
                cx.emit(out, ParsedEvent::new(EventType::SystemSummary, time, text));
                Handled::Known
            }
            "world_state" | "inter_agent_communication" | "inter_agent_communication_metadata" => {
                Handled::Known
            }
            _ => Handled::Unknown,
        };
    }
    if str_of(rec, "record_type").is_some() {
        return Handled::Known;
    }
    // Legacy first line: `{id, timestamp, instructions}`.
    if ty.is_empty() && rec.get("id").is_some() && rec.get("timestamp").is_some() {
        session_meta(cx, st, rec, time, out);
        return Handled::Known;
    }
    // Legacy body lines are bare response items.
    if !ty.is_empty() && ty != "session_meta" && ty != "event_msg" {
        return response_item(cx, st, rec, time, out);
    }
    Handled::Unknown
}

fn session_meta(
    cx: &mut Ctx,
    st: &mut CodexState,
    p: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    if st.seen_meta {
        return;
    }
    st.seen_meta = true;
    let s = |k: &str| str_of(p, k).map(str::to_string);
    let meta = &mut cx.meta;
    meta.session_id = s("id").or_else(|| s("session_id"));
    if meta.cwd.is_none() {
        meta.cwd = s("cwd");
    }
    meta.agent_preset = s("originator");
    meta.version = s("cli_version");
    meta.git_branch = p
        .get("git")
        .and_then(|g| str_of(g, "branch"))
        .map(str::to_string);
    if let Some(sub) = p.get("source").and_then(|src| src.get("subagent")) {
        st.subagent = true;
        meta.agent_id = meta.session_id.clone();
        if let Some(spawn) = sub.get("thread_spawn") {
            let f = |k: &str| str_of(spawn, k).map(str::to_string);
            meta.parent_session_id = f("parent_thread_id");
            meta.agent_name = f("agent_nickname");
            meta.agent_description = f("agent_role");
        }
    }
    if meta.parent_session_id.is_none() && st.subagent {
        meta.parent_session_id = s("parent_thread_id");
    }
    // Old rollouts carry the user's instructions (AGENTS.md) here; `base_instructions` is
    // Codex's own system prompt and not indexed.
    if let Some(text) = s("instructions").filter(|t| !t.trim().is_empty()) {
        cx.emit(out, ParsedEvent::new(EventType::SystemContext, time, text));
    }
}

fn response_item(
    cx: &mut Ctx,
    st: &mut CodexState,
    p: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    match str_of(p, "type").unwrap_or("") {
        "message" => {
            let text = p.get("content").map(content_text).unwrap_or_default();
            match str_of(p, "role").unwrap_or("") {
                "user" => user_text(cx, st, &text, SRC_RESPONSE, time, out),
                "assistant" => assistant(cx, st, Said::Message, &text, SRC_RESPONSE, time, out),
                _ => cx.emit(out, ParsedEvent::new(EventType::SystemContext, time, text)),
            }
        }
        "reasoning" => {
            let mut text = p.get("summary").map(content_text).unwrap_or_default();
            if let Some(c) = p.get("content").map(content_text).filter(|c| !c.is_empty()) {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&c);
            }
            assistant(cx, st, Said::Thinking, &text, SRC_RESPONSE, time, out);
        }
        "function_call" | "tool_call" | "custom_tool_call" | "local_shell_call" => {
            tool_call(cx, p, time, out)
        }
        "function_call_output" | "custom_tool_call_output" | "tool_result" | "function_result" => {
            tool_output(cx, st, p, time, out)
        }
        "web_search_call" => {
            let action = p.get("action");
            let query = action
                .and_then(|a| str_of(a, "query").or_else(|| str_of(a, "url")))
                .unwrap_or("");
            let mut ev = ParsedEvent::new(
                EventType::AssistantToolUse,
                time,
                format!("web_search {query}"),
            );
            ev.tool_name = Some("web_search".into());
            cx.emit(out, ev);
        }
        "agent_message" => {
            let text = p.get("content").map(content_text).unwrap_or_default();
            let mut ev = ParsedEvent::new(EventType::TeamMessage, time, text);
            if let Some(author) = str_of(p, "author") {
                ev.facts.push(Fact::TeammateMessage {
                    teammate_id: author.to_string(),
                });
            }
            cx.emit(out, ev);
        }
        "ghost_snapshot"
        | "tool_search_call"
        | "tool_search_output"
        | "image_generation_call"
        | "compaction"
        | "compaction_summary" => {}
        _ => return Handled::Unknown,
    }
    Handled::Known
}

fn note_failed(st: &mut CodexState, p: &Value) {
    if let Some(id) = str_of(p, "call_id") {
        if st.failed_calls.len() >= MAX_FAILED_CALLS {
            st.failed_calls.pop_front();
        }
        st.failed_calls.push_back(id.to_string());
    }
}

/// A user-role text: injected context goes to `system/context`; the IDE wrapper is split so only
/// the typed request is `user/message`. Duplicates from another source are dropped.
fn user_text(
    cx: &mut Ctx,
    st: &mut CodexState,
    text: &str,
    source: u8,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let t = text.trim();
    if t.is_empty() || st.dedupe.is_duplicate(text_hash("u", t), source) {
        return;
    }
    let is_context = [
        "<environment_context>",
        "<user_instructions>",
        "<INSTRUCTIONS>",
        "# AGENTS.md instructions",
        "<permissions instructions>",
    ]
    .iter()
    .any(|p| t.starts_with(p));
    if is_context {
        cx.emit(
            out,
            ParsedEvent::new(EventType::SystemContext, time, t.to_string()),
        );
        return;
    }
    if t.starts_with("<turn_aborted>") {
        cx.emit(
            out,
            ParsedEvent::new(EventType::SystemError, time, t.to_string()),
        );
        return;
    }
    let mut typed = t;
    if t.starts_with("# Context from my IDE setup:") {
        let (context, request) = match t.find(IDE_REQUEST) {
            Some(i) => (t.get(..i).unwrap_or(""), t.get(i + IDE_REQUEST.len()..)),
            None => (t, None),
        };
        let context = context.trim().to_string();
        cx.emit(
            out,
            ParsedEvent::new(EventType::SystemContext, time.clone(), context),
        );
        match request.map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => typed = r,
            None => return,
        }
    }
    let kind = if st.subagent {
        EventType::AgentPrompt
    } else if typed.starts_with("<user_shell_command>") {
        EventType::UserCommand
    } else {
        EventType::UserMessage
    };
    cx.emit(out, ParsedEvent::new(kind, time, typed.to_string()));
}

/// What an assistant text is: a message or its reasoning.
#[derive(Debug, Clone, Copy)]
enum Said {
    Message,
    Thinking,
}

/// An assistant text, once: duplicates from another source are dropped.
fn assistant(
    cx: &mut Ctx,
    st: &mut CodexState,
    said: Said,
    text: &str,
    source: u8,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let (tag, kind) = match said {
        Said::Message => ("a", EventType::AssistantMessage),
        Said::Thinking => ("t", EventType::AssistantThinking),
    };
    let t = text.trim();
    if t.is_empty() || st.dedupe.is_duplicate(text_hash(tag, t), source) {
        return;
    }
    cx.emit(out, ParsedEvent::new(kind, time, t.to_string()));
}

/// `function_call` (JSON-string arguments), `custom_tool_call` (raw input), `local_shell_call`.
fn tool_call(cx: &mut Ctx, p: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    let name = str_of(p, "name")
        .or_else(|| p.get("function").and_then(|f| str_of(f, "name")))
        .unwrap_or(if p.get("action").is_some() {
            "local_shell"
        } else {
            "tool"
        })
        .to_string();
    let call_id = str_of(p, "call_id")
        .or_else(|| str_of(p, "id"))
        .map(str::to_string);
    let args = match p.get("arguments").or_else(|| p.get("input")) {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| Value::String(s.clone())),
        Some(v) => v.clone(),
        None => p.get("action").cloned().unwrap_or(Value::Null),
    };
    let mut facts = Vec::new();
    let text = match shell_script(&args) {
        Some(script) => {
            if let Some(program) = command_program(&script) {
                facts.push(Fact::Command { program });
            }
            facts.extend(
                patch_files(&script)
                    .into_iter()
                    .map(|path| Fact::FileEdit { path }),
            );
            let mut text = format!("{name}\n{}", cap_chars(&script, 16 * 1024));
            if let Some(dir) = str_of(&args, "workdir") {
                text.push_str("\nworkdir: ");
                text.push_str(dir);
            }
            text
        }
        None => {
            if name == "apply_patch" {
                let patch = args
                    .as_str()
                    .or_else(|| str_of(&args, "input"))
                    .unwrap_or("");
                facts.extend(
                    patch_files(patch)
                        .into_iter()
                        .map(|path| Fact::FileEdit { path }),
                );
            }
            render_tool_input(&name, &args)
        }
    };
    if let Some(id) = &call_id {
        cx.remember_tool(id, &name);
    }
    let mut ev = ParsedEvent::new(EventType::AssistantToolUse, time, text);
    ev.facts = facts;
    ev.tool_name = Some(name);
    ev.tool_use_id = call_id;
    cx.emit(out, ev);
}

/// The script a shell call runs: `command` as a string, or an argv whose `bash -lc <script>`
/// form is unwrapped; other argv are joined with spaces.
fn shell_script(args: &Value) -> Option<String> {
    match args.get("command").or_else(|| args.get("cmd"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(argv) => {
            let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [sh, flag, script, ..]
                    if matches!(*sh, "bash" | "sh" | "zsh" | "/bin/bash" | "/bin/sh")
                        && flag.starts_with('-')
                        && flag.contains('c') =>
                {
                    Some((*script).to_string())
                }
                [] => None,
                all => Some(all.join(" ")),
            }
        }
        _ => None,
    }
}

fn tool_output(
    cx: &mut Ctx,
    st: &CodexState,
    p: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let call_id = str_of(p, "call_id")
        .or_else(|| str_of(p, "id"))
        .map(str::to_string);
    let raw = p
        .get("output")
        .or_else(|| p.get("result"))
        .unwrap_or(&Value::Null);
    let (mut text, exit) = output_text(raw);
    if let Some(code) = exit.filter(|c| *c != 0 && text.trim().is_empty()) {
        text = format!("exit code {code}");
    }
    let mut ev = ParsedEvent::new(EventType::ToolResult, time, text);
    let failed = call_id
        .as_deref()
        .is_some_and(|id| st.failed_calls.iter().any(|f| f == id));
    ev.is_error = exit.is_some_and(|c| c != 0)
        || failed
        || raw.get("success").and_then(Value::as_bool) == Some(false);
    ev.tool_name = call_id
        .as_deref()
        .and_then(|id| cx.tool_name(id))
        .or_else(|| str_of(p, "name").map(str::to_string));
    ev.tool_use_id = call_id;
    cx.emit(out, ev);
}

/// Text and exit code of a tool output: a JSON string `{output, metadata{exit_code}}` (0.40),
/// an `Exit code: N` text block (later CLIs), a content block or list, or a result object.
fn output_text(raw: &Value) -> (String, Option<i64>) {
    if let Value::String(s) = raw {
        if let Ok(v) = serde_json::from_str::<Value>(s) {
            if v.get("output").is_some() || v.get("metadata").is_some() {
                return output_text(&v);
            }
        }
        return (s.clone(), exit_code_prefix(s));
    }
    let exit = raw
        .get("metadata")
        .and_then(|m| m.get("exit_code"))
        .or_else(|| raw.get("exit_code"))
        .or_else(|| raw.get("exitCode"))
        .and_then(Value::as_i64);
    if let Some(o) = raw.get("output").and_then(Value::as_str) {
        return (o.to_string(), exit.or_else(|| exit_code_prefix(o)));
    }
    let streams: Vec<&str> = ["stdout", "stderr"]
        .iter()
        .filter_map(|k| str_of(raw, k))
        .filter(|s| !s.trim().is_empty())
        .collect();
    if !streams.is_empty() {
        return (streams.join("\n"), exit);
    }
    let text = content_text(raw);
    let exit = exit.or_else(|| exit_code_prefix(&text));
    (text, exit)
}

fn exit_code_prefix(s: &str) -> Option<i64> {
    let rest = s.trim_start().strip_prefix("Exit code: ")?;
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

mod event_msg;

mod reader;
pub use reader::Reader;

#[cfg(test)]
mod tests;
