//! GitHub Copilot CLI sessions: `~/.copilot/session-state/<sessionId>/events.jsonl` (from 1.0.11;
//! `workspace.yaml` beside it), older flat `session-state/<sessionId>.jsonl`, and
//! `history-session-state/` (`COPILOT_HOME` replaces `~/.copilot`).
//!
//! Each line is an event `{type, data, id, timestamp, parentId}`: `session.start` (id, version,
//! `context.cwd`), `user.message` (`content`; `transformedContent` adds injected reminders and is
//! not indexed), `assistant.message` (`content`, `reasoningText`, `toolRequests[]` whose
//! `arguments` is an object or a JSON string), `assistant.reasoning`, `tool.execution_complete`
//! (`success:false` is a failure), `session.error`, `abort`, `subagent.started`, `skill.invoked`,
//! `session.compaction_complete` and many bookkeeping events that carry nothing searchable. The
//! system prompt (`system.message`) is the same in every session and is not indexed.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    AgentReader, Env, EventSink, FillCwd, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume,
};
use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::model::{EventType, Fact, ParsedEvent, SessionMeta};
use super::parser::{
    cap_chars, command_program, content_text, norm_time, read_jsonl, render_tool_input, str_of,
    Ctx, Handled, TranscriptParser,
};

/// Copilot-specific state kept between lines (none: events stand alone).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CopilotState {}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for CopilotState {
    const FORMAT: &'static str = "copilot";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    _st: &mut CopilotState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let Some(ty) = str_of(rec, "type") else {
        return Handled::Unknown;
    };
    let Some(data) = rec.get("data").filter(|d| d.is_object()) else {
        return Handled::Broken;
    };
    let time = norm_time(rec.get("timestamp"));
    cx.touch_time(time.as_deref());
    let text = |k: &str| str_of(data, k).unwrap_or("").to_string();
    match ty {
        "session.start" | "session.resume" => {
            let m = &mut cx.meta;
            if m.session_id.is_none() {
                m.session_id = str_of(data, "sessionId").map(str::to_string);
            }
            let context = data.get("context");
            if m.cwd.is_none() {
                m.cwd = context.and_then(|c| str_of(c, "cwd")).map(str::to_string);
            }
            if let Some(b) = context.and_then(|c| str_of(c, "branch")) {
                m.git_branch = Some(b.to_string());
            }
            if let Some(v) = str_of(data, "copilotVersion") {
                m.version = Some(v.to_string());
            }
            if let Some(model) = str_of(data, "selectedModel") {
                m.model = Some(cap_chars(model, 200));
            }
        }
        "user.message" => {
            let t = text("content");
            let kind = if data.get("parentAgentTaskId").is_some_and(|p| !p.is_null()) {
                EventType::AgentPrompt
            } else if t.trim_start().starts_with('/') {
                EventType::UserCommand
            } else {
                EventType::UserMessage
            };
            cx.emit(out, ParsedEvent::new(kind, time, t));
        }
        "assistant.message" => assistant(cx, data, time, out),
        "assistant.reasoning" => {
            cx.emit(
                out,
                ParsedEvent::new(EventType::AssistantThinking, time, text("content")),
            );
        }
        "tool.execution_complete" => {
            let result = data.get("result");
            let mut body = result
                .and_then(|r| r.get("content"))
                .map(content_text)
                .unwrap_or_default();
            if let Some(err) = data.get("error") {
                let e = str_of(err, "message").map(str::to_string);
                body = e.unwrap_or_else(|| content_text(err));
            }
            let id = str_of(data, "toolCallId").map(str::to_string);
            let mut ev = ParsedEvent::new(EventType::ToolResult, time, body);
            ev.tool_name = id.as_deref().and_then(|i| cx.tool_name(i));
            ev.tool_use_id = id;
            ev.is_error = data.get("success").and_then(Value::as_bool) == Some(false);
            cx.emit(out, ev);
        }
        "session.error" => {
            cx.emit(
                out,
                ParsedEvent::new(EventType::SystemError, time, text("message")),
            );
        }
        "abort" => cx.outcome.aborted(),
        "session.info" | "session.warning" => {
            cx.emit(
                out,
                ParsedEvent::new(EventType::SystemNotification, time, text("message")),
            );
        }
        "system.notification" => {
            cx.emit(
                out,
                ParsedEvent::new(EventType::SystemNotification, time, text("content")),
            );
        }
        "session.compaction_complete" => {
            let summary = text("summaryContent");
            cx.emit(
                out,
                ParsedEvent::new(EventType::SystemSummary, time, summary),
            );
        }
        "subagent.started" => cx.defer_fact(Fact::Spawn {
            tool_use_id: str_of(data, "toolCallId").map(str::to_string),
            subagent_type: str_of(data, "agentName").map(str::to_string),
            name: str_of(data, "agentDisplayName").map(str::to_string),
            description: str_of(data, "agentDescription").map(|d| cap_chars(d, 500)),
            team_name: None,
        }),
        "skill.invoked" => {
            if let Some(name) = str_of(data, "skillName").or_else(|| str_of(data, "name")) {
                cx.defer_fact(Fact::SkillUse {
                    name: name.to_string(),
                    via: "skill.invoked".into(),
                });
            }
        }
        "session.model_change" => {
            if let Some(model) = str_of(data, "newModel") {
                cx.meta.model = Some(cap_chars(model, 200));
            }
        }
        "system.message"
        | "assistant.turn_start"
        | "assistant.turn_end"
        | "tool.execution_start"
        | "tool.execution_partial_result"
        | "permission.requested"
        | "permission.completed"
        | "subagent.completed"
        | "subagent.failed"
        | "session.compaction_start"
        | "session.truncation"
        | "session.usage_checkpoint"
        | "session.shutdown"
        | "session.auto_mode_resolved"
        | "session.mode_changed"
        | "hook.start"
        | "hook.end"
        | "assistant.usage" => {}
        _ => return Handled::Unknown,
    }
    Handled::Known
}

