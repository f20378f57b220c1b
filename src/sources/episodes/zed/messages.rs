//! Zed's mapping of a thread's document (the current shape and agent-1's) into events: messages,
//! mentions, thinking, tool calls and their results, the facts read from calls. Kept apart from
//! the store's layout and reading (`super`).

use super::*;

/// Who wrote a thread's `User` text.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Speaker {
    Person,
    ParentAgent,
}

/// Pushes one thread in full; returns its counters.
pub(super) fn push_thread(
    conn: &Connection,
    t: &ThreadRow,
    max_record: usize,
    sink: &mut dyn EventSink,
) -> rusqlite::Result<ParseStats> {
    use crate::sources::episodes::bounds::records::{with_records, Record};
    sink.session(SessionStart {
        session_id: t.id.clone(),
        replace: true,
    });
    let mut cx = Ctx::default();
    cx.meta.session_id = Some(t.id.clone());
    cx.meta.cwd = t
        .folder_paths
        .as_deref()
        .and_then(|p| first_folder(p, t.folder_order.as_deref()));
    if let Some(title) = &t.title {
        cx.set_title(title, 2);
    }
    cx.stats.lines += 1;
    let mut out = Vec::new();
    let json = if t.size as u64 > MAX_DOCUMENT_BYTES {
        cx.stats.skipped_oversized += 1;
        None
    } else {
        let mut st = conn.prepare_cached("SELECT data FROM threads WHERE id = ?1")?;
        let data: Option<Vec<u8>> = st
            .query_row(params![t.id], |r| {
                Ok(match r.get_ref(0)? {
                    rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                        Some(b.to_vec())
                    }
                    _ => None,
                })
            })
            .unwrap_or(None);
        match data.map(|d| document(t.data_type.as_deref(), d, MAX_DOCUMENT_BYTES)) {
            Some(Ok(json)) => Some(json),
            Some(Err(Refused::Oversized)) => {
                cx.stats.skipped_oversized += 1;
                None
            }
            Some(Err(Refused::Broken)) | None => {
                cx.stats.skipped_broken += 1;
                None
            }
        }
    };
    // The document a message at a time (`bounds::records`): parsed whole, one costs many times
    // its size.
    let mut header: Option<serde_json::Map<String, Value>> = None;
    let mut parent = t.parent_id.clone();
    if let Some(json) = json {
        let read = with_records(&json, "messages", max_record, |mut records| {
            let Some(doc) = records.header.take() else {
                return false;
            };
            let subagent = doc.get("subagent_context");
            parent = parent.take().or_else(|| {
                subagent
                    .and_then(|s| str_of(s, "parent_thread_id"))
                    .map(str::to_string)
            });
            let speaker = if parent.is_some() {
                Speaker::ParentAgent
            } else {
                Speaker::Person
            };
            if let Some(model) = doc.get("model").and_then(|m| str_of(m, "model")) {
                cx.meta.model = Some(cap_chars(model, 200));
            }
            let text = |key: &str| doc.get(key).and_then(Value::as_str);
            if let Some(title) = text("title").or_else(|| text("summary")) {
                cx.set_title(title, 1);
            }
            cx.stats.lines += records.oversized;
            cx.stats.skipped_oversized += records.oversized;
            // Agent-1 documents (every message an object with a `role`) predate the version
            // field: told apart by a first look at each message.
            let current = text("version") == Some("0.3.0")
                || records.parsed(max_record).any(|r| match r {
                    Record::Parsed(m) => !is_agent1_message(&m),
                    _ => false,
                });
            for record in records.parsed(max_record) {
                match record {
                    Record::Parsed(m) if current => current_message(&mut cx, &m, speaker, &mut out),
                    Record::Parsed(m) => agent1_message(&mut cx, &m, speaker, &mut out),
                    Record::Oversized => {
                        cx.stats.lines += 1;
                        cx.stats.skipped_oversized += 1;
                    }
                    Record::Broken => {
                        cx.stats.lines += 1;
                        cx.stats.skipped_broken += 1;
                    }
                }
                for ev in out.drain(..) {
                    sink.event(ev);
                }
            }
            header = Some(doc);
            true
        });
        if read != Some(true) {
            cx.stats.skipped_broken += 1;
        }
    }
    let subagent = header.as_ref().and_then(|d| d.get("subagent_context"));
    let updated = t.updated.as_deref().and_then(zed_time).or_else(|| {
        header
            .as_ref()
            .and_then(|d| d.get("updated_at"))
            .and_then(Value::as_str)
            .and_then(zed_time)
    });
    cx.meta.created_at = t.created.as_deref().and_then(zed_time).or(updated.clone());
    cx.meta.last_event_at = updated;
    if let Some(parent) = parent {
        cx.meta.parent_session_id = Some(parent);
        cx.meta.agent_id = Some(t.id.clone());
        cx.meta.agent_description = t.title.as_deref().map(|d| cap_chars(d, 500));
        cx.meta.spawn_tool_use_id = subagent
            .and_then(|s| str_of(s, "tool_use_id"))
            .map(str::to_string);
    }
    let outcome = cx.outcome.outcome();
    let stats = cx.stats;
    sink.end_session(cx.meta, outcome);
    Ok(stats)
}

