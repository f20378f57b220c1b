//! Kimi Code (MoonshotAI `kimi-code`, the TypeScript successor of Kimi CLI, also behind Kimi
//! Desktop) sessions: `$KIMI_CODE_HOME` (default `~/.kimi-code`)
//! `/sessions/wd_<slug>_<sha256[:12]>/session_<uuid>/agents/<agent id>/wire.jsonl`.
//!
//! Each agent of a session (`main`, its sub-agents `agent-0`, …) appends its own `wire.jsonl`
//! (`packages/agent-core/src/agent/records/types.ts`): flat records `{type, …, time (ms)}`, the
//! first `metadata{protocol_version, created_at}`. The conversation is
//! `context.append_message{message{role, content[], origin{kind}}}` for what enters the context
//! (the person's prompts and steers, `origin.kind:"user"`; reminders, skills, a sub-agent's task,
//! compaction summaries by other origins) and `context.append_loop_event{event}` for what the
//! model did: `content.part{part{type:"text"|"think"}}`, `tool.call{toolCallId, name, args}` and
//! `tool.result{toolCallId, result{output, isError?}}` (`loop/events.ts`). A foreground `Agent`
//! call's result opens with `agent_id: agent-<n>`, the folder of the sub-agent's wire. The rest
//! (`llm.request`, `usage.record`, `turn.*`, `permission.*`, …) is trace and state, not talk.
//! `state.json` beside `agents/` holds the session's `workDir` and `title`; the session id is
//! the `session_<uuid>` folder's name (what `kimi --session` takes).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    file_mtime, AgentReader, Env, EventSink, Head, NoIdsSink, Rank, ReadEnd, ReadLimits,
    Recognised, Resume, SessionStart,
};
use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::kimi::call_facts;
use super::model::{EventType, Fact, ParsedEvent, SessionMeta};
use super::outcome::Outcome;
use super::parser::{
    cap_chars, content_text, read_jsonl, render_tool_input, str_of, Ctx, Handled, TranscriptParser,
};

/// Record families Kimi Code writes that hold no conversation (state, trace, telemetry).
const TRACE_PREFIXES: [&str; 18] = [
    "turn.",
    "llm.",
    "usage.",
    "permission.",
    "plan_mode.",
    "swarm_mode.",
    "tower_mode.",
    "tools.",
    "full_compaction.",
    "micro_compaction.",
    "goal.",
    "mcp.",
    "profile.",
    "plugin.",
    "runtime.",
    "token_counting.",
    "context.",
    "forked",
];

/// Kimi Code state kept between lines: whether a sub-agent's task was seen.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KimiCodeState {
    seen_task: bool,
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for KimiCodeState {
    const FORMAT: &'static str = "kimi_code";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut KimiCodeState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let Some(kind) = str_of(rec, "type") else {
        return Handled::Broken;
    };
    let time = rec
        .get("time")
        .or_else(|| rec.get("created_at"))
        .and_then(Value::as_i64)
        .and_then(crate::sources::agent_knowledge::ms_to_rfc3339);
    cx.touch_time(time.as_deref());
    match kind {
        "metadata" => Handled::Known,
        "config.update" => {
            if let Some(model) = str_of(rec, "modelAlias") {
                cx.meta.model = Some(model.to_string());
            }
            if let Some(cwd) = str_of(rec, "cwd") {
                cx.meta.cwd = Some(cwd.to_string());
            }
            Handled::Known
        }
        "context.append_message" => match rec.get("message") {
            Some(m) => {
                message(cx, st, m, time, out);
                Handled::Known
            }
            None => Handled::Broken,
        },
        "context.append_loop_event" => match rec.get("event") {
            Some(e) => loop_event(cx, e, time, out),
            None => Handled::Broken,
        },
        "context.apply_compaction" => {
            let text = str_of(rec, "summary").unwrap_or("").to_string();
            cx.emit(out, ParsedEvent::new(EventType::SystemSummary, time, text));
            Handled::Known
        }
        k if TRACE_PREFIXES.iter().any(|p| k.starts_with(p)) => Handled::Known,
        _ => Handled::Unknown,
    }
}

