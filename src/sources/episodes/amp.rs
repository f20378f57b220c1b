//! Amp (Sourcegraph's coding agent: the CLI and the editor extensions) threads:
//! `$XDG_DATA_HOME/amp/threads/T-<uuid>.json` (default `~/.local/share/amp/threads`), one JSON
//! document per thread, rewritten whole as the thread goes on (`v` counts the writes).
//!
//! A thread is `{v, id:"T-…", created (epoch ms), title?, env{initial{trees[{uri, displayName}],
//! platform{client, clientType, clientVersion, os}}}, meta{agentMode, traces[{name, startTime,
//! endTime}], …}, messages[]}`; a message `{role: user|assistant, messageId, content[],
//! meta?{sentAt (ms)}, usage?{model, timestamp (ISO)}, state?{type, stopReason}}`. Blocks:
//! `text`, `thinking{thinking}` (often empty beside its encrypted `signature`), `tool_use{id:
//! "TU-…", name, input, complete}` on assistant messages, with `startTime`/`finalTime` (ms) on
//! text and thinking; `tool_result{toolUseID, run{status, result | error{message}}}` on the
//! `user` messages that answer the calls (plumbing, not what a person typed; older threads spell
//! it `tool_use_id` with a `content`). A result is a string (`Task`), `{output, exitCode}` (a
//! shell command), `{content[{text}]}` (`skill`), `{files[{uri, diff}], summary}`
//! (`apply_patch`) or `{content}` / `{diff}`.
//!
//! The session id is the thread's `id` (the file's name), the cwd the path of
//! `env.initial.trees[0].uri`; times are `created`, a user message's `meta.sentAt`, an assistant
//! message's `usage.timestamp` (a text or thinking block's own `startTime` when it has one), and
//! the traces' `endTime`; a tool result has none of its own. A `Task` call's sub-agent keeps no
//! turns in the parent thread (nor a thread of its own): the call is read as a spawn fact and
//! its answer as the call's result. Resume: `amp threads continue <id>`.
//!
//! Amp is closed source. What is read here was checked against kenn-io/agentsview's parser
//! (`internal/parser/amp.go`, read, nothing copied) and the real thread empathic/toolpath
//! captured with Amp 0.0.1785170481 (`test-fixtures/amp/convo.json`, an `amp threads export`,
//! whose shape agrees with agentsview's: `shell_command`, `apply_patch`, `Task`, `skill`, an
//! exit code 1). Not confirmed: that the file Amp keeps on disk is byte for byte that export
//! (no capture of `threads/` itself is public); the input keys of tools that thread does not use
//! (`Bash{cmd}`, `edit_file`/`create_file`/`undo_edit{path}`, from agentsview's taxonomy and
//! older threads); run statuses other than `done`, `error` and `cancelled`; and an assistant
//! message's `state.type` `error` or `cancelled` (read as an error event and an abort).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    read_json_document, AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised,
    Resume, StoreKind,
};
use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::model::{EventType, Fact, ParsedEvent};
use super::parser::{
    cap_chars, command_program, content_text, file_uri_path, norm_time, patch_files,
    render_tool_input, str_of, Ctx, Handled, TranscriptParser,
};
use crate::sources::agent_knowledge::ms_to_rfc3339;

/// Largest thread read (it is parsed whole; its encrypted reasoning makes it large); a larger
/// one is counted oversized.
const MAX_JSON_BYTES: u64 = 64 * 1024 * 1024;

/// Amp's rules keep nothing between records: a result names its call, whose name the shared
/// context remembers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AmpState {}

/// Epoch milliseconds → RFC 3339.
fn ms(v: Option<&Value>) -> Option<String> {
    ms_to_rfc3339(v?.as_i64()?)
}

