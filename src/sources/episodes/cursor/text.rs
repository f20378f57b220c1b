//! Cursor's older plain-text agent transcripts (`agent-transcripts/<id>.txt`), read by turning
//! each block into the record the JSONL rules of [`super::transcript`] already read, so both
//! forms of one agent give the same events.
//!
//! The text form (as kenn-io/agentsview `cursor.go` reads it): a line `user:` or `assistant:`
//! alone opens a message. A user message holds the prompt, wrapped in `<user_query>`. An
//! assistant message holds prose at the left margin and indented blocks under a marker line:
//! `[Thinking]` (reasoning), `[Tool call] <name>` (its input: one JSON value, or `key=value`
//! lines, or a raw patch for `ApplyPatch`) and `[Tool result]` (the output of the call before
//! it). A block body ends at the next marker or at the next non-empty line at the left margin.
//! There are no ids and no times: the file is re-read whole when it changes.

use std::io;

use serde_json::{json, Map, Value};

use crate::sources::episodes::agent::{read_document, EventSink, ReadEnd};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::discover::TranscriptFile;
use crate::sources::episodes::parser::TranscriptParser;

/// Largest text transcript read (it is parsed whole); a larger one is counted oversized.
const MAX_TEXT_BYTES: u64 = 64 * 1024 * 1024;

const THINKING: &str = "[Thinking]";
const TOOL_CALL: &str = "[Tool call] ";
const TOOL_RESULT: &str = "[Tool result]";

/// Reads a whole `.txt` transcript through the transcript rules.
pub(super) fn read_text(
    file: &TranscriptFile,
    sink: &mut dyn EventSink,
    fresh: TranscriptParser,
) -> io::Result<ReadEnd> {
    read_document(
        file,
        MAX_TEXT_BYTES,
        fresh,
        sink,
        |bytes, parser, events| {
            for record in records(&String::from_utf8_lossy(bytes)) {
                parser.count_line();
                parser.feed_record(&record, events);
            }
        },
    )
}

/// Whether `head` (the first lines of a `.txt`) is a Cursor text transcript.
pub(super) fn looks_like_text_transcript(head: &str) -> bool {
    head.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l == "user:" || l == "assistant:")
}

/// The transcript as JSONL-form records (`{role, message:{content:[blocks]}}`).
fn records(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut role: Option<&str> = None;
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines() {
        match line.trim() {
            "user:" | "assistant:" => {
                if let Some(r) = role {
                    message(r, &lines, &mut out);
                }
                role = Some(if line.trim() == "user:" {
                    "user"
                } else {
                    "assistant"
                });
                lines.clear();
            }
            _ if role.is_some() => lines.push(line),
            _ => {}
        }
    }
    if let Some(r) = role {
        message(r, &lines, &mut out);
    }
    out
}

fn message(role: &str, lines: &[&str], out: &mut Vec<Value>) {
    if role == "user" {
        let text = lines.join("\n");
        if !text.trim().is_empty() {
            out.push(json!({"role": "user", "message": {"content": [{"type": "text", "text": text.trim()}]}}));
        }
        return;
    }
    let mut blocks: Vec<Value> = Vec::new();
    let mut prose: Vec<&str> = Vec::new();
    let mut last_tool: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        let marker = trimmed.starts_with(THINKING)
            || trimmed.starts_with(TOOL_CALL)
            || trimmed.starts_with(TOOL_RESULT);
        if !marker {
            prose.push(line);
            i += 1;
            continue;
        }
        flush_prose(&mut prose, &mut blocks);
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !ends_body(lines[end]) {
            end += 1;
        }
        let body = dedent(&lines[start..end]);
        if trimmed.starts_with(THINKING) {
            blocks.push(json!({"type": "thinking", "thinking": body}));
        } else if let Some(name) = trimmed.strip_prefix(TOOL_CALL) {
            let name = name.trim().to_string();
            blocks
                .push(json!({"type": "tool_use", "name": name, "input": tool_input(&name, &body)}));
            last_tool = Some(name);
        } else {
            // A result belongs to the call before it: the assistant's message so far is
            // pushed, the result follows as the user-role record the JSONL form writes.
            out.push(
                json!({"role": "assistant", "message": {"content": std::mem::take(&mut blocks)}}),
            );
            let failed = body.trim_start().to_ascii_lowercase().starts_with("error");
            let mut result = json!({"type": "tool_result", "content": body});
            if let Some(name) = &last_tool {
                result["name"] = json!(name);
            }
            if failed {
                result["is_error"] = json!(true);
            }
            out.push(json!({"role": "user", "message": {"content": [result]}}));
        }
        i = end;
    }
    flush_prose(&mut prose, &mut blocks);
    if !blocks.is_empty() {
        out.push(json!({"role": "assistant", "message": {"content": blocks}}));
    }
}

fn flush_prose(prose: &mut Vec<&str>, blocks: &mut Vec<Value>) {
    let text = prose.join("\n");
    prose.clear();
    if !text.trim().is_empty() {
        blocks.push(json!({"type": "text", "text": text.trim()}));
    }
}

/// A block body ends at a marker or at a non-empty line at the left margin.
fn ends_body(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.starts_with(THINKING)
        || trimmed.starts_with(TOOL_CALL)
        || trimmed.starts_with(TOOL_RESULT)
        || !trimmed.is_empty() && !line.starts_with([' ', '\t'])
}

/// The body lines without their common indent.
fn dedent(lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or_else(|| l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// A call's input: its JSON, a raw patch, or its `key=value` lines.
fn tool_input(name: &str, body: &str) -> Value {
    if body.is_empty() {
        return Value::Null;
    }
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return v;
    }
    if name.eq_ignore_ascii_case("ApplyPatch") {
        return json!({ "patch": body });
    }
    let mut params = Map::new();
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        match line.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                params.insert(k.trim().to_string(), json!(v.trim()));
            }
            _ => return json!({ "input": body }),
        }
    }
    Value::Object(params)
}

/// A fresh parser for a text transcript.
pub(super) fn parser() -> TranscriptParser {
    TranscriptParser::new(Agent::Cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_the_jsonl_records() {
        let text = "user:\n<user_query>\nfix the build\n</user_query>\n\nassistant:\n[Thinking]\n  check cargo\nI will run it.\n[Tool call] Shell\n  command=cargo build\n[Tool result]\n  error: linker failed\nIt failed.\n";
        let recs = records(text);
        assert_eq!(recs.len(), 4, "{recs:?}");
        assert_eq!(recs[0]["role"], "user");
        let blocks = recs[1]["message"]["content"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(blocks[0]["type"], "thinking");
        assert_eq!(blocks[1]["text"], "I will run it.");
        assert_eq!(blocks[2]["input"]["command"], "cargo build");
        assert_eq!(recs[2]["message"]["content"][0]["is_error"], true);
        assert_eq!(recs[2]["message"]["content"][0]["name"], "Shell");
        assert_eq!(recs[3]["message"]["content"][0]["text"], "It failed.");
        assert!(looks_like_text_transcript("\n user:\nhi"));
        assert!(!looks_like_text_transcript("notes\nuser:"));
    }
}
