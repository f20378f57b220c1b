//! The agent-knowledge store (L3) end to end: the real indexer builds `episodes.sqlite` from
//! transcripts written here (a `db-fixer` subagent spawned by Task, Skill calls with their
//! injected bodies, edits) or from the real fixtures, then L3 is built and read. Checks: the
//! catalog reads every real SKILL.md and agent file (block scalars, malformed YAML), each skill
//! use counts once, a spawn and its transcript are one actor, KD-3, rebuilds are deterministic and
//! keep assignments, and no session text reaches L3.

mod common;

use std::path::{Path, PathBuf};

use knowledge::sources::agent_knowledge::{
    self as ak, audit, AgentKnowledgeError, AgentKnowledgeStore, SkillSearch,
};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions};
use knowledge::text::tokens::query_terms;
use rusqlite::Connection;
use serde_json::{json, Value};

const S1: &str = "11111111-aaaa-4bbb-8ccc-000000000001";
const S2: &str = "22222222-aaaa-4bbb-8ccc-000000000002";
const AGENT: &str = "a1b2c3d";

fn main_actor(s: &str) -> String {
    format!("actor:claude:root_session:{s}:main")
}

fn fixer() -> String {
    format!("actor:claude:subagent:{S1}:db-fixer")
}

/// Claude records from a compact spec, one per line: `time | kind | fields…` with kinds
/// `user | text`, `say | text`, `call | id | Tool | input-json`, `result | id | tur-json | text`,
/// `body | source-tool-id or -` (an injected mysql-access skill body) and `attach | json`.
fn transcript(session: &str, agent: Option<&str>, day: &str, spec: &str) -> Vec<Value> {
    let body = "Base directory for this skill: /home/u/.claude/skills/mysql-access\n\n# MySQL \
                access\nConnect with the read-only replica first and never run DDL on primary.";
    let js = |s: &str| serde_json::from_str::<Value>(s).expect(s);
    let mut out = Vec::new();
    for line in spec.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split(" | ").collect();
        let text = |c: Value| json!({"role": "user", "content": c});
        let id = format!("msg_{}", f[0]);
        let asst = |c: Value| json!({"model": "m", "id": id, "type": "message", "role": "assistant", "content": [c]});
        let mut v = match f[1] {
            "user" => json!({"type": "user", "message": text(json!(f[2]))}),
            "say" => {
                json!({"type": "assistant", "message": asst(json!({"type": "text", "text": f[2]}))})
            }
            "call" => json!({"type": "assistant", "message": asst(
                json!({"type": "tool_use", "id": f[2], "name": f[3], "input": js(f[4])}))}),
            "result" => json!({"type": "user", "toolUseResult": js(f[3]), "message": text(
                json!([{"type": "tool_result", "tool_use_id": f[2], "content": f[4].replace("\\n", "\n")}]))}),
            "body" => json!({"type": "user", "isMeta": true,
                "message": text(json!([{"type": "text", "text": body}]))}),
            "attach" => json!({"type": "attachment", "attachment": js(f[2])}),
            other => panic!("unknown kind {other}"),
        };
        if f[1] == "body" && f[2] != "-" {
            v["sourceToolUseID"] = json!(f[2]);
        }
        let env = json!({"isSidechain": agent.is_some(), "userType": "external", "cwd": "/w/app",
            "sessionId": session, "version": "2.1.39", "timestamp": format!("{day}T{}Z", f[0])});
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), env) {
            o.extend(e);
        }
        if let Some(a) = agent {
            v["agentId"] = json!(a);
        }
        out.push(v);
    }
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn write_jsonl(path: &Path, lines: &[Value]) {
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    write(path, &(text.join("\n") + "\n"));
}