/// An agent-1 message: an object with a `role`.
pub(super) fn is_agent1_message(m: &Value) -> bool {
    m.get("role").is_some()
}

/// The one variant of an externally tagged enum value: `{"Text": "…"}` → `("Text", "…")`.
pub(super) fn variant(v: &Value) -> Option<(&str, &Value)> {
    match v {
        Value::Object(m) if m.len() == 1 => m.iter().next().map(|(k, v)| (k.as_str(), v)),
        Value::String(s) => Some((s.as_str(), &Value::Null)),
        _ => None,
    }
}

/// A `0.3.0` message.
pub(super) fn current_message(
    cx: &mut Ctx,
    m: &Value,
    speaker: Speaker,
    out: &mut Vec<ParsedEvent>,
) {
    cx.stats.lines += 1;
    match variant(m) {
        Some(("User", body)) => {
            let mut text = String::new();
            for item in body
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match variant(item) {
                    Some(("Text", Value::String(s))) => text.push_str(s),
                    // A file, symbol or thread the person attached: its name in the prompt, its
                    // content is context, not what they typed.
                    Some(("Mention", mention)) => {
                        if let Some(name) = mention.get("uri").and_then(mention_name) {
                            text.push_str(&format!("@{name}"));
                        }
                        cx.stats.ignored += 1;
                    }
                    _ => cx.stats.ignored += 1,
                }
            }
            user_text(cx, text, speaker, false, out);
        }
        Some(("Agent", body)) => {
            let results = body.get("tool_results").and_then(Value::as_object);
            let mut answered = Vec::new();
            for item in body
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match variant(item) {
                    Some(("Text", Value::String(s))) => assistant_text(cx, s, out),
                    Some(("Thinking", t)) => thinking(cx, str_of(t, "text").unwrap_or(""), out),
                    Some(("ToolUse", call)) => {
                        let id = str_of(call, "id").unwrap_or("");
                        tool_use(cx, call, out);
                        if let Some(r) = results.and_then(|r| r.get(id)) {
                            tool_result(cx, r, id, out);
                            answered.push(id.to_string());
                        }
                    }
                    _ => cx.stats.ignored += 1,
                }
            }
            // Results whose call is not in the content (never seen; read all the same).
            for (id, r) in results.into_iter().flatten() {
                if !answered.contains(id) {
                    tool_result(cx, r, id, out);
                }
            }
        }
        // Zed asked the model to continue where it left off.
        Some(("Resume", _)) => cx.stats.ignored += 1,
        _ => cx.stats.skipped_unknown += 1,
    }
}

/// An agent-1 (`0.1.0`, `0.2.0` or unversioned) message.
pub(super) fn agent1_message(
    cx: &mut Ctx,
    m: &Value,
    speaker: Speaker,
    out: &mut Vec<ParsedEvent>,
) {
    cx.stats.lines += 1;
    let hidden = m.get("is_hidden").and_then(Value::as_bool) == Some(true);
    let segments = m.get("segments").and_then(Value::as_array);
    let role = str_of(m, "role").unwrap_or("");
    match role {
        "user" => {
            let mut text = String::new();
            for s in segments.into_iter().flatten() {
                if let Some(t) = str_of(s, "text") {
                    text.push_str(t);
                }
            }
            if segments.is_none() {
                text.push_str(str_of(m, "text").unwrap_or(""));
            }
            user_text(cx, text, speaker, hidden, out);
        }
        "assistant" => {
            for s in segments.into_iter().flatten() {
                match str_of(s, "type") {
                    Some("text") => assistant_text(cx, str_of(s, "text").unwrap_or(""), out),
                    Some("thinking") => thinking(cx, str_of(s, "text").unwrap_or(""), out),
                    _ => cx.stats.ignored += 1,
                }
            }
            if segments.is_none() {
                assistant_text(cx, str_of(m, "text").unwrap_or(""), out);
            }
            for call in m
                .get("tool_uses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                tool_use(cx, call, out);
            }
        }
        "system" => {
            cx.stats.ignored += 1;
            return;
        }
        _ => {
            cx.stats.skipped_unknown += 1;
            return;
        }
    }
    // `0.2.0` keeps a call's results on its assistant message, `0.1.0` on the next user one.
    for r in m
        .get("tool_results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = str_of(r, "tool_use_id").unwrap_or("").to_string();
        tool_result(cx, r, &id, out);
    }
}

