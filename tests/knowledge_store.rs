//! The agent-knowledge store (L3) end to end: the real indexer builds `episodes.sqlite` from
//! transcripts written here (a `db-fixer` subagent spawned by Task, Skill calls with their
//! injected bodies, edits) or from the real marot-spotter fixture, then L3 is built and read.
//! Checks: the catalog reads every real SKILL.md and agent file (block scalars, malformed YAML),
//! each skill use counts once, actors agree between a spawn and its transcript, KD-3, rebuilds are
//! deterministic and keep assignments, and no session text leaks into L3.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use knowledge::sources::episodes::index::{index_episodes, IndexOptions};
use knowledge::sources::knowledge::{self as ak, KnowledgeError, KnowledgeStore};
use knowledge::text::tokens::query_terms;
use rusqlite::Connection;
use serde_json::{json, Value};

const S1: &str = "11111111-aaaa-4bbb-8ccc-000000000001";
const S2: &str = "22222222-aaaa-4bbb-8ccc-000000000002";
const AGENT: &str = "a1b2c3d";
const REALDATA: &str = "/work/shared/realdata";

fn main_actor(s: &str) -> String {
    format!("actor:claude:root_session:{s}:main")
}

fn fixer() -> String {
    format!("actor:claude:subagent:{S1}:db-fixer")
}

struct Fx {
    _dir: tempfile::TempDir,
    root: PathBuf,
    skills: PathBuf,
    agents: PathBuf,
    episodes: PathBuf,
    knowledge: PathBuf,
}

impl Fx {
    fn build(&self) -> ak::BuildSummary {
        ak::build(
            &self.knowledge,
            &self.episodes,
            std::slice::from_ref(&self.skills),
            std::slice::from_ref(&self.agents),
        )
        .expect("build")
    }
}

/// One Claude record: the envelope plus `extra`.
fn rec(session: &str, agent: Option<&str>, ts: &str, extra: Value) -> Value {
    let mut v = json!({
        "parentUuid": null, "isSidechain": agent.is_some(), "userType": "external",
        "cwd": "/w/app", "sessionId": session, "version": "2.1.39", "gitBranch": "main",
        "timestamp": ts,
    });
    if let Some(a) = agent {
        v["agentId"] = json!(a);
    }
    if let (Some(obj), Value::Object(more)) = (v.as_object_mut(), extra) {
        obj.extend(more);
    }
    v
}

fn user_text(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text}})
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "assistant", "message": {"model": "claude-opus-4-6", "id": format!("msg_{id}"),
        "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}})
}

