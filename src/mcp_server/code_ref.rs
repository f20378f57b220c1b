//! `knowledge_code`: the lines of a code reference, redacted, with the file's freshness.
//!
//! Where the lines come from: the external RAGRAF source's `ragraf_code`, when the code lane is
//! configured to come from one (its paths are the ones the lane returned; what it answers is
//! redacted again on the way out); else `Engine::read_code`, the rule set every front end shares
//! (the index, then a regular, text, size-capped file under an indexed root — or, without an
//! index, under the working directory). The tool is not a way to read arbitrary files.

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use super::handler::{failure, invalid, success, Inner, EXTERNAL_READ_TIMEOUT};
use super::render;
use knowledge::adapters::mcp::McpCodeSource;
use knowledge::contract::Code;
use knowledge::engine::read_code::ReadCodeError;

pub fn read(server: &Inner, args: &Map<String, Value>) -> CallToolResult {
    let path = match args.get("path") {
        Some(Value::String(s)) if !s.trim().is_empty() && !s.contains('\0') => s.trim(),
        _ => return invalid("path", "path: required, a non-empty string"),
    };
    let Some(start) = args
        .get("start_line")
        .and_then(Value::as_u64)
        .filter(|n| *n >= 1)
    else {
        return invalid("start_line", "start_line: required, an integer ≥ 1");
    };
    let end = match args.get("end_line") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().filter(|n| *n >= start) {
            Some(n) => Some(n),
            None => return invalid("end_line", "end_line: an integer ≥ start_line"),
        },
    };

    if let Some(src) = &server.engine().config.sources.code {
        let source = server
            .external_code
            .get_or_init(|| McpCodeSource::new(src, EXTERNAL_READ_TIMEOUT));
        return match source.read_code(path, start, end) {
            Ok(mut doc) => {
                redact_strings(&mut doc);
                let text = render::external_code(&doc);
                success(doc, text, true)
            }
            Err(f) => failure(f.code, None, &f.reason),
        };
    }
    match server.engine().read_code(path, start, end, None) {
        Ok(lines) => {
            let doc = serde_json::to_value(&lines).unwrap_or(Value::Null);
            let text = render::code(&doc);
            success(doc, text, true)
        }
        Err(ReadCodeError::NotReadable(why)) => invalid("path", &format!("path: {why}")),
        Err(ReadCodeError::Unavailable(why)) => failure(Code::SourceUnavailable, None, &why),
    }
}

/// Every string in `v` redacted (defence in depth for what an external source returns).
fn redact_strings(v: &mut Value) {
    match v {
        Value::String(s) => {
            let (red, n) = knowledge::text::redact::redact_cow(s);
            if n > 0 {
                *s = red.into_owned();
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_strings),
        Value::Object(m) => m.values_mut().for_each(redact_strings),
        _ => {}
    }
}
