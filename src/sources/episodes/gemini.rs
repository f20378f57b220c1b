//! Gemini CLI session rules: one JSON record → zero or more [`ParsedEvent`]s.
//!
//! Since 2026-04 Gemini CLI appends JSONL (`chatRecordingService.ts`): a header line
//! `{sessionId, projectHash, startTime, kind, …}`, message lines `{id, timestamp, type, content,
//! thoughts?, toolCalls?, …}`, `{"$set":{…}}` metadata patches and `{"$rewindTo": id}`. A message
//! is appended again, with the same `id`, whenever it changes (a model turn first without, then
//! with its `toolCalls` and their inline results), so this module remembers what it emitted per
//! id and emits only what is new: each text once, each tool call once, each call's result once
//! it has one. A `$set` carrying `messages` is a checkpoint: its messages go through the same
//! rule. `$rewindTo` drops the rewound messages from the conversation, and a message
//! re-appended after the rewind is new again. As Gemini CLI's loader (`loadConversationRecord`)
//! does, the conversation is the messages left after every rewind and checkpoint, each as its
//! last copy: what was read of a message that left it (rewound, checkpointed away, or an earlier
//! text its last copy changed) stays searchable but is marked abandoned and no longer counts
//! for the outcome (see `conversation`). The older single `.json` document holds the same
//! messages in a list and is read through the same rules (see `gemini/reader.rs`).

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{EventType, Fact, ParsedEvent};
use super::parser::{
    cap_chars, command_program, content_text, norm_time, render_tool_input, str_of, text_hash, Ctx,
    Handled,
};

/// Messages whose emitted parts are remembered (a re-append comes right after its first copy).
const MAX_MESSAGES: usize = 64;
/// Tool calls remembered per message.
const MAX_CALLS: usize = 64;

/// What was already emitted of one message id.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Seen {
    id: String,
    /// Hash of the text last emitted (0: none yet).
    text: u64,
    thoughts: usize,
    /// Tool call ids emitted, and whether their result was emitted too.
    calls: Vec<(String, bool)>,
}

/// One message of the conversation as Gemini CLI would load it: its incarnation (how many
/// times its id entered the conversation), its last copy's text hash and tool call ids.
#[derive(Debug, Clone, Default)]
struct Live {
    id: String,
    incarnation: u32,
    text: u64,
    calls: Vec<String>,
}

/// Gemini-specific state kept between lines (small, serialisable), plus, for one whole read,
/// the conversation surveyed (not saved).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GeminiState {
    /// The header said `kind:"subagent"`: its "user" messages are the parent agent's task.
    subagent: bool,
    seen: VecDeque<Seen>,
    /// A record read since the state was restored took something out of the conversation.
    #[serde(skip)]
    rewrote: bool,
    /// The conversation so far, in Gemini CLI's order (the survey of a whole read).
    #[serde(skip)]
    live: Vec<Live>,
    /// The conversation before the checkpoint being read (its ids keep their incarnation).
    #[serde(skip)]
    carried: Vec<Live>,
    #[serde(skip)]
    incarnations: HashMap<String, u32>,
    /// The conversation a whole read ended with (set by [`GeminiState::adopt`]).
    #[serde(skip)]
    verdict: Option<HashMap<String, Live>>,
}

impl GeminiState {
    pub(crate) fn rewrites_past(&self) -> bool {
        self.rewrote
    }

    /// Takes the conversation `survey` ended with; true when something it read left it.
    pub(crate) fn adopt(&mut self, survey: &mut GeminiState) -> bool {
        let live = std::mem::take(&mut survey.live);
        self.verdict = Some(live.into_iter().map(|l| (l.id.clone(), l)).collect());
        survey.rewrote
    }

    /// Notes a copy of message `id` (text hash, call ids); returns its incarnation.
    fn note(&mut self, id: &str, text: u64, calls: Vec<String>) -> u32 {
        if let Some(l) = self.live.iter_mut().find(|l| l.id == id) {
            l.text = text;
            l.calls = calls;
            return l.incarnation;
        }
        let incarnation = match self.carried.iter().position(|l| l.id == id) {
            Some(i) => self.carried.swap_remove(i).incarnation,
            None => {
                let n = self.incarnations.entry(id.to_string()).or_default();
                *n += 1;
                *n
            }
        };
        self.live.push(Live {
            id: id.to_string(),
            incarnation,
            text,
            calls,
        });
        incarnation
    }

