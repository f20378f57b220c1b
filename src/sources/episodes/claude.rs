//! Claude Code transcript rules: one JSON record → zero or more [`ParsedEvent`]s.
//!
//! Claude Code writes many record types and marks injected, non-human "user" lines in several
//! ways (tool results, `isMeta` skill bodies and hook feedback, `<command-name>` wrappers,
//! `<teammate-message>`, `<task-notification>`, compaction summaries). This module is where those
//! are told apart from what a person typed, where subagent links and skill uses are extracted, and
//! where drift (unknown types, missing `message`, polymorphic `content`/`toolUseResult`) is
//! absorbed instead of failing the file. The mapping is documented in `docs/formats/claude.md`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{EventType, Fact, ParsedEvent};
use super::parser::{
    cap_chars, command_program, content_text, norm_time, render_tool_input, str_of, text_hash, Ctx,
    Handled, PairDedupe,
};
use classify::classify;

/// Dedupe source of a queued prompt (`queue-operation` / `queued_command`).
const SRC_QUEUE: u8 = 1;

/// Claude-specific state kept between lines (small, serialisable).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClaudeState {
    /// Decided on the first user/assistant record: a subagent transcript starts with a sidechain
    /// line (`isSidechain:true` + `agentId`); a main file does not.
    subagent_file: Option<bool>,
    /// The slash command just emitted, so the `isMeta` body that follows is its skill/command text.
    last_command: Option<String>,
    /// Queued prompts already emitted, so the user line that later repeats one is skipped.
    queued: PairDedupe,
}

/// Flags of the record a text came from.
#[derive(Default)]
struct Origin<'a> {
    is_meta: bool,
    compact_summary: bool,
    /// Written by a parent agent (subagent file or inline sidechain), not a person.
    by_agent: bool,
    has_source_tool: bool,
    origin_kind: Option<&'a str>,
    origin_from: Option<&'a str>,
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for ClaudeState {
    const FORMAT: &'static str = "claude";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut ClaudeState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let ty = str_of(rec, "type").unwrap_or("");
    let time = norm_time(rec.get("timestamp"));
    cx.touch_time(time.as_deref());
    if matches!(
        ty,
        "user" | "assistant" | "system" | "progress" | "attachment"
    ) {
        note_meta(cx, st, rec, ty);
    }
    let sidechain = rec.get("isSidechain").and_then(Value::as_bool) == Some(true);
    let by_agent = sidechain || st.subagent_file == Some(true);
    let before = out.len();
    let handled = match ty {
        "user" => user(cx, st, rec, time, by_agent, out),
        "assistant" => {
            st.last_command = None;
            assistant(cx, rec, time, out)
        }
        "system" => system(cx, st, rec, time, out),
        "summary" => {
            if let Some(s) = str_of(rec, "summary") {
                cx.set_title(s, 1);
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::SystemSummary, time, s.to_string()),
                );
            }
            Handled::Known
        }
        "custom-title" => title(cx, rec, "customTitle", 3),
        "ai-title" => title(cx, rec, "aiTitle", 2),
        "agent-name" => {
            if cx.meta.agent_name.is_none() {
                cx.meta.agent_name = str_of(rec, "agentName").map(str::to_string);
            }
            Handled::Known
        }
        "progress" => progress(cx, rec),
        "attachment" => attachment(cx, st, rec, time, out),
        "queue-operation" => {
            if str_of(rec, "operation") == Some("enqueue") {
                if let Some(text) = str_of(rec, "content") {
                    queued_prompt(cx, st, text, time, out);
                }
            }
            Handled::Known
        }
        "file-history-snapshot"
        | "file-history-delta"
        | "last-prompt"
        | "permission-mode"
        | "mode"
        | "pr-link"
        | "frame-link"
        | "worktree-state"
        | "relocated"
        | "bridge-session"
        | "atis-latch"
        | "cost-state"
        | "tag" => Handled::Known,
        _ => Handled::Unknown,
    };
    // Inline sidechain lines of a main file (era 1) belong to a subagent.
    if sidechain && st.subagent_file == Some(false) {
        let agent = str_of(rec, "agentId").unwrap_or("sidechain").to_string();
        for ev in out.iter_mut().skip(before) {
            ev.sidechain_agent = Some(agent.clone());
        }
    }
    handled
}