/// A message entering the context: the person's prompt, a sub-agent's task, or injected text.
fn message(
    cx: &mut Ctx,
    st: &mut KimiCodeState,
    m: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let text = content_text(m.get("content").unwrap_or(&Value::Null));
    let origin = m.get("origin").unwrap_or(&Value::Null);
    let kind = match str_of(m, "role") {
        Some("assistant") => EventType::AssistantMessage,
        Some("tool") => EventType::ToolResult,
        _ => match (str_of(origin, "kind"), str_of(origin, "name")) {
            (Some("user") | None, _) => EventType::UserMessage,
            (Some("system_trigger"), Some("subagent")) => {
                if !st.seen_task {
                    st.seen_task = true;
                    let task = without_git_context(&text).trim();
                    if !task.is_empty() {
                        cx.meta.agent_description = Some(cap_chars(task, 300));
                    }
                }
                EventType::UserMessage
            }
            (Some("shell_command") | Some("plugin_command"), _) => EventType::UserCommand,
            (Some("skill_activation"), _) => EventType::SystemSkill,
            (Some("hook_result"), _) => EventType::SystemHook,
            (Some("compaction_summary"), _) => EventType::SystemSummary,
            _ => EventType::SystemContext,
        },
    };
    let mut ev = ParsedEvent::new(kind, time, text);
    ev.is_error = m.get("isError").and_then(Value::as_bool).unwrap_or(false);
    cx.emit(out, ev);
}

/// A sub-agent's prompt without the `<git-context>` block Kimi Code puts before the task.
fn without_git_context(text: &str) -> &str {
    let t = text.trim_start();
    match t.strip_prefix("<git-context>") {
        Some(rest) => rest
            .split_once("</git-context>")
            .map_or("", |(_, task)| task),
        None => t,
    }
}

fn loop_event(
    cx: &mut Ctx,
    e: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    match str_of(e, "type") {
        Some("step.begin") | Some("step.end") => Handled::Known,
        Some("content.part") => {
            let part = e.get("part").unwrap_or(&Value::Null);
            let ev = match str_of(part, "type") {
                Some("think") => ParsedEvent::new(
                    EventType::AssistantThinking,
                    time,
                    str_of(part, "think").unwrap_or("").to_string(),
                ),
                _ => ParsedEvent::new(EventType::AssistantMessage, time, content_text(part)),
            };
            cx.emit(out, ev);
            Handled::Known
        }
        Some("tool.call") => {
            let id = str_of(e, "toolCallId").unwrap_or("");
            let name = str_of(e, "name").unwrap_or("tool");
            let args = e.get("args").unwrap_or(&Value::Null);
            cx.remember_tool(id, name);
            let mut ev = ParsedEvent::new(
                EventType::AssistantToolUse,
                time,
                render_tool_input(name, args),
            );
            ev.tool_name = Some(name.to_string());
            ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
            ev.facts = call_facts(name, id, args);
            cx.emit(out, ev);
            Handled::Known
        }
        Some("tool.result") => {
            let result = e.get("result").unwrap_or(&Value::Null);
            let text = content_text(result.get("output").unwrap_or(&Value::Null));
            let mut ev = ParsedEvent::new(EventType::ToolResult, time, text);
            ev.tool_use_id = str_of(e, "toolCallId").map(str::to_string);
            ev.tool_name = ev.tool_use_id.as_deref().and_then(|id| cx.tool_name(id));
            ev.is_error = result
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if ev.tool_name.as_deref() == Some("Agent") {
                if let Some(agent) = spawned_agent(&ev.text) {
                    ev.facts.push(Fact::AgentLink {
                        tool_use_id: ev.tool_use_id.clone(),
                        agent_id: agent,
                    });
                }
            }
            cx.emit(out, ev);
            Handled::Known
        }
        Some(_) => Handled::Unknown,
        None => Handled::Broken,
    }
}

/// The sub-agent an `Agent` result names (`agent_id: agent-0`), as its folder's id without the
/// `agent-` prefix (what the sub-agent's session key ends in).
fn spawned_agent(output: &str) -> Option<String> {
    let line = output
        .lines()
        .take(4)
        .find_map(|l| l.trim().strip_prefix("agent_id:"))?;
    agent_key(line.trim())
}

