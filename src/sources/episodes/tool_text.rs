//! What a tool call becomes as the text of an event: its input rendered for search and reading,
//! the program a shell command runs and the files a patch touches (facts for the agent-knowledge
//! store). Kept apart from the parser's bookkeeping so each can be read in one sitting.

use serde_json::Value;

use super::parser::cap_chars;

/// Keys whose values best describe a tool call, in display order.
const INPUT_KEYS: &[&str] = &[
    "skill",
    "command",
    "cmd",
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "glob",
    "url",
    "query",
    "subagent_type",
    "name",
    "description",
    "prompt",
    "args",
    "old_string",
    "new_string",
    "content",
    "todos",
];
const INPUT_VALUE_CAP: usize = 8 * 1024;

/// `name` plus a compact rendering of the informative input fields (not the JSON blob).
pub(crate) fn render_tool_input(name: &str, input: &Value) -> String {
    let mut out = name.to_string();
    let Some(map) = input.as_object() else {
        if let Some(s) = input.as_str() {
            out.push('\n');
            out.push_str(&cap_chars(s, INPUT_VALUE_CAP));
        }
        return out;
    };
    let mut rendered = 0;
    for key in INPUT_KEYS {
        if let Some(text) = map.get(*key).and_then(render_value) {
            out.push('\n');
            out.push_str(key);
            out.push_str(": ");
            out.push_str(&cap_chars(&text, INPUT_VALUE_CAP));
            rendered += 1;
        }
    }
    if rendered == 0 {
        for (key, value) in map.iter().take(4) {
            if let Some(text) = render_value(value) {
                out.push('\n');
                out.push_str(key);
                out.push_str(": ");
                out.push_str(&cap_chars(&text, INPUT_VALUE_CAP));
            }
        }
    }
    out
}

fn render_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(m) => m
                        .get("content")
                        .or_else(|| m.get("subject"))
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    _ => None,
                })
                .collect();
            (!parts.is_empty()).then(|| parts.join(" "))
        }
        _ => None,
    }
}

/// The program a shell script runs first, skipping `cd`, env assignments and wrappers.
pub(crate) fn command_program(script: &str) -> Option<String> {
    const SKIP_SEGMENT: &[&str] = &[
        "cd", "pushd", "popd", "export", "set", "source", ".", "unset",
    ];
    const WRAPPERS: &[&str] = &["sudo", "env", "time", "exec", "nohup", "command"];
    for segment in script.split(['\n', ';', '&', '|']) {
        let mut words = segment
            .split_whitespace()
            .map(|w| w.trim_matches(|c| matches!(c, '(' | ')' | '{' | '}' | '"' | '\'' | '`')))
            .filter(|w| !w.is_empty())
            .skip_while(|w| is_env_assignment(w) || WRAPPERS.contains(w));
        let Some(word) = words.next() else { continue };
        if word.starts_with('#') || word.starts_with('-') || SKIP_SEGMENT.contains(&word) {
            continue;
        }
        let base = word.rsplit('/').next().unwrap_or(word);
        if !base.is_empty() && !base.starts_with('<') && !base.starts_with('*') {
            return Some(base.to_string());
        }
    }
    None
}

fn is_env_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Files named in an `apply_patch` body (`*** Update File: path`, `*** Add File:`, …).
pub(crate) fn patch_files(patch: &str) -> Vec<String> {
    const MARKERS: &[&str] = &[
        "*** Update File: ",
        "*** Add File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut files: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_start();
        for m in MARKERS {
            if let Some(p) = line.strip_prefix(m) {
                let p = p.trim().to_string();
                if !p.is_empty() && !files.contains(&p) && files.len() < 64 {
                    files.push(p);
                }
            }
        }
    }
    files
}
