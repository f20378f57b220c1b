//! `knowledge_code`: the lines of a code reference, redacted, with the file's freshness.
//!
//! Where the lines come from, in order: the external RAGRAF source's `ragraf_code`, when the code
//! lane is configured to come from one (its paths are the ones the lane returned); else the
//! built-in code index (`CodeStore::read_code`, which only reads indexed files); else — no code
//! index at all — a file under the server's working directory, read and redacted here. A path
//! outside the indexed roots (or, without an index, outside the working directory) is refused:
//! the tool is not a way to read arbitrary files. What an external source answers is redacted
//! again on the way out.

use std::path::Path;

use rmcp::model::CallToolResult;
use serde_json::{json, Map, Value};

use super::handler::{failure, invalid, success, Inner, EXTERNAL_READ_TIMEOUT};
use super::render;
use knowledge::adapters::mcp::McpCodeSource;
use knowledge::contract::Code;
use knowledge::sources::code::CodeStoreError;

/// Lines at most in one read (as the code index's `read_code`).
const MAX_LINES: u64 = 2_000;
/// Files larger than this are not read without an index.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

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
    if let Some(store) = server.engine().code_store() {
        return match store.read_code(path, start, end) {
            Ok(lines) => {
                let doc = serde_json::to_value(&lines).unwrap_or(Value::Null);
                let text = render::code(&doc);
                success(doc, text, true)
            }
            Err(e @ (CodeStoreError::NotIndexed(_) | CodeStoreError::Ambiguous { .. })) => {
                invalid("path", &e.to_string())
            }
            Err(e) => failure(Code::SourceUnavailable, None, &e.to_string()),
        };
    }
    match read_local(path, start, end) {
        Ok(doc) => {
            let text = render::code(&doc);
            success(doc, text, true)
        }
        Err(why) => invalid("path", &format!("path: {why}")),
    }
}

/// Read a file under the working directory (there is no code index to resolve paths against).
/// Why it cannot be read is the error.
fn read_local(path: &str, start: u64, end: Option<u64>) -> Result<Value, String> {
    let not_readable = |why: &str| why.to_string();
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|_| not_readable("no code index and no working directory to read from"))?;
    let given = Path::new(path);
    let full = if given.is_absolute() {
        given.to_path_buf()
    } else {
        cwd.join(given)
    };
    let Ok(canon) = full.canonicalize() else {
        return Err(not_readable(
            "no such file (and no code index: run `knowledge index --code ROOT`)",
        ));
    };
    if !canon.starts_with(&cwd) {
        return Err(not_readable(
            "outside the working directory; without a code index only files under it can be read",
        ));
    }
    let meta = std::fs::metadata(&canon).map_err(|_| not_readable("cannot be read"))?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return Err(not_readable("not a regular file of a readable size"));
    }
    let bytes = std::fs::read(&canon).map_err(|_| not_readable("cannot be read"))?;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(not_readable("a binary file"));
    }
    let red = knowledge::text::redact::redact(&String::from_utf8_lossy(&bytes));
    let all: Vec<&str> = red.text.lines().collect();
    let total = all.len() as u64;
    let last = end
        .unwrap_or(u64::MAX)
        .min(start.saturating_add(MAX_LINES - 1))
        .min(total);
    let lines: Vec<&str> = if start <= last {
        all[(start - 1) as usize..last as usize].to_vec()
    } else {
        Vec::new()
    };
    let redacted = lines
        .iter()
        .map(|l| l.matches(knowledge::text::redact::REDACTED).count())
        .sum::<usize>();
    let rel = canon
        .strip_prefix(&cwd)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string());
    Ok(json!({
        "root": cwd.display().to_string(),
        "path": rel,
        "start_line": start,
        "end_line": if lines.is_empty() { 0 } else { last },
        "total_lines": total,
        "lines": lines,
        "read_from": "disk",
        "redacted": redacted,
        "index_rev": null,
        "freshness": {"stale": false, "verified_by": null},
        "chunks": [],
    }))
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
