//! Limits on what one transcript line may cost and what one stored field may hold.
//!
//! A transcript is untrusted input: one record with a 100k-character session id or a 12k-character
//! `cwd` used to make every matching query return nothing (the id or path filled the token
//! budget), one line of 300k tiny blocks cost seconds and hundreds of MB, and one invalid UTF-8
//! byte or lone UTF-16 surrogate dropped a whole event. Everything here runs at parse time, so
//! the store never holds an unbounded field and the indexer's work per line is bounded.

use std::borrow::Cow;

use serde_json::Value;

use super::model::{Fact, ParsedEvent, SessionMeta};
use super::parser::cap_in_place;

pub mod records;

/// Longest id (session, agent, tool call, record) kept; real ids are UUIDs or ~40-byte tokens.
pub const MAX_ID_BYTES: usize = 200;
/// Longest working directory kept; a longer one is dropped (cut, it would name another folder).
pub const MAX_PATH_BYTES: usize = 1024;
/// Longest name kept (branch, version, agent name, team, model); longer ones are cut.
pub const MAX_NAME_BYTES: usize = 200;
/// Most JSON objects and arrays one line may open before it is skipped unparsed (as oversized):
/// real lines open a few hundred, a hostile one of 300k tiny blocks would take seconds and
/// hundreds of MB to build as a tree.
pub const MAX_CONTAINERS_PER_LINE: usize = 50_000;

/// Keys that hold an id naming a session, an agent or a record, at the top level or in a Codex
/// `payload`.
const ID_KEYS: &[&str] = &[
    "sessionId",
    "session_id",
    "agentId",
    "uuid",
    "parentUuid",
    "parent_thread_id",
];

/// True when a record carries an id no agent writes: empty where a session id is required, or
/// longer than [`MAX_ID_BYTES`]. Such a record is skipped (and counted) rather than stored under
/// an id nobody can open.
pub fn has_absurd_id(record: &Value) -> bool {
    let too_long = |v: &Value| v.as_str().is_some_and(|s| s.len() > MAX_ID_BYTES);
    let empty = |v: &Value| v.as_str().is_some_and(|s| s.trim().is_empty());
    let check = |obj: &Value| {
        ID_KEYS.iter().filter_map(|k| obj.get(*k)).any(&too_long)
            || ["sessionId", "session_id"]
                .iter()
                .filter_map(|k| obj.get(*k))
                .any(&empty)
    };
    if check(record) {
        return true;
    }
    // The session id of a Codex rollout is `payload.id` of `session_meta` (or `id` of the legacy
    // first line); elsewhere `id` is a record id, bounded but allowed to be absent or empty.
    let payload = record.get("payload").filter(|p| p.is_object());
    let is_meta = record.get("type").and_then(Value::as_str) == Some("session_meta")
        || (record.get("type").is_none() && record.get("instructions").is_some());
    let meta_holder = if is_meta {
        payload.or(Some(record))
    } else {
        None
    };
    if let Some(id) = meta_holder.and_then(|m| m.get("id")) {
        if too_long(id) || empty(id) {
            return true;
        }
    }
    payload.is_some_and(|p| check(p) || p.get("id").is_some_and(too_long))
}

/// True for a character a terminal may act on or that hides or disguises text: a control
/// character (C0, DEL, C1) or an invisible format character (bidi, zero-width, tag).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control() || crate::text::sanitize::is_invisible_format(c)
}

/// True when `s` holds an [`is_unsafe_char`]; printable ASCII is told by its bytes alone.
pub fn has_unsafe_char(s: &str) -> bool {
    s.bytes().any(|b| !(0x20..0x7f).contains(&b)) && s.chars().any(is_unsafe_char)
}