const MAIN: &str = r#"
10:00:00.000 | user | The orders table migration fails on staging; please fix the database schema.
10:00:01.000 | call | toolu_S3 | Skill | {"skill":"tie-skill"}
10:00:01.100 | result | toolu_S3 | {"success":true} | Launching skill: tie-skill
10:00:02.000 | call | toolu_T1 | Task | {"description":"Fix orders migration","prompt":"Repair the orders migration so it applies cleanly on staging.","subagent_type":"db-fixer"}
10:00:04.000 | result | toolu_T1 | {"status":"completed","agentId":"a1b2c3d"} | Repaired the migration.\nagentId: a1b2c3d (for resuming to continue this agent's work if needed)
10:00:05.000 | call | toolu_S1 | Skill | {"skill":"mysql-access","args":"inspect orders"}
10:00:05.100 | result | toolu_S1 | {"success":true,"commandName":"mysql-access"} | Launching skill: mysql-access
10:00:05.200 | body | toolu_S1
10:00:06.000 | call | toolu_E1 | Edit | {"file_path":"/w/app/src/db.rs","old_string":"let pool = connect(PRIMARY_URL);","new_string":"let pool = connect(REPLICA_URL);"}
10:00:06.100 | result | toolu_E1 | {} | The file /w/app/src/db.rs has been updated successfully.
10:00:07.000 | say | Done: the orders migration now applies cleanly and the pool reads from the replica.
"#;

/// The subagent's transcript; its injected body does not name its tool call (older versions).
const SUB: &str = r#"
10:00:02.100 | user | Repair the orders migration so it applies cleanly on staging.
10:00:02.200 | call | toolu_S2 | Skill | {"skill":"mysql-access"}
10:00:02.300 | result | toolu_S2 | {"success":true} | Launching skill: mysql-access
10:00:02.400 | body | -
10:00:02.800 | call | toolu_S4 | Skill | {"skill":"tie-skill"}
10:00:02.850 | result | toolu_S4 | {"success":true} | Launching skill: tie-skill
10:00:02.900 | call | toolu_E2 | Edit | {"file_path":"migrations/0042_orders.sql","old_string":"ALTER TABLE orders ADD COLUMN total INT;","new_string":"ALTER TABLE orders ADD COLUMN total BIGINT NOT NULL DEFAULT 0;"}
10:00:02.950 | result | toolu_E2 | {} | The file migrations/0042_orders.sql has been updated.
10:00:03.000 | say | Migration repaired: the total column is now BIGINT with a default.
"#;

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
        let (skills, agents) = (self.skills.clone(), self.agents.clone());
        ak::build(&self.knowledge, &self.episodes, &[skills], &[agents]).expect("build")
    }
}

