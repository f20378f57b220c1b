//! The L3 build streams its facts (docs/PERFORMANCE.md, "Issue 20/21"): it must still write the
//! very rows the build that held every event in memory wrote. A generated episodes store (plain
//! `meta`/`sessions`/`events` tables with the columns the builder reads, no indexer in between, so
//! an indexer change cannot move the figure) holds what makes derivation order-sensitive: spawns
//! found by tool call and by agent link, nested subagents, inline sidechains, teammates, edits
//! repeated and empty, skill uses a window apart, ids whose sort order interleaves root groups
//! (`r05`, `r05-x`, `r05/agent-…`), session ids that map to one actor id (`a b` / `a-b`), events
//! of a session the `sessions` table lacks, malformed facts. The digest of every row (with its
//! rowid) was taken with the build as it was before the change, and is compared here; the same
//! world handed over by a source that is not SQLite gives the same digest.

use std::ops::ControlFlow::Continue;
use std::path::Path;

use knowledge::sources::agent_knowledge as ak;
use knowledge::sources::agent_knowledge::derive::{EventIn, SessionIn};
use knowledge::sources::agent_knowledge::facts::{
    ActivityIn, EpisodesFacts, FactsError, FactsSource, Visit,
};
use rusqlite::Connection;
use sha2::{Digest, Sha256};

#[path = "common/l3_world.rs"]
mod l3_world;
use l3_world::write_world;

/// `sha256` of [`rows`] for the generated world, taken with the in-memory build (commit ce92721),
/// and again without `meta.index_rev` when that fingerprint came to hold the derivation code's
/// identity (taken at a4a39b2, whose rows are ce92721's).
// Store schema 3 (skills with vectors, no FTS5 table) moved only the `schema_version` meta row.
const DIGEST_BEFORE: &str = "c5b598d95c50a708b83073d1e67d0ddd2bfb9f311e5873a68752ad9dbe371b52";

/// Every row of every table with its rowid, tables by name, rows by rowid (`meta.built_at`, the
/// build's own clock, and `meta.index_rev`, the fingerprint, left out).
fn rows(db: &Path) -> Vec<String> {
    let c = Connection::open(db).expect("open");
    let tables = l3_world::tables(&c);
    let mut out = Vec::new();
    for t in tables {
        let mut stmt = c
            .prepare(&format!("SELECT rowid, * FROM \"{t}\" ORDER BY rowid"))
            .expect("select");
        let n = stmt.column_count();
        let mut rs = stmt.query([]).expect("query");
        while let Some(r) = rs.next().expect("row") {
            let vals: Vec<String> = (0..n)
                .map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).expect("v")))
                .collect();
            let line = format!("{t}|{}", vals.join("|"));
            // The build's own clock, and the store's fingerprint (it holds the derivation code's
            // identity, which every change to the redaction or derivation sources moves).
            if !line.contains("|Text(\"built_at\")|") && !line.contains("|Text(\"index_rev\")|") {
                out.push(line);
            }
        }
    }
    out
}

fn digest(lines: &[String]) -> String {
    let mut h = Sha256::new();
    for l in lines {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn streamed_build_writes_the_rows_the_in_memory_build_wrote() {
    let dir = tempfile::tempdir().expect("tmp");
    let episodes = dir.path().join("episodes.sqlite");
    write_world(&episodes);
    let knowledge = dir.path().join("knowledge.sqlite");
    let s = ak::build(&knowledge, &episodes, &[], &[]).expect("build");
    let lines = rows(&knowledge);
    let count = |t: &str| lines.iter().filter(|l| l.starts_with(t)).count();
    // The world exercises what the digest is about (not a build of nothing).
    assert!(s.actors > 100 && s.skill_uses > 50 && s.edits > 50, "{s:?}");
    assert!(count("ak_actor_session|") > 200 && count("ak_activity|") > 50);
    assert!(lines.iter().any(|l| l.contains("r05/agent-orphan")));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("ak_actor|") && l.contains("team_member")));
    assert_eq!(digest(&lines), DIGEST_BEFORE, "{} rows", lines.len());
}

/// Another source behind the seam: the generated world's rows held in memory, as an adapter for
/// a store that is not SQLite would hand them over.
struct InMemory {
    sessions: Vec<SessionIn>,
    activity: Vec<ActivityIn>,
    events: Vec<EventIn>,
}

impl InMemory {
    /// Everything `EpisodesFacts` reads, read here with plain SQL and kept.
    fn read(episodes: &Path) -> InMemory {
        let mut from = EpisodesFacts::open(episodes).expect("open");
        let sessions = from.sessions().expect("sessions");
        let mut activity = Vec::new();
        from.activity(&mut |a| {
            activity.push(a);
            Continue(())
        })
        .expect("activity");
        let mut events = Vec::new();
        from.fact_events(&mut |e| {
            events.push(e);
            Continue(())
        })
        .expect("events");
        InMemory {
            sessions,
            activity,
            events,
        }
    }
}

impl FactsSource for InMemory {
    fn name(&self) -> String {
        "the in-memory test source".into()
    }
    fn revision(&mut self) -> Result<Option<String>, FactsError> {
        Ok(Some("episodes:test-world".into()))
    }
    fn sessions(&mut self) -> Result<Vec<SessionIn>, FactsError> {
        Ok(self.sessions.clone())
    }
    fn activity(&mut self, visit: &mut dyn FnMut(ActivityIn) -> Visit) -> Result<(), FactsError> {
        for a in &self.activity {
            if visit(a.clone()).is_break() {
                break;
            }
        }
        Ok(())
    }
    fn fact_events(&mut self, visit: &mut dyn FnMut(EventIn) -> Visit) -> Result<(), FactsError> {
        for e in &self.events {
            if visit(e.clone()).is_break() {
                break;
            }
        }
        Ok(())
    }
}

#[test]
fn another_source_behind_the_seam_builds_the_same_store() {
    let dir = tempfile::tempdir().expect("tmp");
    let episodes = dir.path().join("episodes.sqlite");
    write_world(&episodes);
    let mut source = InMemory::read(&episodes);
    let knowledge = dir.path().join("knowledge.sqlite");
    let s = ak::build_from(&knowledge, Some(&mut source), &[], &[], false).expect("build");
    assert_eq!(s.episodes_index_rev.as_deref(), Some("episodes:test-world"));
    assert_eq!(digest(&rows(&knowledge)), DIGEST_BEFORE);

    // A source that breaks the order is refused by name, and the store it would replace stays.
    let before = std::fs::read(&knowledge).expect("read");
    source.events.swap(10, 400);
    let err = ak::build_from(&knowledge, Some(&mut source), &[], &[], true).expect_err("order");
    let msg = err.to_string();
    assert!(
        msg.starts_with("the in-memory test source cannot be read: rows out of order: event "),
        "{msg}"
    );
    assert_eq!(std::fs::read(&knowledge).expect("read"), before);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
}