fn tool_result(id: &str, text: &str, tur: Value) -> Value {
    json!({"type": "user", "toolUseResult": tur, "message": {"role": "user",
        "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]}})
}

fn say(text: &str) -> Value {
    json!({"type": "assistant", "message": {"model": "claude-opus-4-6", "id": "msg_x",
        "type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}})
}

fn skill_body(source_tool: Option<&str>) -> Value {
    let mut v = json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": [
        {"type": "text", "text": "Base directory for this skill: /home/u/.claude/skills/mysql-access\n\n# MySQL access\nConnect with the read-only replica first and never run DDL on primary without a backup."}]}});
    if let Some(id) = source_tool {
        v["sourceToolUseID"] = json!(id);
    }
    v
}

fn write_jsonl(path: &Path, lines: &[Value]) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n") + "\n").expect("write");
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// Transcripts, skills and an agent definition in a temp dir, indexed by the real indexer.
fn fixture() -> Fx {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("projects");
    let proj = root.join("-w-app");
    let t = |s: &str| format!("2026-03-01T10:00:{s}Z");
    let main = |ts: &str, extra: Value| rec(S1, None, &t(ts), extra);
    write_jsonl(
        &proj.join(format!("{S1}.jsonl")),
        &[
            main("00.000", user_text("The orders table migration fails on staging; please fix the database schema.")),
            main("01.000", tool_use("toolu_S3", "Skill", json!({"skill": "tie-skill"}))),
            main("01.100", tool_result("toolu_S3", "Launching skill: tie-skill", json!({"success": true}))),
            main("02.000", tool_use("toolu_T1", "Task", json!({"description": "Fix orders migration",
                "prompt": "Repair the orders migration so it applies cleanly on staging.",
                "subagent_type": "db-fixer"}))),
            main("04.000", tool_result("toolu_T1",
                "Repaired the migration.\nagentId: a1b2c3d (for resuming to continue this agent's work if needed)",
                json!({"status": "completed", "agentId": AGENT}))),
            main("05.000", tool_use("toolu_S1", "Skill", json!({"skill": "mysql-access", "args": "inspect orders"}))),
            main("05.100", tool_result("toolu_S1", "Launching skill: mysql-access", json!({"success": true, "commandName": "mysql-access"}))),
            main("05.200", skill_body(Some("toolu_S1"))),
            main("06.000", tool_use("toolu_E1", "Edit", json!({"file_path": "/w/app/src/db.rs",
                "old_string": "let pool = connect(PRIMARY_URL);", "new_string": "let pool = connect(REPLICA_URL);"}))),
            main("06.100", tool_result("toolu_E1", "The file /w/app/src/db.rs has been updated successfully.", json!({}))),
            main("07.000", say("Done: the orders migration now applies cleanly and the pool reads from the replica.")),
        ],
    );
    let sub = |ts: &str, extra: Value| rec(S1, Some(AGENT), &t(ts), extra);
    write_jsonl(
        &proj
            .join(S1)
            .join("subagents")
            .join(format!("agent-{AGENT}.jsonl")),
        &[
            sub(
                "02.100",
                user_text("Repair the orders migration so it applies cleanly on staging."),
            ),
            sub(
                "02.200",
                tool_use("toolu_S2", "Skill", json!({"skill": "mysql-access"})),
            ),
            sub(
                "02.300",
                tool_result(
                    "toolu_S2",
                    "Launching skill: mysql-access",
                    json!({"success": true}),
                ),
            ),
            // An older transcript: the injected body does not name its tool call.
            sub("02.400", skill_body(None)),
            sub(
                "02.800",
                tool_use("toolu_S4", "Skill", json!({"skill": "tie-skill"})),
            ),
            sub(
                "02.850",
                tool_result(
                    "toolu_S4",
                    "Launching skill: tie-skill",
                    json!({"success": true}),
                ),
            ),
            sub(
                "02.900",
                tool_use(
                    "toolu_E2",
                    "Edit",
                    json!({"file_path": "migrations/0042_orders.sql",
                "old_string": "ALTER TABLE orders ADD COLUMN total INT;",
                "new_string": "ALTER TABLE orders ADD COLUMN total BIGINT NOT NULL DEFAULT 0;"}),
                ),
            ),
            sub(
                "02.950",
                tool_result(
                    "toolu_E2",
                    "The file migrations/0042_orders.sql has been updated.",
                    json!({}),
                ),
            ),
            sub(
                "03.000",
                say("Migration repaired: the total column is now BIGINT with a default."),
            ),
        ],
    );
    let day2 = |i: usize, extra: Value| {
        rec(
            S2,
            None,
            &format!("2026-03-02T09:{:02}:{:02}.000Z", i / 60, i % 60),
            extra,
        )
    };
    let mut s2 = vec![
        day2(
            0,
            user_text("Check the nightly report query against the orders database."),
        ),
        day2(
            1,
            tool_use("toolu_S5", "Skill", json!({"skill": "mysql-access"})),
        ),
        day2(
            2,
            tool_result(
                "toolu_S5",
                "Launching skill: mysql-access",
                json!({"success": true}),
            ),
        ),
    ];
    for i in 0..12 {
        s2.push(day2(
            3 + i,
            say(&format!("Step {i} of the report review is finished.")),
        ));
    }
    s2.push(day2(
        20,
        tool_use("toolu_S6", "Skill", json!({"skill": "mysql-access"})),
    ));
    s2.push(day2(
        21,
        tool_result(
            "toolu_S6",
            "Launching skill: mysql-access",
            json!({"success": true}),
        ),
    ));
    for i in 0..12 {
        s2.push(day2(22 + i, say(&format!("Index check {i} done."))));
    }
    // A compaction restates the skills already invoked: not a new use.
    s2.push(day2(40, json!({"type": "attachment", "attachment": {"type": "invoked_skills",
        "skills": [{"name": "mysql-access", "path": "/home/u/.claude/skills/mysql-access/SKILL.md",
                    "content": "Connect with the read-only replica first and never run DDL on primary without a backup."}]}})));
    s2.push(day2(
        41,
        say("The report query now uses the created_at index."),
    ));
    write_jsonl(&proj.join(format!("{S2}.jsonl")), &s2);

    let skills = dir.path().join("skills");
    write(
        &skills.join("mysql-access/SKILL.md"),
        "---\nname: mysql-access\ndescription: Read-only MySQL access for the orders database. Use when a task needs to inspect schemas or run safe queries through the replica.\ntags: [database, mysql]\n---\n# MySQL access\nConnect with the read-only replica first and never run DDL on primary without a backup.\n",
    );
    write(
        &skills.join("tie-skill/SKILL.md"),
        "---\nname: tie-skill\ndescription: Tie breaker fixture.\n---\nx\n",
    );
    write(
        &skills.join("deploy-check/SKILL.md"),
        "---\nname: deploy-check\ndescription: >-\n  Verifies a deployment\n  before release.\n---\nbody\n",
    );
    let agents = dir.path().join("agents");
    write(
        &agents.join("db-fixer.md"),
        "---\nname: db-fixer\ndescription: Repairs broken database migrations and schema drift.\ntools: Read, Edit, Bash\nmodel: sonnet\n---\nYou fix databases.\n",
    );
    let episodes = dir.path().join("data/episodes.sqlite");
    std::fs::create_dir_all(dir.path().join("data")).expect("mkdir");
    index_episodes(
        &episodes,
        &IndexOptions::new(vec![root.clone()]),
        &mut |_| {},
    )
    .expect("index");
    Fx {
        knowledge: dir.path().join("data/knowledge.sqlite"),
        _dir: dir,
        root,
        skills,
        agents,
        episodes,
    }
}

fn q(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).expect(sql)
}

#[test]
fn skill_uses_count_once_and_actors_agree() {
    let fx = fixture();
    let summary = fx.build();
    assert_eq!(summary.skills, 3);
    assert_eq!(summary.agent_defs, 1);
    let ep = Connection::open(&fx.episodes).expect("episodes");
    // The subagent transcript records its mysql-access use twice (call + injected body).
    let sub = format!("{S1}/agent-{AGENT}");
    let raw: i64 = ep
        .query_row(
            "SELECT count(*) FROM events WHERE session_id=?1 AND facts LIKE '%skill_use%mysql-access%'",
            [&sub],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(raw, 2, "the fixture must exercise de-duplication");

    let c = Connection::open(&fx.knowledge).expect("knowledge");
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM ak_skill_use WHERE skill_name='mysql-access'"
        ),
        4
    );
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM ak_skill_use WHERE skill_name='tie-skill'"
        ),
        2
    );
    let per_actor: Vec<(String, i64)> = c
        .prepare("SELECT actor_id, count(*) FROM ak_skill_use WHERE skill_name='mysql-access' GROUP BY actor_id ORDER BY actor_id")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(
        per_actor,
        vec![(main_actor(S1), 1), (main_actor(S2), 2), (fixer(), 1)]
    );

    let store = KnowledgeStore::open(&fx.knowledge).expect("open");
    let stats = store.stats().expect("stats");
    assert_eq!(stats.index_rev.as_deref(), Some(summary.index_rev.as_str()));
    assert_eq!((stats.skills, stats.actors, stats.skill_uses), (3, 3, 6));

    // The spawn (parent transcript) and the child transcript are one actor, named by the spawn.
    let a = store
        .actor(&fixer())
        .expect("actor")
        .expect("db-fixer exists");
    assert_eq!((a.name.as_str(), a.kind.as_str()), ("db-fixer", "subagent"));
    assert_eq!(a.root_session, S1);
    assert_eq!(a.sessions, 2, "spawned in S1, authored its own transcript");
    assert!(a.events >= 5);
    assert_eq!(a.definition.as_deref(), Some("db-fixer"));
    assert_eq!(a.dispatch_mode(), "spawn_replica");
    let key = store
        .actor_for_session(&sub, None)
        .expect("q")
        .expect("author");
    assert_eq!(key.actor_id, fixer());
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM ak_actor WHERE name LIKE 'a1b2c3d%'"
        ),
        0
    );

    // KD-3: most uses wins; a tie goes to the latest use.
    assert_eq!(
        store.top_actor_for_skill("mysql-access").expect("top"),
        Some((main_actor(S2), 2))
    );
    assert_eq!(
        store.top_actor_for_skill("tie-skill").expect("top"),
        Some((fixer(), 1))
    );
    assert_eq!(
        store.top_actor_for_skill("nobody-used-this").expect("top"),
        None
    );

    let facts = store.actor_facts(&[]).expect("facts");
    assert!(facts.editors["/w/app/src/db.rs"]
        .iter()
        .any(|k| k.actor_id == main_actor(S1)));
    assert!(facts.editors["src/db.rs"]
        .iter()
        .any(|k| k.actor_id == main_actor(S1)));
    assert!(facts.editors["/w/app/migrations/0042_orders.sql"]
        .iter()
        .any(|k| k.actor_id == fixer()));
    assert!(facts.editors["migrations/0042_orders.sql"]
        .iter()
        .any(|k| k.actor_id == fixer()));
    assert_eq!(
        facts.skill_uses[&main_actor(S2)],
        vec![("mysql-access".to_string(), 2)]
    );
    assert_eq!(facts.known[&fixer()].kind, "subagent");
    assert_eq!(facts.outcomes.len(), 3);
    let only = store.actor_facts(&[fixer()]).expect("facts");
    assert_eq!(only.known.len(), 1);
    assert!(only
        .editors
        .values()
        .flatten()
        .all(|k| k.actor_id == fixer()));
    assert_eq!(store.list_actors(2).expect("list").len(), 2);
}

