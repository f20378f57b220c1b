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

use super::model::{Fact, ParsedEvent};
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
            "event_msg" => event_msg(cx, st, payload, time, out),
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
                cx.emit(out, ParsedEvent::new("system/summary", time, text));
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
        cx.emit(out, ParsedEvent::new("system/context", time, text));
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
                "assistant" => assistant_text(cx, st, &text, SRC_RESPONSE, time, out),
                _ => cx.emit(out, ParsedEvent::new("system/context", time, text)),
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
            thinking(cx, st, &text, SRC_RESPONSE, time, out);
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
            let mut ev =
                ParsedEvent::new("assistant/tool_use", time, format!("web_search {query}"));
            ev.tool_name = Some("web_search".into());
            cx.emit(out, ev);
        }
        "agent_message" => {
            let text = p.get("content").map(content_text).unwrap_or_default();
            let mut ev = ParsedEvent::new("team/message", time, text);
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

fn event_msg(
    cx: &mut Ctx,
    st: &mut CodexState,
    p: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let s = |k: &str| str_of(p, k).unwrap_or("").to_string();
    match str_of(p, "type").unwrap_or("") {
        "user_message" => user_text(cx, st, &s("message"), SRC_EVENT, time, out),
        "agent_message" => assistant_text(cx, st, &s("message"), SRC_EVENT, time, out),
        "agent_reasoning" | "agent_reasoning_raw_content" => {
            thinking(cx, st, &s("text"), SRC_EVENT, time, out)
        }
        "item_completed" => {
            let item = p.get("item").unwrap_or(&Value::Null);
            let text = item.get("content").map(content_text).unwrap_or_default();
            match str_of(item, "type").unwrap_or("") {
                "UserMessage" => user_text(cx, st, &text, SRC_ITEM, time, out),
                "AgentMessage" => assistant_text(cx, st, &text, SRC_ITEM, time, out),
                "Reasoning" => {
                    let text = ["summary_text", "raw_content"]
                        .iter()
                        .filter_map(|k| item.get(*k).map(content_text))
                        .filter(|t| !t.is_empty())
                        .collect::<Vec<_>>()
                        .join("\n");
                    thinking(cx, st, &text, SRC_ITEM, time, out);
                }
                _ => {}
            }
        }
        "turn_aborted" => {
            cx.outcome.aborted();
            let reason = str_of(p, "reason").unwrap_or("aborted");
            let text = format!("turn aborted: {reason}");
            cx.emit(out, ParsedEvent::new("system/error", time, text));
        }
        "task_complete" => {
            let failed = p.get("error").is_some_and(|e| !e.is_null());
            cx.outcome.task_complete(failed);
        }
        "error" | "stream_error" => {
            let text = format!("error: {}", s("message"));
            cx.emit(out, ParsedEvent::new("system/error", time, text));
        }
        "exec_command_end" => {
            let code = p.get("exit_code").and_then(Value::as_i64).unwrap_or(0);
            if code != 0 {
                note_failed(st, p);
            }
        }
        "patch_apply_end" => {
            if p.get("success").and_then(Value::as_bool) == Some(false) {
                note_failed(st, p);
            }
        }
        "mcp_tool_call_end" => {
            let result = p.get("result");
            let err = result.and_then(|r| r.get("Err")).is_some()
                || result
                    .and_then(|r| r.get("Ok"))
                    .and_then(|ok| ok.get("isError"))
                    .and_then(Value::as_bool)
                    == Some(true);
            if err {
                note_failed(st, p);
            }
        }
        "collab_agent_spawn_end" => {
            let call_id = str_of(p, "call_id").map(str::to_string);
            let nick = str_of(p, "new_agent_nickname").map(str::to_string);
            let role = str_of(p, "new_agent_role").map(str::to_string);
            let who = nick.clone().or_else(|| role.clone()).unwrap_or_default();
            let text = format!("spawned agent {who}: {}", s("prompt"));
            let mut ev = ParsedEvent::new("system/notification", time, text);
            ev.facts.push(Fact::Spawn {
                tool_use_id: call_id.clone(),
                subagent_type: role,
                name: nick,
                description: None,
                team_name: None,
            });
            if let Some(agent_id) = str_of(p, "new_thread_id") {
                cx.note_agent(agent_id);
                ev.facts.push(Fact::AgentLink {
                    tool_use_id: call_id.clone(),
                    agent_id: agent_id.to_string(),
                });
            }
            ev.tool_use_id = call_id;
            cx.emit(out, ev);
        }
        "thread_name_updated" => {
            if let Some(name) = str_of(p, "thread_name") {
                cx.set_title(name, 2);
            }
        }
        "token_count"
        | "task_started"
        | "turn_started"
        | "turn_complete"
        | "exec_command_begin"
        | "exec_command_output_delta"
        | "patch_apply_begin"
        | "mcp_tool_call_begin"
        | "web_search_begin"
        | "web_search_end"
        | "thread_settings_applied"
        | "context_compacted"
        | "sub_agent_activity"
        | "image_generation_end"
        | "thread_goal_updated"
        | "entered_review_mode"
        | "exited_review_mode"
        | "collab_waiting_end"
        | "collab_waiting_begin"
        | "collab_close_end"
        | "collab_agent_interaction_end"
        | "collab_agent_spawn_begin"
        | "guardian_assessment"
        | "view_image_tool_call"
        | "dynamic_tool_call_request"
        | "dynamic_tool_call_response"
        | "undo_started"
        | "undo_completed"
        | "plan_update"
        | "background_event"
        | "session_configured"
        | "turn_diff"
        | "item_started"
        | "agent_message_delta"
        | "agent_reasoning_delta"
        | "agent_reasoning_section_break"
        | "shutdown_complete" => {}
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
        cx.emit(out, ParsedEvent::new("system/context", time, t.to_string()));
        return;
    }
    if t.starts_with("<turn_aborted>") {
        cx.emit(out, ParsedEvent::new("system/error", time, t.to_string()));
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
            ParsedEvent::new("system/context", time.clone(), context),
        );
        match request.map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => typed = r,
            None => return,
        }
    }
    let kind = if st.subagent {
        "agent/prompt"
    } else if typed.starts_with("<user_shell_command>") {
        "user/command"
    } else {
        "user/message"
    };
    cx.emit(out, ParsedEvent::new(kind, time, typed.to_string()));
}

fn assistant_text(
    cx: &mut Ctx,
    st: &mut CodexState,
    text: &str,
    source: u8,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let t = text.trim();
    if t.is_empty() || st.dedupe.is_duplicate(text_hash("a", t), source) {
        return;
    }
    cx.emit(
        out,
        ParsedEvent::new("assistant/message", time, t.to_string()),
    );
}

fn thinking(
    cx: &mut Ctx,
    st: &mut CodexState,
    text: &str,
    source: u8,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let t = text.trim();
    if t.is_empty() || st.dedupe.is_duplicate(text_hash("t", t), source) {
        return;
    }
    cx.emit(
        out,
        ParsedEvent::new("assistant/thinking", time, t.to_string()),
    );
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
    let mut ev = ParsedEvent::new("assistant/tool_use", time, text);
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
    let mut ev = ParsedEvent::new("tool/result", time, text);
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

#[cfg(test)]
mod tests;
