//! Cline's SDK sessions (the CLI and the desktop app, 2026): `<sessions>/<id>/<id>.messages.json`
//! beside the manifest `<id>.json`; `<sessions>` is `$CLINE_SESSION_DATA_DIR`, else
//! `<data>/sessions` (`~/.cline/data/sessions`). A subagent's transcript sits in its root's
//! folder as `<agentId>.messages.json` (a teammate's `<agentId>__<taskId>.messages.json`),
//! its session id `<root>__<agentId>` (`session-artifacts.ts`, `session-graph.ts`).
//!
//! The messages file is `{version, updated_at, agent: lead|subagent|teammate, sessionId,
//! taskType?, origin{source, mode, sessionId, parentThreadId?, subagent?}, messages[],
//! system_prompt?}`, each message `{id, role: user|assistant, content[], ts (ms), modelInfo?,
//! metrics?}` with Anthropic blocks `text`, `thinking`, `tool_use{id, name, input}`,
//! `tool_result{tool_use_id, name?, content, is_error?}` and `file{path, content}` (a file the
//! person attached: not indexed) (`docs/messages-contract-v1.md`). A tool result's content is a
//! string (often the JSON of `{query, result}`) or a list of `{query, result, error?,
//! success?}`. The manifest is `{session_id, source, started_at, ended_at, status, cwd,
//! workspace_root, model, team_name?, metadata{title, mode, fork{forkedFromSessionId}}}`.
//! `sessions.db` repeats the manifests' rows and is not read.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::sources::agent_knowledge::ms_to_rfc3339;
use crate::sources::episodes::agent::{
    file_mtime, EventSink, Rank, ReadEnd, ReadLimits, Recognised,
};
use crate::sources::episodes::discover::{Layout, TranscriptFile};
use crate::sources::episodes::model::{EventType, Fact, ParsedEvent};
use crate::sources::episodes::parser::{
    cap_chars, command_program, content_text, norm_time, patch_files, render_tool_input, str_of,
    Ctx,
};

use super::MAX_JSON_BYTES;

const SUFFIX: &str = ".messages.json";
/// The first user message of a compacted session (`agentic.compaction.json`).
const SUMMARY_PREFIX: &str = "Context summary:";

/// Whether `path` is a `<x>.messages.json` in a session folder.
pub(super) fn is_messages_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.len() > SUFFIX.len() && n.ends_with(SUFFIX))
        && path.parent().and_then(Path::parent).is_some()
}

/// The folder's name (the root session's id) and the file's stem.
fn names(path: &Path) -> Option<(&str, &str)> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(SUFFIX)?;
    let dir = path.parent()?.file_name()?.to_str()?;
    Some((dir, stem))
}

/// A Cline SDK transcript: by place under `.cline/data/sessions` or a `sessions/` folder whose
/// session has its manifest; elsewhere when the file opens as one.
pub(super) fn recognise(path: &Path) -> Option<Recognised> {
    if !is_messages_file(path) {
        return None;
    }
    let (dir, stem) = names(path)?;
    let sessions = path.parent()?.parent()?;
    let by_place = sessions.file_name()? == "sessions"
        && (sessions.parent().and_then(Path::file_name) == Some("data".as_ref())
            || path.with_file_name(format!("{dir}.json")).is_file());
    let rank = if by_place {
        Rank::Name
    } else if opens_as_messages(path) {
        Rank::Record(0)
    } else {
        return None;
    };
    let layout = if stem == dir {
        Layout::Main
    } else {
        Layout::Subagent {
            parent_session_hint: Some(dir.to_string()),
            agent_id_hint: Some(stem.to_string()),
            sidecar: None,
        }
    };
    Some(Recognised { layout, rank })
}

fn opens_as_messages(path: &Path) -> bool {
    let Ok(file) = crate::sources::regular_file::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(4096).read_to_end(&mut head).is_err() {
        return false;
    }
    let head = String::from_utf8_lossy(&head);
    head.trim_start().starts_with('{')
        && head.contains("\"sessionId\"")
        && head.contains("\"messages\"")
}

/// The manifest of a root transcript's session.
fn manifest_path(path: &Path) -> Option<PathBuf> {
    let (dir, stem) = names(path)?;
    (dir == stem).then(|| path.with_file_name(format!("{dir}.json")))
}