#[test]
fn skill_search_ranks_named_skills_by_use() {
    let fx = fixture();
    fx.build();
    let store = KnowledgeStore::open(&fx.knowledge).expect("open");
    let rows = store
        .search_skills(&query_terms("who used mysql-access"), &[], 10)
        .expect("search");
    let top = &rows[0];
    assert_eq!(top.name, "mysql-access");
    assert!(top.named && top.catalogued);
    assert_eq!(top.uses, 4);
    assert_eq!(top.used_by.len(), 4);
    assert_eq!(top.used_by[0].0, main_actor(S2), "most recent use first");
    assert!(top.why.contains(&"name: mysql-access".to_string()));
    assert!(top.why.iter().any(|w| w.starts_with("bm25: ")));
    assert!(top
        .when_to_use
        .as_deref()
        .is_some_and(|w| w.starts_with("Use when a task needs")));
    assert!(top.content_hash.starts_with("sha256:") && top.path.ends_with("mysql-access/SKILL.md"));

    let by_text = store
        .search_skills(
            &query_terms("verify the deployment before release"),
            &[],
            10,
        )
        .expect("search");
    assert_eq!(by_text[0].name, "deploy-check");
    assert!(!by_text[0].named && by_text[0].bm25 > 0.0);
    let filtered = store
        .search_skills(&[], &["tie-skill".to_string()], 10)
        .expect("search");
    assert_eq!(filtered.len(), 1);
    assert_eq!(filtered[0].uses, 2);
    assert!(store
        .search_skills(&[], &[], 10)
        .expect("search")
        .is_empty());
}

