//! Qwen Code sessions: `~/.qwen/projects/<sanitised cwd>/chats/<sessionId>.jsonl`, archived ones
//! in `chats/archive/` (`QWEN_HOME` replaces `~/.qwen`).
//!
//! The envelope is Claude Code's (`uuid`, `parentUuid`, `sessionId`, `timestamp`, `type`, `cwd`,
//! `version`, `gitBranch`) with Gemini-style `message.parts`: `{text}`, `{text, thought:true}`,
//! `{functionCall:{id,name,args}}` on `assistant` lines and `{functionResponse:{id,name,response}}`
//! on `tool_result` lines. A user line's `systemPayload.displayText` is what the person typed
//! (hook context may be appended to its parts). `system` lines carry `custom_title`, `rewind`
//! and telemetry. Like a Claude fork, a rewound branch stays in the file and is indexed in file
//! order; one `assistant` line is written per model iteration, so a re-written line with the same
//! `uuid` only adds the parts it did not have.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{AgentReader, Env, Head, Rank, Recognised};
use super::agents::Agent;
use super::discover::Layout;
use super::model::{EventType, Fact, ParsedEvent};
use super::parser::{
    cap_chars, command_program, norm_time, render_tool_input, str_of, text_hash, Ctx, Handled,
};

/// Qwen-specific state kept between lines: parts already emitted (a record re-written with the
/// same `uuid` repeats them).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct QwenState {
    emitted: VecDeque<u64>,
}

/// Parts remembered (a re-written record comes right after the one it rewrites).
const MAX_EMITTED: usize = 128;

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for QwenState {
    const FORMAT: &'static str = "qwen";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut QwenState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let ty = str_of(rec, "type").unwrap_or("");
    let time = norm_time(rec.get("timestamp"));
    cx.touch_time(time.as_deref());
    let m = &mut cx.meta;
    if m.session_id.is_none() {
        m.session_id = str_of(rec, "sessionId").map(str::to_string);
    }
    if m.cwd.is_none() {
        m.cwd = str_of(rec, "cwd").map(str::to_string);
    }
    if let Some(v) = str_of(rec, "version") {
        m.version = Some(v.to_string());
    }
    if let Some(b) = str_of(rec, "gitBranch").filter(|b| !b.is_empty()) {
        m.git_branch = Some(b.to_string());
    }
    if let Some(model) = str_of(rec, "model") {
        m.model = Some(cap_chars(model, 200));
    }
    let payload = rec.get("systemPayload");
    let parts = rec
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array);
    let uuid = str_of(rec, "uuid").unwrap_or("");
    match ty {
        "user" => {
            let shown = payload.and_then(|p| str_of(p, "displayText"));
            let text = match shown {
                Some(s) => s.to_string(),
                None => parts_text(parts, false),
            };
            let kind = match str_of(rec, "subtype") {
                Some("notification") => EventType::SystemNotification,
                _ if text.trim_start().starts_with('/') => EventType::UserCommand,
                _ => EventType::UserMessage,
            };
            if first_time(st, uuid, "u", &text) {
                cx.emit(out, ParsedEvent::new(kind, time, text));
            }
        }
        "assistant" => {
            let Some(parts) = parts else {
                return Handled::Broken;
            };
            for part in parts {
                assistant_part(cx, st, uuid, part, time.clone(), out);
            }
        }
        "tool_result" => {
            for part in parts.into_iter().flatten() {
                let Some(resp) = part.get("functionResponse") else {
                    continue;
                };
                let id = str_of(resp, "id").map(str::to_string);
                let r = resp.get("response");
                let error = r.and_then(|r| r.get("error"));
                let body = r
                    .and_then(|r| r.get("output").or(error))
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                    .unwrap_or_default();
                let mut ev = ParsedEvent::new(EventType::ToolResult, time.clone(), body);
                ev.tool_name = str_of(resp, "name").map(str::to_string);
                ev.tool_use_id = id;
                ev.is_error = error.is_some_and(|e| !e.is_null());
                cx.emit(out, ev);
            }
        }
        "system" => {
            if str_of(rec, "subtype") == Some("custom_title") {
                if let Some(t) = payload.and_then(|p| str_of(p, "customTitle")) {
                    cx.set_title(t, 3);
                }
            }
        }
        _ => return Handled::Unknown,
    }
    Handled::Known
}

/// True the first time this record's `tag` text is seen (re-written records repeat parts).
fn first_time(st: &mut QwenState, uuid: &str, tag: &str, text: &str) -> bool {
    // Keyed by the record's uuid: the same text in two records is two events.
    let h = text_hash(&format!("{uuid}\u{0}{tag}"), text);
    if st.emitted.contains(&h) {
        return false;
    }
    if st.emitted.len() >= MAX_EMITTED {
        st.emitted.pop_front();
    }
    st.emitted.push_back(h);
    true
}

