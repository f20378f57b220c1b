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
use rusqlite::{params, Connection};
use sha2::{Digest, Sha256};

/// `sha256` of [`rows`] for the generated world, taken with the in-memory build (commit ce92721).
const DIGEST_BEFORE: &str = "67eb0370bd0a59f1d1fc00eddcb788b05ed447e653f81de9a7e8602355f40e27";

/// A small deterministic generator (an LCG: the same world on every machine).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

struct Session {
    id: String,
    parent: Option<String>,
    agent_id: Option<String>,
    agent_name: Option<String>,
    agent_preset: Option<String>,
    team: Option<String>,
    spawn_tool: Option<String>,
}

impl Session {
    fn root(id: &str) -> Session {
        Session {
            id: id.to_string(),
            parent: None,
            agent_id: None,
            agent_name: None,
            agent_preset: None,
            team: None,
            spawn_tool: None,
        }
    }
}

const SKILLS: [&str; 6] = [
    "mysql-access",
    "elixir:hex-docs-search",
    "/deploy-check",
    "tie-skill",
    "[trimmed]",
    "Deploy-Check",
];
const NAMES: [&str; 6] = ["db-fixer", "db fixer", "reviewer", "alice", "system", "bob"];
const PATHS: [&str; 5] = [
    "src/db.rs",
    "/w/app/src/db.rs",
    "../other/x.rs",
    "  ",
    "migrations/0042.sql",
];

/// The facts of one event, as JSON (sometimes malformed, sometimes of an unknown kind).
fn facts(g: &mut Gen, spawns: &mut Vec<(String, String)>, seq: u64) -> Option<String> {
    let mut out = Vec::new();
    for _ in 0..=g.below(3) {
        let tool = format!("toolu_{}", g.below(40));
        let name = NAMES[g.below(NAMES.len() as u64) as usize];
        let f = match g.below(12) {
            0 | 1 => {
                let agent = format!("a{}", g.below(9));
                spawns.push((tool.clone(), agent));
                let named = g.chance(40).then_some(name);
                let typed = g.chance(70).then_some(NAMES[g.below(3) as usize]);
                let team = g.chance(20).then_some("core");
                let with_tool = g.chance(80).then_some(tool.as_str());
                serde_json::json!({"fact": "spawn", "tool_use_id": with_tool,
                    "subagent_type": typed, "name": named, "description": "d", "team_name": team})
            }
            2 => match spawns.get(g.below(spawns.len().max(1) as u64) as usize) {
                Some((t, a)) => serde_json::json!({"fact": "agent_link", "tool_use_id": t,
                    "agent_id": a}),
                None => serde_json::json!({"fact": "agent_link", "agent_id": "a0"}),
            },
            3 | 4 => serde_json::json!({"fact": "file_edit",
                "path": PATHS[g.below(PATHS.len() as u64) as usize]}),
            5 => serde_json::json!({"fact": "teammate_message", "teammate_id": name}),
            6..=8 => {
                let via = ["tool", "body", "attachment"][g.below(3) as usize];
                serde_json::json!({"fact": "skill_use",
                    "name": SKILLS[g.below(SKILLS.len() as u64) as usize], "via": via})
            }
            9 => serde_json::json!({"fact": "command", "program": "cargo"}),
            10 => serde_json::json!({"fact": "no_such_fact", "seq": seq}),
            _ => serde_json::json!({"fact": "file_edit"}),
        };
        out.push(f);
    }
    match g.below(20) {
        0 => Some("[{\"fact\": \"skill_use\", \"name\": ".to_string()),
        1 => Some("[]".to_string()),
        2 => Some(String::new()),
        _ => Some(serde_json::Value::Array(out).to_string()),
    }
}