/// An agent folder's name as the key of its session: `agent-0` → `0`; `None` when it is not a
/// plain name.
fn agent_key(folder: &str) -> Option<String> {
    let key = folder.strip_prefix("agent-").unwrap_or(folder);
    (!key.is_empty()
        && key.len() <= 64
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
    .then(|| key.to_string())
}

/// The `session_<uuid>` folder and the agent's folder name of an `agents/<id>/wire.jsonl`.
fn place(path: &Path) -> Option<(&Path, &str)> {
    if path.file_name()? != "wire.jsonl" {
        return None;
    }
    let agent_dir = path.parent()?;
    let agents = agent_dir.parent()?;
    if agents.file_name()? != "agents" {
        return None;
    }
    Some((agents.parent()?, agent_dir.file_name()?.to_str()?))
}

/// Whether a head record is one of Kimi Code's (a flat record named by a dotted type).
fn is_kimi_code_record(v: &Value) -> bool {
    let kind = str_of(v, "type").unwrap_or("");
    kind.starts_with("context.") || kind.starts_with("turn.") || kind == "config.update"
}

/// `workDir` and `title` of the session's `state.json`.
fn session_state(session_dir: &Path) -> (Option<String>, Option<String>) {
    let Some(text) = super::agent::small_sidecar(&session_dir.join("state.json"), "state.json")
    else {
        return (None, None);
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return (None, None);
    };
    let get = |k: &str| str_of(&v, k).map(str::to_string);
    (get("workDir"), get("title"))
}

/// Fills what `state.json` says of the session when the records do not: its working directory
/// and (for the main agent) its title.
struct StateSink<'a> {
    inner: &'a mut dyn EventSink,
    cwd: Option<String>,
    title: Option<String>,
}

impl EventSink for StateSink<'_> {
    fn session(&mut self, start: SessionStart) {
        self.inner.session(start);
    }

    fn event(&mut self, event: ParsedEvent) {
        self.inner.event(event);
    }

    fn end_session(&mut self, mut meta: SessionMeta, outcome: Outcome) {
        if meta.cwd.is_none() {
            meta.cwd = self.cwd.take();
        }
        if meta.title.is_none() {
            meta.title = self.title.take().map(|t| cap_chars(t.trim(), 500));
        }
        self.inner.end_session(meta, outcome);
    }
}

/// The Kimi Code reader.
pub struct Reader;

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<KimiCodeState>()
    }
    fn agent(&self) -> Agent {
        Agent::KimiCode
    }

    fn name(&self) -> &'static str {
        "kimi_code"
    }

    fn label(&self) -> &'static str {
        "Kimi Code"
    }

    /// `$KIMI_CODE_HOME/sessions`, else `~/.kimi-code/sessions`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir_or_home("KIMI_CODE_HOME", ".kimi-code")
            .map(|d| vec![d.join("sessions")])
            .unwrap_or_default()
    }

    /// `…/agents/<id>/wire.jsonl` in Kimi Code's record format (Kimi CLI's own `wire.jsonl`
    /// is `{timestamp, message{type, payload}}` and sits beside its `context.jsonl`). The
    /// `main` agent is the session; any other agent folder is a sub-agent.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        let (session_dir, agent) = place(path)?;
        let rank = match head.first(is_kimi_code_record) {
            Some(i) => Rank::Record(i),
            None if head.records().iter().all(|r| str_of(r, "type").is_some()) => Rank::Name,
            None => return None,
        };
        let layout = if agent == "main" {
            Layout::Main
        } else {
            Layout::Subagent {
                parent_session_hint: session_dir.file_name()?.to_str().map(str::to_string),
                agent_id_hint: Some(agent_key(agent)?),
                sidecar: None,
            }
        };
        Some(Recognised { layout, rank })
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> std::io::Result<ReadEnd> {
        let subagent = matches!(file.layout, Layout::Subagent { .. });
        let (cwd, title) = place(&file.path)
            .map(|(dir, _)| session_state(dir))
            .unwrap_or_default();
        let mut state = StateSink {
            inner: sink,
            cwd,
            title: title.filter(|_| !subagent),
        };
        let mut wrapped = NoIdsSink {
            inner: &mut state,
            subagent,
            mtime: file_mtime(&file.path),
        };
        read_jsonl(file, from, limits, &mut wrapped, || {
            TranscriptParser::new(Agent::KimiCode)
        })
    }

    /// The `session_<uuid>` folder's name.
    fn file_session_id(&self, file: &TranscriptFile, _meta: &SessionMeta) -> Option<String> {
        let (dir, _) = place(&file.path)?;
        Some(
            crate::sources::episodes::bounds::safe_id(&dir.file_name()?.to_string_lossy())
                .into_owned(),
        )
        .filter(|s| !s.is_empty())
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("kimi --session {quoted_session_id}"))
    }
}

#[cfg(test)]
mod tests;
