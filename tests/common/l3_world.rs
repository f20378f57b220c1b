//! The generated episodes world of the L3 build tests (`l3_streamed.rs`, `l3_incremental.rs`):
//! plain `meta`/`sessions`/`events` tables with the columns the builder reads, no indexer in
//! between, holding what makes derivation order-sensitive (spawns found by tool call and by agent
//! link, nested subagents, inline sidechains, teammates, edits repeated and empty, skill uses a
//! window apart, ids whose sort order interleaves root groups, session ids that map to one actor
//! id, events of a session the `sessions` table lacks, malformed facts).

use std::path::Path;

use rusqlite::{params, Connection};

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
pub fn write_world(path: &Path) {
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

/// The tables of a built store, by name (FTS5's shadow tables left out: they follow their table).
pub fn tables(c: &Connection) -> Vec<String> {
    c.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table'
         AND name NOT LIKE 'ak_skill_fts_%' ORDER BY name",
    )
    .expect("ls")
    .query_map([], |r| r.get(0))
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("names")
}