/// Every row of every table, as text, sorted; `meta.built_at` left out.
fn dump(db: &Path) -> Vec<String> {
    let c = Connection::open(db).expect("open");
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut out = Vec::new();
    for t in tables {
        let mut stmt = c
            .prepare(&format!("SELECT * FROM \"{t}\""))
            .expect("select");
        let n = stmt.column_count();
        let mut rows = stmt.query([]).expect("query");
        while let Some(r) = rows.next().expect("row") {
            let vals: Vec<String> = (0..n)
                .map(|i| {
                    format!(
                        "{:?}",
                        r.get::<_, rusqlite::types::Value>(i).expect("value")
                    )
                })
                .collect();
            let line = format!("{t}|{}", vals.join("|"));
            if !line.starts_with("meta|Text(\"built_at\")") {
                out.push(line);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn rebuild_is_deterministic_and_keeps_assignments() {
    let fx = fixture();
    fx.build();
    let first = dump(&fx.knowledge);
    assert!(first.iter().any(|l| l.starts_with("ak_skill_use|")));
    let store = KnowledgeStore::open(&fx.knowledge).expect("open");
    let before = store.stats().expect("stats");

    // What dispatch `commit` would write.
    let c = Connection::open(&fx.knowledge).expect("open");
    c.execute(
        "INSERT INTO ak_assignment(assignment_id, actor_id, task_json, status, created_at)
         VALUES('assign:1', ?1, '{\"text\":\"x\"}', 'recorded_plan', '2026-03-03T00:00:00Z')",
        [fixer()],
    )
    .expect("insert");
    drop(c);

    let again = fx.build();
    assert_eq!(again.assignments_preserved, 1);
    let second = dump(&fx.knowledge);
    let without = |d: &[String]| -> Vec<String> {
        d.iter()
            .filter(|l| !l.starts_with("ak_assignment|"))
            .cloned()
            .collect()
    };
    assert_eq!(without(&second), first, "same inputs, same rows");
    assert!(second
        .iter()
        .any(|l| l.starts_with("ak_assignment|Text(\"assign:1\")")));

    // Deleted and rebuilt from scratch: the same derived content.
    std::fs::remove_file(&fx.knowledge).expect("rm");
    fx.build();
    assert_eq!(dump(&fx.knowledge), first);
    let leftovers: Vec<_> = std::fs::read_dir(fx.knowledge.parent().expect("dir"))
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");

    // A reader opened before a rebuild sees the new store.
    write(
        &fx.skills.join("new-skill/SKILL.md"),
        "---\nname: new-skill\ndescription: New.\n---\n",
    );
    fx.build();
    assert_eq!(store.stats().expect("stats").skills, before.skills + 1);
}

#[test]
fn unreadable_old_store_is_not_replaced_and_missing_episodes_still_build() {
    let fx = fixture();
    std::fs::write(
        &fx.knowledge,
        b"not a database, but maybe someone's assignments",
    )
    .expect("write");
    let err =
        ak::build(&fx.knowledge, &fx.episodes, &[fx.skills.clone()], &[]).expect_err("must fail");
    assert!(matches!(err, KnowledgeError::Preserve { .. }), "{err}");
    assert_eq!(
        std::fs::read(&fx.knowledge).expect("read"),
        b"not a database, but maybe someone's assignments"
    );
    std::fs::remove_file(&fx.knowledge).expect("rm");

    let none = fx.root.join("no-such.sqlite");
    let s = ak::build(&fx.knowledge, &none, &[fx.skills.clone()], &[]).expect("catalog only");
    assert_eq!(
        (s.skills, s.actors, s.episodes_index_rev.clone()),
        (3, 0, None)
    );
    assert!(!s.warnings.is_empty());
    assert!(matches!(
        KnowledgeStore::open(&fx.root.join("missing.sqlite")),
        Err(KnowledgeError::Missing(_))
    ));
}

/// Text columns of every table in L3, as (table.column, value).
fn l3_texts(db: &Path) -> Vec<(String, String)> {
    let c = Connection::open(db).expect("open");
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type='table'")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut out = Vec::new();
    for t in tables {
        let mut stmt = c
            .prepare(&format!("SELECT * FROM \"{t}\""))
            .expect("select");
        let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
        let mut rows = stmt.query([]).expect("query");
        while let Some(r) = rows.next().expect("row") {
            for (i, name) in names.iter().enumerate() {
                if let Ok(rusqlite::types::Value::Text(s)) = r.get::<_, rusqlite::types::Value>(i) {
                    out.push((format!("{t}.{name}"), s));
                }
            }
        }
    }
    out
}

/// Locators (paths and ids) may repeat what a transcript says; nothing else may.
fn is_locator(column: &str) -> bool {
    let col = column.rsplit('.').next().unwrap_or("");
    matches!(
        col,
        "path" | "abs_path" | "rel_path" | "session_id" | "root_session" | "actor_id"
    )
}

const WINDOW: usize = 40;

/// (column, shared text) for every 40-byte window of an L3 text value found in any text.
fn shared_windows(l3: &[(String, String)], texts: &[String]) -> Vec<(String, String)> {
    const B: u64 = 1_000_003;
    let pow = (0..WINDOW - 1).fold(1u64, |p, _| p.wrapping_mul(B));
    let hash = |w: &[u8]| {
        w.iter()
            .fold(0u64, |h, &b| h.wrapping_mul(B).wrapping_add(b as u64))
    };
    let mut by_hash: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
    for (i, (_, v)) in l3.iter().enumerate() {
        let b = v.as_bytes();
        for at in 0..b.len().saturating_sub(WINDOW - 1) {
            by_hash
                .entry(hash(&b[at..at + WINDOW]))
                .or_default()
                .push((i, at));
        }
    }
    let mut hits = Vec::new();
    let mut seen = HashSet::new();
    for text in texts {
        let b = text.as_bytes();
        if b.len() < WINDOW {
            continue;
        }
        let mut h = hash(&b[..WINDOW]);
        for at in 0..=b.len() - WINDOW {
            if at > 0 {
                h = h
                    .wrapping_sub((b[at - 1] as u64).wrapping_mul(pow))
                    .wrapping_mul(B)
                    .wrapping_add(b[at + WINDOW - 1] as u64);
            }
            if let Some(cands) = by_hash.get(&h) {
                for &(i, off) in cands {
                    let w = &l3[i].1.as_bytes()[off..off + WINDOW];
                    if w == &b[at..at + WINDOW] && seen.insert(i) {
                        hits.push((l3[i].0.clone(), String::from_utf8_lossy(w).to_string()));
                    }
                }
            }
        }
    }
    hits
}

fn session_texts(episodes: &Path) -> Vec<String> {
    let c = Connection::open(episodes).expect("open");
    let mut texts: Vec<String> = c
        .prepare("SELECT text FROM events")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut stmt = c
        .prepare("SELECT coalesce(title, ''), coalesce(agent_description, '') FROM sessions")
        .expect("prepare");
    for row in stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .expect("query")
    {
        let (a, b) = row.expect("row");
        texts.push(a);
        texts.push(b);
    }
    texts
}

fn assert_no_session_text(knowledge: &Path, episodes: &Path) {
    let texts = session_texts(episodes);
    assert!(
        texts.iter().any(|t| t.len() >= WINDOW),
        "the fixture has real text"
    );
    let l3 = l3_texts(knowledge);
    assert!(l3.len() > 20);
    // The scan itself works: a value copied from a transcript is found.
    let probe = texts
        .iter()
        .find(|t| t.len() >= WINDOW * 2)
        .expect("long text")
        .clone();
    let found = shared_windows(&[("probe.text".to_string(), probe)], &texts);
    assert_eq!(found.len(), 1, "the scanner must find a planted copy");

    let hits = shared_windows(&l3, &texts);
    let leaks: Vec<_> = hits.iter().filter(|(col, _)| !is_locator(col)).collect();
    assert!(leaks.is_empty(), "session text in L3: {leaks:?}");
    for (col, w) in &hits {
        assert!(!w.contains('\n'), "{col} repeats multi-line text: {w:?}");
    }
}

#[test]
fn l3_holds_no_raw_session_text() {
    let fx = fixture();
    fx.build();
    assert_no_session_text(&fx.knowledge, &fx.episodes);
}

fn marot() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/real/claude/marot-spotter");
    if p.is_dir() {
        Some(p)
    } else {
        println!(
            "note: {} is missing; real-transcript checks skipped",
            p.display()
        );
        None
    }
}

#[test]
fn marot_spotter_skill_use_goes_to_the_root_session() {
    let Some(root) = marot() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let ep = dir.path().join("episodes.sqlite");
    index_episodes(&ep, &IndexOptions::new(vec![root]), &mut |_| {}).expect("index");
    let kdb = dir.path().join("knowledge.sqlite");
    ak::build(&kdb, &ep, &[], &[]).expect("build");
    let store = KnowledgeStore::open(&kdb).expect("open");
    let parent = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
    let want = Some((main_actor(parent), 1));
    assert_eq!(
        store
            .top_actor_for_skill("elixir:hex-docs-search")
            .expect("top"),
        want
    );
    assert_eq!(
        store.top_actor_for_skill("hex-docs-search").expect("top"),
        want
    );
    // The Task it ran next to is a subagent that its own transcript and the spawn agree on.
    let sub = format!("actor:claude:subagent:{parent}:general-purpose");
    let child = store
        .actor_for_session(&format!("{parent}/agent-aac57f5"), None)
        .expect("q")
        .expect("author");
    assert_eq!(child.actor_id, sub);
    let a = store.actor(&sub).expect("q").expect("actor");
    assert_eq!(a.sessions, 2);
    assert!(a.events > 0 && a.skill_uses == 0);
    let rows = store
        .search_skills(&query_terms("elixir:hex-docs-search"), &[], 5)
        .expect("search");
    assert_eq!(rows[0].qualified_name, "elixir:hex-docs-search");
    assert!(!rows[0].catalogued && rows[0].uses == 1);
    assert_no_session_text(&kdb, &ep);
}

#[test]
fn every_real_fixture_builds_without_session_text() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/real");
    if !fixtures.is_dir() {
        println!("note: fixtures/real is missing; skipped");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ep = dir.path().join("episodes.sqlite");
    index_episodes(&ep, &IndexOptions::new(vec![fixtures]), &mut |_| {}).expect("index");
    let kdb = dir.path().join("knowledge.sqlite");
    let s = ak::build(&kdb, &ep, &[], &[]).expect("build");
    assert!(s.sessions > 0 && s.actors >= s.sessions.min(1));
    let c = Connection::open(&kdb).expect("open");
    // Placeholder names of shape fixtures are not skills or teammates.
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM ak_skill_use WHERE skill_name LIKE '%[%'"
        ),
        0
    );
    assert_eq!(
        q(&c, "SELECT count(*) FROM ak_actor WHERE name LIKE '%[%'"),
        0
    );
    assert_no_session_text(&kdb, &ep);
}

fn realdata(sub: &str) -> Option<PathBuf> {
    let p = Path::new(REALDATA).join(sub);
    if p.is_dir() {
        Some(p)
    } else {
        println!("note: {} is missing; skipped", p.display());
        None
    }
}

fn count_named(dir: &Path, name: &str) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("ls").filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            n += count_named(&p, name);
        } else if p.file_name().is_some_and(|f| f == name) {
            n += 1;
        }
    }
    n
}

