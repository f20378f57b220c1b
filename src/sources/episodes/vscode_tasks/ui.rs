//! A task's `ui_messages.json` as events: each `ClineMessage` (`{ts, type: ask|say, ask|say,
//! text}`) by what it says. The messages carry no tool call ids: a call is named by its
//! message's `ts`, and the output, response or error that follows it is its result.
//!
//! | message | event |
//! |---|---|
//! | `say:task` | the person's task (a child task's: its parent agent's prompt) |
//! | `say:user_feedback`, `say:user_feedback_diff` | a person's message |
//! | `say:text`, `ask:followup` (`{question}`), `ask:plan_mode_respond`/`act_mode_respond` (`{response}`), `say:completion_result` | the assistant's message (the last: the task complete) |
//! | `say:reasoning` | the assistant's thinking |
//! | `ask`/`say:tool` (JSON `{tool, path?, diff?, content?, …}`) | a tool call named by `tool` |
//! | `ask`/`say:command` | a shell command call (`execute_command`) |
//! | `say`/`ask:command_output`, `say:mcp_server_response`, `say:browser_action_result`, `say:subtask_result` | the last call's result |
//! | `ask`/`say:use_mcp_server` (`{serverName, toolName, arguments}`), `say:browser_action`, `ask`/`say:browser_action_launch` | a tool call |
//! | `say:diff_error`, `say:clineignore_error`, `say:rooignore_error`, `say:command_permission_denied`, `say:error` right after a call | a failed result |
//! | `say:error` elsewhere, `ask:api_req_failed`, `ask:mistake_limit_reached` | an error |
//! | `ask`/`say:use_subagents` (`{prompts[]}`) | a call spawning Cline's subagents |
//! | `say:subagent` (`{status, items[{prompt, status, result?, error?}]}`) once `completed` or `failed` | the subagents' results (failed when one failed) |
//! | `say:condense_context` (`contextCondense.summary`) | a summary |
//! | `say:api_req_started` with a `cancelReason` | an aborted turn |

use serde_json::Value;

use crate::sources::agent_knowledge::ms_to_rfc3339;
use crate::sources::episodes::model::{EventType, Fact, ParsedEvent};
use crate::sources::episodes::parser::{
    cap_chars, command_program, render_tool_input, str_of, Ctx, Handled,
};

/// Cline appends this to a command that waits for approval (`COMMAND_REQ_APP_STRING`).
const REQ_APP: &str = "REQ_APP";
/// Cline appends this to a completion that changed files (`COMPLETION_RESULT_CHANGES_FLAG`).
const HAS_CHANGES: &str = "HAS_CHANGES";

/// Messages that are known and hold nothing to index (progress, checkpoints, approvals, hooks).
const QUIET: &[&str] = &[
    "api_req_finished",
    "api_req_retried",
    "api_req_retry_delayed",
    "api_req_rate_limit_wait",
    "api_req_deleted",
    "deleted_api_reqs",
    "resume_task",
    "resume_completed_task",
    "checkpoint_created",
    "checkpoint_saved",
    "shell_integration_warning",
    "shell_integration_warning_with_suggestion",
    "mcp_server_request_started",
    "mcp_notification",
    "load_mcp_documentation",
    "info",
    "task_progress",
    "hook_status",
    "hook_output_stream",
    "auto_approval_max_req_reached",
    "condense",
    "condense_context_error",
    "sliding_window_truncation",
    "codebase_search_result",
    "user_edit_todos",
    "too_many_tools_warning",
    "conditional_rules_applied",
    "compaction",
    "image",
    "new_task",
    "report_bug",
    "summarize_task",
    "subagent_usage",
    "plan_completion_result",
    "generate_explanation",
];

/// The reading state of one task's messages.
#[derive(Default)]
struct Calls {
    /// The call the next result answers: its id (the message's `ts`) and tool.
    open: Option<(String, String)>,
    /// The last event pushed was that call (an error right after it is its failure).
    just_called: bool,
}

