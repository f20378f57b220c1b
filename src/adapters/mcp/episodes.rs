//! The episodes lane backed by an external session-query MCP server (contract §5.1).
//!
//! The tool (`session_query` unless configured) is called with `{query, limit, workspaces?,
//! session_ids?}`. Its answer is one backend result `{header, live, persisted, bestMatch:{sessionId,
//! seq, type, time, surface, snippet}}` or a list of them (`matches`/`results`/`items`/`sessions`
//! or a bare array); a flat match without `bestMatch` is accepted too. Each becomes the lane's
//! [`EpisodeHit`] with only what the header gives — the agent, the transcript and the outcome
//! are never invented. Backend errors (`SESSION_QUERY_*`) degrade the lane with the code in the
//! reason. The workspace, session and time filters are applied again on the answer (the
//! workspace filter is mandatory: a session whose `cwd` is unknown cannot be shown under a
//! workspace filter). The backend only searches (§5.1 has no tool to read an event), so
//! [`EpisodesSource::episode`] says where the event can be opened instead.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::answer::{self, field, string, uint};
use super::{McpLane, Protocol};
use crate::contract::{Code, EventKind, Outcome};
use crate::lanes::{
    Episode, EpisodeError, EpisodeHit, EpisodesAnswer, EpisodesSource, HitSession, LaneRequest,
    LaneStats, SessionRow, SourceFailure,
};

/// The default tool of a session-query server.
pub const DEFAULT_TOOL: &str = "session_query";
/// At most this many results are asked of the server.
const MAX_LIMIT: usize = 100;

/// The backend's error codes (contract §5.1); each degrades the lane and is named in the reason.
pub const BACKEND_CODES: &[(&str, Code)] = &[
    ("SESSION_QUERY_SEARCH_DISABLED", Code::SourceUnavailable),
    ("SESSION_QUERY_INDEX_FAILED", Code::SourceUnavailable),
    ("SESSION_QUERY_STALE_CURSOR", Code::SourceUnavailable),
    ("SESSION_QUERY_SESSION_NOT_FOUND", Code::SourceUnavailable),
];

/// A session-query server (contract §5.1).
pub struct SessionQuery;

impl Protocol for SessionQuery {
    const DEFAULT_TOOL: &'static str = DEFAULT_TOOL;
}

/// An episodes source over an external session-query MCP server.
pub type McpEpisodesSource = McpLane<SessionQuery>;

impl EpisodesSource for McpLane<SessionQuery> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn search(&self, req: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        let result = self.client.call(&self.tool, search_args(req))?;
        let doc = answer::document(self.client.command(), result, BACKEND_CODES)?;
        parse_answer(self.client.command(), &self.name, &doc, req)
    }

    fn episode(&self, session_id: &str, _seq: u64, _context: u64) -> Result<Episode, EpisodeError> {
        Err(EpisodeError::External {
            session: session_id.to_string(),
            source_name: self.name.clone(),
            why: format!(
                "answers searches only (a session-query server has no tool to read an event; \
                 `{}` finds matches): open the event in the harness that recorded it",
                self.tool
            ),
        })
    }

    /// A session-query server answers searches only: it reports no counts.
    fn stats(&self) -> Result<LaneStats, SourceFailure> {
        Err(SourceFailure::new(
            Code::SourceUnavailable,
            format!(
                "{} reports no counts (a session-query server only searches)",
                self.name
            ),
        ))
    }

    /// §5.1 has no tool to read a session: what a hit said about it is all the lane knows.
    fn session(&self, _: &str) -> Result<Option<SessionRow>, SourceFailure> {
        Ok(None)
    }

    fn first_human_text(&self, _: &str) -> Result<Option<String>, SourceFailure> {
        Ok(None)
    }

    fn event_time(&self, _: &str, _: u64) -> Result<Option<String>, SourceFailure> {
        Ok(None)
    }
}

/// The arguments of one session-query call.
pub fn search_args(req: &LaneRequest) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("query".into(), json!(req.query));
    args.insert("limit".into(), json!(req.depth.clamp(1, MAX_LIMIT)));
    if !req.workspaces.is_empty() {
        args.insert("workspaces".into(), json!(req.workspaces));
    }
    if !req.session_ids.is_empty() {
        args.insert("session_ids".into(), json!(req.session_ids));
    }
    args
}

