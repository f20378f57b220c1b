//! `knowledge_code`: the lines of a code reference, redacted, with the file's freshness.
//!
//! The lines come from `Engine::read_code`, the rule set every front end shares: the index, then
//! the external code source when one is configured (RAGRAF's `ragraf_code`, through the code
//! lane), then a regular, text, size-capped file under an indexed root — or, without an index,
//! under the working directory. The tool is not a way to read arbitrary files.

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use super::handler::{failure, invalid, success, Inner};
use super::render;
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

    match server.engine().read_code(path, start, end, None) {
        Ok(lines) => {
            let text = render::code(&lines);
            let doc = serde_json::to_value(&lines).unwrap_or(Value::Null);
            success(doc, text, true)
        }
        Err(ReadCodeError::NotReadable(why) | ReadCodeError::NotInSource(why)) => {
            invalid("path", &format!("path: {why}"))
        }
        Err(ReadCodeError::Unavailable(why)) => {
            failure(Code::SourceUnavailable, None, &why.to_string())
        }
    }
}
