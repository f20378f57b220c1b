//! What a tool call becomes as the text of an event: its input rendered for search and reading,
//! the program a shell command runs and the files a patch touches (facts for the agent-knowledge
//! store). Kept apart from the parser's bookkeeping so each can be read in one sitting.

use serde_json::Value;

use super::parser::cap_chars;

/// Keys whose values best describe a tool call, in display order, each with the other names
/// agents give the same argument. Names compare without case, `_` and `-`, so `file_path`
/// (Claude Code) is OpenCode's `filePath`; `old_str` / `oldText` are Copilot's and Pi's
/// `old_string`. Without the synonyms an edit by those agents was indexed as its path alone,
/// and a question about what it changed could not find it.
const INPUT_KEYS: &[&[&str]] = &[
    &["skill"],
    &["command"],
    &["cmd"],
    &["file_path"],
    &["notebook_path"],
    &["path"],
    &["pattern"],
    &["glob"],
    &["url"],
    &["query"],
    &["subagent_type"],
    &["name"],
    &["description"],
    &["prompt"],
    &["args"],
    &["old_string", "old_str", "old_text"],
    &["new_string", "new_str", "new_text"],
    &["content"],
    &["todos"],
];

/// An argument name as [`INPUT_KEYS`] compares it.
fn key_form(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}
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
    let forms: Vec<(String, &String, &Value)> =
        map.iter().map(|(k, v)| (key_form(k), k, v)).collect();
    for names in INPUT_KEYS {
        let wanted: Vec<String> = names.iter().map(|n| key_form(n)).collect();
        let Some((key, text)) = forms
            .iter()
            .filter(|(form, _, _)| wanted.contains(form))
            .find_map(|(_, k, v)| render_value(v).map(|t| (k, t)))
        else {
            continue;
        };
        out.push('\n');
        out.push_str(key);
        out.push_str(": ");
        out.push_str(&cap_chars(&text, INPUT_VALUE_CAP));
        rendered += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_cut_inside_a_secret_keeps_no_part_of_it() {
        // The cut at the cap lands just before the URL's `@host`: `https://deploy:pw` alone is
        // no URL with a password, so the text is redacted before it is cut.
        let tail = " && curl https://deploy:Fu5!CNRYb05";
        let head = "echo ";
        let pad = "z".repeat(INPUT_VALUE_CAP - head.len() - tail.len());
        let command = format!("{head}{pad}{tail}@api.example.com/x");
        let input = serde_json::json!({ "command": command });
        let text = render_tool_input("Bash", &input);
        let red = crate::text::redact::redact(&text).text;
        assert!(
            !red.contains("CNRY"),
            "{}",
            &red[red.len().saturating_sub(80)..]
        );
    }
    use serde_json::json;

    #[test]
    fn every_agents_edit_arguments_are_rendered_under_their_own_names() {
        // Pi `edit`, OpenCode `edit`, Copilot CLI `edit`: the same call in three spellings.
        let pi = render_tool_input(
            "edit",
            &json!({"path": "api/newsletter.py", "oldText": "def unsubscribe(token):",
                    "newText": "@rate_limit\ndef unsubscribe(token):"}),
        );
        assert_eq!(
            pi,
            "edit\npath: api/newsletter.py\noldText: def unsubscribe(token):\n\
             newText: @rate_limit\ndef unsubscribe(token):"
        );
        let opencode = render_tool_input(
            "edit",
            &json!({"filePath": "/w/a.ts", "oldString": "x", "newString": "y"}),
        );
        assert_eq!(
            opencode,
            "edit\nfilePath: /w/a.ts\noldString: x\nnewString: y"
        );
        let copilot = render_tool_input(
            "edit",
            &json!({"path": "r.py", "old_str": "a", "new_str": "b"}),
        );
        assert_eq!(copilot, "edit\npath: r.py\nold_str: a\nnew_str: b");
        // Claude Code's spelling is rendered as before.
        let claude = render_tool_input(
            "Edit",
            &json!({"file_path": "/w/a.rs", "old_string": "x", "new_string": "y"}),
        );
        assert_eq!(
            claude,
            "Edit\nfile_path: /w/a.rs\nold_string: x\nnew_string: y"
        );
    }
}