/// The backend answer → the lane's answer, or the failure it stands for.
pub fn parse_answer(
    source: &str,
    name: &str,
    doc: &Value,
    req: &LaneRequest,
) -> Result<EpisodesAnswer, SourceFailure> {
    let results: Vec<&Value> = match doc {
        Value::Array(a) => a.iter().collect(),
        Value::Object(_) => match field(doc, &["matches", "results", "items", "sessions"]) {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(_) => return Err(garbage(source, "a result list that is not a list")),
            None if doc.get("bestMatch").is_some() || doc.get("header").is_some() => vec![doc],
            None if is_match(doc) => vec![doc],
            None => return Err(garbage(source, "no header, bestMatch or result list")),
        },
        _ => {
            return Err(garbage(
                source,
                "something that is not a session-query answer",
            ))
        }
    };

    let mut hits = Vec::new();
    let mut seen = HashSet::new();
    let mut sessions = HashSet::new();
    let mut live = 0u64;
    let mut unreadable = 0usize;
    for r in &results {
        let Some(hit) = hit(r, name, req.snippet_chars) else {
            // A session without any match is not a hit, but it is not garbage either.
            if !r.is_object() || r.get("bestMatch").is_some_and(|m| !m.is_null()) {
                unreadable += 1;
            }
            continue;
        };
        if sessions.insert(hit.session_id.clone()) && hit.session.live {
            live += 1;
        }
        if keep(&hit, req) && seen.insert((hit.session_id.clone(), hit.seq)) {
            hits.push(hit);
        }
    }
    if unreadable > 0 && unreadable == results.len() {
        return Err(garbage(
            source,
            &format!("{unreadable} results, none with a sessionId and seq"),
        ));
    }
    let coverage = field(doc, &["coverage", "counts"]).unwrap_or(&Value::Null);
    let stats = LaneStats {
        index_rev: string(doc, &["index_rev", "indexRev", "revision"]),
        sessions: uint(coverage, &["sessions"])
            .or_else(|| uint(doc, &["sessions", "totalSessions"]))
            .unwrap_or(sessions.len() as u64),
        events: uint(coverage, &["indexed_docs", "indexedDocs", "events"])
            .or_else(|| uint(doc, &["indexed_docs", "indexedDocs"]))
            .unwrap_or(0),
        live: uint(coverage, &["live"]).unwrap_or(live),
    };
    Ok(EpisodesAnswer {
        stats,
        hits,
        unanswered: Vec::new(),
        nothing_relevant: None,
    })
}

fn garbage(source: &str, what: &str) -> SourceFailure {
    SourceFailure::new(
        Code::SourceUnavailable,
        format!("MCP source `{source}` answered {what}"),
    )
}

fn is_match(v: &Value) -> bool {
    field(v, &["sessionId", "session_id"]).is_some() && field(v, &["seq"]).is_some()
}

/// One backend result → a hit; `None` when it has no readable match.
fn hit(r: &Value, name: &str, snippet_chars: usize) -> Option<EpisodeHit> {
    if !r.is_object() {
        return None;
    }
    let m = match field(r, &["bestMatch", "best_match"]) {
        Some(m) if m.is_object() => m,
        Some(_) => return None,
        None if is_match(r) => r,
        None => return None,
    };
    let header = field(r, &["header", "session"]).unwrap_or(&Value::Null);
    let session_id = string(m, &["sessionId", "session_id"])
        .or_else(|| string(header, &["id", "sessionId", "session_id"]))?;
    let seq = uint(m, &["seq"])?;
    let time = answer::time(m, &["time", "timestamp"]);
    let event_type = EventKind::from(
        string(m, &["type", "eventType", "event_type"]).unwrap_or_else(|| "event".into()),
    );
    // A server's own words for a person's text, or one of ours (`user/message`).
    let human = matches!(
        event_type.as_str(),
        "user" | "user_message" | "message.user"
    ) || event_type.known().is_some_and(|t| t.is_human());
    let live = answer::boolean(r, &["live"])
        .or_else(|| answer::boolean(header, &["live"]))
        .unwrap_or(false);
    let session = HitSession {
        source: string(header, &["source", "harness"]).unwrap_or_else(|| name.to_string()),
        cwd: string(header, &["cwd", "workspace", "workspaceRoot"]),
        created_at: answer::time(header, &["createdAt", "created_at"]).map(|t| t.0),
        agent_preset: string(header, &["agentPreset", "agent_preset", "preset"]),
        parent_session_id: string(
            header,
            &["parentId", "parentSessionId", "parent_session_id"],
        ),
        outcome: Outcome::Unknown,
        live,
        ..HitSession::default()
    };
    let snippet = string(m, &["snippet", "text"]).unwrap_or_default();
    Some(EpisodeHit {
        session_id,
        seq,
        event_type,
        time: time.as_ref().map(|t| t.0.clone()),
        time_ms: time.map(|t| t.1),
        bm25: answer::number(m, &["score", "rank"]).unwrap_or(0.0),
        lexical: true,
        cosine: None,
        snippet: answer::cut(&snippet, snippet_chars.max(1)),
        human,
        is_error: false,
        sidechain_agent: None,
        session,
    })
}

