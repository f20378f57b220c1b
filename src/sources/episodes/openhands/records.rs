//! How an OpenHands record becomes events: the conversation's state as the session's header,
//! then each event by its `kind` (messages, actions with their facts, observations, errors),
//! kept apart from the conversation folder's layout and reading in the parent module.

use super::*;

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for OpenHandsState {
    const FORMAT: &'static str = "open_hands";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
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
        crate::sources::episodes::conversation::aside(cx, out, "another branch", |cx, out| {
            handled = event(cx, kind, rec, out);
        });
        return handled;
    }
    event(cx, kind, rec, out)
}

pub(super) fn header(cx: &mut Ctx, rec: &Value) {
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

pub(super) fn event(cx: &mut Ctx, kind: &str, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
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
pub(super) fn reasoning(v: &Value) -> String {
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

pub(super) fn message(
    cx: &mut Ctx,
    rec: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
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

pub(super) fn action(
    cx: &mut Ctx,
    rec: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
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
pub(super) fn result(
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
pub(super) fn call_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
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