/// The manifest's change counts in a root transcript's fingerprint.
pub(super) fn manifest_modified(path: &Path) -> Option<SystemTime> {
    let manifest = manifest_path(path)?;
    std::fs::metadata(manifest).ok()?.modified().ok()
}

/// A changed transcript is its own store; a changed manifest maps to its session's transcript.
pub(super) fn session_of_change(changed: &Path) -> Option<PathBuf> {
    if is_messages_file(changed) {
        return Some(changed.to_path_buf());
    }
    let stem = changed.file_name()?.to_str()?.strip_suffix(".json")?;
    let dir = changed.parent()?;
    (dir.file_name()? == stem && dir.parent()?.file_name()? == "sessions")
        .then(|| changed.with_file_name(format!("{stem}{SUFFIX}")))
}

/// Reads one transcript (and, for a root session, its manifest) into `sink`.
pub(super) fn read_session(
    file: &TranscriptFile,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    use crate::sources::episodes::bounds::records::{with_records, Record};
    let path = &file.path;
    let f = crate::sources::regular_file::open(path)?;
    let size = f.metadata()?.len();
    let mut cx = Ctx::default();
    let (dir, stem) = names(path).unwrap_or_default();
    let subagent = dir != stem;
    let mut events = Vec::new();
    let max_record = limits.max_line_bytes;
    if size > MAX_JSON_BYTES {
        cx.stats.lines += 1;
        cx.stats.skipped_oversized += 1;
    } else {
        let mut bytes = Vec::new();
        f.take(MAX_JSON_BYTES).read_to_end(&mut bytes)?;
        // `{…, messages: […]}`, or the contract's older form: the messages alone.
        let read = with_records(&bytes, "messages", max_record, |mut records| {
            if let Some(doc) = records.header.take() {
                cx.stats.lines += 1;
                header(&mut cx, &Value::Object(doc), subagent);
            }
            cx.stats.lines += records.oversized;
            cx.stats.skipped_oversized += records.oversized;
            for record in records.parsed(max_record) {
                cx.stats.lines += 1;
                match record {
                    Record::Parsed(msg) if message(&mut cx, &msg, subagent, &mut events) => {}
                    Record::Oversized => cx.stats.skipped_oversized += 1,
                    Record::Parsed(_) | Record::Broken => cx.stats.skipped_broken += 1,
                }
            }
        });
        if read.is_none() {
            cx.stats.lines += 1;
            cx.stats.skipped_broken += 1;
        }
    }
    if let Some(manifest) = manifest_path(path).and_then(|m| super::read_json(&m)) {
        apply_manifest(&mut cx, &manifest);
    }
    if subagent {
        cx.meta
            .parent_session_id
            .get_or_insert_with(|| dir.to_string());
        cx.meta.agent_id = Some(stem.to_string());
    } else if !dir.is_empty() {
        // The folder names the session (`sessionId` and the manifest's `session_id` repeat it;
        // a copied or compacted file may not).
        cx.meta.session_id = Some(dir.to_string());
    }
    if cx.meta.last_event_at.is_none() {
        cx.meta.last_event_at = file_mtime(path);
    }
    for ev in events {
        sink.event(ev);
    }
    crate::sources::episodes::bounds::bound_meta(&mut cx.meta);
    let outcome = cx.outcome.outcome();
    let stats = cx.stats;
    sink.end_session(cx.meta, outcome);
    Ok(ReadEnd {
        start: 0,
        end: size,
        resumed: false,
        cursor: String::new(),
        lines: stats,
        total: stats,
    })
}

fn header(cx: &mut Ctx, doc: &Value, subagent: bool) {
    cx.touch_time(norm_time(doc.get("updated_at")).as_deref());
    let origin = doc.get("origin");
    if subagent {
        if let Some(parent) = origin.and_then(|o| str_of(o, "parentThreadId")) {
            cx.meta.parent_session_id = Some(parent.to_string());
        }
        cx.meta.agent_name = origin
            .and_then(|o| str_of(o, "subagent"))
            .or_else(|| str_of(doc, "agent"))
            .map(str::to_string);
    }
    if let Some(mode) = origin.and_then(|o| str_of(o, "mode")) {
        cx.meta.agent_preset = Some(mode.to_string());
    }
}

