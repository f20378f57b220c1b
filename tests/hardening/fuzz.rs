//! Generated hostile input for the two parsers that take untrusted text: the transcript line
//! parser and the request validator. Bounded (a few hundred cases each, a few seconds in a
//! debug build) so it runs with every `cargo test` in CI.

use knowledge::contract::request::{MAX_FILTER_VALUES, MAX_FILTER_VALUE_CHARS, MAX_QUERY_CHARS};
use knowledge::contract::validate_search;
use knowledge::sources::episodes::bounds::{MAX_ID_BYTES, MAX_NAME_BYTES, MAX_PATH_BYTES};
use knowledge::sources::episodes::model::TranscriptKind;
use knowledge::sources::episodes::parser::{TranscriptParser, MAX_EVENT_TEXT};
use proptest::prelude::*;
use serde_json::{json, Value};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Strings an attacker would try: empty, huge, control and bidi characters, broken escapes.
fn nasty_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("x".repeat(MAX_ID_BYTES + 1)),
        Just("/".repeat(MAX_PATH_BYTES + 1)),
        Just("\u{0}\u{1b}[2J\u{202e}\u{fffd}".to_string()),
        "\\PC{0,40}",
        ".{0,200}",
    ]
}

/// A transcript record of either format with generated fields in the places ids, paths, names
/// and text live.
fn record() -> impl Strategy<Value = Value> {
    (
        nasty_string(),
        nasty_string(),
        nasty_string(),
        nasty_string(),
        0..6usize,
    )
        .prop_map(|(id, cwd, name, text, shape)| match shape {
            0 => json!({"type": "user", "sessionId": id, "uuid": name, "cwd": cwd,
                        "timestamp": text, "message": {"role": "user", "content": text}}),
            1 => json!({"type": "assistant", "sessionId": id, "gitBranch": name, "cwd": cwd,
                        "message": {"content": [{"type": "tool_use", "id": id, "name": name,
                                                 "input": {"command": text}}]}}),
            2 => json!({"type": "session_meta", "payload": {"id": id, "cwd": cwd,
                        "originator": name, "cli_version": text}}),
            3 => json!({"type": "event_msg", "payload": {"type": "user_message",
                        "message": text}}),
            4 => json!({"type": "response_item", "payload": {"type": "function_call",
                        "call_id": id, "name": name, "arguments": text}}),
            _ => json!({"id": id, "timestamp": "2026-10-01T10:00:00Z", "instructions": text}),
        })
}

/// A physical line: a record, a torn or spliced one, raw bytes, or NULs.
fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        record().prop_map(|r| r.to_string().into_bytes()),
        (record(), any::<prop::sample::Index>()).prop_map(|(r, cut)| {
            let text = r.to_string().into_bytes();
            let at = cut.index(text.len() + 1);
            let mut torn = text.get(..at).unwrap_or(&[]).to_vec();
            torn.extend_from_slice(&text);
            torn
        }),
        prop::collection::vec(any::<u8>(), 0..300),
        Just(vec![0u8; 64]),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_line_parser_never_panics_and_keeps_every_field_bounded(
        lines in prop::collection::vec(line(), 1..12),
        codex in any::<bool>(),
    ) {
        let kind = if codex { TranscriptKind::Codex } else { TranscriptKind::Claude };
        let mut parser = TranscriptParser::new(kind);
        let mut events = Vec::new();
        for l in &lines {
            parser.feed(l, &mut events);
        }
        prop_assert_eq!(parser.stats().lines, lines.len() as u64);
        let m = parser.meta();
        for id in [&m.session_id, &m.agent_id, &m.parent_session_id, &m.spawn_tool_use_id] {
            prop_assert!(id.as_deref().is_none_or(|s| !s.trim().is_empty() && s.len() <= MAX_ID_BYTES));
        }
        prop_assert!(m.cwd.as_deref().is_none_or(|c| c.len() <= MAX_PATH_BYTES));
        for name in [&m.version, &m.git_branch, &m.agent_preset, &m.agent_name] {
            prop_assert!(name.as_deref().is_none_or(|n| n.len() <= MAX_NAME_BYTES));
        }
        for ev in &events {
            prop_assert!(ev.text.len() <= MAX_EVENT_TEXT);
            prop_assert!(ev.tool_use_id.as_deref().is_none_or(|s| s.len() <= MAX_ID_BYTES));
            prop_assert!(ev.tool_name.as_deref().is_none_or(|s| s.len() <= MAX_NAME_BYTES));
        }
        // The saved state resumes: it serialises and reads back.
        let state = serde_json::to_string(&parser).expect("state");
        prop_assert!(serde_json::from_str::<TranscriptParser>(&state).is_ok());
    }

    #[test]
    fn the_request_validator_never_panics_on_any_text(text in "\\PC{0,300}") {
        let _ = validate_search(&text);
    }

    #[test]
    fn an_accepted_request_is_within_every_documented_limit(
        query in nasty_string(),
        workspaces in prop::collection::vec(nasty_string(), 0..(MAX_FILTER_VALUES + 5)),
        session_ids in prop::collection::vec(nasty_string(), 0..4),
        limit in -5i64..60,
        duplicate in any::<bool>(),
    ) {
        let mut text = json!({
            "schema": "knowledge.search/v1", "query": query, "limit": limit,
            "filters": {"workspaces": workspaces, "session_ids": session_ids},
        })
        .to_string();
        if duplicate {
            text = text.replacen('{', "{\"limit\": 3, ", 1);
        }
        if let Ok((req, _)) = validate_search(&text) {
            prop_assert!(!duplicate, "a duplicate key was accepted");
            prop_assert!(!req.query.trim().is_empty());
            prop_assert!(req.query.chars().count() <= MAX_QUERY_CHARS);
            prop_assert!((1..=50).contains(&req.limit));
            for list in [&req.filters.workspaces, &req.filters.session_ids] {
                prop_assert!(list.len() <= MAX_FILTER_VALUES);
                for v in list {
                    prop_assert!(v.chars().count() <= MAX_FILTER_VALUE_CHARS && !v.contains('\0'));
                }
            }
        }
    }
}
