//! Crush's mapping of a session's messages and their parts into events: text, reasoning, tool
//! calls and results, shell commands, finishes, a child session's spawn, the facts read from
//! calls. Kept apart from the store's layout and reading (`super`).

use super::*;

/// Who wrote a session's `user` text.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Speaker {
    Person,
    ParentAgent,
}

/// Pushes one session in full; returns its counters.
pub(super) fn push_session(
    conn: &Connection,
    s: &SessionRow,
    cwd: Option<&str>,
    msg_cols: &[String],
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> rusqlite::Result<ParseStats> {
    sink.session(SessionStart {
        session_id: s.id.clone(),
        replace: true,
    });
    let mut cx = Ctx::default();
    cx.meta.session_id = Some(s.id.clone());
    cx.meta.cwd = cwd.map(str::to_string);
    if let Some(t) = &s.title {
        cx.set_title(t, 2);
    }
    let speaker = if s.parent_id.is_some() {
        Speaker::ParentAgent
    } else {
        Speaker::Person
    };
    let has = |c: &str| msg_cols.iter().any(|n| n == c);
    let pick = |c: &'static str| if has(c) { c } else { "NULL" };
    let (time_col, summary_col, model_col) = (
        pick("created_at"),
        pick("is_summary_message"),
        pick("model"),
    );
    let sql = format!(
        "SELECT role, length(CAST(parts AS BLOB)),
                CASE WHEN length(CAST(parts AS BLOB)) <= ?2 THEN parts END,
                {time_col}, {summary_col}, {model_col}
         FROM messages WHERE session_id = ?1 ORDER BY {time_col}, rowid"
    );
    let mut st = conn.prepare_cached(&sql)?;
    let max = limits.max_line_bytes as i64;
    let rows = st.query_map(params![s.id, max], |r| {
        Ok((
            col(r, 0, lossy_text),
            col(r, 1, int).unwrap_or(0),
            col(r, 2, lossy_text),
            col(r, 3, int),
            col(r, 4, int).unwrap_or(0) != 0,
            col(r, 5, lossy_text),
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (role, len, parts, secs, summary, model) = row?;
        cx.stats.lines += 1;
        let Some(text) = parts else {
            if len > 0 {
                cx.stats.skipped_oversized += 1;
            } else {
                cx.stats.skipped_broken += 1;
            }
            continue;
        };
        let Ok(Value::Array(parts)) = serde_json::from_str::<Value>(&text) else {
            cx.stats.skipped_broken += 1;
            continue;
        };
        let time = secs.and_then(crush_time);
        cx.touch_time(time.as_deref());
        if let Some(m) = model.filter(|m| !m.is_empty()) {
            cx.meta.model = Some(cap_chars(&m, 200));
        }
        let msg = Msg {
            role: role.as_deref().unwrap_or(""),
            speaker,
            summary,
            time,
        };
        for part in &parts {
            msg.part(&mut cx, part, &mut out);
        }
        for ev in out.drain(..) {
            sink.event(ev);
        }
    }
    if cx.meta.created_at.is_none() {
        cx.meta.created_at = s.created.and_then(crush_time);
    }
    if let Some(parent) = &s.parent_id {
        describe_child(conn, &mut cx, s, parent)?;
    }
    let outcome = cx.outcome.outcome();
    let stats = cx.stats;
    sink.end_session(cx.meta, outcome);
    Ok(stats)
}

/// One message row being read: what its parts become depends on these.
pub(super) struct Msg<'a> {
    role: &'a str,
    speaker: Speaker,
    summary: bool,
    time: Option<String>,
}

impl Msg<'_> {
    fn part(&self, cx: &mut Ctx, part: &Value, out: &mut Vec<ParsedEvent>) {
        let data = part.get("data").unwrap_or(&Value::Null);
        let time = self.time.clone();
        match str_of(part, "type").unwrap_or("") {
            "text" => {
                let text = str_of(data, "text").unwrap_or("").to_string();
                if text.trim().is_empty() {
                    return;
                }
                let ty = match self.role {
                    _ if self.summary => EventType::SystemSummary,
                    "user" => match self.speaker {
                        Speaker::ParentAgent => EventType::AgentPrompt,
                        Speaker::Person if text.trim_start().starts_with('/') => {
                            EventType::UserCommand
                        }
                        Speaker::Person => EventType::UserMessage,
                    },
                    "assistant" => EventType::AssistantMessage,
                    "system" => EventType::SystemContext,
                    _ => {
                        cx.stats.skipped_unknown += 1;
                        return;
                    }
                };
                cx.emit(out, ParsedEvent::new(ty, time, text));
            }
            "reasoning" => {
                let text = str_of(data, "thinking").unwrap_or("").to_string();
                if !text.trim().is_empty() {
                    cx.emit(
                        out,
                        ParsedEvent::new(EventType::AssistantThinking, time, text),
                    );
                }
            }
            "tool_call" => tool_call(cx, data, time, out),
            "tool_result" => {
                let id = str_of(data, "tool_call_id").unwrap_or("");
                let text = str_of(data, "content").unwrap_or("").to_string();
                let mut ev = ParsedEvent::new(EventType::ToolResult, time, text);
                ev.tool_name = str_of(data, "name")
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .or_else(|| cx.tool_name(id));
                ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
                ev.is_error = data.get("is_error").and_then(Value::as_bool) == Some(true);
                cx.emit(out, ev);
            }
            "finish" => match str_of(data, "reason") {
                Some("canceled") => cx.outcome.aborted(),
                Some("error") => {
                    let text = [str_of(data, "message"), str_of(data, "details")]
                        .into_iter()
                        .flatten()
                        .filter(|s| !s.trim().is_empty())
                        .collect::<Vec<_>>()
                        .join("\n");
                    let text = if text.is_empty() {
                        "error".to_string()
                    } else {
                        text
                    };
                    cx.emit(out, ParsedEvent::new(EventType::SystemError, time, text));
                }
                _ => cx.stats.ignored += 1,
            },
            "shell_command" => {
                let command = str_of(data, "command").unwrap_or("").to_string();
                if command.trim().is_empty() {
                    return;
                }
                let mut ev =
                    ParsedEvent::new(EventType::UserCommand, time.clone(), format!("!{command}"));
                ev.facts = command_program(&command)
                    .map(|program| Fact::Command { program })
                    .into_iter()
                    .collect();
                cx.emit(out, ev);
                let output = str_of(data, "output").unwrap_or("").to_string();
                let mut res = ParsedEvent::new(EventType::ToolResult, time, output);
                res.tool_name = Some("shell".to_string());
                res.is_error = data
                    .get("exit_code")
                    .and_then(Value::as_i64)
                    .is_some_and(|c| c != 0);
                cx.emit(out, res);
            }
            // Images and files attached to a prompt.
            "binary" | "image_url" => cx.stats.ignored += 1,
            _ => cx.stats.skipped_unknown += 1,
        }
    }
}

/// A call's `input`: a JSON string, parsed when it is JSON.
pub(super) fn call_input(data: &Value) -> Value {
    match data.get("input") {
        Some(Value::String(s)) => {
            serde_json::from_str::<Value>(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

pub(super) fn tool_call(
    cx: &mut Ctx,
    data: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let id = str_of(data, "id").unwrap_or("");
    let name = str_of(data, "name").unwrap_or("tool").to_string();
    let input = call_input(data);
    cx.remember_tool(id, &name);
    let mut ev = ParsedEvent::new(
        EventType::AssistantToolUse,
        time,
        render_tool_input(&name, &input),
    );
    ev.tool_name = Some(name.clone());
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.facts = call_facts(&name, id, &input);
    cx.emit(out, ev);
}

/// Facts of a call, by Crush's tool names (`internal/agent/tools/`).
pub(super) fn call_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(input, k).map(str::to_string);
    match name {
        "bash" => arg("command")
            .as_deref()
            .and_then(command_program)
            .map(|program| Fact::Command { program })
            .into_iter()
            .collect(),
        "edit" | "multiedit" | "write" => arg("file_path")
            .map(|path| Fact::FileEdit { path })
            .into_iter()
            .collect(),
        "agent" | "agentic_fetch" => vec![Fact::Spawn {
            tool_use_id: (!id.is_empty()).then(|| id.to_string()),
            subagent_type: (name != "agent").then(|| name.to_string()),
            name: None,
            description: arg("prompt").map(|d| cap_chars(&d, 500)),
            team_name: None,
        }],
        _ => Vec::new(),
    }
}

/// A child session is its parent's subagent. Its id `<message id>$$<tool call id>` names the
/// call that spawned it; that call's `prompt` is its task (else the session's title).
pub(super) fn describe_child(
    conn: &Connection,
    cx: &mut Ctx,
    s: &SessionRow,
    parent: &str,
) -> rusqlite::Result<()> {
    let meta = &mut cx.meta;
    meta.parent_session_id = Some(parent.to_string());
    meta.agent_id = Some(s.id.clone());
    meta.agent_description = s.title.as_deref().map(|t| cap_chars(t, 500));
    let Some((_, call_id)) = s.id.split_once("$$").filter(|(_, c)| !c.is_empty()) else {
        return Ok(());
    };
    meta.spawn_tool_use_id = Some(call_id.to_string());
    let mut st = conn.prepare_cached(
        "SELECT parts FROM messages WHERE session_id = ?1 AND instr(parts, ?2) > 0 LIMIT 16",
    )?;
    let rows = st.query_map(params![parent, call_id], |r| Ok(col(r, 0, lossy_text)))?;
    for parts in rows {
        let Some(Ok(Value::Array(parts))) = parts?.map(|p| serde_json::from_str::<Value>(&p))
        else {
            continue;
        };
        let call = parts.iter().find_map(|p| {
            let data = p.get("data")?;
            (str_of(p, "type") == Some("tool_call") && str_of(data, "id") == Some(call_id))
                .then_some(data)
        });
        if let Some(call) = call {
            let input = call_input(call);
            if let Some(prompt) = str_of(&input, "prompt").filter(|p| !p.trim().is_empty()) {
                meta.agent_description = Some(cap_chars(prompt, 500));
            }
            if let Some(name) = str_of(call, "name").filter(|n| *n != "agent") {
                meta.agent_name = Some(name.to_string());
            }
            break;
        }
    }
    Ok(())
}