fn note_meta(cx: &mut Ctx, st: &mut ClaudeState, rec: &Value, ty: &str) {
    let meta = &mut cx.meta;
    if meta.session_id.is_none() {
        meta.session_id = str_of(rec, "sessionId").map(str::to_string);
    }
    if meta.cwd.is_none() {
        meta.cwd = str_of(rec, "cwd").map(str::to_string);
    }
    if meta.entrypoint.is_none() {
        meta.entrypoint = str_of(rec, "entrypoint").map(str::to_string);
    }
    if let Some(v) = str_of(rec, "version") {
        meta.version = Some(v.to_string());
    }
    if let Some(b) = str_of(rec, "gitBranch").filter(|b| !b.is_empty()) {
        meta.git_branch = Some(b.to_string());
    }
    if let Some(t) = str_of(rec, "teamName").filter(|t| !t.is_empty()) {
        meta.team_name = Some(t.to_string());
    }
    if st.subagent_file.is_none() && matches!(ty, "user" | "assistant") {
        let sidechain = rec.get("isSidechain").and_then(Value::as_bool) == Some(true);
        st.subagent_file = Some(sidechain && rec.get("agentId").is_some());
    }
    if st.subagent_file == Some(true) {
        if meta.agent_id.is_none() {
            meta.agent_id = str_of(rec, "agentId").map(str::to_string);
        }
        if meta.parent_session_id.is_none() {
            meta.parent_session_id = str_of(rec, "sessionId").map(str::to_string);
        }
    }
}

fn title(cx: &mut Ctx, rec: &Value, key: &str, rank: u8) -> Handled {
    if let Some(t) = str_of(rec, key) {
        cx.set_title(t, rank);
    }
    Handled::Known
}

