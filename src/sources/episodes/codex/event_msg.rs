//! Codex `event_msg` records: the UI-side copy of messages (paired with their `response_item`
//! twins), turn and task ends (the session's outcome), tool ends that report failure, spawned
//! agents, thread titles, and the many progress records that carry nothing to index.

use serde_json::Value;

use super::{assistant, note_failed, user_text, CodexState, Said, SRC_EVENT, SRC_ITEM};
use crate::sources::episodes::model::{EventType, Fact, ParsedEvent};
use crate::sources::episodes::parser::{content_text, str_of, Ctx, Handled};

/// `event_msg` types that carry nothing to index (progress, deltas, settings).
const NOTHING_TO_INDEX: &[&str] = &[
    "token_count",
    "task_started",
    "turn_started",
    "turn_complete",
    "exec_command_begin",
    "exec_command_output_delta",
    "patch_apply_begin",
    "mcp_tool_call_begin",
    "web_search_begin",
    "web_search_end",
    "thread_settings_applied",
    "context_compacted",
    "sub_agent_activity",
    "image_generation_end",
    "thread_goal_updated",
    "entered_review_mode",
    "exited_review_mode",
    "collab_waiting_end",
    "collab_waiting_begin",
    "collab_close_end",
    "collab_agent_interaction_end",
    "collab_agent_spawn_begin",
    "guardian_assessment",
    "view_image_tool_call",
    "dynamic_tool_call_request",
    "dynamic_tool_call_response",
    "undo_started",
    "undo_completed",
    "plan_update",
    "background_event",
    "session_configured",
    "turn_diff",
    "item_started",
    "agent_message_delta",
    "agent_reasoning_delta",
    "agent_reasoning_section_break",
    "shutdown_complete",
];

pub(super) fn event_msg(
    cx: &mut Ctx,
    st: &mut CodexState,
    p: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let s = |k: &str| str_of(p, k).unwrap_or("").to_string();
    match str_of(p, "type").unwrap_or("") {
        "user_message" => user_text(cx, st, &s("message"), SRC_EVENT, time, out),
        "agent_message" => assistant(cx, st, Said::Message, &s("message"), SRC_EVENT, time, out),
        "agent_reasoning" | "agent_reasoning_raw_content" => {
            assistant(cx, st, Said::Thinking, &s("text"), SRC_EVENT, time, out)
        }
        // From 0.147 a third copy of each visible message.
        "item_completed" => {
            let item = p.get("item").unwrap_or(&Value::Null);
            let text = item.get("content").map(content_text).unwrap_or_default();
            match str_of(item, "type").unwrap_or("") {
                "UserMessage" => user_text(cx, st, &text, SRC_ITEM, time, out),
                "AgentMessage" => assistant(cx, st, Said::Message, &text, SRC_ITEM, time, out),
                "Reasoning" => {
                    let text = reasoning_text(item);
                    assistant(cx, st, Said::Thinking, &text, SRC_ITEM, time, out);
                }
                _ => {}
            }
        }
        "turn_aborted" => {
            cx.outcome.aborted();
            let reason = str_of(p, "reason").unwrap_or("aborted");
            let text = format!("turn aborted: {reason}");
            cx.emit(out, ParsedEvent::new(EventType::SystemError, time, text));
        }
        "task_complete" => {
            let failed = p.get("error").is_some_and(|e| !e.is_null());
            cx.outcome.task_complete(failed);
        }
        "error" | "stream_error" => {
            let text = format!("error: {}", s("message"));
            cx.emit(out, ParsedEvent::new(EventType::SystemError, time, text));
        }
        kind @ ("exec_command_end" | "patch_apply_end" | "mcp_tool_call_end") => {
            if tool_failed(kind, p) {
                note_failed(st, p);
            }
        }
        "collab_agent_spawn_end" => spawn_end(cx, p, time, out),
        "thread_name_updated" => {
            if let Some(name) = str_of(p, "thread_name") {
                cx.set_title(name, 2);
            }
        }
        kind if NOTHING_TO_INDEX.contains(&kind) => {}
        _ => return Handled::Unknown,
    }
    Handled::Known
}

/// The text of a completed reasoning item: its summary, then its raw content.
fn reasoning_text(item: &Value) -> String {
    ["summary_text", "raw_content"]
        .iter()
        .filter_map(|k| item.get(*k).map(content_text))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a tool's end record reports failure (a non-zero exit, a patch that did not apply, an
/// MCP error).
fn tool_failed(kind: &str, p: &Value) -> bool {
    match kind {
        "exec_command_end" => p.get("exit_code").and_then(Value::as_i64).unwrap_or(0) != 0,
        "patch_apply_end" => p.get("success").and_then(Value::as_bool) == Some(false),
        _ => {
            let result = p.get("result");
            result.and_then(|r| r.get("Err")).is_some()
                || result
                    .and_then(|r| r.get("Ok"))
                    .and_then(|ok| ok.get("isError"))
                    .and_then(Value::as_bool)
                    == Some(true)
        }
    }
}

/// A spawned agent: who (nickname, else role), its prompt, and the link to its own thread.
fn spawn_end(cx: &mut Ctx, p: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    let call_id = str_of(p, "call_id").map(str::to_string);
    let nick = str_of(p, "new_agent_nickname").map(str::to_string);
    let role = str_of(p, "new_agent_role").map(str::to_string);
    let who = nick.clone().or_else(|| role.clone()).unwrap_or_default();
    let prompt = str_of(p, "prompt").unwrap_or("");
    let text = format!("spawned agent {who}: {prompt}");
    let mut ev = ParsedEvent::new(EventType::SystemNotification, time, text);
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