/// Transcripts, skills and an agent definition in a temp dir, indexed by the real indexer.
fn fixture() -> Fx {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("projects");
    let proj = root.join("-w-app");
    write_jsonl(
        &proj.join(format!("{S1}.jsonl")),
        &transcript(S1, None, "2026-03-01", MAIN),
    );
    let sub_file = proj.join(S1).join(format!("subagents/agent-{AGENT}.jsonl"));
    write_jsonl(&sub_file, &transcript(S1, Some(AGENT), "2026-03-01", SUB));
    // Two uses of mysql-access far apart, then a compaction that restates it (not a new use).
    let mut s2 = String::from(
        "09:00:00.000 | user | Check the nightly report query against the orders database.\n\
         09:00:01.000 | call | toolu_S5 | Skill | {\"skill\":\"mysql-access\"}\n\
         09:00:02.000 | result | toolu_S5 | {\"success\":true} | Launching skill: mysql-access\n",
    );
    for i in 0..12 {
        s2 += &format!(
            "09:00:{:02}.000 | say | Step {i} of the report review is finished.\n",
            3 + i
        );
    }
    s2 += "09:00:20.000 | call | toolu_S6 | Skill | {\"skill\":\"mysql-access\"}\n\
           09:00:21.000 | result | toolu_S6 | {\"success\":true} | Launching skill: mysql-access\n";
    for i in 0..12 {
        s2 += &format!("09:00:{:02}.000 | say | Index check {i} done.\n", 22 + i);
    }
    s2 += r#"09:00:40.000 | attach | {"type":"invoked_skills","skills":[{"name":"mysql-access","path":"/home/u/.claude/skills/mysql-access/SKILL.md","content":"Connect with the read-only replica first."}]}"#;
    s2 += "\n09:00:41.000 | say | The report query now uses the created_at index.\n";
    write_jsonl(
        &proj.join(format!("{S2}.jsonl")),
        &transcript(S2, None, "2026-03-02", &s2),
    );

    let skills = dir.path().join("skills");
    write(
        &skills.join("mysql-access/SKILL.md"),
        "---\nname: mysql-access\ndescription: Read-only MySQL access for the orders database. Use \
         when a task needs to inspect schemas or run safe queries through the replica.\ntags: \
         [database, mysql]\n---\n# MySQL access\nConnect with the read-only replica first.\n",
    );
    write(
        &skills.join("tie-skill/SKILL.md"),
        "---\nname: tie-skill\ndescription: Tie.\n---\n",
    );
    write(
        &skills.join("deploy-check/SKILL.md"),
        "---\nname: deploy-check\ndescription: >-\n  Verifies a deployment\n  before release.\n---\n",
    );
    let agents = dir.path().join("agents");
    write(
        &agents.join("db-fixer.md"),
        "---\nname: db-fixer\ndescription: Repairs broken database migrations.\ntools: Read, Edit\n\
         model: sonnet\n---\nYou fix databases.\n",
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
    assert_eq!((summary.skills, summary.agent_defs), (3, 1));
    // The subagent transcript records its mysql-access use twice (call + injected body).
    let sub = format!("{S1}/agent-{AGENT}");
    let ep = knowledge::sources::sqlite::open_ro(&fx.episodes).expect("episodes");
    let raw: i64 = ep
        .query_row(
            "SELECT count(*) FROM events WHERE session_id=?1 AND facts LIKE '%mysql-access%'",
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
    let mut stmt = c
        .prepare(
            "SELECT actor_id, count(*) FROM ak_skill_use WHERE skill_name='mysql-access'
             GROUP BY actor_id ORDER BY actor_id",
        )
        .expect("prepare");
    let per_actor: Vec<(String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(
        per_actor,
        vec![(main_actor(S1), 1), (main_actor(S2), 2), (fixer(), 1)]
    );

    let store = AgentKnowledgeStore::open(&fx.knowledge).expect("open");
    let stats = store.stats().expect("stats");
    assert_eq!(stats.index_rev.as_deref(), Some(summary.index_rev.as_str()));
    assert_eq!((stats.skills, stats.actors, stats.skill_uses), (3, 3, 6));

    // The spawn (parent transcript) and the child transcript are one actor, named by the spawn.
    let a = store
        .actor(&fixer())
        .expect("actor")
        .expect("db-fixer exists");
    assert_eq!(
        (a.name.as_str(), a.kind.as_str(), a.root_session.as_str()),
        ("db-fixer", "subagent", S1)
    );
    assert_eq!(a.sessions, 2, "spawned in S1, authored its own transcript");
    assert!(a.events >= 5 && a.skill_uses == 2 && a.edits == 1);
    assert_eq!(
        (a.definition.as_deref(), a.dispatch_mode()),
        (
            Some("db-fixer"),
            knowledge::contract::DispatchMode::SpawnReplica
        )
    );
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
    let top = |s: &str| store.top_actor_for_skill(s).expect("top");
    assert_eq!(top("mysql-access"), Some((main_actor(S2), 2)));
    assert_eq!(top("tie-skill"), Some((fixer(), 1)));
    assert_eq!(top("nobody-used-this"), None);

    let facts = store.actor_facts(&[]).expect("facts");
    let edited_by = |p: &str, who: &str| facts.editors[p].iter().any(|k| k.actor_id == who);
    assert!(edited_by("/w/app/src/db.rs", &main_actor(S1)));
    assert!(edited_by("src/db.rs", &main_actor(S1)));
    assert!(edited_by("/w/app/migrations/0042_orders.sql", &fixer()));
    assert!(edited_by("migrations/0042_orders.sql", &fixer()));
    assert_eq!(
        facts.skill_uses[&main_actor(S2)],
        vec![("mysql-access".to_string(), 2)]
    );
    assert_eq!(
        (facts.known[&fixer()].kind, facts.outcomes.len()),
        (knowledge::contract::ActorKind::Subagent, 3)
    );
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
    let store = AgentKnowledgeStore::open(&fx.knowledge).expect("open");
    let search = |q: &str, f: &[&str]| {
        let f: Vec<String> = f.iter().map(|s| s.to_string()).collect();
        let terms = query_terms(q);
        store
            .search_skills(&SkillSearch {
                terms: &terms,
                filter: &f,
                limit: 10,
                ..SkillSearch::default()
            })
            .expect("search")
    };
    let rows = search("who used mysql-access", &[]);
    let top = &rows[0];
    assert_eq!(top.name, "mysql-access");
    assert!(top.named && top.catalogued);
    assert_eq!((top.uses, top.used_by.len()), (4, 4));
    assert_eq!(top.used_by[0].0, main_actor(S2), "most recent use first");
    assert!(top.why.contains(&"name: mysql-access".to_string()));
    assert!(top.why.iter().any(|w| w.starts_with("bm25: ")));
    assert!(top
        .when_to_use
        .as_deref()
        .is_some_and(|w| w.starts_with("Use when a task needs")));
    assert!(top.content_hash.starts_with("sha256:") && top.path.ends_with("mysql-access/SKILL.md"));

    let by_text = search("verify the deployment before release", &[]);
    assert_eq!(by_text[0].name, "deploy-check");
    assert!(!by_text[0].named && by_text[0].bm25 > 0.0);
    let filtered = search("", &["tie-skill"]);
    assert_eq!((filtered.len(), filtered[0].uses), (1, 2));
    assert!(search("", &[]).is_empty());
}

/// Every row of every table, as text, sorted; `meta.built_at` left out.
fn dump(db: &Path) -> Vec<String> {
    let c = Connection::open(db).expect("open");
    let mut stmt = c
        .prepare("SELECT name FROM sqlite_master WHERE type='table'")
        .expect("ls");
    let tables: Vec<String> = stmt
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
    let store = AgentKnowledgeStore::open(&fx.knowledge).expect("open");
    let before = store.stats().expect("stats");

    // What dispatch `commit` would write.
    let c = Connection::open(&fx.knowledge).expect("open");
    c.execute(
        "INSERT INTO ak_assignment(assignment_id, actor_id, task_json, status, created_at)
         VALUES('assign:1', ?1, '{}', 'recorded_plan', '2026-03-03T00:00:00Z')",
        [fixer()],
    )
    .expect("insert");
    drop(c);

    // Nothing changed: the store is left alone, assignment and all.
    let same = fx.build();
    assert!(same.unchanged);
    assert_eq!(dump(&fx.knowledge).len(), first.len() + 1);
    // A forced rebuild derives the same rows and carries the assignment over.
    let (skills, agents) = (fx.skills.clone(), fx.agents.clone());
    let forced = ak::build_with(&fx.knowledge, &fx.episodes, &[skills], &[agents], true)
        .expect("forced rebuild");
    assert_eq!(forced.assignments_preserved, 1);
    let second = dump(&fx.knowledge);
    let derived: Vec<String> = second
        .iter()
        .filter(|l| !l.starts_with("ak_assignment|"))
        .cloned()
        .collect();
    assert_eq!(derived, first, "same inputs, same rows");
    assert!(second
        .iter()
        .any(|l| l.starts_with("ak_assignment|Text(\"assign:1\")")));

    // Deleted and rebuilt from scratch: the same derived content, no temp files left.
    std::fs::remove_file(&fx.knowledge).expect("rm");
    fx.build();
    assert_eq!(dump(&fx.knowledge), first);
    let dir = std::fs::read_dir(fx.knowledge.parent().expect("dir")).expect("ls");
    let names: Vec<String> = dir
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");

    // A reader opened before a rebuild sees the new store.
    write(
        &fx.skills.join("new-skill/SKILL.md"),
        "---\nname: new-skill\ndescription: N.\n---\n",
    );
    fx.build();
    assert_eq!(store.stats().expect("stats").skills, before.skills + 1);
}

#[test]
fn unreadable_old_store_is_kept_and_missing_episodes_still_build() {
    let fx = fixture();
    let junk = b"not a database, but maybe someone's assignments";
    std::fs::write(&fx.knowledge, junk).expect("write");
    let err = ak::build(&fx.knowledge, &fx.episodes, &[], &[]).expect_err("must fail");
    assert!(matches!(err, AgentKnowledgeError::Preserve { .. }), "{err}");
    assert_eq!(std::fs::read(&fx.knowledge).expect("read"), junk);
    std::fs::remove_file(&fx.knowledge).expect("rm");

    let none = fx.root.join("no-such.sqlite");
    let s = ak::build(&fx.knowledge, &none, std::slice::from_ref(&fx.skills), &[])
        .expect("catalog only");
    assert_eq!(
        (s.skills, s.actors, s.episodes_index_rev.clone()),
        (3, 0, None)
    );
    assert!(!s.warnings.is_empty());
    let missing = AgentKnowledgeStore::open(&fx.root.join("missing.sqlite"));
    assert!(matches!(missing, Err(AgentKnowledgeError::Missing(_))));
}

/// No text column of L3 repeats 40+ bytes of session text, except path/id locators (and those
/// only on one line); the scanner itself is shown to find a planted copy.
fn assert_no_session_text(knowledge: &Path, episodes: &Path) {
    let c = knowledge::sources::sqlite::open_ro(episodes).expect("open");
    let probe: String = c
        .query_row(
            "SELECT text FROM events WHERE length(text) > 100",
            [],
            |r| r.get(0),
        )
        .expect("the fixture has real text");
    let planted = [("probe.text".to_string(), probe.clone())];
    let mut scanner = audit::Scanner::new(&planted, audit::WINDOW);
    scanner.feed(probe.as_bytes());
    assert_eq!(
        scanner.hits().len(),
        1,
        "the scanner must find a planted copy"
    );

    let l3 = audit::text_values(&Connection::open(knowledge).expect("open")).expect("values");
    assert!(l3.len() > 20, "every table is read");
    let hits = audit::shared_session_text(knowledge, episodes).expect("audit");
    let leaks: Vec<_> = hits.iter().filter(|h| !h.locator).collect();
    assert!(leaks.is_empty(), "session text in L3: {leaks:?}");
    for h in &hits {
        assert!(
            !h.shared.contains('\n'),
            "{} repeats multi-line text",
            h.column
        );
    }
}

#[test]
fn l3_holds_no_raw_session_text() {
    let fx = fixture();
    fx.build();
    assert_no_session_text(&fx.knowledge, &fx.episodes);
    let hits = audit::shared_session_text(&fx.knowledge, &fx.episodes).expect("audit");
    assert!(
        hits.is_empty(),
        "the fixture's locators are short: {hits:?}"
    );
}

/// Indexes `root` into a temp dir and builds L3 with no catalog.
fn build_real(root: PathBuf) -> (tempfile::TempDir, PathBuf, PathBuf, ak::BuildSummary) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (ep, kdb) = (
        dir.path().join("episodes.sqlite"),
        dir.path().join("knowledge.sqlite"),
    );
    index_episodes(&ep, &IndexOptions::new(vec![root]), &mut |_| {}).expect("index");
    let s = ak::build(&kdb, &ep, &[], &[]).expect("build");
    (dir, ep, kdb, s)
}

#[test]
fn marot_spotter_skill_use_goes_to_the_root_session() {
    let Some(root) = common::realdata::path("claude/marot-spotter") else {
        return;
    };
    let (_dir, ep, kdb, _) = build_real(root);
    let store = AgentKnowledgeStore::open(&kdb).expect("open");
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
    // The Task spawned next to it: its own transcript and the spawn agree on one actor.
    let sub = format!("actor:claude:subagent:{parent}:general-purpose");
    let child = store
        .actor_for_session(&format!("{parent}/agent-aac57f5"), None)
        .expect("q");
    assert_eq!(child.map(|k| k.actor_id), Some(sub.clone()));
    let a = store.actor(&sub).expect("q").expect("actor");
    assert!(a.sessions == 2 && a.events > 0 && a.skill_uses == 0);
    let terms = query_terms("elixir:hex-docs-search");
    let rows = store
        .search_skills(&SkillSearch {
            terms: &terms,
            limit: 5,
            ..SkillSearch::default()
        })
        .expect("search");
    assert_eq!(rows[0].qualified_name, "elixir:hex-docs-search");
    assert!(!rows[0].catalogued && rows[0].uses == 1);
    assert_no_session_text(&kdb, &ep);
}

#[test]
fn every_real_fixture_builds_without_session_text() {
    let Some(root) = common::realdata::root() else {
        return;
    };
    let (_dir, ep, kdb, s) = build_real(root);
    assert!(s.sessions > 0 && s.actors > 0 && s.skill_uses > 0);
    let c = Connection::open(&kdb).expect("open");
    // Placeholder names of shape fixtures are neither skills nor actors.
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

fn count_named(dir: &Path, name: &str) -> usize {
    let entries = std::fs::read_dir(dir).expect("ls").filter_map(Result::ok);
    entries
        .map(|e| e.path())
        .map(|p| match p.is_dir() {
            true => count_named(&p, name),
            false => usize::from(p.file_name().is_some_and(|f| f == name)),
        })
        .sum()
}

#[test]
fn catalog_reads_every_real_skill() {
    let Some(root) = common::realdata::path("skills") else {
        return;
    };
    let skills = ak::scan_skills(std::slice::from_ref(&root));
    let on_disk = count_named(&root, "SKILL.md");
    println!("note: {on_disk} SKILL.md files under {}", root.display());
    assert!(on_disk >= 21);
    assert_eq!(skills.len(), on_disk, "every SKILL.md is read");
    for s in &skills {
        let folder = s.path.parent().and_then(Path::file_name).expect("folder");
        assert_eq!(s.name, folder.to_string_lossy(), "{}", s.path.display());
        assert!(!s.description.is_empty() && !s.description.starts_with(['"', '|', '>']));
        assert!(s.path.is_absolute() && s.content_hash.len() == "sha256:".len() + 64);
        assert_eq!((s.plugin.as_deref(), s.kind), (None, "skill"));
    }
    let by = |n: &str| skills.iter().find(|s| s.name == n).expect(n);
    let when = |n: &str| by(n).when_to_use.clone().unwrap_or_default();
    // `|-`: literal lines, no trailing newline.
    let api = &by("claude-api").description;
    assert!(api.starts_with("Reference for the Claude API") && !api.ends_with('\n'));
    assert!(api.contains("\nTRIGGER — read BEFORE") && when("claude-api").starts_with("TRIGGER"));
    // `>-`: folded into one line.
    let commit = &by("commit").description;
    assert!(commit.starts_with("Stages all local changes and creates") && !commit.contains('\n'));
    assert!(commit.contains("commit message by analyzing"));
    assert!(when("commit").starts_with("Use when the user asks to commit"));
    // Quoted, and "Use when" sentences.
    assert!(by("brainstorming")
        .description
        .starts_with("You MUST use this before"));
    assert_eq!(
        when("systematic-debugging"),
        "Use when encountering any bug, test failure, or unexpected behavior, before proposing fixes"
    );
    assert!(when("algorithmic-art").starts_with("Use this when users request"));
    assert_eq!(by("webapp-testing").when_to_use, None);
}

#[test]
fn catalog_reads_real_agents_including_malformed_yaml() {
    let Some(root) = common::realdata::path("agents") else {
        return;
    };
    let agents = ak::scan_agents(&[root]);
    assert_eq!(agents.len(), 9);
    let by = |n: &str| agents.iter().find(|a| a.name == n).expect(n);
    // Strict YAML rejects these (an unquoted `: `); the rest of the line is the value.
    for bad in ["gdpr-ccpa-compliance", "backlog-grooming"] {
        let a = by(bad);
        assert!(
            a.description.starts_with("Use when the user needs"),
            "{bad}"
        );
        assert!(a.description.contains("Triggers on: '"), "{bad}");
        assert!(a.tools.contains(&"WebSearch".to_string()));
    }
    let api = by("api-designer");
    assert_eq!(api.model.as_deref(), Some("sonnet"));
    assert_eq!(
        api.tools,
        vec!["Read", "Write", "Edit", "Bash", "Glob", "Grep"]
    );
    assert!(!api.description.starts_with('"'));
    // Prompt files without frontmatter: named by stem, described by their first paragraph.
    for prompt in ["analyzer", "comparator", "grader"] {
        let a = by(prompt);
        assert!(a.model.is_none() && a.tools.is_empty() && !a.description.starts_with('#'));
    }
    assert!(by("grader")
        .description
        .starts_with("Evaluate expectations"));
}

/// Names from catalog files are stored as every name is: a skill or agent named with a credential
/// in it keeps its name, not the credential.
#[test]
fn catalog_names_holding_a_credential_are_stored_redacted() {
    let dir = tempfile::tempdir().expect("tmp");
    let secret = "Xk9vQ2mLp7ZtR4wB";
    let skills = dir.path().join("skills");
    write(
        &skills.join("deploy/SKILL.md"),
        &format!("---\nname: deploy-token-{secret}\ndescription: Deploys.\n---\nbody\n"),
    );
    let agents = dir.path().join("agents");
    write(
        &agents.join("fixer.md"),
        &format!("---\nname: fixer-password-{secret}\ndescription: Fixes.\nmodel: sonnet\n---\n"),
    );
    let knowledge = dir.path().join("knowledge.sqlite");
    let missing = dir.path().join("no-episodes.sqlite");
    ak::build(&knowledge, &missing, &[skills], &[agents]).expect("build");
    let bytes = std::fs::read(&knowledge).expect("read");
    let clear = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
    assert!(!clear, "the credential reached knowledge.sqlite in clear");
    let c = Connection::open(&knowledge).expect("open");
    let name: String = c
        .query_row("SELECT name FROM ak_skill", [], |r| r.get(0))
        .expect("skill");
    assert!(name.starts_with("deploy-token-"), "{name}");
}

/// A skill's folder, tags and plugin and an agent's file and tools are named by their author too:
/// stored as names, a credential in one of them is not kept in clear, and an agent definition
/// still finds the actor it defines.
#[test]
fn catalog_paths_and_lists_holding_a_credential_are_stored_redacted() {
    let dir = tempfile::tempdir().expect("tmp");
    let secret = "Qz8wN3vLp5XtR7mK";
    let skills = dir.path().join("skills");
    write(
        &skills.join(format!("token-{secret}/SKILL.md")),
        &format!("---\ndescription: Deploys.\ntags: [ops, key_{secret}]\n---\nbody\n"),
    );
    let agents = dir.path().join("agents");
    write(
        &agents.join(format!("password-{secret}.md")),
        &format!("---\ndescription: Fixes.\ntools: Read, token-{secret}\n---\n"),
    );
    let knowledge = dir.path().join("knowledge.sqlite");
    let missing = dir.path().join("no-episodes.sqlite");
    ak::build(&knowledge, &missing, &[skills], &[agents]).expect("build");
    let bytes = std::fs::read(&knowledge).expect("read");
    let clear = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
    assert!(!clear, "the credential reached knowledge.sqlite in clear");
}
