//! The code lane backed by a RAGRAF-compatible MCP server (contract §5.2).
//!
//! `ragraf_search` (or the configured tool) is called with `{query, limit, with_text, paths?,
//! workspaces?}` and its envelope — `index_rev`, `capability`, `drift`, `freshness`, `found`,
//! `items[]` — becomes a [`CodeAnswer`]. `found=false` and `index_rev=null` are failures of the
//! lane (`KNOWLEDGE_SOURCE_UNAVAILABLE`, `KNOWLEDGE_INDEX_NOT_READY`); `capability=degraded` is an
//! honest answer that the engine reports as a degraded lane. The filters are applied again on
//! the answer where the answer allows it, so a server that ignores them cannot leak paths.
//! Lines of a file are read with `ragraf_code` (`{path, start_line, end_line?}`); what it answers
//! becomes the lane's [`CodeLines`], redacted again, marked `read_from: "external"`.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::answer::{self, field, number, string, strings, uint};
use super::{McpLane, Protocol};
use crate::contract::{Capability, Code};
use crate::lanes::{
    CodeAnswer, CodeHit, CodeLines, CodeSource, CodeStats, LaneRequest, LineRange, ReadCodeError,
    SourceFailure,
};
use crate::sources::code::chunk::{file_text_kind, redact_lines, split_lines};
use crate::sources::code::read::{window, MAX_READ_BYTES};
use crate::sources::code::Freshness;

/// The default search tool of a RAGRAF server.
pub const DEFAULT_TOOL: &str = "ragraf_search";
/// The RAGRAF tool that reads lines of a file.
pub const CODE_TOOL: &str = "ragraf_code";
/// At most this many candidates are asked of the server.
const MAX_LIMIT: usize = 100;

/// A RAGRAF-compatible server (contract §5.2).
pub struct Ragraf;

impl Protocol for Ragraf {
    const DEFAULT_TOOL: &'static str = DEFAULT_TOOL;
}

/// A code source over an external RAGRAF-compatible MCP server.
pub type McpCodeSource = McpLane<Ragraf>;

/// How long a `ragraf_code` read may take (a person is waiting; no lane timeout applies).
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

impl CodeSource for McpLane<Ragraf> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn search(&self, req: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        let result = self.client.call(&self.tool, search_args(req))?;
        let doc = answer::document(self.client.command(), result, &[])?;
        parse_envelope(self.client.command(), &doc, req)
    }

    fn read(
        &self,
        path: &str,
        range: LineRange,
        _chunk: Option<&str>,
    ) -> Result<CodeLines, ReadCodeError> {
        let mut args = Map::new();
        args.insert("path".into(), json!(path));
        args.insert("start_line".into(), json!(range.start));
        if let Some(end) = range.end {
            args.insert("end_line".into(), json!(end));
        }
        let unavailable = ReadCodeError::Unavailable;
        let result = self
            .client
            .call_within(CODE_TOOL, args, READ_TIMEOUT)
            .map_err(unavailable)?;
        let doc = answer::document(self.client.command(), result, &[]).map_err(unavailable)?;
        // `found: false`: the server does not hold the file (the next source may).
        if doc.get("found").and_then(Value::as_bool) == Some(false) {
            return Err(ReadCodeError::NotInSource(
                format!("{path}: not in the external code source {}", self.name).into(),
            ));
        }
        parse_lines(self.client.command(), path, range, &doc).map_err(unavailable)
    }

    /// A RAGRAF server reports its revision with each answer, not counts.
    fn stats(&self) -> Result<CodeStats, SourceFailure> {
        Err(SourceFailure::new(
            Code::SourceUnavailable,
            format!(
                "{} reports no counts (a RAGRAF server only searches and reads)",
                self.name
            ),
        ))
    }
}