/// A thread id as Amp writes it: `T-` and an alphanumeric, then letters, digits, `-` and `_`.
fn is_thread_id(id: &str) -> bool {
    id.strip_prefix("T-").is_some_and(|rest| {
        rest.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for AmpState {
    const FORMAT: &'static str = "amp";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

/// One record of a thread: its header (everything but `messages`), or one message.
pub(crate) fn feed(
    cx: &mut Ctx,
    _st: &mut AmpState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    match str_of(rec, "role") {
        Some("user") => user(cx, rec, out),
        Some("assistant") => assistant(cx, rec, out),
        Some(_) => Handled::Unknown,
        None if rec.get("content").is_some() => Handled::Broken,
        None if ["id", "env", "created"]
            .iter()
            .any(|k| rec.get(*k).is_some()) =>
        {
            header(cx, rec);
            Handled::Known
        }
        None => Handled::Unknown,
    }
}

fn header(cx: &mut Ctx, rec: &Value) {
    if let Some(id) = str_of(rec, "id").filter(|id| is_thread_id(id)) {
        cx.meta.session_id = Some(id.to_string());
    }
    if let Some(created) = ms(rec.get("created")) {
        cx.meta.created_at = Some(created.clone());
        cx.touch_time(Some(&created));
    }
    if let Some(title) = str_of(rec, "title") {
        cx.set_title(title, 2);
    }
    let initial = rec.pointer("/env/initial");
    if let Some(uri) = initial
        .and_then(|i| i.pointer("/trees/0/uri"))
        .and_then(Value::as_str)
        .filter(|u| !u.trim().is_empty())
    {
        cx.meta.cwd = Some(file_uri_path(uri));
    }
    if let Some(platform) = initial.and_then(|i| i.get("platform")) {
        if let Some(v) = str_of(platform, "clientVersion") {
            cx.meta.version = Some(v.to_string());
        }
        if let Some(client) = str_of(platform, "clientType").or_else(|| str_of(platform, "client"))
        {
            cx.meta.entrypoint = Some(client.to_string());
        }
    }
    let meta = rec.get("meta");
    if let Some(mode) =
        str_of(rec, "agentMode").or_else(|| meta.and_then(|m| str_of(m, "agentMode")))
    {
        cx.meta.agent_preset = Some(mode.to_string());
    }
    let traces = meta.and_then(|m| m.get("traces")).and_then(Value::as_array);
    for trace in traces.into_iter().flatten() {
        cx.touch_time(norm_time(trace.get("endTime")).as_deref());
    }
}

/// A person's message, or the plumbing that carries tool results back (both `role:"user"`).
fn user(cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
    let time = ms(rec.pointer("/meta/sentAt"));
    cx.touch_time(time.as_deref());
    let blocks = match rec.get("content") {
        Some(Value::Array(blocks)) => blocks.as_slice(),
        Some(Value::String(text)) => {
            said(cx, time, text.clone(), out);
            return Handled::Known;
        }
        _ => return Handled::Broken,
    };
    let mut text = String::new();
    for block in blocks {
        match str_of(block, "type") {
            Some("text") => {
                if let Some(t) = str_of(block, "text") {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(t);
                }
            }
            Some("tool_result") => {
                said(cx, time.clone(), std::mem::take(&mut text), out);
                tool_result(cx, block, out);
            }
            _ => {}
        }
    }
    said(cx, time, text, out);
    Handled::Known
}

/// What a person typed (`/…`: a command); nothing when blank.
fn said(cx: &mut Ctx, time: Option<String>, text: String, out: &mut Vec<ParsedEvent>) {
    if text.trim().is_empty() {
        return;
    }
    let kind = if text.trim_start().starts_with('/') {
        EventType::UserCommand
    } else {
        EventType::UserMessage
    };
    cx.emit(out, ParsedEvent::new(kind, time, text));
}

fn tool_result(cx: &mut Ctx, block: &Value, out: &mut Vec<ParsedEvent>) {
    let id = str_of(block, "toolUseID")
        .or_else(|| str_of(block, "tool_use_id"))
        .unwrap_or("");
    let (text, is_error) = match block.get("run") {
        Some(run) => run_text(run),
        None => (
            block.get("content").map(content_text).unwrap_or_default(),
            block.get("is_error").and_then(Value::as_bool) == Some(true),
        ),
    };
    let mut ev = ParsedEvent::new(EventType::ToolResult, None, text);
    ev.tool_name = cx.tool_name(id);
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.is_error = is_error;
    cx.emit(out, ev);
}

/// A run's text and whether it failed: its result, else its error; a shell command failed when
/// it exited non-zero.
fn run_text(run: &Value) -> (String, bool) {
    let status = str_of(run, "status").unwrap_or("");
    let failed = matches!(status, "error" | "cancelled");
    match run.get("result").filter(|r| !r.is_null()) {
        Some(result) => {
            let exit = result.get("exitCode").and_then(Value::as_i64);
            (result_text(result), failed || exit.is_some_and(|c| c != 0))
        }
        None => {
            let text = match run.get("error") {
                Some(e) => str_of(e, "message")
                    .map(str::to_string)
                    .unwrap_or_else(|| e.to_string()),
                None if failed => format!("[{status}]"),
                None => String::new(),
            };
            (text, failed)
        }
    }
}

/// The readable text of a tool's result, by the shapes Amp's tools return.
fn result_text(result: &Value) -> String {
    match result {
        Value::String(s) => s.clone(),
        Value::Object(map) => {
            for key in ["output", "content", "diff"] {
                match map.get(key) {
                    Some(Value::String(s)) => return s.clone(),
                    Some(v @ Value::Array(_)) => return content_text(v),
                    _ => {}
                }
            }
            if let Some(files) = map.get("files").and_then(Value::as_array) {
                let mut parts: Vec<String> = str_of(result, "summary")
                    .map(str::to_string)
                    .into_iter()
                    .collect();
                parts.extend(
                    files
                        .iter()
                        .filter_map(|f| str_of(f, "diff"))
                        .map(str::to_string),
                );
                return parts.join("\n");
            }
            result.to_string()
        }
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Array(_) => content_text(result),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn assistant(cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
    let Some(blocks) = rec.get("content").and_then(Value::as_array) else {
        return Handled::Broken;
    };
    let time = norm_time(rec.pointer("/usage/timestamp"));
    cx.touch_time(time.as_deref());
    if let Some(model) = rec.pointer("/usage/model").and_then(Value::as_str) {
        cx.meta.model = Some(cap_chars(model, 200));
    }
    for block in blocks {
        let at = ms(block.get("startTime")).or_else(|| time.clone());
        cx.touch_time(at.as_deref());
        match str_of(block, "type") {
            Some("text") => {
                let text = str_of(block, "text").unwrap_or("").to_string();
                cx.emit(out, ParsedEvent::new(EventType::AssistantMessage, at, text));
            }
            Some("thinking") => {
                let text = str_of(block, "thinking").unwrap_or("").to_string();
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::AssistantThinking, at, text),
                );
            }
            Some("tool_use") => tool_use(cx, block, at, out),
            _ => {}
        }
    }
    match rec.pointer("/state/type").and_then(Value::as_str) {
        Some("cancelled") => cx.outcome.aborted(),
        Some("error") => {
            let error = rec.pointer("/state/error");
            let text = error
                .and_then(|e| str_of(e, "message"))
                .map(str::to_string)
                .or_else(|| error.map(Value::to_string))
                .unwrap_or_else(|| "error".to_string());
            cx.emit(out, ParsedEvent::new(EventType::SystemError, time, text));
        }
        _ => {}
    }
    Handled::Known
}

fn tool_use(cx: &mut Ctx, block: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    let name = str_of(block, "name").unwrap_or("tool");
    let id = str_of(block, "id").unwrap_or("");
    let input = block.get("input").cloned().unwrap_or(Value::Null);
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
}

/// Facts of a call, by Amp's tool names.
fn call_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(input, k).map(str::to_string);
    match name {
        "shell_command" | "Bash" => arg("command")
            .or_else(|| arg("cmd"))
            .as_deref()
            .and_then(command_program)
            .map(|program| Fact::Command { program })
            .into_iter()
            .collect(),
        "apply_patch" => arg("patchText")
            .or_else(|| arg("patch"))
            .map(|p| patch_files(&p))
            .unwrap_or_default()
            .into_iter()
            .map(|path| Fact::FileEdit { path })
            .collect(),
        "edit_file" | "create_file" | "undo_edit" => arg("path")
            .or_else(|| arg("file_path"))
            .map(|path| Fact::FileEdit { path })
            .into_iter()
            .collect(),
        "Task" => vec![Fact::Spawn {
            tool_use_id: (!id.is_empty()).then(|| id.to_string()),
            subagent_type: None,
            name: None,
            description: arg("description")
                .or_else(|| arg("prompt"))
                .map(|d| cap_chars(&d, 500)),
            team_name: None,
        }],
        "skill" => arg("name")
            .map(|name| Fact::SkillUse {
                name,
                via: "tool".into(),
            })
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// The Amp reader.
pub struct Reader;

/// `T-<id>.json`, the name Amp gives a thread's file.
fn is_thread_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".json"))
        .is_some_and(is_thread_id)
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<AmpState>()
    }
    fn agent(&self) -> Agent {
        Agent::Amp
    }

    fn name(&self) -> &'static str {
        "amp"
    }

    fn label(&self) -> &'static str {
        "Amp"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Rewritten
    }

    /// `$XDG_DATA_HOME/amp/threads`, else `~/.local/share/amp/threads`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir("XDG_DATA_HOME")
            .or_else(|| env.home().map(|h| h.join(".local/share")))
            .map(|d| vec![d.join("amp").join("threads")])
            .unwrap_or_default()
    }

    /// A thread's file by its name, wherever it is (a torn one too: it is counted).
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        is_thread_file(path).then_some(Recognised {
            layout: Layout::Main,
            rank: Rank::Name,
        })
    }

    fn read(
        &self,
        file: &TranscriptFile,
        _from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> std::io::Result<ReadEnd> {
        let parser = TranscriptParser::new(Agent::Amp);
        let max_record = limits.max_line_bytes;
        read_json_document(file, MAX_JSON_BYTES, max_record, parser, "messages", sink)
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("amp threads continue {quoted_session_id}"))
    }

    /// A thread's file, rewritten whole.
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        is_thread_file(changed).then(|| changed.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::episodes::agent::read_whole;
    use serde_json::json;

    fn thread(dir: &Path, doc: &Value) -> TranscriptFile {
        let threads = dir.join("amp/threads");
        std::fs::create_dir_all(&threads).expect("mkdir");
        let id = str_of(doc, "id").unwrap_or("T-x");
        let path = threads.join(format!("{id}.json"));
        std::fs::write(&path, serde_json::to_vec_pretty(doc).expect("json")).expect("write");
        let file = super::super::agents::recognise(&path).expect("recognised");
        assert_eq!(file.kind, Agent::Amp);
        file
    }

    #[test]
    fn blocks_results_times_and_facts() {
        let dir = tempfile::tempdir().expect("tmp");
        let doc = json!({
            "v": 12, "id": "T-0a1b2c3d-0000-7000-8000-000000000001", "created": 1785177254351_i64,
            "title": "Count the words",
            "env": {"initial": {"trees": [{"uri": "file:///home/dev/notes%20app", "displayName": "notes app"}],
                "platform": {"client": "VS Code CLI Execute Mode", "clientType": "cli", "clientVersion": "0.0.1785170481"}}},
            "meta": {"agentMode": "smart", "traces": [{"name": "agent", "startTime": "2026-07-27T18:34:15.000Z", "endTime": "2026-07-27T18:35:20.054Z"}]},
            "messages": [
                {"role": "user", "messageId": 1, "meta": {"sentAt": 1785177255723_i64},
                 "content": [{"type": "text", "text": "count the words in notes.md"}]},
                {"role": "assistant", "messageId": 2, "usage": {"model": "claude-sonnet-4-5", "timestamp": "2026-07-27T18:34:20.295Z"},
                 "state": {"type": "complete", "stopReason": "tool_use"},
                 "content": [
                    {"type": "thinking", "thinking": "", "signature": "x"},
                    {"type": "text", "text": "Counting.", "startTime": 1785177259924_i64},
                    {"type": "tool_use", "id": "TU-1", "name": "shell_command", "input": {"command": "wc -w notes.md", "workdir": "/home/dev/notes app"}, "complete": true},
                    {"type": "tool_use", "id": "TU-2", "name": "apply_patch", "input": {"patchText": "*** Begin Patch\n*** Update File: notes.md\n@@\n-a\n+b\n*** End Patch"}, "complete": true},
                    {"type": "tool_use", "id": "TU-3", "name": "Task", "input": {"prompt": "count again", "description": "Recount"}, "complete": true}]},
                {"role": "user", "messageId": 3, "content": [
                    {"type": "tool_result", "toolUseID": "TU-1", "run": {"status": "done", "result": {"output": "wc: notes.md: No such file", "exitCode": 1}}},
                    {"type": "tool_result", "toolUseID": "TU-2", "run": {"status": "done", "result": {"files": [{"uri": "file:///home/dev/notes%20app/notes.md", "diff": "-a\n+b"}], "summary": "update: notes.md (+1/-1)"}}},
                    {"type": "tool_result", "toolUseID": "TU-3", "run": {"status": "error", "error": {"message": "sub-agent timed out"}}}]},
                {"role": "info", "content": []},
                {"role": "assistant", "content": "not blocks"}
            ]
        });
        let file = thread(dir.path(), &doc);
        let (sink, end) = read_whole(&file).expect("read");
        let s = &sink.sessions[0];
        let types: Vec<&str> = s.events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types,
            [
                "user/message",
                "assistant/message",
                "assistant/tool_use",
                "assistant/tool_use",
                "assistant/tool_use",
                "tool/result",
                "tool/result",
                "tool/result"
            ]
        );
        assert_eq!(
            s.events[0].time.as_deref(),
            Some("2026-07-27T18:34:15.723Z")
        );
        assert_eq!(
            s.events[1].time.as_deref(),
            Some("2026-07-27T18:34:19.924Z")
        );
        assert_eq!(
            s.events[2].time.as_deref(),
            Some("2026-07-27T18:34:20.295Z")
        );
        assert_eq!(
            s.events[2].facts,
            vec![Fact::Command {
                program: "wc".into()
            }]
        );
        assert_eq!(
            s.events[3].facts,
            vec![Fact::FileEdit {
                path: "notes.md".into()
            }]
        );
        assert!(
            matches!(&s.events[4].facts[0], Fact::Spawn { description: Some(d), .. } if d == "Recount")
        );
        let results: Vec<(bool, Option<&str>)> = s.events[5..]
            .iter()
            .map(|e| (e.is_error, e.tool_name.as_deref()))
            .collect();
        assert_eq!(
            results,
            [
                (true, Some("shell_command")),
                (false, Some("apply_patch")),
                (true, Some("Task"))
            ]
        );
        assert!(s.events[6].text.starts_with("update: notes.md (+1/-1)\n-a"));
        assert_eq!(s.events[7].text, "sub-agent timed out");
        let m = &s.meta;
        assert_eq!(
            m.session_id.as_deref(),
            Some("T-0a1b2c3d-0000-7000-8000-000000000001")
        );
        assert_eq!(m.cwd.as_deref(), Some("/home/dev/notes app"));
        assert_eq!(m.title.as_deref(), Some("Count the words"));
        assert_eq!(m.created_at.as_deref(), Some("2026-07-27T18:34:14.351Z"));
        assert_eq!(m.last_event_at.as_deref(), Some("2026-07-27T18:35:20.054Z"));
        assert_eq!(m.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(m.agent_preset.as_deref(), Some("smart"));
        assert_eq!(
            (end.total.skipped_unknown, end.total.skipped_broken),
            (1, 1),
            "an unknown role and an assistant message without blocks"
        );
    }

    #[test]
    fn thread_files_by_name_and_the_default_root() {
        for (name, ok) in [
            ("T-019fa4db-29cf-70c9-8d9b-81524df70e52.json", true),
            ("T-abc.json", true),
            ("T-.json", false),
            ("T--x.json", false),
            ("T-a b.json", false),
            ("T-abc.jsonl", false),
            ("threads.json", false),
        ] {
            assert_eq!(is_thread_file(Path::new(name)), ok, "{name}");
        }
        let env = Env::of(&[("HOME", Path::new("/home/me"))]);
        assert_eq!(
            Reader.roots(&env),
            vec![PathBuf::from("/home/me/.local/share/amp/threads")]
        );
        let env = Env::of(&[
            ("HOME", Path::new("/home/me")),
            ("XDG_DATA_HOME", Path::new("/data")),
        ]);
        assert_eq!(Reader.roots(&env), vec![PathBuf::from("/data/amp/threads")]);
    }
}