/// The sessions of the world: roots, their subagents (some nested, some named by a spawn's tool
/// call, some only by agent id), and ids chosen so root groups interleave in sort order.
fn sessions(g: &mut Gen) -> Vec<Session> {
    let mut out = Vec::new();
    for i in 0..40 {
        let root = match i % 10 {
            3 => format!("r{:02} x", i - 1),
            4 => format!("r{:02}-x", i - 2),
            7 => format!("r{:02}.y", i - 1),
            _ => format!("r{i:02}"),
        };
        out.push(Session::root(&root));
        for k in 0..g.below(4) {
            let aid = format!("a{}", g.below(9));
            let mut s = Session::root(&format!("{root}/agent-{aid}{k}"));
            s.parent = g.chance(85).then(|| root.clone());
            s.agent_id = Some(aid);
            s.agent_name = g.chance(30).then(|| NAMES[g.below(4) as usize].to_string());
            s.agent_preset = g.chance(30).then(|| "general-purpose".to_string());
            s.team = g.chance(20).then(|| "core".to_string());
            s.spawn_tool = g.chance(50).then(|| format!("toolu_{}", g.below(40)));
            if g.chance(25) {
                let mut nested = Session::root(&format!("{}/agent-n{k}", s.id));
                nested.parent = Some(s.id.clone());
                nested.agent_id = Some(format!("n{k}"));
                out.push(nested);
            }
            out.push(s);
        }
        if i % 9 == 0 {
            out.push(Session::root(&format!("{root}/loose")));
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// Writes the generated world as the tables the L3 builder reads.
fn write_world(path: &Path) {
    let mut g = Gen(20_21);
    let c = Connection::open(path).expect("open");
    c.execute_batch(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
         INSERT INTO meta VALUES('index_rev', 'episodes:test-world');
         CREATE TABLE sessions(session_id TEXT PRIMARY KEY, source TEXT NOT NULL, cwd TEXT,
             parent_session_id TEXT, agent_id TEXT, agent_name TEXT, agent_preset TEXT,
             team_name TEXT, spawn_tool_use_id TEXT, outcome TEXT NOT NULL, last_event_at TEXT);
         CREATE TABLE events(session_id TEXT NOT NULL, seq INTEGER NOT NULL, time_ms INTEGER,
             tool_use_id TEXT, sidechain_agent TEXT, facts TEXT);",
    )
    .expect("schema");
    c.execute_batch("BEGIN").expect("begin");
    let mut all = sessions(&mut g);
    // Events of a session the sessions table does not hold (the builder must still credit them).
    let orphan = Session::root("r05/agent-orphan");
    let mut spawns = Vec::new();
    let outcomes = ["success", "failure", "unknown"];
    for (n, s) in all.iter().enumerate() {
        let source = if n % 7 == 0 { "codex" } else { "claude" };
        let last = (!g.chance(10)).then(|| format!("2026-03-{:02}T10:00:00.000Z", 1 + n % 27));
        c.execute(
            "INSERT INTO sessions VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                s.id,
                source,
                g.chance(80).then_some("/w/app"),
                s.parent,
                s.agent_id,
                s.agent_name,
                s.agent_preset,
                s.team,
                s.spawn_tool,
                outcomes[g.below(3) as usize],
                last
            ],
        )
        .expect("session");
    }
    all.push(orphan);
    let mut ins = c
        .prepare("INSERT INTO events VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
        .expect("prepare");
    let base = 1_772_359_200_000i64;
    for (n, s) in all.iter().enumerate() {
        if g.chance(8) {
            continue;
        }
        for seq in 0..g.below(60) {
            let time = (!g.chance(5)).then(|| base + (n as i64) * 5_400_000 + seq as i64 * 97_000);
            let side = g.chance(15).then(|| format!("a{}", g.below(9)));
            let tool = g.chance(50).then(|| format!("toolu_{}", g.below(40)));
            let f = if g.chance(45) {
                facts(&mut g, &mut spawns, seq)
            } else {
                None
            };
            ins.execute(params![s.id, seq as i64, time, tool, side, f])
                .expect("event");
        }
    }
    drop(ins);
    c.execute_batch("COMMIT").expect("commit");
}

/// Every row of every table with its rowid, tables by name, rows by rowid (`meta.built_at`, the
/// build's own clock, left out).
fn rows(db: &Path) -> Vec<String> {
    let c = Connection::open(db).expect("open");
    let tables: Vec<String> = c
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table'
             AND name NOT LIKE 'ak_skill_fts_%' ORDER BY name",
        )
        .expect("ls")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("names");
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
            if !line.contains("|Text(\"built_at\")|") {
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