fn apply_manifest(cx: &mut Ctx, m: &Value) {
    let meta = m.get("metadata");
    if let Some(cwd) = str_of(m, "cwd")
        .or_else(|| str_of(m, "workspace_root"))
        .filter(|s| !s.trim().is_empty())
    {
        cx.meta.cwd = Some(cwd.to_string());
    }
    if let Some(started) = norm_time(m.get("started_at")) {
        cx.meta.created_at = Some(started.clone());
        cx.touch_time(Some(&started));
    }
    cx.touch_time(norm_time(m.get("ended_at")).as_deref());
    if let Some(model) = str_of(m, "model") {
        cx.meta.model = Some(cap_chars(model, 200));
    }
    if let Some(source) = str_of(m, "source") {
        cx.meta.entrypoint = Some(source.to_string());
    }
    if let Some(team) = str_of(m, "team_name") {
        cx.meta.team_name = Some(team.to_string());
    }
    if let Some(mode) = meta.and_then(|x| str_of(x, "mode")) {
        cx.meta.agent_preset = Some(mode.to_string());
    }
    if let Some(title) = meta.and_then(|x| str_of(x, "title")) {
        cx.set_title(title, 2);
    }
    match str_of(m, "status") {
        Some("failed" | "error") => cx.outcome.task_complete(true),
        Some("cancelled" | "canceled" | "aborted") => cx.outcome.aborted(),
        _ => {}
    }
}

/// `<user_input mode="act">…</user_input>`, as the CLI wraps a prompt: its inside.
fn unwrap_user_input(text: &str) -> &str {
    let t = text.trim();
    if let (Some(open_end), Some(inner_end)) = (t.find('>'), t.rfind("</user_input>")) {
        if t.starts_with("<user_input") && open_end < inner_end {
            return t[open_end + 1..inner_end].trim();
        }
    }
    text
}

/// One message; false when it is not one (no role or content).
fn message(cx: &mut Ctx, msg: &Value, subagent: bool, out: &mut Vec<ParsedEvent>) -> bool {
    let Some(role) = str_of(msg, "role") else {
        return false;
    };
    let time = msg
        .get("ts")
        .and_then(Value::as_i64)
        .and_then(ms_to_rfc3339);
    cx.touch_time(time.as_deref());
    if let Some(model) = msg.pointer("/modelInfo/id").and_then(Value::as_str) {
        cx.meta.model = Some(cap_chars(model, 200));
    }
    let blocks: Vec<Value> = match msg.get("content") {
        Some(Value::Array(b)) => b.clone(),
        Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
        _ => return false,
    };
    let at = |ty, text| ParsedEvent::new(ty, time.clone(), text);
    for block in &blocks {
        match (role, str_of(block, "type")) {
            ("user", Some("text")) => {
                let text = unwrap_user_input(str_of(block, "text").unwrap_or(""));
                let ev = if text.starts_with(SUMMARY_PREFIX) {
                    at(EventType::SystemSummary, text.to_string())
                } else if subagent {
                    // A subagent's prompts are its parent agent's; the first is its task.
                    if cx.meta.agent_description.is_none() {
                        cx.meta.agent_description = Some(cap_chars(text, 500));
                    }
                    at(EventType::AgentPrompt, text.to_string())
                } else {
                    let kind = if text.starts_with('/') {
                        EventType::UserCommand
                    } else {
                        EventType::UserMessage
                    };
                    at(kind, text.to_string())
                };
                cx.emit(out, ev);
            }
            ("user", Some("tool_result")) => {
                tool_result(cx, block, at(EventType::ToolResult, String::new()), out)
            }
            ("assistant", Some("text")) => {
                let text = str_of(block, "text").unwrap_or("").to_string();
                cx.emit(out, at(EventType::AssistantMessage, text));
            }
            ("assistant", Some("thinking")) => {
                let text = str_of(block, "thinking").unwrap_or("").to_string();
                cx.emit(out, at(EventType::AssistantThinking, text));
            }
            ("assistant", Some("tool_use")) => {
                let id = str_of(block, "id").unwrap_or("");
                let name = str_of(block, "name").unwrap_or("tool");
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                cx.remember_tool(id, name);
                let mut ev = at(EventType::AssistantToolUse, render_tool_input(name, &input));
                ev.tool_name = Some(name.to_string());
                ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
                ev.facts = call_facts(name, id, &input);
                cx.emit(out, ev);
            }
            // Attached files and images: what the person pointed at, not what they typed.
            _ => {}
        }
    }
    true
}