/// Reads the `ClineMessage[]` in `bytes` into `out`; a child task's first `say:task` is its
/// parent agent's prompt. A file that is not a JSON array is one broken record.
pub(super) fn read_messages(
    cx: &mut Ctx,
    bytes: &[u8],
    max_record: usize,
    child: bool,
    out: &mut Vec<ParsedEvent>,
) {
    use crate::sources::episodes::bounds::records::{with_records, Record};
    let read = with_records(bytes, "", max_record, |records| {
        // An object is not a message list.
        if records.header.is_some() {
            return false;
        }
        let mut calls = Calls::default();
        for record in records.parsed(max_record) {
            cx.stats.lines += 1;
            match record {
                Record::Parsed(msg) => read_message(cx, &mut calls, &msg, child, out),
                Record::Oversized => cx.stats.skipped_oversized += 1,
                Record::Broken => cx.stats.skipped_broken += 1,
            }
        }
        true
    });
    if read != Some(true) {
        cx.stats.lines += 1;
        cx.stats.skipped_broken += 1;
    }
}

/// One message of the list, counted by what became of it.
fn read_message(
    cx: &mut Ctx,
    calls: &mut Calls,
    msg: &Value,
    child: bool,
    out: &mut Vec<ParsedEvent>,
) {
    if crate::sources::episodes::bounds::has_absurd_id(msg) {
        cx.stats.skipped_bad_id += 1;
        return;
    }
    let before = out.len();
    match message(cx, calls, msg, child, out) {
        Handled::Known if out.len() == before => cx.stats.ignored += 1,
        Handled::Known => {}
        Handled::Unknown => cx.stats.skipped_unknown += 1,
        Handled::Broken => cx.stats.skipped_broken += 1,
    }
}

/// The JSON object a message's text holds, if it holds one.
fn json_text(text: &str) -> Option<Value> {
    let t = text.trim_start();
    if !t.starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(t)
        .ok()
        .filter(Value::is_object)
}

