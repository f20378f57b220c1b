//! One conformance suite for every source behind a lane (as tantivy tests every `Directory`):
//! the built-in stores, the MCP fakes and the team's PostgreSQL are each held to the same rules,
//! so the engine can treat any of them the same way. Each check takes the source and a query
//! that finds something in it, and asserts what a user of the lane relies on: filters are
//! honoured, a hit's locator reads back (or says plainly it cannot), lookups of what the source
//! does not hold are `Ok(None)` or a not-found error (never a failure of the source), and counts
//! never contradict the hits.
#![allow(dead_code)]

use knowledge::lanes::{
    CodeSource, EpisodesSource, LaneRequest, LineRange, ReadCodeError, SkillsSource,
};

/// A request for `query` as the engine builds it (stemmed terms, depth 30).
pub fn request(query: &str) -> LaneRequest {
    LaneRequest {
        terms: knowledge::text::tokens::query_terms(query),
        query: query.to_string(),
        depth: 30,
        snippet_chars: 120,
        ..LaneRequest::default()
    }
}

/// What an episodes source must do; `query` finds at least one event in it.
pub fn episodes(src: &dyn EpisodesSource, query: &str) {
    let name = src.name();
    let req = request(query);
    let found = src
        .search(&req)
        .unwrap_or_else(|f| panic!("{name}: search failed: {f:?}"));
    assert!(!found.hits.is_empty(), "{name}: {query:?} finds nothing");
    assert!(
        found.hits.len() <= req.depth,
        "{name}: more hits than asked"
    );
    for h in &found.hits {
        assert!(!h.session_id.is_empty(), "{name}: a hit without a session");
        assert!(
            h.snippet.chars().count() <= req.snippet_chars + 2,
            "{name}: snippet longer than asked: {}",
            h.snippet
        );
        // A hit's session reads back as the same session, or the source says it cannot.
        match src.session(&h.session_id) {
            Ok(Some(row)) => assert_eq!(row.session_id, h.session_id, "{name}"),
            Ok(None) => {}
            Err(f) => panic!("{name}: session lookup of a hit failed: {f:?}"),
        }
        match src.event_time(&h.session_id, h.seq) {
            Ok(Some(t)) => assert_eq!(Some(&t), h.time.as_ref(), "{name}: event time"),
            Ok(None) => {}
            Err(f) => panic!("{name}: event time of a hit failed: {f:?}"),
        }
        match src.episode(&h.session_id, h.seq, 1) {
            Ok(ep) => {
                assert!(ep.events.iter().any(|e| e.seq == h.seq), "{name}: no event");
                assert!(ep.events.len() <= 3, "{name}: more context than asked");
            }
            Err(e) => assert!(e.is_not_found(), "{name}: reading a hit failed: {e}"),
        }
    }
    // Filters: a session filter keeps only that session (and the subagent sessions under it, ids
    // `<session>/…`), a workspace filter only its sessions.
    let first = &found.hits[0];
    let only = LaneRequest {
        session_ids: vec![first.session_id.clone()],
        ..req.clone()
    };
    let narrowed = src.search(&only).expect("filtered search");
    assert!(
        narrowed
            .hits
            .iter()
            .all(|h| h.session_id == first.session_id
                || h.session_id.starts_with(&format!("{}/", first.session_id))),
        "{name}: the session filter leaked"
    );
    let nowhere = LaneRequest {
        workspaces: vec!["/no/such/workspace".into()],
        ..req.clone()
    };
    let none = src.search(&nowhere).expect("workspace-filtered search");
    assert!(none.hits.is_empty(), "{name}: the workspace filter leaked");
    // What the source does not hold.
    let missing = "no-such-session-4f1c";
    assert!(matches!(src.session(missing), Ok(None)), "{name}");
    assert!(matches!(src.event_time(missing, 0), Ok(None)), "{name}");
    assert!(matches!(src.first_human_text(missing), Ok(None)), "{name}");
    let err = src.episode(missing, 0, 0).expect_err("no such session");
    assert!(err.is_not_found(), "{name}: {err}");
    // Counts, when the source has them, cover the hits.
    if let Ok(stats) = src.stats() {
        assert!(
            stats.events >= found.hits.len() as u64 || stats.events == 0,
            "{name}"
        );
    }
}