    /// `$rewindTo`: the message and all after it leave the conversation (an unknown id: all).
    fn rewind_live(&mut self, id: &str) {
        match self.live.iter().position(|l| l.id == id) {
            Some(i) => self.live.truncate(i),
            None => self.live.clear(),
        }
        self.rewrote = true;
    }

    /// Whether the piece of a message's copy (`incarnation`) is in the conversation: `None`
    /// when no whole read said what the conversation is.
    fn judge(&self, id: &str, incarnation: u32, piece: Piece<'_>) -> Option<&'static str> {
        let verdict = self.verdict.as_ref()?;
        let Some(last) = verdict.get(id).filter(|l| l.incarnation == incarnation) else {
            return Some("rewound");
        };
        let kept = match piece {
            Piece::Thoughts => true,
            Piece::Text(hash) => last.text == hash,
            Piece::Call(call) => last.calls.iter().any(|c| c == call),
        };
        (!kept).then_some("replaced")
    }
}

/// What of a message an event came from.
#[derive(Clone, Copy)]
enum Piece<'a> {
    Thoughts,
    Text(u64),
    Call(&'a str),
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for GeminiState {
    const FORMAT: &'static str = "gemini";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
    fn rewrites_past(&self) -> bool {
        GeminiState::rewrites_past(self)
    }
    fn adopt(&mut self, survey: &mut GeminiState) -> bool {
        GeminiState::adopt(self, survey)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut GeminiState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    if let Some(patch) = rec.get("$set") {
        let Some(patch) = patch.as_object() else {
            return Handled::Broken;
        };
        if let Some(s) = patch.get("summary").and_then(Value::as_str) {
            cx.set_title(s, 2);
        }
        if cx.meta.cwd.is_none() {
            cx.meta.cwd = first_directory(patch.get("directories"));
        }
        if let Some(messages) = patch.get("messages").and_then(Value::as_array) {
            // A checkpoint: the conversation is these messages, and only these.
            st.carried = std::mem::take(&mut st.live);
            st.rewrote = true;
            for m in messages {
                message(cx, st, m, out);
            }
            st.carried.clear();
        }
        return Handled::Known;
    }
    if let Some(target) = rec.get("$rewindTo") {
        let target = target.as_str().unwrap_or("");
        rewind(st, target);
        st.rewind_live(target);
        return Handled::Known;
    }
    if rec.get("type").is_none() && rec.get("sessionId").is_some() {
        header(cx, st, rec);
        if let Some(messages) = rec.get("messages").and_then(Value::as_array) {
            for m in messages {
                message(cx, st, m, out);
            }
        }
        return Handled::Known;
    }
    if rec.get("type").is_some() && rec.get("id").is_some() {
        return message(cx, st, rec, out);
    }
    Handled::Unknown
}

fn header(cx: &mut Ctx, st: &mut GeminiState, rec: &Value) {
    let meta = &mut cx.meta;
    if meta.session_id.is_none() {
        meta.session_id = str_of(rec, "sessionId").map(str::to_string);
    }
    if meta.created_at.is_none() {
        meta.created_at = norm_time(rec.get("startTime"));
    }
    if meta.cwd.is_none() {
        meta.cwd = first_directory(rec.get("directories"));
    }
    if str_of(rec, "kind") == Some("subagent") {
        st.subagent = true;
    }
    if let Some(s) = str_of(rec, "summary") {
        cx.set_title(s, 2);
    }
}

/// The first of a `directories` list (the workspace a session ran in).
fn first_directory(dirs: Option<&Value>) -> Option<String> {
    dirs?
        .as_array()?
        .first()?
        .as_str()
        .filter(|d| !d.is_empty())
        .map(str::to_string)
}

/// Forgets the rewound message and every one after it, so a re-appended copy is new again. An
/// unknown id clears the whole conversation (as Gemini CLI's loader does).
fn rewind(st: &mut GeminiState, id: &str) {
    match st.seen.iter().position(|s| s.id == id) {
        Some(i) => st.seen.truncate(i),
        None => st.seen.clear(),
    }
}

fn seen_mut<'a>(st: &'a mut GeminiState, id: &str) -> &'a mut Seen {
    let i = match st.seen.iter().position(|s| s.id == id) {
        Some(i) => i,
        None => {
            if st.seen.len() >= MAX_MESSAGES {
                st.seen.pop_front();
            }
            st.seen.push_back(Seen {
                id: id.to_string(),
                ..Seen::default()
            });
            st.seen.len() - 1
        }
    };
    &mut st.seen[i]
}

fn message(cx: &mut Ctx, st: &mut GeminiState, m: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
    let (Some(id), Some(ty)) = (str_of(m, "id"), str_of(m, "type")) else {
        return Handled::Broken;
    };
    let time = norm_time(m.get("timestamp"));
    cx.touch_time(time.as_deref());
    if let Some(model) = str_of(m, "model") {
        cx.meta.model = Some(cap_chars(model, 200));
    }
    let subagent = st.subagent;
    let text = content_text(m.get("content").unwrap_or(&Value::Null));
    let kind = match ty {
        "user" if subagent => EventType::AgentPrompt,
        "user" if text.trim_start().starts_with('/') => EventType::UserCommand,
        "user" => EventType::UserMessage,
        "gemini" | "model" => EventType::AssistantMessage,
        "error" => EventType::SystemError,
        // `info`, `warning` and whatever later versions add (plan mode): shown, never a person's.
        _ => EventType::SystemNotification,
    };
    if kind == EventType::AgentPrompt && cx.meta.agent_description.is_none() {
        cx.meta.agent_description = Some(cap_chars(text.trim(), 500));
        cx.set_title(text.lines().next().unwrap_or(""), 1);
    }
    let hash = text_hash(kind.as_str(), &text);
    let calls = m.get("toolCalls").and_then(Value::as_array);
    let call_ids = calls
        .into_iter()
        .flatten()
        .filter_map(|c| str_of(c, "id").map(str::to_string))
        .collect();
    let live_text = if text.trim().is_empty() { 0 } else { hash };
    let incarnation = st.note(id, live_text, call_ids);
    // Thoughts come before the visible reply they led to.
    let thoughts = m.get("thoughts").and_then(Value::as_array);
    let done = seen_mut(st, id).thoughts;
    let off = st.judge(id, incarnation, Piece::Thoughts);
    within(cx, out, off, |cx, out| {
        for t in thoughts.into_iter().flatten().skip(done) {
            let subject = str_of(t, "subject").unwrap_or("");
            let body = str_of(t, "description").unwrap_or("");
            let text = [subject, body]
                .iter()
                .filter(|s| !s.trim().is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(": ");
            let when = norm_time(t.get("timestamp")).or_else(|| time.clone());
            cx.emit(
                out,
                ParsedEvent::new(EventType::AssistantThinking, when, text),
            );
        }
    });
    let n = thoughts.map_or(0, Vec::len);
    let seen = seen_mut(st, id);
    seen.thoughts = seen.thoughts.max(n);
    let new_text = !text.trim().is_empty() && seen.text != hash;
    // A copy that changes a text already read: that text leaves the conversation.
    let replaces = new_text && seen.text != 0;
    if new_text {
        seen.text = hash;
    }
    st.rewrote |= replaces;
    if new_text {
        let off = st.judge(id, incarnation, Piece::Text(hash));
        within(cx, out, off, |cx, out| {
            cx.emit(out, ParsedEvent::new(kind, time.clone(), text));
        });
    }
    for call in calls.into_iter().flatten() {
        let off = st.judge(
            id,
            incarnation,
            Piece::Call(str_of(call, "id").unwrap_or("")),
        );
        within(cx, out, off, |cx, out| {
            tool_call(cx, st, id, call, time.clone(), out);
        });
    }
    Handled::Known
}

/// Runs `f` in the conversation, or aside when `off` names why it left it.
fn within(
    cx: &mut Ctx,
    out: &mut Vec<ParsedEvent>,
    off: Option<&str>,
    f: impl FnOnce(&mut Ctx, &mut Vec<ParsedEvent>),
) {
    match off {
        Some(reason) => super::conversation::aside(cx, out, reason, f),
        None => f(cx, out),
    }
}

fn tool_call(
    cx: &mut Ctx,
    st: &mut GeminiState,
    msg_id: &str,
    call: &Value,
    msg_time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    let name = str_of(call, "name").unwrap_or("tool");
    let call_id = str_of(call, "id").unwrap_or("").to_string();
    let args = args_of(call);
    let (result, failed) = result_of(call);
    let seen = seen_mut(st, msg_id);
    let known = seen.calls.iter().position(|(c, _)| *c == call_id);
    let (emit_use, emit_result) = match known {
        Some(i) => (false, result.is_some() && !seen.calls[i].1),
        None => (true, result.is_some()),
    };
    match known {
        Some(i) => seen.calls[i].1 |= emit_result,
        None if seen.calls.len() < MAX_CALLS => seen.calls.push((call_id.clone(), emit_result)),
        None => {}
    }
    let time = norm_time(call.get("timestamp")).or(msg_time);
    if emit_use {
        cx.remember_tool(&call_id, name);
        let mut ev = ParsedEvent::new(
            EventType::AssistantToolUse,
            time.clone(),
            render_tool_input(name, &args),
        );
        ev.tool_name = Some(name.to_string());
        ev.tool_use_id = (!call_id.is_empty()).then(|| call_id.clone());
        ev.facts = call_facts(name, &call_id, &args);
        cx.emit(out, ev);
    }
    if emit_result {
        let mut ev = ParsedEvent::new(EventType::ToolResult, time, result.unwrap_or_default());
        ev.tool_name = Some(name.to_string());
        ev.tool_use_id = (!call_id.is_empty()).then(|| call_id.clone());
        ev.is_error = failed;
        if let Some(agent) = str_of(call, "agentId").filter(|a| !a.is_empty()) {
            if cx.note_agent(agent) {
                ev.facts.push(Fact::AgentLink {
                    tool_use_id: ev.tool_use_id.clone(),
                    agent_id: agent.to_string(),
                });
            }
        }
        cx.emit(out, ev);
    }
}

/// A call's `args`: an object, or a JSON string of one (older writers).
fn args_of(call: &Value) -> Value {
    match call.get("args") {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

/// The result text of a finished call and whether it failed; `None` while it still runs.
fn result_of(call: &Value) -> (Option<String>, bool) {
    let status = str_of(call, "status").unwrap_or("");
    let failed = matches!(status, "error" | "cancelled");
    let mut text = String::new();
    for part in call
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let resp = part.get("functionResponse").and_then(|f| f.get("response"));
        for key in ["output", "error"] {
            if let Some(s) = resp.and_then(|r| r.get(key)).and_then(Value::as_str) {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(s);
            }
        }
    }
    if text.trim().is_empty() {
        if let Some(s) = str_of(call, "resultDisplay") {
            text = s.to_string();
        }
    }
    let finished = call.get("result").is_some_and(|r| !r.is_null())
        || matches!(status, "success" | "error" | "cancelled");
    if !finished {
        return (None, false);
    }
    if text.trim().is_empty() {
        text = format!("{} {status}", str_of(call, "name").unwrap_or("tool"));
    }
    (Some(text), failed)
}

/// Facts of a Gemini CLI tool call: shell programs, edited files, subagents, skills.
fn call_facts(name: &str, call_id: &str, args: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(args, k).map(str::to_string);
    let mut facts = Vec::new();
    match name {
        "run_shell_command" => {
            if let Some(program) = arg("command").as_deref().and_then(command_program) {
                facts.push(Fact::Command { program });
            }
        }
        "write_file" | "replace" | "edit" => {
            if let Some(path) = arg("file_path").or_else(|| arg("absolute_path")) {
                facts.push(Fact::FileEdit { path });
            }
        }
        "invoke_agent" | "delegate_to_agent" => facts.push(Fact::Spawn {
            tool_use_id: (!call_id.is_empty()).then(|| call_id.to_string()),
            subagent_type: arg("agent_name"),
            name: arg("agent_name"),
            description: arg("prompt").map(|p| cap_chars(&p, 500)),
            team_name: None,
        }),
        "activate_skill" => {
            if let Some(skill) = arg("name").or_else(|| arg("skill")) {
                facts.push(Fact::SkillUse {
                    name: skill,
                    via: "activate_skill".into(),
                });
            }
        }
        _ => {}
    }
    facts
}

mod reader;
pub use reader::Reader;

#[cfg(test)]
mod tests;