fn assistant(cx: &mut Ctx, data: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    if let Some(model) = str_of(data, "model") {
        cx.meta.model = Some(cap_chars(model, 200));
    }
    if let Some(r) = str_of(data, "reasoningText") {
        cx.emit(
            out,
            ParsedEvent::new(EventType::AssistantThinking, time.clone(), r.to_string()),
        );
    }
    let content = str_of(data, "content").unwrap_or("").to_string();
    cx.emit(
        out,
        ParsedEvent::new(EventType::AssistantMessage, time.clone(), content),
    );
    for req in data
        .get("toolRequests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = str_of(req, "name").unwrap_or("tool");
        let id = str_of(req, "toolCallId").unwrap_or("");
        let args = match req.get("arguments") {
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
            Some(v) => v.clone(),
            None => Value::Null,
        };
        cx.remember_tool(id, name);
        let mut ev = ParsedEvent::new(
            EventType::AssistantToolUse,
            time.clone(),
            render_tool_input(name, &args),
        );
        ev.tool_name = Some(name.to_string());
        ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
        let arg = |k: &str| str_of(&args, k).map(str::to_string);
        match name {
            "bash" | "shell" | "powershell" => {
                if let Some(program) = arg("command").as_deref().and_then(command_program) {
                    ev.facts.push(Fact::Command { program });
                }
            }
            "edit" | "create" | "str_replace_editor" | "write" => {
                if let Some(path) = arg("path").or_else(|| arg("file_path")) {
                    ev.facts.push(Fact::FileEdit { path });
                }
            }
            _ => {}
        }
        cx.emit(out, ev);
    }
}

/// The Copilot CLI reader.
pub struct Reader;

fn is_copilot_start(v: &Value) -> bool {
    str_of(v, "type") == Some("session.start")
        && v.get("data").is_some_and(|d| d.get("sessionId").is_some())
}

