//! iFlow CLI (a Gemini CLI fork) sessions: `~/.iflow/projects/<encoded cwd>/session-<uuid>.jsonl`.
//!
//! iFlow writes Claude Code's envelope (`uuid`, `parentUuid`, `sessionId` = `session-<uuid>`,
//! `type` user/assistant, `cwd`, `gitBranch` (may be `null`), `version`, `message`) with Gemini
//! CLI's tools (`read_file{absolute_path}`, `run_shell_command`, `replace`, …). Two things
//! differ, and this module turns them into Claude's shape before Claude's rules read the line:
//! a `tool_result` block's `content` is an object `{callId, responseParts:{functionResponse:
//! {response:{output|error}}}, resultDisplay}` (its status in `toolUseResult.status`), and one
//! reply is streamed as several assistant lines that repeat the `tool_use` blocks already
//! written (the same call id twice), which are kept once.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::agent::{AgentReader, Env, Head, Rank, Recognised};
use super::agents::Agent;
use super::claude::{self, ClaudeState};
use super::discover::Layout;
use super::model::{EventType, Fact, ParsedEvent};
use super::parser::{command_program, str_of, Ctx, Handled};

/// Tool call ids remembered to drop a streamed repeat.
const MAX_CALLS: usize = 64;

/// iFlow's state: Claude's, plus the tool calls already emitted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IFlowState {
    claude: ClaudeState,
    calls: VecDeque<String>,
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for IFlowState {
    const FORMAT: &'static str = "iflow";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut IFlowState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let mut rec = rec.clone();
    let status = rec
        .pointer("/toolUseResult/status")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(blocks) = rec
        .pointer_mut("/message/content")
        .and_then(Value::as_array_mut)
    {
        blocks.retain(|b| !repeated_call(&mut st.calls, b));
        for b in blocks.iter_mut() {
            flatten_result(b, status.as_deref());
        }
    }
    let before = out.len();
    let handled = claude::feed(cx, &mut st.claude, &rec, out);
    // Gemini's tool names: the facts Claude's rules know by Claude's names.
    for ev in out.iter_mut().skip(before) {
        if ev.event_type != EventType::AssistantToolUse {
            continue;
        }
        let fact = ev
            .tool_name
            .as_deref()
            .and_then(|name| call_fact(name, &rec, ev.tool_use_id.as_deref()));
        ev.facts.extend(fact);
    }
    handled
}

/// Whether `b` is a `tool_use` whose id was already emitted (a streamed repeat); notes it.
fn repeated_call(calls: &mut VecDeque<String>, b: &Value) -> bool {
    if str_of(b, "type") != Some("tool_use") {
        return false;
    }
    let Some(id) = str_of(b, "id").filter(|i| !i.is_empty()) else {
        return false;
    };
    if calls.iter().any(|c| c == id) {
        return true;
    }
    if calls.len() >= MAX_CALLS {
        calls.pop_front();
    }
    calls.push_back(id.to_string());
    false
}

/// A `tool_result` whose content is iFlow's object becomes Claude's: its output or error as
/// text, `is_error` from the error or a failed status.
fn flatten_result(b: &mut Value, status: Option<&str>) {
    if str_of(b, "type") != Some("tool_result") {
        return;
    }
    let Some(content) = b.get("content").filter(|c| c.is_object()) else {
        return;
    };
    let response = content.pointer("/responseParts/functionResponse/response");
    let output = response.and_then(|r| str_of(r, "output"));
    let error = response.and_then(|r| str_of(r, "error"));
    let text = error
        .or(output)
        .or_else(|| str_of(content, "resultDisplay"))
        .unwrap_or("")
        .to_string();
    let failed = error.is_some() || matches!(status, Some("error") | Some("cancelled"));
    b["content"] = json!(text);
    if failed {
        b["is_error"] = json!(true);
    }
}

/// The fact of a Gemini-named call, found by its id in the record's blocks.
fn call_fact(name: &str, rec: &Value, id: Option<&str>) -> Option<Fact> {
    let blocks = rec.pointer("/message/content")?.as_array()?;
    let input = blocks
        .iter()
        .find(|b| str_of(b, "type") == Some("tool_use") && str_of(b, "id") == id)?
        .get("input")?;
    match name {
        "run_shell_command" => str_of(input, "command")
            .and_then(command_program)
            .map(|program| Fact::Command { program }),
        "write_file" | "replace" | "edit" => str_of(input, "file_path")
            .or_else(|| str_of(input, "absolute_path"))
            .map(|p| Fact::FileEdit {
                path: p.to_string(),
            }),
        _ => None,
    }
}

/// The iFlow reader.
pub struct Reader;

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<IFlowState>()
    }
    fn agent(&self) -> Agent {
        Agent::IFlow
    }

    fn name(&self) -> &'static str {
        "iflow"
    }

    fn label(&self) -> &'static str {
        "iFlow CLI"
    }

    /// `~/.iflow/projects`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.home()
            .map(|h| vec![h.join(".iflow").join("projects")])
            .unwrap_or_default()
    }

    /// `session-<id>.jsonl` whose head is Claude's envelope with a `session-` id.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        if !name.starts_with("session-") || !name.ends_with(".jsonl") {
            return None;
        }
        let i = head.first(|v| {
            claude::is_claude_record(v)
                && str_of(v, "sessionId").is_some_and(|s| s.starts_with("session-"))
        })?;
        Some(Recognised {
            layout: Layout::Main,
            rank: Rank::Record(i),
        })
    }

    /// As its parent, Gemini CLI, resumes.
    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("iflow --resume {quoted_session_id}"))
    }
}