/// The request's filters, applied again to what the server returned.
fn keep(hit: &EpisodeHit, req: &LaneRequest) -> bool {
    if !req.workspaces.is_empty() {
        let Some(cwd) = hit.session.cwd.as_deref() else {
            return false;
        };
        if !req.workspaces.iter().any(|w| answer::under(cwd, w)) {
            return false;
        }
    }
    if !req.session_ids.is_empty() {
        let parent = hit.session.parent_session_id.as_deref();
        if !req
            .session_ids
            .iter()
            .any(|s| *s == hit.session_id || Some(s.as_str()) == parent)
        {
            return false;
        }
    }
    if req.since_ms.is_some() || req.until_ms.is_some() {
        let Some(ms) = hit.time_ms else {
            return false;
        };
        if req.since_ms.is_some_and(|s| ms < s) || req.until_ms.is_some_and(|u| ms > u) {
            return false;
        }
    }
    // The backend knows no outcome; a filter on one cannot be proven for these sessions.
    req.outcome.is_none()
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

    fn result(sid: &str, seq: u64, cwd: &str) -> Value {
        json!({
            "header": {"id": sid, "cwd": cwd, "createdAt": 1740823200000i64, "title": "t"},
            "live": false, "persisted": true,
            "bestMatch": {"sessionId": sid, "seq": seq, "type": "user",
                          "time": "2025-03-01T10:00:00Z", "surface": "current", "snippet": "mysql down"}
        })
    }

    #[test]
    fn single_and_list_answers() {
        let one = parse_answer("f", "mcp:f", &result("s1", 4, "/srv/app"), &req()).expect("one");
        assert_eq!(one.hits.len(), 1);
        assert_eq!(
            one.hits[0].session.created_at.as_deref(),
            Some("2025-03-01T10:00:00.000Z")
        );
        let list = json!({"matches": [result("s1", 4, "/srv/app"), result("s2", 1, "/srv/other")]});
        assert_eq!(
            parse_answer("f", "mcp:f", &list, &req())
                .expect("list")
                .hits
                .len(),
            2
        );
        let arr = json!([result("s1", 4, "/srv/app"), {"header": {"id": "s3"}, "bestMatch": null}]);
        assert_eq!(
            parse_answer("f", "mcp:f", &arr, &req())
                .expect("array")
                .hits
                .len(),
            1
        );
    }

    #[test]
    fn workspace_filter_is_enforced() {
        let mut r = req();
        r.workspaces = vec!["/srv/app".into()];
        let list = json!([result("s1", 4, "/srv/app/x"), result("s2", 1, "/srv/application"),
                          {"bestMatch": {"sessionId": "s3", "seq": 1}}]);
        let a = parse_answer("f", "mcp:f", &list, &r).expect("answer");
        assert_eq!(
            a.hits
                .iter()
                .map(|h| h.session_id.as_str())
                .collect::<Vec<_>>(),
            vec!["s1"]
        );
    }

    #[test]
    fn a_persons_text_is_human_in_the_servers_words_or_ours() {
        for (kind, human) in [
            ("user", true),
            ("message.user", true),
            ("user/message", true),
            ("user/command", true),
            ("assistant/message", false),
            ("assistant", false),
        ] {
            let mut r = result("s1", 4, "/srv/app");
            r["bestMatch"]["type"] = kind.into();
            let a = parse_answer("f", "mcp:f", &r, &req()).expect("answer");
            assert_eq!(a.hits[0].human, human, "{kind}");
            assert_eq!(a.hits[0].event_type, kind);
        }
    }

    #[test]
    fn garbage_is_a_failure() {
        for doc in [
            json!("x"),
            json!({"a": 1}),
            json!({"matches": 3}),
            json!([1, 2]),
        ] {
            let f = parse_answer("f", "mcp:f", &doc, &req()).err();
            assert_eq!(f.map(|f| f.code), Some(Code::SourceUnavailable), "{doc}");
        }
    }
}