fn parts_text(parts: Option<&Vec<Value>>, thought: bool) -> String {
    parts
        .into_iter()
        .flatten()
        .filter(|p| (p.get("thought").and_then(Value::as_bool) == Some(true)) == thought)
        .filter_map(|p| str_of(p, "text"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn assistant_part(
    cx: &mut Ctx,
    st: &mut QwenState,
    uuid: &str,
    part: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    if let Some(text) = str_of(part, "text") {
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        let kind = if thought {
            EventType::AssistantThinking
        } else {
            EventType::AssistantMessage
        };
        if first_time(st, uuid, kind.as_str(), text) {
            cx.emit(out, ParsedEvent::new(kind, time, text.to_string()));
        }
        return;
    }
    let Some(call) = part.get("functionCall") else {
        return;
    };
    let name = str_of(call, "name").unwrap_or("tool");
    let id = str_of(call, "id").unwrap_or("");
    let args = call.get("args").cloned().unwrap_or(Value::Null);
    if !first_time(st, uuid, id, name) {
        return;
    }
    cx.remember_tool(id, name);
    let mut ev = ParsedEvent::new(
        EventType::AssistantToolUse,
        time,
        render_tool_input(name, &args),
    );
    ev.tool_name = Some(name.to_string());
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    let arg = |k: &str| str_of(&args, k).map(str::to_string);
    match name {
        "run_shell_command" => {
            if let Some(program) = arg("command").as_deref().and_then(command_program) {
                ev.facts.push(Fact::Command { program });
            }
        }
        "write_file" | "replace" | "edit" => {
            if let Some(path) = arg("file_path").or_else(|| arg("absolute_path")) {
                ev.facts.push(Fact::FileEdit { path });
            }
        }
        "task" | "agent" => ev.facts.push(Fact::Spawn {
            tool_use_id: ev.tool_use_id.clone(),
            subagent_type: arg("subagent_type"),
            name: arg("subagent_type"),
            description: arg("description")
                .or_else(|| arg("prompt"))
                .map(|d| cap_chars(&d, 500)),
            team_name: None,
        }),
        "skill" => {
            if let Some(skill) = arg("skill").or_else(|| arg("name")) {
                ev.facts.push(Fact::SkillUse {
                    name: skill,
                    via: "skill".into(),
                });
            }
        }
        _ => {}
    }
    cx.emit(out, ev);
}

/// The Qwen Code reader.
pub struct Reader;

/// A record in Qwen's envelope: Claude's ids with Gemini `parts` or a `systemPayload`.
fn is_qwen_record(v: &Value) -> bool {
    v.get("sessionId").is_some()
        && (v.get("message").and_then(|m| m.get("parts")).is_some()
            || v.get("systemPayload").is_some())
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<QwenState>()
    }
    fn agent(&self) -> Agent {
        Agent::Qwen
    }

    fn name(&self) -> &'static str {
        "qwen"
    }

    fn label(&self) -> &'static str {
        "Qwen Code"
    }

    /// `$QWEN_HOME/projects`, else `~/.qwen/projects`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir_or_home("QWEN_HOME", ".qwen")
            .map(|q| vec![q.join("projects")])
            .unwrap_or_default()
    }

    /// `projects/<p>/chats/[archive/]<id>.jsonl` by place; else a head record in Qwen's envelope.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        if path.extension()? != "jsonl" {
            return None;
        }
        let named = |n: usize, want: &str| {
            path.ancestors().nth(n).and_then(|d| d.file_name()) == Some(want.as_ref())
        };
        let by_place = (named(1, "chats") && named(3, "projects"))
            || (named(1, "archive") && named(2, "chats") && named(4, "projects"));
        let rank = if by_place && head.first(is_qwen_record).is_some() {
            Rank::Name
        } else {
            Rank::Record(head.first(is_qwen_record)?)
        };
        Some(Recognised {
            layout: Layout::Main,
            rank,
        })
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("qwen --resume {quoted_session_id}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::episodes::parser::test_support::{assert_resumable, parse_str};

    #[test]
    fn parts_tool_results_titles_and_rewritten_records() {
        let text = [
            r#"{"uuid":"u1","parentUuid":null,"sessionId":"q-1","timestamp":"2026-08-17T12:00:00.000Z","type":"user","cwd":"/w/app","version":"0.21.13","systemPayload":{"displayText":"read the config","hookContext":"injected"},"message":{"role":"user","parts":[{"text":"read the config"},{"text":"injected"}]}}"#,
            r#"{"uuid":"a1","parentUuid":"u1","sessionId":"q-1","timestamp":"2026-08-17T12:00:01.000Z","type":"assistant","message":{"role":"model","parts":[{"text":"look first","thought":true}]}}"#,
            r#"{"uuid":"a1","parentUuid":"u1","sessionId":"q-1","timestamp":"2026-08-17T12:00:02.000Z","type":"assistant","message":{"role":"model","parts":[{"text":"look first","thought":true},{"functionCall":{"id":"c1","name":"read_file","args":{"absolute_path":"/w/app/a.toml"}}}]}}"#,
            r#"{"uuid":"t1","parentUuid":"a1","sessionId":"q-1","timestamp":"2026-08-17T12:00:03.000Z","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"error":"ENOENT"}}}]}}"#,
            r#"{"uuid":"s1","parentUuid":"t1","sessionId":"q-1","timestamp":"2026-08-17T12:00:04.000Z","type":"system","subtype":"custom_title","systemPayload":{"customTitle":"Config check"}}"#,
            r#"{"uuid":"x1","sessionId":"q-1","type":"mystery"}"#,
        ]
        .join("\n");
        let (events, parser) = parse_str(Agent::Qwen, &text);
        let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types,
            vec![
                "user/message",
                "assistant/thinking",
                "assistant/tool_use",
                "tool/result"
            ]
        );
        assert_eq!(events[0].text, "read the config");
        assert!(events[3].is_error);
        assert_eq!(parser.meta().title.as_deref(), Some("Config check"));
        assert_eq!(parser.stats().skipped_unknown, 1);
        assert_resumable(Agent::Qwen, &text);
    }
}