fn state_dir(dir: Option<&Path>) -> bool {
    dir.and_then(|d| d.file_name())
        .is_some_and(|n| n == "session-state" || n == "history-session-state")
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<CopilotState>()
    }
    fn agent(&self) -> Agent {
        Agent::Copilot
    }

    fn name(&self) -> &'static str {
        "copilot"
    }

    fn label(&self) -> &'static str {
        "Copilot CLI"
    }

    /// `$COPILOT_HOME/{session-state,history-session-state}`, else under `~/.copilot`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir_or_home("COPILOT_HOME", ".copilot")
            .map(|c| vec![c.join("session-state"), c.join("history-session-state")])
            .unwrap_or_default()
    }

    /// `session-state/<id>/events.jsonl` by place; a flat `session-state/<id>.jsonl` or any
    /// `.jsonl` whose head is a `session.start` event.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        if path.extension()? != "jsonl" {
            return None;
        }
        let rank = if path.file_name()? == "events.jsonl"
            && state_dir(path.parent().and_then(Path::parent))
        {
            Rank::Name
        } else {
            Rank::Record(head.first(is_copilot_start)?)
        };
        Some(Recognised {
            layout: Layout::Main,
            rank,
        })
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let mut sink = FillCwd {
            inner: sink,
            cwd: workspace_cwd(&file.path),
        };
        read_jsonl(file, from, limits, &mut sink, || {
            TranscriptParser::new(Agent::Copilot)
        })
    }

    /// The events' `sessionId`, else the session folder (`<id>/events.jsonl`) or file stem.
    fn file_session_id(&self, file: &TranscriptFile, meta: &SessionMeta) -> Option<String> {
        meta.session_id.clone().or_else(|| {
            let named = if file.path.file_name()? == "events.jsonl" {
                file.path.parent()?.file_name()?
            } else {
                file.path.file_stem()?
            };
            Some(crate::sources::episodes::bounds::safe_id(&named.to_string_lossy()).into_owned())
        })
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("copilot --resume {quoted_session_id}"))
    }
}

/// `cwd:` of the `workspace.yaml` beside an `events.jsonl` (one `key: value` per line).
fn workspace_cwd(events: &Path) -> Option<String> {
    let yaml = super::agent::small_sidecar(events, "workspace.yaml")?;
    yaml.lines().find_map(|l| {
        let v = l
            .strip_prefix("cwd:")?
            .trim()
            .trim_matches(|c| c == '"' || c == '\'');
        (!v.is_empty()).then(|| v.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::episodes::parser::test_support::{assert_resumable, parse_str};

    #[test]
    fn events_become_events_and_failures_and_unknowns_are_counted() {
        let text = [
            r#"{"type":"session.start","data":{"sessionId":"c-1","copilotVersion":"1.0.68","context":{"cwd":"/w/app","branch":"main"}},"id":"e1","timestamp":"2026-03-26T17:50:34.263Z","parentId":null}"#,
            r#"{"type":"system.message","data":{"content":"You are Copilot"},"id":"e2","timestamp":"2026-03-26T17:50:34.300Z","parentId":"e1"}"#,
            r#"{"type":"user.message","data":{"content":"run the tests","transformedContent":"run the tests <current_datetime>x</current_datetime>"},"id":"e3","timestamp":"2026-03-26T17:50:35.000Z","parentId":"e2"}"#,
            r#"{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"k1","name":"bash","arguments":"{\"command\":\"cargo test\"}"}]},"id":"e4","timestamp":"2026-03-26T17:50:36.000Z","parentId":"e3"}"#,
            r#"{"type":"tool.execution_complete","data":{"toolCallId":"k1","success":false,"result":{"content":"1 failed"}},"id":"e5","timestamp":"2026-03-26T17:50:37.000Z","parentId":"e4"}"#,
            r#"{"type":"session.future_thing","data":{},"id":"e6","timestamp":"2026-03-26T17:50:38.000Z","parentId":"e5"}"#,
        ]
        .join("\n");
        let (events, parser) = parse_str(Agent::Copilot, &text);
        let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types,
            vec!["user/message", "assistant/tool_use", "tool/result"]
        );
        assert!(events[2].is_error);
        assert_eq!(events[2].tool_name.as_deref(), Some("bash"));
        assert!(!events[0].text.contains("current_datetime"));
        assert_eq!(parser.meta().cwd.as_deref(), Some("/w/app"));
        assert_eq!(parser.stats().skipped_unknown, 1);
        assert_resumable(Agent::Copilot, &text);
    }
}