fn tool_result(cx: &mut Ctx, block: &Value, mut ev: ParsedEvent, out: &mut Vec<ParsedEvent>) {
    let id = str_of(block, "tool_use_id").unwrap_or("");
    let mut failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
    let content = block.get("content").cloned().unwrap_or(Value::Null);
    // A string that holds the JSON of `{query, result}` (the editor's) reads as that.
    let content = match &content {
        Value::String(s) if s.trim_start().starts_with(['{', '[']) => {
            serde_json::from_str(s).unwrap_or(content)
        }
        _ => content,
    };
    let items: Vec<&Value> = match &content {
        Value::Array(items) => items.iter().collect(),
        v @ Value::Object(_) => vec![v],
        _ => Vec::new(),
    };
    let mut parts = Vec::new();
    let mut link = None;
    for item in &items {
        if item.get("query").is_none()
            && item.get("result").is_none()
            && item.get("error").is_none()
        {
            parts.push(content_text(item));
            continue;
        }
        if let Some(r) = item.get("result") {
            parts.push(match r {
                Value::String(s) => s.clone(),
                other => {
                    link = link.or_else(|| str_of(other, "subAgentId").map(str::to_string));
                    content_text(other)
                }
            });
        }
        if let Some(e) = str_of(item, "error").filter(|e| !e.trim().is_empty()) {
            parts.push(e.to_string());
            failed = true;
        }
        if item.get("success").and_then(Value::as_bool) == Some(false) {
            failed = true;
        }
    }
    ev.text = if items.is_empty() {
        content_text(&content)
    } else {
        parts.retain(|p| !p.trim().is_empty());
        parts.join("\n")
    };
    if ev.text.trim().is_empty() && failed {
        ev.text = "[error]".to_string();
    }
    ev.tool_name = str_of(block, "name")
        .map(str::to_string)
        .or_else(|| cx.tool_name(id));
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.is_error = failed;
    if let Some(agent_id) = link {
        ev.facts.push(Fact::AgentLink {
            tool_use_id: ev.tool_use_id.clone(),
            agent_id,
        });
    }
    cx.emit(out, ev);
}

/// Facts of a call, by the SDK's tools (`extensions/tools/definitions.ts`, `team/`).
fn call_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
    let arg = |k: &str| {
        str_of(input, k)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
    };
    match name {
        "editor" if arg("command").as_deref() != Some("view") => arg("path")
            .map(|path| Fact::FileEdit { path })
            .into_iter()
            .collect(),
        "apply_patch" => arg("input")
            .or_else(|| arg("patch"))
            .map(|p| patch_files(&p))
            .unwrap_or_default()
            .into_iter()
            .map(|path| Fact::FileEdit { path })
            .collect(),
        "run_commands" => {
            let commands = match input.get("commands") {
                Some(Value::Array(c)) => c.iter().filter_map(Value::as_str).collect(),
                Some(Value::String(c)) => vec![c.as_str()],
                _ => arg("command").map(|_| vec![]).unwrap_or_default(),
            };
            commands
                .into_iter()
                .filter_map(command_program)
                .map(|program| Fact::Command { program })
                .collect()
        }
        "skills" => arg("skill")
            .map(|name| Fact::SkillUse {
                name,
                via: "tool".into(),
            })
            .into_iter()
            .collect(),
        "spawn_agent" | "team_spawn_teammate" => vec![Fact::Spawn {
            tool_use_id: (!id.is_empty()).then(|| id.to_string()),
            subagent_type: arg("agentId").or_else(|| arg("name")),
            name: arg("agentId").or_else(|| arg("name")),
            description: arg("task")
                .or_else(|| arg("description"))
                .map(|d| cap_chars(&d, 500)),
            team_name: None,
        }],
        _ => Vec::new(),
    }
}