#[test]
fn catalog_reads_every_real_skill() {
    let Some(root) = realdata("skills") else {
        return;
    };
    let skills = ak::scan_skills(std::slice::from_ref(&root));
    let on_disk = count_named(&root, "SKILL.md");
    println!("note: {on_disk} SKILL.md files in {}", root.display());
    assert!(on_disk >= 21);
    assert_eq!(skills.len(), on_disk, "every SKILL.md is read");
    for s in &skills {
        let folder = s.path.parent().and_then(Path::file_name).expect("folder");
        assert_eq!(s.name, folder.to_string_lossy(), "{}", s.path.display());
        assert!(
            !s.description.is_empty() && !s.description.starts_with(['"', '|', '>']),
            "{}",
            s.name
        );
        assert!(s.path.is_absolute());
        assert_eq!(s.content_hash.len(), "sha256:".len() + 64);
        assert_eq!((s.plugin.as_deref(), s.kind), (None, "skill"));
    }
    let by = |n: &str| skills.iter().find(|s| s.name == n).expect(n);
    // `|-`: literal lines, no trailing newline.
    let api = by("claude-api");
    assert!(api.description.starts_with("Reference for the Claude API"));
    assert!(
        api.description.contains("\nTRIGGER — read BEFORE") && !api.description.ends_with('\n')
    );
    assert!(api
        .when_to_use
        .as_deref()
        .is_some_and(|w| w.starts_with("TRIGGER")));
    // `>-`: folded into one line.
    let commit = by("commit");
    assert!(commit
        .description
        .starts_with("Stages all local changes and creates"));
    assert!(!commit.description.contains('\n'));
    assert!(commit.description.contains("commit message by analyzing"));
    assert!(commit
        .when_to_use
        .as_deref()
        .is_some_and(|w| w.starts_with("Use when the user asks to commit")));
    // Quoted.
    assert!(by("brainstorming")
        .description
        .starts_with("You MUST use this before"));
    assert_eq!(
        by("systematic-debugging").when_to_use.as_deref(),
        Some("Use when encountering any bug, test failure, or unexpected behavior, before proposing fixes")
    );
    assert!(by("algorithmic-art")
        .when_to_use
        .as_deref()
        .is_some_and(|w| w.starts_with("Use this when users request")));
    assert_eq!(by("webapp-testing").when_to_use, None);
}