fn message(
    cx: &mut Ctx,
    calls: &mut Calls,
    msg: &Value,
    child: bool,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let Some(ts) = msg.get("ts").and_then(Value::as_i64) else {
        return Handled::Broken;
    };
    let kind = match str_of(msg, "type") {
        Some("ask") => str_of(msg, "ask"),
        Some("say") => str_of(msg, "say"),
        _ => None,
    };
    let Some(kind) = kind else {
        return Handled::Broken;
    };
    let time = ms_to_rfc3339(ts);
    cx.touch_time(time.as_deref());
    let text = str_of(msg, "text").unwrap_or("").to_string();
    let id = ts.to_string();
    let before = out.len();
    let mut push = |cx: &mut Ctx, ev: ParsedEvent| cx.emit(out, ev);
    let said = |ty: EventType, text: String| ParsedEvent::new(ty, time.clone(), text);
    let mut call_made = false;
    match kind {
        "task" => {
            let mut ev = said(EventType::UserMessage, text.clone());
            if child {
                ev.event_type = EventType::AgentPrompt;
                ev.human = false;
            }
            cx.set_title(&text, 1);
            push(cx, ev);
        }
        "user_feedback" | "user_feedback_diff" => {
            push(cx, said(EventType::UserMessage, text));
        }
        "text" => push(cx, said(EventType::AssistantMessage, text)),
        "reasoning" => push(cx, said(EventType::AssistantThinking, text)),
        "followup" | "plan_mode_respond" | "act_mode_respond" => {
            let shown = json_text(&text)
                .and_then(|v| nonblank_of(&v, "question").or_else(|| nonblank_of(&v, "response")))
                .unwrap_or(text);
            push(cx, said(EventType::AssistantMessage, shown));
        }
        "completion_result" => {
            let result = text.trim_end().trim_end_matches(HAS_CHANGES).to_string();
            if msg.get("partial").and_then(Value::as_bool) != Some(true)
                && str_of(msg, "type") == Some("say")
            {
                cx.outcome.task_complete(false);
            }
            push(cx, said(EventType::AssistantMessage, result));
        }
        "tool" => {
            let Some(tool) = json_text(&text) else {
                return Handled::Broken;
            };
            let name = str_of(&tool, "tool").unwrap_or("tool").to_string();
            let mut input = tool.clone();
            if let Some(map) = input.as_object_mut() {
                map.remove("tool");
            }
            let mut ev = said(
                EventType::AssistantToolUse,
                render_tool_input(&name, &input),
            );
            ev.facts = tool_facts(&name, &id, &input);
            call(cx, calls, &id, &name, &mut ev);
            push(cx, ev);
            call_made = true;
        }
        "command" => {
            let command = text
                .trim_end()
                .trim_end_matches(REQ_APP)
                .trim_end()
                .to_string();
            let name = "execute_command";
            let mut ev = said(EventType::AssistantToolUse, format!("{name}\n{command}"));
            if let Some(program) = command_program(&command) {
                ev.facts.push(Fact::Command { program });
            }
            call(cx, calls, &id, name, &mut ev);
            push(cx, ev);
            call_made = true;
        }
        "use_mcp_server" => {
            let v = json_text(&text).unwrap_or(Value::Null);
            let server = str_of(&v, "serverName").unwrap_or("mcp");
            let name = match str_of(&v, "toolName") {
                Some(tool) => format!("mcp__{server}__{tool}"),
                None => format!("mcp__{server}"),
            };
            let args = v
                .get("arguments")
                .map(|a| match a {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .or_else(|| str_of(&v, "uri").map(str::to_string))
                .unwrap_or_default();
            let mut ev = said(EventType::AssistantToolUse, format!("{name}\n{args}"));
            call(cx, calls, &id, &name, &mut ev);
            push(cx, ev);
            call_made = true;
        }
        "browser_action_launch" | "browser_action" => {
            let shown = match json_text(&text) {
                Some(v) => render_tool_input("browser_action", &v),
                None => format!("browser_action\n{text}"),
            };
            let mut ev = said(EventType::AssistantToolUse, shown);
            call(cx, calls, &id, "browser_action", &mut ev);
            push(cx, ev);
            call_made = true;
        }
        "use_subagents" => {
            let prompts: Vec<String> = json_text(&text)
                .and_then(|v| v.get("prompts").cloned())
                .and_then(|p| serde_json::from_value(p).ok())
                .unwrap_or_default();
            let name = "use_subagents";
            let mut ev = said(
                EventType::AssistantToolUse,
                format!("{name}\n{}", prompts.join("\n")),
            );
            ev.facts = prompts
                .iter()
                .map(|p| Fact::Spawn {
                    tool_use_id: Some(id.clone()),
                    subagent_type: None,
                    name: None,
                    description: Some(cap_chars(p, 500)),
                    team_name: None,
                })
                .collect();
            call(cx, calls, &id, name, &mut ev);
            push(cx, ev);
            call_made = true;
        }
        "subagent" => {
            let Some(status) = json_text(&text) else {
                return Handled::Broken;
            };
            let overall = str_of(&status, "status").unwrap_or("");
            let partial = msg.get("partial").and_then(Value::as_bool) == Some(true);
            // Running: progress, not yet a result.
            if matches!(overall, "completed" | "failed") && !partial {
                let items = status.get("items").and_then(Value::as_array);
                let shown: Vec<String> = items
                    .into_iter()
                    .flatten()
                    .filter_map(|item| {
                        nonblank_of(item, "result").or_else(|| nonblank_of(item, "error"))
                    })
                    .collect();
                let ev = said(EventType::ToolResult, shown.join("\n\n"));
                let ev = result(calls, ev, "use_subagents", overall == "failed");
                push(cx, ev);
            }
        }
        "command_output" | "mcp_server_response" | "subtask_result" => {
            let ev = result(calls, said(EventType::ToolResult, text), kind, false);
            push(cx, ev);
        }
        "browser_action_result" => {
            let shown = json_text(&text)
                .map(|v| {
                    [nonblank_of(&v, "logs"), nonblank_of(&v, "currentUrl")]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or(text);
            let ev = result(calls, said(EventType::ToolResult, shown), kind, false);
            push(cx, ev);
        }
        "diff_error" | "clineignore_error" | "rooignore_error" | "command_permission_denied" => {
            let shown = if text.trim().is_empty() {
                format!("[{kind}]")
            } else {
                text
            };
            let ev = result(calls, said(EventType::ToolResult, shown), kind, true);
            push(cx, ev);
        }
        "error" if calls.just_called => {
            let ev = result(calls, said(EventType::ToolResult, text), kind, true);
            push(cx, ev);
        }
        "error" | "api_req_failed" | "mistake_limit_reached" => {
            push(cx, said(EventType::SystemError, text));
        }
        "condense_context" => {
            let summary = msg
                .pointer("/contextCondense/summary")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            push(cx, said(EventType::SystemSummary, summary));
        }
        "api_req_started" => {
            if json_text(&text).is_some_and(|v| nonblank_of(&v, "cancelReason").is_some()) {
                cx.outcome.aborted();
            }
        }
        k if QUIET.contains(&k) => {}
        _ => return Handled::Unknown,
    }
    if out.len() > before {
        calls.just_called = call_made;
    }
    Handled::Known
}

/// A non-blank string field.
fn nonblank_of(v: &Value, key: &str) -> Option<String> {
    str_of(v, key)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

/// Opens a call: the results that follow are its.
fn call(cx: &mut Ctx, calls: &mut Calls, id: &str, name: &str, ev: &mut ParsedEvent) {
    cx.remember_tool(id, name);
    calls.open = Some((id.to_string(), name.to_string()));
    ev.tool_name = Some(name.to_string());
    ev.tool_use_id = Some(id.to_string());
}

/// A result of the open call (named by its kind when none is open).
fn result(calls: &Calls, mut ev: ParsedEvent, kind: &str, is_error: bool) -> ParsedEvent {
    match &calls.open {
        Some((id, name)) => {
            ev.tool_use_id = Some(id.clone());
            ev.tool_name = Some(name.clone());
        }
        None => {
            ev.tool_name = Some(
                match kind {
                    "command_output" => "execute_command",
                    "subtask_result" => "newTask",
                    other => other,
                }
                .to_string(),
            );
        }
    }
    ev.is_error = is_error;
    ev
}

/// Facts of a tool message, by the tools of Cline (`ClineSayTool`) and Roo Code.
fn tool_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
    let arg = |k: &str| nonblank_of(input, k);
    let fact = match name {
        "editedExistingFile" | "newFileCreated" | "fileDeleted" | "appliedDiff" => {
            arg("path").map(|path| Fact::FileEdit { path })
        }
        "useSkill" => arg("path").map(|name| Fact::SkillUse {
            name,
            via: "tool".into(),
        }),
        "skill" => arg("skill").map(|name| Fact::SkillUse {
            name,
            via: "tool".into(),
        }),
        "newTask" => Some(Fact::Spawn {
            tool_use_id: Some(id.to_string()),
            subagent_type: arg("mode"),
            name: arg("mode"),
            description: arg("content").map(|c| cap_chars(&c, 500)),
            team_name: None,
        }),
        _ => None,
    };
    let mut facts: Vec<Fact> = fact.into_iter().collect();
    // A batch of edits (Roo Code's `batchDiffs`) names each file.
    if let Some(batch) = input.get("batchDiffs").and_then(Value::as_array) {
        facts.extend(
            batch
                .iter()
                .filter_map(|d| nonblank_of(d, "path"))
                .map(|path| Fact::FileEdit { path }),
        );
    }
    facts
}