/// What a code source must do; `query` finds at least one chunk in it.
pub fn code(src: &dyn CodeSource, query: &str) {
    let name = src.name();
    let req = request(query);
    let found = src
        .search(&req)
        .unwrap_or_else(|f| panic!("{name}: search failed: {f:?}"));
    assert!(!found.hits.is_empty(), "{name}: {query:?} finds nothing");
    assert!(
        found.hits.len() <= req.depth,
        "{name}: more hits than asked"
    );
    for h in &found.hits {
        assert!(
            h.start_line >= 1 && h.end_line >= h.start_line,
            "{name}: {h:?}"
        );
        let range = LineRange {
            start: h.start_line,
            end: Some(h.end_line),
        };
        match src.read(&h.path, range, Some(&h.chunk_id)) {
            Ok(lines) => assert!(!lines.lines.is_empty(), "{name}: {} read empty", h.path),
            Err(ReadCodeError::NotInSource(_) | ReadCodeError::NotReadable(_)) => {}
            Err(e) => panic!("{name}: reading a hit failed: {e}"),
        }
    }
    let nowhere = LaneRequest {
        workspaces: vec!["/no/such/workspace".into()],
        ..req.clone()
    };
    // A hit that names where it is (a root, or an absolute path) is never outside the filter; a
    // relative path without a root cannot be placed, and its server was given the workspaces.
    let none = src.search(&nowhere).expect("workspace-filtered search");
    assert!(
        none.hits
            .iter()
            .all(|h| h.root.is_empty() && !h.path.starts_with('/')),
        "{name}: the workspace filter leaked"
    );
    let range = LineRange {
        start: 1,
        end: Some(3),
    };
    match src.read("no/such/file-4f1c.rs", range, None) {
        Err(ReadCodeError::NotInSource(_) | ReadCodeError::NotReadable(_)) => {}
        other => panic!("{name}: a file it does not hold: {other:?}"),
    }
    if let Ok(stats) = src.stats() {
        assert!(
            stats.chunks >= found.hits.len() as u64 || stats.chunks == 0,
            "{name}"
        );
    }
}

/// What a skills (agent-knowledge) source must do; `query` finds at least one skill with a use.
pub fn skills(src: &dyn SkillsSource, query: &str) {
    let name = src.name();
    let req = request(query);
    let found = src
        .search(&req)
        .unwrap_or_else(|f| panic!("{name}: search failed: {f:?}"));
    assert!(!found.hits.is_empty(), "{name}: {query:?} finds nothing");
    let used: Vec<_> = found.hits.iter().flat_map(|h| h.used_by.iter()).collect();
    assert!(!used.is_empty(), "{name}: no recorded use of {query:?}");
    for (actor_id, session_id, _) in &used {
        let actor = src.actor(actor_id).expect("actor lookup");
        assert!(
            actor.is_some(),
            "{name}: a use names unknown actor {actor_id}"
        );
        let sessions = src.sessions_of(actor_id).expect("sessions of");
        assert!(
            sessions.contains(session_id),
            "{name}: {actor_id} used a skill in {session_id} but did not work there"
        );
        let facts = src
            .facts_for(&[], std::slice::from_ref(actor_id))
            .expect("facts");
        assert!(facts.known.contains_key(actor_id.as_str()), "{name}: facts");
    }
    for h in &found.hits {
        if let Some((top, uses)) = src.top_actor_for_skill(&h.name).expect("top actor") {
            assert!(uses >= 1, "{name}");
            assert!(src.actor(&top).expect("actor").is_some(), "{name}");
        }
    }
    let actor_only = LaneRequest {
        actor_ids: vec!["actor:nobody:root_session:x:main".into()],
        ..req.clone()
    };
    let none = src.search(&actor_only).expect("actor-filtered search");
    assert!(
        none.hits.iter().all(|h| h.used_by.is_empty()),
        "{name}: the actor filter leaked"
    );
    assert!(matches!(
        src.actor("actor:nobody:root_session:x:main"),
        Ok(None)
    ));
    assert!(matches!(
        src.actor_for_session("no-such-session-4f1c", None),
        Ok(None)
    ));
    let stats = src.stats().expect("stats");
    assert!(stats.skills >= found.hits.len() as u64, "{name}");
}