#[test]
fn catalog_reads_real_agents_including_malformed_yaml() {
    let Some(root) = realdata("agents") else {
        return;
    };
    let agents = ak::scan_agents(&[root]);
    assert_eq!(agents.len(), 9);
    let by = |n: &str| agents.iter().find(|a| a.name == n).expect(n);
    for bad in ["gdpr-ccpa-compliance", "backlog-grooming"] {
        let a = by(bad);
        assert!(
            a.description.starts_with("Use when the user needs"),
            "{bad}"
        );
        assert!(
            a.description.contains("Triggers on: '"),
            "{bad}: the rest of the line is kept"
        );
        assert!(a.tools.contains(&"WebSearch".to_string()));
    }
    let api = by("api-designer");
    assert_eq!(api.model.as_deref(), Some("sonnet"));
    assert_eq!(
        api.tools,
        vec!["Read", "Write", "Edit", "Bash", "Glob", "Grep"]
    );
    assert!(!api.description.starts_with('"'));
    for prompt in ["analyzer", "comparator", "grader"] {
        let a = by(prompt);
        assert!(a.model.is_none() && a.tools.is_empty());
        assert!(!a.description.is_empty() && !a.description.starts_with('#'));
    }
    assert!(by("grader")
        .description
        .starts_with("Evaluate expectations"));
}

