//! Claude Code's `system` records: the ones with words a person may ask about (an API error
//! with its codes, a compaction, a local command's output, a notice of a subtype added later)
//! become events; the ones without (`turn_duration`, `session_start`) are only counted.

use serde_json::Value;

use super::{content_text, user_text, ClaudeState, Handled, Origin};
use crate::sources::episodes::model::{EventType, ParsedEvent};
use crate::sources::episodes::parser::{str_of, Ctx};

pub(super) fn system(
    cx: &mut Ctx,
    st: &mut ClaudeState,
    rec: &Value,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let subtype = str_of(rec, "subtype").unwrap_or("");
    match subtype {
        "api_error" | "error" | "api_refusal" | "model_refusal_fallback" => {
            let err = rec.get("error");
            let msg = err
                .and_then(|e| str_of(e, "message").or_else(|| str_of(e, "formatted")))
                .or_else(|| err.and_then(Value::as_str))
                .or_else(|| str_of(rec, "apiRefusalExplanation"))
                .or_else(|| str_of(rec, "content"))
                .unwrap_or("");
            let status = err.and_then(|e| e.get("status")).and_then(Value::as_u64);
            let mut text = match status {
                Some(code) if code > 0 => format!("{subtype} {code}: {msg}"),
                _ => format!("{subtype}: {msg}"),
            };
            // The codes a person remembers and asks by (`ECONNRESET`, `overloaded_error`)
            // sit deeper: `error.cause.code`, `error.connection.code`, `error.error.type`.
            let codes = err.map(error_codes).unwrap_or_default();
            if !codes.is_empty() {
                text.push_str(&format!(" ({})", codes.join(", ")));
            }
            cx.emit(out, ParsedEvent::new(EventType::SystemError, time, text));
        }
        "compact_boundary" => {
            let meta = rec.get("compactMetadata");
            let trigger = meta
                .and_then(|m| str_of(m, "trigger"))
                .or_else(|| str_of(rec, "trigger"))
                .unwrap_or("");
            let tokens = meta
                .and_then(|m| m.get("preTokens"))
                .and_then(Value::as_u64);
            let mut text = format!("conversation compacted ({trigger}");
            if let Some(t) = tokens {
                text.push_str(&format!(", {t} tokens before"));
            }
            text.push(')');
            cx.emit(
                out,
                ParsedEvent::new(EventType::SystemNotification, time, text),
            );
        }
        "stop_hook_summary" => {
            let mut parts: Vec<String> = Vec::new();
            if let Some(Value::Array(errors)) = rec.get("hookErrors") {
                parts.extend(errors.iter().map(content_text).filter(|s| !s.is_empty()));
            }
            if let Some(r) = str_of(rec, "stopReason").filter(|r| !r.trim().is_empty()) {
                parts.push(r.to_string());
            }
            if !parts.is_empty() {
                let text = format!("stop hook: {}", parts.join("\n"));
                cx.emit(out, ParsedEvent::new(EventType::SystemHook, time, text));
            }
        }
        "local_command" => {
            if let Some(text) = str_of(rec, "content") {
                user_text(cx, st, text, &Origin::default(), time, out);
            }
        }
        // Records that carry no words (`turn_duration`, `session_start`, …) are counted only;
        // any other that has text (a subtype added later, an `informational` notice) is kept.
        _ => {
            let text = str_of(rec, "content").map(str::trim).unwrap_or("");
            if !text.is_empty() {
                let text = format!("{subtype}: {text}");
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::SystemNotification, time, text),
                );
            }
        }
    }
    Handled::Known
}

/// The string codes anywhere in an API error (`code`, `errno`, `type` keys, a few levels
/// deep), each once, in the order met.
fn error_codes(err: &Value) -> Vec<String> {
    fn walk(v: &Value, depth: usize, out: &mut Vec<String>) {
        let Some(obj) = v.as_object().filter(|_| depth < 4) else {
            return;
        };
        for (k, v) in obj {
            match v {
                Value::String(s) if matches!(k.as_str(), "code" | "errno" | "type") => {
                    let s = s.trim();
                    if !s.is_empty() && s.len() <= 80 && !out.iter().any(|o| o == s) {
                        out.push(s.to_string());
                    }
                }
                Value::Object(_) => walk(v, depth + 1, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(err, 0, &mut out);
    out
}