/// An id with every [`is_unsafe_char`] replaced by U+FFFD: an id is shown, copied into a resume
/// command and stored as a key, so an escape sequence in one (a session id or a file name a
/// hostile transcript chose) must never reach a terminal or a shell; replaced rather than
/// removed, so the id cannot become another session's clean one.
pub fn safe_id(id: &str) -> Cow<'_, str> {
    if has_unsafe_char(id) {
        Cow::Owned(
            id.chars()
                .map(|c| if is_unsafe_char(c) { '\u{fffd}' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(id)
    }
}

/// Makes a session's fields safe to show, key and copy, once per session (the indexer's sink):
/// ids holding control or invisible characters get [`safe_id`]; a working directory holding
/// such characters is dropped (no real folder is named so, and it would never match a
/// workspace); titles, names and descriptions lose escape sequences and such characters
/// ([`crate::text::sanitize`]).
pub fn sanitize_meta(meta: &mut SessionMeta) {
    for id in [
        &mut meta.session_id,
        &mut meta.agent_id,
        &mut meta.parent_session_id,
        &mut meta.spawn_tool_use_id,
    ] {
        if let Some(Cow::Owned(safe)) = id.as_deref().map(safe_id) {
            *id = Some(safe);
        }
    }
    if meta.cwd.as_deref().is_some_and(has_unsafe_char) {
        meta.cwd = None;
    }
    for text in [
        &mut meta.title,
        &mut meta.agent_description,
        &mut meta.agent_preset,
        &mut meta.version,
        &mut meta.git_branch,
        &mut meta.entrypoint,
        &mut meta.model,
        &mut meta.agent_name,
        &mut meta.team_name,
    ]
    .into_iter()
    .flatten()
    {
        if has_unsafe_char(text) {
            *text = crate::text::sanitize::one_line(text);
        }
    }
}

/// Cuts or drops the session fields a parser filled from the records.
pub fn bound_meta(meta: &mut SessionMeta) {
    for id in [
        &mut meta.session_id,
        &mut meta.agent_id,
        &mut meta.parent_session_id,
        &mut meta.spawn_tool_use_id,
    ] {
        if id
            .as_deref()
            .is_some_and(|s| s.len() > MAX_ID_BYTES || s.trim().is_empty())
        {
            *id = None;
        }
    }
    if meta
        .cwd
        .as_deref()
        .is_some_and(|c| c.len() > MAX_PATH_BYTES)
    {
        meta.cwd = None;
    }
    for name in [
        &mut meta.agent_preset,
        &mut meta.version,
        &mut meta.git_branch,
        &mut meta.entrypoint,
        &mut meta.model,
        &mut meta.agent_name,
        &mut meta.team_name,
    ]
    .into_iter()
    .flatten()
    {
        cap_in_place(name, MAX_NAME_BYTES);
    }
}

/// Cuts an event's names and drops an absurd tool call id or fact (its text is capped
/// elsewhere); its ids and tool name are made safe to show ([`safe_id`]).
pub fn bound_event(ev: &mut ParsedEvent) {
    if let Some(name) = ev.tool_name.as_mut() {
        cap_in_place(name, MAX_NAME_BYTES);
        if has_unsafe_char(name) {
            *name = crate::text::sanitize::one_line(name);
        }
    }
    if let Some(agent) = ev.sidechain_agent.as_mut() {
        cap_in_place(agent, MAX_ID_BYTES);
        if let Cow::Owned(safe) = safe_id(agent) {
            *agent = safe;
        }
    }
    if let Some(Cow::Owned(safe)) = ev.tool_use_id.as_deref().map(safe_id) {
        ev.tool_use_id = Some(safe);
    }
    if ev
        .tool_use_id
        .as_deref()
        .is_some_and(|s| s.len() > MAX_ID_BYTES)
    {
        ev.tool_use_id = None;
    }
    // Facts feed the derived store (skills, actors): an absurd id or path there is dropped too.
    ev.facts.retain_mut(|fact| match fact {
        Fact::SkillUse { name, via } => {
            cap_in_place(via, MAX_NAME_BYTES);
            name.len() <= MAX_NAME_BYTES
        }
        Fact::Spawn {
            tool_use_id,
            subagent_type,
            name,
            description,
            team_name,
        } => {
            if tool_use_id
                .as_deref()
                .is_some_and(|s| s.len() > MAX_ID_BYTES)
            {
                *tool_use_id = None;
            }
            for n in [subagent_type, name, team_name].into_iter().flatten() {
                cap_in_place(n, MAX_NAME_BYTES);
            }
            if let Some(d) = description {
                cap_in_place(d, MAX_PATH_BYTES);
            }
            true
        }
        Fact::AgentLink {
            tool_use_id,
            agent_id,
        } => {
            if tool_use_id
                .as_deref()
                .is_some_and(|s| s.len() > MAX_ID_BYTES)
            {
                *tool_use_id = None;
            }
            agent_id.len() <= MAX_ID_BYTES
        }
        Fact::FileEdit { path } => path.len() <= MAX_PATH_BYTES,
        Fact::TeammateMessage { teammate_id } => teammate_id.len() <= MAX_ID_BYTES,
        Fact::Command { program } => program.len() <= MAX_NAME_BYTES,
        Fact::Abandoned { reason } => reason.len() <= MAX_NAME_BYTES,
    });
}

/// True when a line opens more than [`MAX_CONTAINERS_PER_LINE`] objects or arrays outside
/// strings: one linear scan, no allocation.
pub fn too_many_containers(line: &[u8]) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    let mut opened = 0usize;
    for &b in line {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                opened += 1;
                if opened > MAX_CONTAINERS_PER_LINE {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The line with invalid UTF-8 replaced by U+FFFD, so one bad byte costs one character, not
/// the event.
pub fn valid_utf8(line: &[u8]) -> Cow<'_, [u8]> {
    match String::from_utf8_lossy(line) {
        Cow::Borrowed(_) => Cow::Borrowed(line),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}

/// A whole JSON document as a line reader would take it: invalid UTF-8 costs its characters
/// (U+FFFD), a lone surrogate escape is repaired, so one cut emoji does not lose a session kept as
/// one document (Continue, Amp, OpenHands). `None` when it is still not JSON.
pub fn json_document(bytes: &[u8]) -> Option<serde_json::Value> {
    let text = valid_utf8(bytes);
    match serde_json::from_slice(&text) {
        Ok(v) => Some(v),
        Err(e) if e.is_syntax() => serde_json::from_slice(&repair_lone_surrogates(&text)?).ok(),
        Err(_) => None,
    }
}

/// The JSON text with every lone UTF-16 surrogate escape (`\ud83d` not followed by a low
/// surrogate, a lone `\udc00`) replaced by `\ufffd`; `None` when there is none. JavaScript
/// writers emit these when they cut a string inside an emoji, and a strict parser rejects them.
pub fn repair_lone_surrogates(json: &[u8]) -> Option<Vec<u8>> {
    let hex_at = |i: usize| -> Option<u32> {
        let digits = json.get(i..i + 4)?;
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let escape_at = |i: usize| -> Option<u32> {
        (json.get(i) == Some(&b'\\') && json.get(i + 1) == Some(&b'u'))
            .then(|| hex_at(i + 2))
            .flatten()
    };
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < json.len() {
        if json.get(i) != Some(&b'\\') {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(i) else {
            i += 2;
            continue;
        };
        let high = (0xD800..=0xDBFF).contains(&unit);
        let low = (0xDC00..=0xDFFF).contains(&unit);
        let paired = high && escape_at(i + 6).is_some_and(|u| (0xDC00..=0xDFFF).contains(&u));
        if paired {
            i += 12;
        } else if high || low {
            let buf = out.get_or_insert_with(Vec::new);
            buf.extend_from_slice(json.get(copied..i).unwrap_or(&[]));
            buf.extend_from_slice(b"\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    let mut buf = out?;
    buf.extend_from_slice(json.get(copied..).unwrap_or(&[]));
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absurd_ids_are_told_from_real_ones() {
        let long = "x".repeat(MAX_ID_BYTES + 1);
        assert!(has_absurd_id(&json!({"sessionId": long})));
        assert!(has_absurd_id(&json!({"sessionId": ""})));
        assert!(has_absurd_id(
            &json!({"type": "session_meta", "payload": {"id": ""}})
        ));
        assert!(has_absurd_id(
            &json!({"type": "session_meta", "payload": {"id": long}})
        ));
        assert!(!has_absurd_id(
            &json!({"type": "session_meta", "payload": {"id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}})
        ));
        assert!(!has_absurd_id(
            &json!({"type": "response_item", "payload": {"id": ""}})
        ));
        assert!(!has_absurd_id(
            &json!({"sessionId": "s", "uuid": "u", "text": long})
        ));
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let fixed = repair_lone_surrogates(br#"{"a":"x\ud83d y \udc00","b":"\ud83d\ude00"}"#);
        let v: Value = serde_json::from_slice(&fixed.unwrap_or_default()).unwrap_or_default();
        assert_eq!(v["a"], "x\u{fffd} y \u{fffd}");
        assert_eq!(v["b"], "😀");
        assert_eq!(repair_lone_surrogates(br#"{"a":"\\ud83d \u00e9"}"#), None);
    }

    #[test]
    fn containers_inside_strings_do_not_count() {
        let braces = format!("{{\"t\":\"{}\"}}", "{[".repeat(MAX_CONTAINERS_PER_LINE));
        assert!(!too_many_containers(braces.as_bytes()));
        let blocks = format!("[{}]", "{},".repeat(MAX_CONTAINERS_PER_LINE));
        assert!(too_many_containers(blocks.as_bytes()));
    }
}