/// A `ragraf_code` answer → the lines asked for, redacted, or the failure it stands for. The
/// lines come as `lines` (strings, or objects with `text`) or as one `text`/`content` string.
fn parse_lines(
    source: &str,
    path: &str,
    range: LineRange,
    doc: &Value,
) -> Result<CodeLines, SourceFailure> {
    let garbage = |what: &str| {
        SourceFailure::new(
            Code::SourceUnavailable,
            format!("MCP source `{source}` answered `{CODE_TOOL}` with {what}"),
        )
    };
    if !doc.is_object() {
        return Err(garbage("something that is not a document"));
    }
    let text = match field(doc, &["lines"]) {
        Some(Value::Array(a)) => a
            .iter()
            .map(|l| match l {
                Value::String(s) => s.clone(),
                other => string(other, &["text", "line", "content"]).unwrap_or_default(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(_) => return Err(garbage("lines that are not a list")),
        None => string(doc, &["text", "content", "code"]).ok_or_else(|| garbage("no lines"))?,
    };
    if text.len() as u64 > MAX_READ_BYTES {
        return Err(garbage(&format!(
            "more than {} MiB of text",
            MAX_READ_BYTES / (1024 * 1024)
        )));
    }
    let path = string(doc, &["path", "file"]).unwrap_or_else(|| path.to_string());
    let first = uint(doc, &["start_line", "startLine"])
        .unwrap_or(range.start)
        .max(1);
    // Redacted as a whole, so a secret spanning lines is hidden too; then the lines asked for.
    let (all, _) = redact_lines(&text, file_text_kind(&path, &text));
    let skip = range.start.saturating_sub(first);
    let asked = range.end.map(|e| (e + 1).saturating_sub(first));
    let (lines, last, redacted) = window(&all, skip + 1, asked);
    let freshness = field(doc, &["freshness"]).unwrap_or(doc);
    Ok(CodeLines {
        root: string(doc, &["root", "repo_root", "workspace"]).unwrap_or_default(),
        start_line: first + skip,
        end_line: if lines.is_empty() {
            0
        } else {
            first + last - 1
        },
        total_lines: uint(doc, &["total_lines", "totalLines"])
            .unwrap_or(first - 1 + split_lines(&text).len() as u64),
        path,
        lines,
        read_from: "external".to_string(),
        redacted,
        index_rev: string(doc, &["index_rev"]),
        freshness: Freshness {
            stale: answer::boolean(freshness, &["stale"]).unwrap_or(false),
            verified_by: string(freshness, &["verified_by"])
                .map(|v| answer::message(&v))
                .unwrap_or_else(|| format!("the external source {source}")),
        },
        chunks: Vec::new(),
    })
}

/// The arguments of one `ragraf_search` call.
pub fn search_args(req: &LaneRequest) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("query".into(), json!(req.query));
    args.insert("limit".into(), json!(req.depth.clamp(1, MAX_LIMIT)));
    args.insert("with_text".into(), json!(true));
    if !req.paths.is_empty() {
        args.insert("paths".into(), json!(req.paths));
    }
    if !req.workspaces.is_empty() {
        args.insert("workspaces".into(), json!(req.workspaces));
    }
    args
}

/// A RAGRAF envelope → the lane's answer, or the failure it stands for.
pub fn parse_envelope(
    source: &str,
    doc: &Value,
    req: &LaneRequest,
) -> Result<CodeAnswer, SourceFailure> {
    let keys = ["index_rev", "found", "items", "capability"];
    if !doc.is_object() || !keys.iter().any(|k| doc.get(k).is_some()) {
        return Err(SourceFailure::new(
            Code::SourceUnavailable,
            format!("MCP source `{source}` answered something that is not a RAGRAF envelope"),
        ));
    }
    let index_rev = string(doc, &["index_rev"]);
    let reason = string(doc, &["reason", "message", "degradation_reason"])
        .map(|m| format!(": {}", answer::message(&m)))
        .unwrap_or_default();
    let not_ready = || {
        SourceFailure::new(
            Code::IndexNotReady,
            format!(
                "MCP source `{source}` reports index_rev=null: its index is not built yet{reason}"
            ),
        )
    };
    // An explicit `index_rev: null` names the cause; otherwise `found=false` does.
    if index_rev.is_none() && doc.get("index_rev").is_some() {
        return Err(not_ready());
    }
    if answer::boolean(doc, &["found"]) == Some(false) {
        return Err(SourceFailure::new(
            Code::SourceUnavailable,
            format!("MCP source `{source}` answered found=false{reason}"),
        ));
    }
    if index_rev.is_none() {
        return Err(not_ready());
    }

    let (capability, capability_reason) = capability(doc);
    let freshness = field(doc, &["freshness"]);
    let mut stale = freshness
        .and_then(|f| answer::boolean(f, &["stale"]))
        .unwrap_or(false);
    let mut stale_paths = freshness
        .map(|f| strings(f, &["stale_paths", "paths"]))
        .unwrap_or_default();

    let raw_items = match field(doc, &["items", "results", "hits"]) {
        None => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => {
            return Err(SourceFailure::new(
                Code::SourceUnavailable,
                format!("MCP source `{source}` answered items that are not a list"),
            ))
        }
    };
    let mut hits = Vec::new();
    for item in &raw_items {
        let Some(hit) = code_hit(item, req.snippet_chars) else {
            continue;
        };
        if answer::boolean(item, &["stale"]) == Some(true) {
            stale = true;
            if !stale_paths.contains(&hit.path) {
                stale_paths.push(hit.path.clone());
            }
        }
        if keep(&hit, req) {
            hits.push(hit);
        }
    }
    if !raw_items.is_empty()
        && hits.is_empty()
        && !raw_items.iter().any(|i| code_hit(i, 80).is_some())
    {
        return Err(SourceFailure::new(
            Code::SourceUnavailable,
            format!(
                "MCP source `{source}` answered {} items, none with a path and start_line",
                raw_items.len()
            ),
        ));
    }
    Ok(CodeAnswer {
        index_rev,
        capability,
        capability_reason,
        stale,
        stale_paths,
        nothing_relevant: None,
        drift: field(doc, &["drift"]).cloned(),
        hits,
        unanswered: Vec::new(),
    })
}

/// The envelope's capability; anything but `full`/`lexical`/`degraded` is reported as degraded.
fn capability(doc: &Value) -> (Capability, Option<String>) {
    let reason = string(doc, &["capability_reason", "degradation_reason", "reason"])
        .map(|r| answer::message(&r));
    match field(doc, &["capability"]).and_then(Value::as_str) {
        Some("full") => (Capability::Full, None),
        Some("lexical") => (Capability::Lexical, None),
        Some("degraded") => (
            Capability::Degraded,
            Some(reason.unwrap_or_else(|| "the RAGRAF server reports capability=degraded".into())),
        ),
        Some(other) => (
            Capability::Degraded,
            Some(format!("unknown capability \"{}\"", answer::message(other))),
        ),
        None => (
            Capability::Degraded,
            Some("the RAGRAF server did not report its capability".to_string()),
        ),
    }
}

/// One item → a hit; `None` when it lacks its locator (`path` + `start_line`).
fn code_hit(item: &Value, snippet_chars: usize) -> Option<CodeHit> {
    if !item.is_object() {
        return None;
    }
    let path = string(item, &["path", "file"])?;
    let path = path.trim().to_string();
    let start_line = uint(item, &["start_line", "startLine", "line"]).filter(|n| *n >= 1)?;
    let end_line = uint(item, &["end_line", "endLine"])
        .unwrap_or(start_line)
        .max(start_line);
    let chunk_id = string(item, &["chunk_id", "chunkId", "id"])
        .unwrap_or_else(|| format!("{path}:{start_line}-{end_line}"));
    let score = number(item, &["score"]).unwrap_or(0.0);
    let mut why: Vec<String> = strings(item, &["why"])
        .iter()
        .map(|w| answer::message(w))
        .filter(|w| !w.is_empty())
        .take(8)
        .collect();
    if number(item, &["score"]).is_some() {
        why.push(format!("ragraf score: {score:.3}"));
    }
    let mtime = answer::time(item, &["mtime", "modified_at"]);
    Some(CodeHit {
        chunk_id,
        path,
        start_line,
        end_line,
        source_kind: string(item, &["source_kind", "kind"]).unwrap_or_else(|| "chunk".into()),
        symbol: string(item, &["symbol"]),
        score: score.max(0.0),
        why,
        snippet: answer::cut(
            &string(item, &["snippet", "text"]).unwrap_or_default(),
            snippet_chars.max(1),
        ),
        mtime: mtime.as_ref().map(|t| t.0.clone()),
        mtime_ms: mtime.map(|t| t.1),
        root: string(item, &["root", "repo_root", "workspace", "repo"]).unwrap_or_default(),
        machine: None,
    })
}

/// The request's filters, applied again to what the server returned.
fn keep(hit: &CodeHit, req: &LaneRequest) -> bool {
    if !req.paths.is_empty() {
        let rel = hit.path.trim_start_matches("./");
        let full = if hit.root.is_empty() {
            String::new()
        } else {
            format!("{}/{}", hit.root.trim_end_matches('/'), rel)
        };
        let matches = req.paths.iter().any(|p| {
            let p = p.trim_start_matches("./");
            rel.starts_with(p) || (!full.is_empty() && full.starts_with(p))
        });
        if !matches {
            return false;
        }
    }
    if !req.workspaces.is_empty() {
        let located = if !hit.root.is_empty() {
            Some(hit.root.as_str())
        } else if hit.path.starts_with('/') {
            Some(hit.path.as_str())
        } else {
            // A relative path without a root cannot be checked here; the server was given the
            // workspaces and answers for them.
            None
        };
        if let Some(at) = located {
            if !req.workspaces.iter().any(|w| answer::under(at, w)) {
                return false;
            }
        }
    }
    if let Some(ms) = hit.mtime_ms {
        if req.since_ms.is_some_and(|s| ms < s) || req.until_ms.is_some_and(|u| ms > u) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> LaneRequest {
        LaneRequest {
            query: "mysql".into(),
            depth: 30,
            snippet_chars: 240,
            ..Default::default()
        }
    }

    #[test]
    fn envelope_to_answer() {
        let doc = json!({
            "index_rev": "r1", "capability": "lexical", "found": true,
            "freshness": {"stale": false, "verified_by": "fingerprint"},
            "items": [
                {"chunk_id": "c1", "path": "src/db.rs", "start_line": 3, "end_line": 9,
                 "source_kind": "symbol", "score": 7.5, "why": ["lex: mysql"], "snippet": "fn connect()"},
                {"path": 12, "start_line": "x"},
                "garbage"
            ]
        });
        let a = parse_envelope("fake", &doc, &req()).expect("answer");
        assert_eq!(a.index_rev.as_deref(), Some("r1"));
        assert_eq!(a.capability, Capability::Lexical);
        assert_eq!(a.hits.len(), 1);
        assert_eq!(a.hits[0].why, vec!["lex: mysql", "ragraf score: 7.500"]);
    }

    #[test]
    fn failures_map_to_codes() {
        let r = req();
        let code = |d: Value| parse_envelope("fake", &d, &r).err().map(|f| f.code);
        assert_eq!(
            code(json!({"index_rev": null, "items": []})),
            Some(Code::IndexNotReady)
        );
        assert_eq!(
            code(json!({"index_rev": "r", "found": false})),
            Some(Code::SourceUnavailable)
        );
        assert_eq!(code(json!([1, 2])), Some(Code::SourceUnavailable));
        assert_eq!(
            code(json!({"index_rev": "r", "items": {"a": 1}})),
            Some(Code::SourceUnavailable)
        );
        assert_eq!(
            code(json!({"index_rev": "r", "items": [{"x": 1}]})),
            Some(Code::SourceUnavailable)
        );
        let d = parse_envelope(
            "fake",
            &json!({"index_rev": 5, "capability": "degraded", "items": []}),
            &r,
        )
        .expect("degraded is an answer");
        assert_eq!(d.capability, Capability::Degraded);
        assert!(d.capability_reason.is_some());
    }

    #[test]
    fn ragraf_code_answer_to_the_lines_asked_for() {
        let doc = json!({"path": "src/a.rs", "start_line": 5, "text": "a\nb\nc\nd"});
        let range = LineRange {
            start: 6,
            end: Some(7),
        };
        let l = parse_lines("fake", "src/a.rs", range, &doc).expect("lines");
        assert_eq!((l.start_line, l.end_line), (6, 7));
        assert_eq!(l.lines, vec!["b", "c"]);
        assert_eq!((l.total_lines, l.read_from.as_str()), (8, "external"));
        let whole = LineRange {
            start: 1,
            end: None,
        };
        for bad in [json!({"lines": 3}), json!({"path": "x"}), json!([1])] {
            let f = parse_lines("fake", "x", whole, &bad).err();
            assert_eq!(f.map(|f| f.code), Some(Code::SourceUnavailable), "{bad}");
        }
    }

    #[test]
    fn workspace_filter_uses_the_root() {
        let mut r = req();
        r.workspaces = vec!["/srv/app".into()];
        let doc = json!({"index_rev": "r", "capability": "full", "items": [
            {"path": "a.rs", "start_line": 1, "root": "/srv/app"},
            {"path": "b.rs", "start_line": 1, "root": "/srv/application"},
            {"path": "/srv/other/c.rs", "start_line": 1}
        ]});
        let a = parse_envelope("fake", &doc, &r).expect("answer");
        assert_eq!(
            a.hits.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
            vec!["a.rs"]
        );
    }
}