fn user(
    cx: &mut Ctx,
    st: &mut ClaudeState,
    rec: &Value,
    time: Option<String>,
    by_agent: bool,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let Some(content) = rec.get("message").and_then(|m| m.get("content")) else {
        return Handled::Broken;
    };
    let origin = Origin {
        is_meta: rec.get("isMeta").and_then(Value::as_bool) == Some(true),
        compact_summary: rec.get("isCompactSummary").and_then(Value::as_bool) == Some(true),
        by_agent,
        has_source_tool: rec.get("sourceToolUseID").is_some(),
        origin_kind: rec.get("origin").and_then(|o| str_of(o, "kind")),
        origin_from: rec.get("origin").and_then(|o| str_of(o, "from")),
    };
    match content {
        Value::String(text) => user_text(cx, st, text, &origin, time, out),
        Value::Array(blocks) => {
            for block in blocks {
                match str_of(block, "type") {
                    Some("tool_result") => {
                        st.last_command = None;
                        tool_result(cx, block, rec.get("toolUseResult"), time.clone(), out);
                    }
                    Some("text") => {
                        if let Some(text) = str_of(block, "text") {
                            user_text(cx, st, text, &origin, time.clone(), out);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => return Handled::Broken,
    }
    Handled::Known
}

fn user_text(
    cx: &mut Ctx,
    st: &mut ClaudeState,
    text: &str,
    origin: &Origin<'_>,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let Some((kind, text, facts)) = classify(cx, st, text, origin) else {
        st.last_command = None;
        return;
    };
    if kind == EventType::UserCommand {
        st.last_command = Some(text.clone());
    } else {
        st.last_command = None;
    }
    // A prompt already emitted when it was queued.
    if !st.queued.take(text_hash(kind.as_str(), &text)) {
        emit_classified(cx, out, (kind, text, facts), time);
    }
}

/// Emit a classified user-role text with its facts.
fn emit_classified(
    cx: &mut Ctx,
    out: &mut Vec<ParsedEvent>,
    (kind, text, facts): (EventType, String, Vec<Fact>),
    time: Option<String>,
) {
    let mut ev = ParsedEvent::new(kind, time, text);
    ev.facts = facts;
    cx.emit(out, ev);
}

/// A queued prompt (typed while the agent was busy): emitted now, and the user line that may
/// repeat it later is skipped.
fn queued_prompt(
    cx: &mut Ctx,
    st: &mut ClaudeState,
    text: &str,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let origin = Origin::default();
    let Some((kind, text, facts)) = classify(cx, st, text, &origin) else {
        return;
    };
    st.queued.push(text_hash(kind.as_str(), &text), SRC_QUEUE);
    emit_classified(cx, out, (kind, text, facts), time);
}

fn tool_result(
    cx: &mut Ctx,
    block: &Value,
    tur: Option<&Value>,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let id = str_of(block, "tool_use_id").map(str::to_string);
    let mut text = block.get("content").map(content_text).unwrap_or_default();
    if text.trim().is_empty() {
        text = str_of(block, "text").unwrap_or("").to_string();
    }
    if text.trim().is_empty() {
        text = match tur {
            Some(Value::String(s)) => s.clone(),
            Some(obj @ Value::Object(_)) => {
                let parts: Vec<&str> = ["stdout", "stderr"]
                    .iter()
                    .filter_map(|k| str_of(obj, k))
                    .filter(|s| !s.trim().is_empty())
                    .collect();
                parts.join("\n")
            }
            _ => String::new(),
        };
    }
    let flag = block.get("is_error").and_then(Value::as_bool);
    let tur_error = tur.and_then(|t| t.get("is_error")).and_then(Value::as_bool) == Some(true);
    let string_error = flag.is_none()
        && tur
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with("Error"));
    let mut ev = ParsedEvent::new(EventType::ToolResult, time, text);
    ev.is_error = flag == Some(true) || tur_error || string_error;
    ev.tool_name = id.as_deref().and_then(|i| cx.tool_name(i));
    // Subagent link: `toolUseResult.agentId`, else the `agentId: … (for resuming…)` text tail.
    let agent = tur
        .and_then(|t| str_of(t, "agentId"))
        .map(str::to_string)
        .or_else(|| agent_id_in_text(&ev.text));
    if let Some(agent_id) = agent {
        cx.note_agent(&agent_id);
        ev.facts.push(Fact::AgentLink {
            tool_use_id: id.clone(),
            agent_id,
        });
    }
    ev.tool_use_id = id;
    cx.emit(out, ev);
}

fn agent_id_in_text(text: &str) -> Option<String> {
    let at = text.rfind("agentId: ")?;
    let id: String = text
        .get(at + "agentId: ".len()..)?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!id.is_empty()).then_some(id)
}

fn assistant(
    cx: &mut Ctx,
    rec: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let Some(msg) = rec.get("message").filter(|m| m.is_object()) else {
        return Handled::Broken;
    };
    if let Some(model) = str_of(msg, "model").filter(|m| !m.starts_with('<')) {
        cx.meta.model = Some(model.to_string());
    }
    let api_error = rec.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
    match msg.get("content") {
        Some(Value::String(s)) => {
            let kind = if api_error {
                EventType::SystemError
            } else {
                EventType::AssistantMessage
            };
            cx.emit(out, ParsedEvent::new(kind, time, s.clone()));
        }
        Some(Value::Array(blocks)) => {
            for block in blocks {
                let t = time.clone();
                match str_of(block, "type") {
                    Some("text") => {
                        let text = str_of(block, "text").unwrap_or("").to_string();
                        let kind = if api_error {
                            EventType::SystemError
                        } else {
                            EventType::AssistantMessage
                        };
                        cx.emit(out, ParsedEvent::new(kind, t, text));
                    }
                    Some("thinking") => {
                        let text = str_of(block, "thinking").unwrap_or("").to_string();
                        cx.emit(out, ParsedEvent::new(EventType::AssistantThinking, t, text));
                    }
                    Some("tool_use") => tool_use(cx, block, t, out),
                    _ => {}
                }
            }
        }
        _ => return Handled::Broken,
    }
    Handled::Known
}

fn tool_use(cx: &mut Ctx, block: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    let name = str_of(block, "name").unwrap_or("tool").to_string();
    let id = str_of(block, "id").map(str::to_string);
    let input = block.get("input").cloned().unwrap_or(Value::Null);
    if let Some(id) = &id {
        cx.remember_tool(id, &name);
    }
    let text = render_tool_input(&name, &input);
    let mut ev = ParsedEvent::new(EventType::AssistantToolUse, time, text);
    let s = |k: &str| str_of(&input, k).map(str::to_string);
    match name.as_str() {
        "Task" | "Agent" => ev.facts.push(Fact::Spawn {
            tool_use_id: id.clone(),
            subagent_type: s("subagent_type"),
            name: s("name"),
            description: s("description"),
            team_name: s("team_name"),
        }),
        "Skill" => {
            if let Some(skill) = s("skill").or_else(|| s("command")) {
                ev.facts.push(Fact::SkillUse {
                    name: skill,
                    via: "tool".into(),
                });
            }
        }
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
            if let Some(path) = s("file_path").or_else(|| s("notebook_path")) {
                ev.facts.push(Fact::FileEdit { path });
            }
        }
        n if n.eq_ignore_ascii_case("bash") => {
            if let Some(program) = s("command").as_deref().and_then(command_program) {
                ev.facts.push(Fact::Command { program });
            }
        }
        _ => {}
    }
    ev.tool_name = Some(name);
    ev.tool_use_id = id;
    cx.emit(out, ev);
}

fn progress(cx: &mut Ctx, rec: &Value) -> Handled {
    let data = rec.get("data");
    if data.and_then(|d| str_of(d, "type")) == Some("agent_progress") {
        if let Some(agent_id) = data.and_then(|d| str_of(d, "agentId")) {
            if cx.note_agent(agent_id) {
                cx.defer_fact(Fact::AgentLink {
                    tool_use_id: str_of(rec, "parentToolUseID").map(str::to_string),
                    agent_id: agent_id.to_string(),
                });
            }
        }
    }
    Handled::Known
}

fn attachment(
    cx: &mut Ctx,
    st: &mut ClaudeState,
    rec: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let Some(att) = rec.get("attachment").filter(|a| a.is_object()) else {
        return Handled::Broken;
    };
    let field = |k: &str| att.get(k).map(content_text).unwrap_or_default();
    match str_of(att, "type").unwrap_or("") {
        "invoked_skills" => {
            let mut ev = ParsedEvent::new(EventType::SystemSkill, time, String::new());
            let mut texts = Vec::new();
            if let Some(Value::Array(skills)) = att.get("skills") {
                for skill in skills {
                    if let Some(name) = str_of(skill, "name") {
                        ev.facts.push(Fact::SkillUse {
                            name: name.to_string(),
                            via: "attachment".into(),
                        });
                        texts.push(name.to_string());
                    }
                    if let Some(body) = str_of(skill, "content") {
                        texts.push(cap_chars(body, 16 * 1024));
                    }
                }
            }
            ev.text = texts.join("\n");
            cx.emit(out, ev);
        }
        "hook_additional_context"
        | "hook_blocking_error"
        | "hook_non_blocking_error"
        | "hook_success"
        | "hook_error" => {
            let body = [field("content"), field("stderr"), field("blockingError")]
                .into_iter()
                .filter(|s| !s.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n");
            if !body.is_empty() {
                let name = str_of(att, "hookName").unwrap_or("hook");
                let text = format!("{name}: {body}");
                cx.emit(out, ParsedEvent::new(EventType::SystemHook, time, text));
            }
        }
        "nested_memory" => {
            let text = field("content");
            cx.emit(out, ParsedEvent::new(EventType::SystemContext, time, text));
        }
        "queued_command" => {
            let text = field("prompt");
            queued_prompt(cx, st, &text, time, out);
        }
        _ => {}
    }
    Handled::Known
}

mod classify;
mod reader;
mod system;
pub(crate) use reader::is_claude_record;
pub use reader::Reader;
use system::system;

#[cfg(test)]
mod tests;