#[test]
fn plugin_skills_commands_and_broken_frontmatter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let claude = dir.path().join(".claude");
    write(
        &claude.join("plugins/cache/elixir/elixir/1.2.0/skills/hex-docs-search/SKILL.md"),
        "---\nname: hex-docs-search\ndescription: Search hex docs.\nwhenToUse: When a hex package is named.\n---\n",
    );
    write(
        &claude.join("commands/deploy.md"),
        "Deploy the app to staging.\n",
    );
    write(
        &claude.join("skills/broken/SKILL.md"),
        "---\nname: [oops\ndescription: \"never closed\n---\n# Broken\n",
    );
    write(
        &claude.join("skills/open/SKILL.md"),
        "---\nname: open\nno fence end\n\n# Open\n\nFirst paragraph here.\n",
    );
    write(
        &claude.join("skills/broken/references/notes.md"),
        "not a skill",
    );
    let skills = ak::scan_skills(&[
        claude.join("plugins/cache"),
        claude.join("commands"),
        claude.join("skills"),
    ]);
    let names: Vec<(String, &str)> = skills
        .iter()
        .map(|s| (s.qualified_name(), s.kind))
        .collect();
    assert_eq!(
        names,
        vec![
            ("deploy".to_string(), "command"),
            ("elixir:hex-docs-search".to_string(), "skill"),
            ("broken".to_string(), "skill"),
            ("open".to_string(), "skill"),
        ]
    );
    assert_eq!(
        skills[1].when_to_use.as_deref(),
        Some("When a hex package is named.")
    );
    assert_eq!(skills[0].description, "Deploy the app to staging.");
    assert_eq!(skills[2].description, "never closed");
    assert_eq!(skills[3].description, "First paragraph here.");
}