/// The name a mention shows: the path or URL it points at.
pub(super) fn mention_name(uri: &Value) -> Option<String> {
    let (_, fields) = variant(uri)?;
    ["abs_path", "path", "url", "name", "title"]
        .iter()
        .find_map(|k| str_of(fields, k))
        .map(str::to_string)
}

pub(super) fn user_text(
    cx: &mut Ctx,
    text: String,
    speaker: Speaker,
    hidden: bool,
    out: &mut Vec<ParsedEvent>,
) {
    if text.trim().is_empty() {
        return;
    }
    let ty = match speaker {
        _ if hidden => EventType::SystemContext,
        Speaker::ParentAgent => EventType::AgentPrompt,
        Speaker::Person if text.trim_start().starts_with('/') => EventType::UserCommand,
        Speaker::Person => EventType::UserMessage,
    };
    cx.emit(out, ParsedEvent::new(ty, None, text));
}

pub(super) fn assistant_text(cx: &mut Ctx, text: &str, out: &mut Vec<ParsedEvent>) {
    if !text.trim().is_empty() {
        cx.emit(
            out,
            ParsedEvent::new(EventType::AssistantMessage, None, text.to_string()),
        );
    }
}

pub(super) fn thinking(cx: &mut Ctx, text: &str, out: &mut Vec<ParsedEvent>) {
    if !text.trim().is_empty() {
        cx.emit(
            out,
            ParsedEvent::new(EventType::AssistantThinking, None, text.to_string()),
        );
    }
}

pub(super) fn tool_use(cx: &mut Ctx, call: &Value, out: &mut Vec<ParsedEvent>) {
    let id = str_of(call, "id").unwrap_or("");
    let name = str_of(call, "name").unwrap_or("tool").to_string();
    let input = match call.get("input") {
        Some(v) if !v.is_null() => v.clone(),
        _ => str_of(call, "raw_input")
            .and_then(|r| serde_json::from_str(r).ok())
            .unwrap_or(Value::Null),
    };
    cx.remember_tool(id, &name);
    let mut ev = ParsedEvent::new(
        EventType::AssistantToolUse,
        None,
        render_tool_input(&name, &input),
    );
    ev.tool_name = Some(name.clone());
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.facts = call_facts(&name, id, &input);
    cx.emit(out, ev);
}

pub(super) fn tool_result(cx: &mut Ctx, r: &Value, id: &str, out: &mut Vec<ParsedEvent>) {
    let id = str_of(r, "tool_use_id").unwrap_or(id);
    let mut text = String::new();
    result_text(r.get("content").unwrap_or(&Value::Null), &mut text, 0);
    let mut ev = ParsedEvent::new(EventType::ToolResult, None, text);
    ev.tool_name = str_of(r, "tool_name")
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .or_else(|| cx.tool_name(id));
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.is_error = r.get("is_error").and_then(Value::as_bool) == Some(true);
    cx.emit(out, ev);
}

/// A result's text in each shape Zed's reader accepts: a string, `{"Text": s}`, `{type: text,
/// text}`, `{text}` (any case), a list of these; images are left out.
pub(super) fn result_text(v: &Value, out: &mut String, depth: u8) {
    if depth > 3 {
        return;
    }
    let mut push = |s: &str| {
        if s.trim().is_empty() {
            return;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(s);
    };
    match v {
        Value::String(s) => push(s),
        Value::Array(items) => {
            for item in items {
                result_text(item, out, depth + 1);
            }
        }
        Value::Object(m) => {
            if let Some(Value::String(s)) = field(m, "text") {
                push(s);
            }
        }
        _ => {}
    }
}

/// A field of `m` by its name in any case (as Zed reads a result's content).
pub(super) fn field<'a>(m: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    m.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// Facts of a call, by the Zed agent's tool names.
pub(super) fn call_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(input, k).map(str::to_string);
    match name {
        "terminal" => arg("command")
            .as_deref()
            .and_then(command_program)
            .map(|program| Fact::Command { program })
            .into_iter()
            .collect(),
        "edit_file" | "streaming_edit_file" | "create_file" => arg("path")
            .map(|path| Fact::FileEdit { path })
            .into_iter()
            .collect(),
        "spawn_agent" => vec![Fact::Spawn {
            tool_use_id: (!id.is_empty()).then(|| id.to_string()),
            subagent_type: None,
            name: arg("label").map(|l| cap_chars(&l, 200)),
            description: arg("message").map(|d| cap_chars(&d, 500)),
            team_name: None,
        }],
        _ => Vec::new(),
    }
}
