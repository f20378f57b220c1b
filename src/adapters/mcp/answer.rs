//! Reading what an external MCP server answered, without trusting it.
//!
//! A tool result may carry its JSON as structured content or as text; it may be a tool error
//! with a backend code in it; numbers may come as strings and times as epoch milliseconds. The
//! helpers here turn all of that into plain values or a [`SourceFailure`], and never panic on
//! garbage.

use rmcp::model::CallToolResult;
use serde_json::Value;

use crate::contract::Code;
use crate::lanes::SourceFailure;

/// At most this many characters of a server's own message go into a degradation reason.
const MESSAGE_CHARS: usize = 200;

/// The JSON document of a tool result, or why there is none.
///
/// A tool error (`isError`) becomes a failure whose reason carries the backend's code when one
/// of `known_codes` appears in it (as `code`, `error.code` or in the text).
pub fn document(
    source: &str,
    result: CallToolResult,
    known_codes: &[(&str, Code)],
) -> Result<Value, SourceFailure> {
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    let doc = match result.structured_content {
        Some(v) if !v.is_null() => Some(v),
        _ => serde_json::from_str::<Value>(text.trim()).ok(),
    };
    if result.is_error == Some(true) {
        return Err(tool_error(source, doc.as_ref(), &text, known_codes));
    }
    let Some(doc) = doc else {
        return Err(SourceFailure::new(
            Code::SourceUnavailable,
            format!("MCP source `{source}` answered something that is not JSON"),
        ));
    };
    if let Some(f) = embedded_error(source, &doc, known_codes) {
        return Err(f);
    }
    Ok(doc)
}

/// A failure for a tool error: the backend code when there is a known one, else the message.
fn tool_error(
    source: &str,
    doc: Option<&Value>,
    text: &str,
    known_codes: &[(&str, Code)],
) -> SourceFailure {
    if let Some(f) = doc.and_then(|d| embedded_error(source, d, known_codes)) {
        return f;
    }
    for (name, code) in known_codes {
        if text.contains(name) {
            return SourceFailure::new(
                *code,
                format!("MCP source `{source}` answered {name}: {}", message(text)),
            );
        }
    }
    SourceFailure::new(
        Code::SourceUnavailable,
        format!("MCP source `{source}` answered an error: {}", message(text)),
    )
}

/// A backend error written into an otherwise normal document (`{"error": {"code": …}}`,
/// `{"code": "SESSION_QUERY_…"}`).
fn embedded_error(
    source: &str,
    doc: &Value,
    known_codes: &[(&str, Code)],
) -> Option<SourceFailure> {
    let err = doc.get("error").filter(|e| !e.is_null());
    let code = err
        .and_then(|e| e.get("code").or_else(|| e.get("details")?.get("code")))
        .or_else(|| doc.get("code"))
        .and_then(Value::as_str);
    let msg = err
        .and_then(|e| e.get("message").and_then(Value::as_str).or(e.as_str()))
        .or_else(|| doc.get("message").and_then(Value::as_str))
        .unwrap_or("");
    if let Some(code) = code {
        if let Some((name, c)) = known_codes.iter().find(|(n, _)| *n == code) {
            return Some(SourceFailure::new(
                *c,
                format!("MCP source `{source}` answered {name}: {}", message(msg)),
            ));
        }
    }
    err.map(|_| {
        let code = code.map(message).unwrap_or_else(|| "error".to_string());
        SourceFailure::new(
            Code::SourceUnavailable,
            format!("MCP source `{source}` answered {code}: {}", message(msg)),
        )
    })
}

/// A server's message made safe for a reason: one line, redacted, bounded.
pub fn message(text: &str) -> String {
    let line = crate::text::sanitize::one_line(&crate::text::redact::redact(text).text);
    let mut out: String = line.chars().take(MESSAGE_CHARS).collect();
    if line.chars().count() > MESSAGE_CHARS {
        out.push('…');
    }
    out
}

/// The first of `keys` present (and not null) in `v`.
pub fn field<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| v.get(*k).filter(|x| !x.is_null()))
}

/// A string field; numbers are accepted and written out.
pub fn string(v: &Value, keys: &[&str]) -> Option<String> {
    match field(v, keys)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A non-negative integer field; integral floats and numeric strings are accepted.
pub fn uint(v: &Value, keys: &[&str]) -> Option<u64> {
    match field(v, keys)? {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 9e15)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A finite number field; numeric strings are accepted.
pub fn number(v: &Value, keys: &[&str]) -> Option<f64> {
    let f = match field(v, keys)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }?;
    f.is_finite().then_some(f)
}

pub fn boolean(v: &Value, keys: &[&str]) -> Option<bool> {
    field(v, keys)?.as_bool()
}

/// A list of strings (non-strings skipped); a single string counts as a list of one.
pub fn strings(v: &Value, keys: &[&str]) -> Vec<String> {
    match field(v, keys) {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// A time as RFC 3339 (UTC, milliseconds) and epoch milliseconds: from an RFC 3339 string or
/// from epoch milliseconds (seconds when the number is too small to be milliseconds).
pub fn time(v: &Value, keys: &[&str]) -> Option<(String, i64)> {
    use chrono::{DateTime, SecondsFormat, Utc};
    let dt: DateTime<Utc> = match field(v, keys)? {
        Value::String(s) => match DateTime::parse_from_rfc3339(s.trim()) {
            Ok(t) => t.with_timezone(&Utc),
            Err(_) => DateTime::from_timestamp_millis(s.trim().parse::<i64>().ok()?)?,
        },
        Value::Number(n) => {
            let x = n.as_f64()?;
            if !x.is_finite() || x <= 0.0 {
                return None;
            }
            let ms = if x < 1e11 { x * 1000.0 } else { x };
            DateTime::from_timestamp_millis(ms as i64)?
        }
        _ => return None,
    };
    Some((
        dt.to_rfc3339_opts(SecondsFormat::Millis, true),
        dt.timestamp_millis(),
    ))
}

/// `path` is `root` or lies under it at a path-separator boundary (DECISIONS §5).
pub fn under(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    if root.is_empty() {
        return path.starts_with('/');
    }
    path == root
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// `text` cut to at most `max` characters (on a character boundary, with an ellipsis).
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_from_strings_and_numbers() {
        let v = json!({"a": "2025-03-01T10:00:00+02:00", "b": 1740823200000i64, "c": 1740823200, "d": "x"});
        assert_eq!(
            time(&v, &["a"]).map(|t| t.0).as_deref(),
            Some("2025-03-01T08:00:00.000Z")
        );
        assert_eq!(time(&v, &["b"]).map(|t| t.1), Some(1740823200000));
        assert_eq!(time(&v, &["c"]).map(|t| t.1), Some(1740823200000));
        assert_eq!(time(&v, &["d"]), None);
    }

    #[test]
    fn path_boundary() {
        assert!(under("/srv/app/x", "/srv/app"));
        assert!(under("/srv/app", "/srv/app/"));
        assert!(!under("/srv/application", "/srv/app"));
    }

    #[test]
    fn numbers_tolerate_strings_and_reject_garbage() {
        let v = json!({"a": "12", "b": -1, "c": 3.0, "d": [1]});
        assert_eq!(uint(&v, &["a"]), Some(12));
        assert_eq!(uint(&v, &["b"]), None);
        assert_eq!(uint(&v, &["c"]), Some(3));
        assert_eq!(uint(&v, &["d"]), None);
        assert_eq!(number(&v, &["b"]), Some(-1.0));
    }
}
