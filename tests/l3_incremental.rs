//! An L3 build whose source marks each session's changes derives again only the families that
//! changed (`build/incremental.rs`): its store must hold the rows a full build of the same
//! facts writes (row ids of uses and edits aside), whatever changed — facts appended, a family
//! new or gone, a child moved to another root, a spawn taken away, roots that differ only where
//! actor ids spell them alike. And it must step aside (a full build) when it cannot compare: a
//! changed catalog, events outside the sessions, `force`.

use std::path::{Path, PathBuf};

use knowledge::sources::agent_knowledge as ak;
use knowledge::sources::episodes::index::{index_episodes, IndexOptions};
use rusqlite::{params, Connection};

#[path = "common/l3_world.rs"]
mod l3_world;

/// The generated world with a change mark per session and no events outside the sessions (as
/// the built-in store keeps them).
fn marked_world(dir: &Path) -> PathBuf {
    let ep = dir.join("episodes.sqlite");
    l3_world::write_world(&ep);
    let c = Connection::open(&ep).expect("open");
    c.execute_batch(
        "ALTER TABLE sessions ADD COLUMN mark INTEGER NOT NULL DEFAULT 0;
         UPDATE sessions SET mark = random();
         DELETE FROM events WHERE session_id NOT IN (SELECT session_id FROM sessions);",
    )
    .expect("marks");
    ep
}

/// A new revision of the store, and a new mark for each session named.
fn marked(c: &Connection, sessions: &[&str]) {
    for sid in sessions {
        c.execute(
            "UPDATE sessions SET mark = random() WHERE session_id = ?1",
            [sid],
        )
        .expect("mark");
    }
    c.execute(
        "UPDATE meta SET value = 'episodes:' || random() WHERE key = 'index_rev'",
        [],
    )
    .expect("rev");
}

fn event(c: &Connection, sid: &str, seq: i64, facts: serde_json::Value) {
    c.execute(
        "INSERT INTO events VALUES(?1, ?2, ?3, NULL, NULL, ?4)",
        params![
            sid,
            seq,
            1_772_400_000_000i64 + seq * 1000,
            facts.to_string()
        ],
    )
    .expect("event");
}

fn session(c: &Connection, sid: &str, parent: Option<&str>, agent: Option<&str>) {
    c.execute(
        "INSERT INTO sessions(session_id, source, cwd, parent_session_id, agent_id, outcome,
             last_event_at, mark) VALUES(?1, 'claude', '/w/app', ?2, ?3, 'success',
             '2026-03-02T10:00:00.000Z', random())",
        params![sid, parent, agent],
    )
    .expect("session");
}

fn one(c: &Connection, sql: &str) -> String {
    c.query_row(sql, [], |r| r.get(0)).expect(sql)
}

/// Every row of every table, sorted, without what an update may number differently (the ids of
/// uses and edits) or stamp differently (`meta.built_at`).
fn rows(db: &Path) -> Vec<String> {
    let c = Connection::open(db).expect("open");
    let tables = l3_world::tables(&c);
    let mut out = Vec::new();
    for t in tables {
        let mut stmt = c
            .prepare(&format!("SELECT * FROM \"{t}\""))
            .expect("select");
        let names: Vec<String> = stmt.column_names().iter().map(|n| n.to_string()).collect();
        let mut rs = stmt.query([]).expect("query");
        while let Some(r) = rs.next().expect("row") {
            let vals: Vec<String> = (0..names.len())
                .filter(|&i| {
                    !(names[i] == "id" && matches!(t.as_str(), "ak_skill_use" | "ak_edit"))
                })
                .map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).expect("v")))
                .collect();
            let line = format!("{t}|{}", vals.join("|"));
            if !line.contains("|Text(\"built_at\")|") {
                out.push(line);
            }
        }
    }
    out.sort();
    out
}

/// The first rows the two stores do not share, for a failure a person can read.
fn same_rows(updated: &Path, full: &Path, what: &str) {
    let (a, b) = (rows(updated), rows(full));
    if a == b {
        return;
    }
    let only_a: Vec<&String> = a.iter().filter(|l| !b.contains(l)).take(5).collect();
    let only_b: Vec<&String> = b.iter().filter(|l| !a.contains(l)).take(5).collect();
    panic!("{what}: the update differs from a full build\nupdate only: {only_a:#?}\nfull only: {only_b:#?}");
}

type Change = Box<dyn Fn(&Connection)>;

#[test]
fn an_incremental_update_writes_the_rows_a_full_build_writes() {
    let dir = tempfile::tempdir().expect("tmp");
    let ep = marked_world(dir.path());
    let store = dir.path().join("knowledge.sqlite");
    let first = ak::build(&store, &ep, &[], &[]).expect("build");
    assert_eq!(
        first.rederived_sessions, None,
        "the first build is a full one"
    );
    let c = Connection::open(&ep).expect("open");
    let total: u64 = one(&c, "SELECT count(*) || '' FROM sessions")
        .parse()
        .expect("n");

    let steps: Vec<(&str, Change)> = vec![
        (
            "facts appended to a subagent",
            Box::new(|c| {
                let child = one(
                    c,
                    "SELECT session_id FROM sessions WHERE parent_session_id IS NOT NULL
                     AND session_id IN (SELECT session_id FROM events) ORDER BY session_id",
                );
                event(
                    c,
                    &child,
                    1000,
                    serde_json::json!([{"fact": "file_edit", "path": "src/new.rs"}]),
                );
                event(
                    c,
                    &child,
                    1001,
                    serde_json::json!([{"fact": "skill_use",
                    "name": "mysql-access", "via": "tool"}]),
                );
                marked(c, &[&child]);
            }),
        ),
        (
            "a new family with a spawned child",
            Box::new(|c| {
                session(c, "z-new", None, None);
                session(c, "z-new/agent-q1", Some("z-new"), Some("q1"));
                event(
                    c,
                    "z-new",
                    1,
                    serde_json::json!([{"fact": "spawn",
                    "tool_use_id": "toolu_new", "name": "fresh-fixer", "description": "d"}]),
                );
                event(
                    c,
                    "z-new",
                    2,
                    serde_json::json!([{"fact": "agent_link",
                    "tool_use_id": "toolu_new", "agent_id": "q1"}]),
                );
                event(
                    c,
                    "z-new/agent-q1",
                    1,
                    serde_json::json!([{"fact": "file_edit",
                    "path": "src/fresh.rs"}]),
                );
                marked(c, &[]);
            }),
        ),
        (
            "a subagent gone",
            Box::new(|c| {
                let child = one(
                    c,
                    "SELECT session_id FROM sessions WHERE parent_session_id IS NOT NULL
                     ORDER BY session_id DESC",
                );
                c.execute("DELETE FROM events WHERE session_id = ?1", [&child])
                    .expect("rm");
                c.execute("DELETE FROM sessions WHERE session_id = ?1", [&child])
                    .expect("rm");
                marked(c, &[]);
            }),
        ),
        (
            "a child moved to another root",
            Box::new(|c| {
                let child = one(
                    c,
                    "SELECT session_id FROM sessions WHERE parent_session_id IS NOT NULL
                     AND parent_session_id <> 'r10' ORDER BY session_id",
                );
                c.execute(
                    "UPDATE sessions SET parent_session_id = 'r10' WHERE session_id = ?1",
                    [&child],
                )
                .expect("move");
                marked(c, &[&child]);
            }),
        ),
        (
            "a spawn taken away",
            Box::new(|c| {
                let root = one(
                    c,
                    "SELECT session_id FROM events WHERE facts LIKE '%\"spawn\"%'
                     AND session_id NOT LIKE '%/%' ORDER BY session_id",
                );
                c.execute(
                    "DELETE FROM events WHERE session_id = ?1 AND facts LIKE '%\"spawn\"%'",
                    [&root],
                )
                .expect("rm");
                marked(c, &[&root]);
            }),
        ),
        (
            "a root that one actor id shares with another",
            Box::new(|c| {
                event(
                    c,
                    "r02 x",
                    2000,
                    serde_json::json!([{"fact": "teammate_message",
                    "teammate_id": "carol"}, {"fact": "file_edit", "path": "src/x.rs"}]),
                );
                marked(c, &["r02 x"]);
            }),
        ),
        (
            "a new revision, nothing derived changed",
            Box::new(|c| marked(c, &[])),
        ),
    ];
    for (i, (what, change)) in steps.iter().enumerate() {
        change(&c);
        let s = ak::build(&store, &ep, &[], &[]).expect("update");
        let n = s
            .rederived_sessions
            .unwrap_or_else(|| panic!("{what}: a full build ran: {s:?}"));
        assert!(n * 4 <= total, "{what}: {n} of {total} derived again");
        let full = dir.path().join(format!("full-{i}.sqlite"));
        let f = ak::build_with(&full, &ep, &[], &[], true).expect("full");
        assert_eq!(f.rederived_sessions, None);
        assert_eq!(
            (s.actors, s.skill_uses, s.edits),
            (f.actors, f.skill_uses, f.edits),
            "{what}"
        );
        same_rows(&store, &full, what);
    }
}

#[test]
fn a_build_is_full_when_the_store_cannot_be_compared() {
    let dir = tempfile::tempdir().expect("tmp");
    let ep = marked_world(dir.path());
    let store = dir.path().join("knowledge.sqlite");
    ak::build(&store, &ep, &[], &[]).expect("build");
    let c = Connection::open(&ep).expect("open");
    let root = "r01";

    // An assignment committed between builds is kept by an update.
    let kept = Connection::open(&store).expect("store");
    kept.execute(
        "INSERT INTO ak_assignment(assignment_id, actor_id, task_json, status, created_at)
         VALUES('as-1', 'actor:x', '{}', 'proposed', '2026-03-01T00:00:00Z')",
        [],
    )
    .expect("assignment");
    drop(kept);
    marked(&c, &[root]);
    let s = ak::build(&store, &ep, &[], &[]).expect("update");
    assert!(s.rederived_sessions.is_some(), "{s:?}");
    assert_eq!(s.assignments_preserved, 1);

    // Another catalog: the actors' definitions may change, so everything is derived again.
    let skills = dir.path().join("skills/tidy");
    std::fs::create_dir_all(&skills).expect("mkdir");
    std::fs::write(
        skills.join("SKILL.md"),
        "---\nname: tidy\ndescription: Tidy the logs\n---\nbody\n",
    )
    .expect("skill");
    marked(&c, &[root]);
    let roots = [dir.path().join("skills")];
    let s = ak::build(&store, &ep, &roots, &[]).expect("catalog");
    assert_eq!(s.rederived_sessions, None, "{s:?}");
    assert_eq!(s.assignments_preserved, 1);
    marked(&c, &[root]);
    let s = ak::build(&store, &ep, &roots, &[]).expect("same catalog");
    assert!(s.rederived_sessions.is_some(), "{s:?}");

    // Forced: full.
    let s = ak::build_with(&store, &ep, &roots, &[], true).expect("force");
    assert_eq!(s.rederived_sessions, None);

    // Events outside the sessions (the built-in store never holds any: a session's row and its
    // events are written and deleted together): a build that sees them keeps no marks, so the
    // next build is full too.
    c.execute_batch("INSERT INTO events VALUES('r05/agent-orphan', 1, NULL, NULL, NULL, NULL)")
        .expect("orphan");
    marked(&c, &[]);
    let s = ak::build_with(&store, &ep, &roots, &[], true).expect("orphans");
    assert_eq!(s.rederived_sessions, None);
    marked(&c, &[root]);
    let s = ak::build(&store, &ep, &roots, &[]).expect("still orphans");
    assert_eq!(s.rederived_sessions, None, "{s:?}");
    let k = Connection::open(&store).expect("store");
    let marks: i64 = k
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'ak_session_mark'",
            [],
            |r| r.get(0),
        )
        .expect("ls");
    assert_eq!(
        marks, 0,
        "no marks are saved when events lie outside the sessions"
    );
}

/// The indexer's own store: appending one Aider run derives that run (and the one before it)
/// again, and the store is what a full build writes.
#[test]
fn appending_one_aider_run_derives_only_the_last_runs_again() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let history = repo.join(".aider.chat.history.md");
    let run = |i: usize| {
        format!(
            "\n# aider chat started at 2026-01-0{} 10:{i:02}:00\n\n#### fix bug {i}  \n\n\
             Changed src/m{i}.rs.\n\n> Applied edit to src/m{i}.rs  \n",
            1 + i % 9
        )
    };
    std::fs::write(&history, (0..40).map(run).collect::<String>()).expect("write");
    let ep = dir.path().join("episodes.sqlite");
    let store = dir.path().join("knowledge.sqlite");
    let opts = IndexOptions::new(vec![repo.clone()]);
    index_episodes(&ep, &opts, &mut |_| {}).expect("index");
    let first = ak::build(&store, &ep, &[], &[]).expect("build");
    assert_eq!(first.sessions, 40, "{first:?}");

    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&history)
        .expect("open");
    std::io::Write::write_all(&mut f, run(41).as_bytes()).expect("append");
    drop(f);
    index_episodes(&ep, &opts, &mut |_| {}).expect("index");
    let s = ak::build(&store, &ep, &[], &[]).expect("update");
    // The run before it is written again too: an append may have continued it.
    assert!(matches!(s.rederived_sessions, Some(1 | 2)), "{s:?}");
    assert_eq!(s.sessions, 41);
    let full = dir.path().join("full.sqlite");
    ak::build_with(&full, &ep, &[], &[], true).expect("full");
    same_rows(&store, &full, "one run appended");
}

/// A build killed with `kill -9` leaves its temporary store beside the store: the next build
/// removes it (and its journal), and leaves a running build's and anything else alone.
#[test]
fn a_killed_builds_temporary_store_is_removed_by_the_next_build() {
    let dir = tempfile::tempdir().expect("tmp");
    let ep = marked_world(dir.path());
    let store = dir.path().join("knowledge.sqlite");
    let dead = i32::MAX as u32 - 1;
    let me = std::process::id();
    let names = [
        format!(".knowledge.sqlite.tmp-{dead}-123"),
        format!(".knowledge.sqlite.tmp-{dead}-123-journal"),
        format!(".knowledge.sqlite.tmp-{me}-456"),
        ".knowledge.sqlite.tmp-notapid-1".to_string(),
        "notes.txt".to_string(),
    ];
    for n in &names {
        std::fs::write(dir.path().join(n), b"x").expect("write");
    }
    ak::build(&store, &ep, &[], &[]).expect("build");
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        !left.contains(&names[0]) && !left.contains(&names[1]),
        "{left:?}"
    );
    for kept in &names[2..] {
        assert!(left.contains(kept), "{kept}: {left:?}");
    }
}

/// An update that is not made leaves the reason, and the store a full build writes.
fn updated_as_full(store: &Path, ep: &Path, dir: &Path, what: &str) -> ak::BuildSummary {
    let s = ak::build(store, ep, &[], &[]).unwrap_or_else(|e| panic!("{what}: {e}"));
    let full = dir.join(format!("full-{}.sqlite", what.replace(' ', "-")));
    ak::build_with(&full, ep, &[], &[], true).expect("full");
    same_rows(store, &full, what);
    s
}

#[test]
fn families_that_name_one_actor_are_derived_together() {
    let dir = tempfile::tempdir().expect("tmp");
    let ep = marked_world(dir.path());
    let store = dir.path().join("knowledge.sqlite");
    ak::build(&store, &ep, &[], &[]).expect("build");
    let c = Connection::open(&ep).expect("open");
    let spawn = |t: &str, ty: &str| {
        serde_json::json!([{"fact": "spawn", "tool_use_id": t, "subagent_type": ty,
            "description": "d"}])
    };

    // `x` spawns `review:fixer`, then `x:review` spawns `fixer`: actor ids join their parts with
    // `:`, so both name actor:claude:subagent:x:review:fixer.
    session(&c, "x", None, None);
    event(&c, "x", 1, spawn("t1", "review:fixer"));
    marked(&c, &[]);
    let s = updated_as_full(&store, &ep, dir.path(), "x spawns review-fixer");
    assert!(s.rederived_sessions.is_some(), "{s:?}");
    session(&c, "x:review", None, None);
    event(&c, "x:review", 1, spawn("t2", "fixer"));
    marked(&c, &[]);
    // The new family names an actor the store holds for another one: the update cannot be
    // made alone, and a full build is (the store is never left failing or half-right).
    let s = updated_as_full(&store, &ep, dir.path(), "x-review spawns fixer");
    let why = s.full_build_because.as_deref().unwrap_or_default();
    assert!(why.contains("the update failed"), "{s:?}");
    // Now one of the two changes: both are derived again.
    event(
        &c,
        "x:review",
        2,
        serde_json::json!([{"fact": "file_edit", "path": "a.rs"}]),
    );
    marked(&c, &["x:review"]);
    let s = updated_as_full(&store, &ep, dir.path(), "x-review edits");
    assert!(s.rederived_sessions.is_some_and(|n| n >= 2), "{s:?}");

    // A root `a/b` whose sidechain `n` and a child of `a/b` with agent `n` are one actor
    // (actor:claude:subagent:a/b:n) in two families (`a` and `a/b`).
    session(&c, "a/b", None, None);
    session(&c, "a/b/agent-n", Some("a/b"), Some("n"));
    c.execute(
        "INSERT INTO events VALUES('a/b', 1, 1772400000000, NULL, 'n', ?1)",
        [serde_json::json!([{"fact": "file_edit", "path": "b.rs"}]).to_string()],
    )
    .expect("sidechain event");
    event(
        &c,
        "a/b/agent-n",
        1,
        serde_json::json!([{"fact": "file_edit", "path": "c.rs"}]),
    );
    marked(&c, &[]);
    updated_as_full(&store, &ep, dir.path(), "a-b and its child");
    event(
        &c,
        "a/b/agent-n",
        2,
        serde_json::json!([{"fact": "file_edit", "path": "d.rs"}]),
    );
    marked(&c, &["a/b/agent-n"]);
    let s = updated_as_full(&store, &ep, dir.path(), "the child edits");
    assert!(s.rederived_sessions.is_some_and(|n| n >= 2), "{s:?}");
}

/// The built-in source, with a dispatch commit landing while the update derives.
struct CommitDuring {
    inner: ak::facts::EpisodesFacts,
    store: PathBuf,
    done: Option<std::thread::JoinHandle<rusqlite::Result<()>>>,
}

impl ak::facts::FactsSource for CommitDuring {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn revision(&mut self) -> Result<Option<String>, ak::facts::FactsError> {
        self.inner.revision()
    }
    fn sessions(&mut self) -> Result<Vec<ak::derive::SessionIn>, ak::facts::FactsError> {
        self.inner.sessions()
    }
    fn activity(
        &mut self,
        visit: &mut dyn FnMut(ak::facts::ActivityIn) -> ak::facts::Visit,
    ) -> Result<(), ak::facts::FactsError> {
        self.inner.activity(visit)
    }
    fn fact_events(
        &mut self,
        visit: &mut dyn FnMut(ak::derive::EventIn) -> ak::facts::Visit,
    ) -> Result<(), ak::facts::FactsError> {
        self.inner.fact_events(visit)
    }
    fn marks_basis(&mut self) -> Result<Option<String>, ak::facts::FactsError> {
        self.inner.marks_basis()
    }
    fn activity_of(
        &mut self,
        sessions: &[&str],
        visit: &mut dyn FnMut(ak::facts::ActivityIn) -> ak::facts::Visit,
    ) -> Result<(), ak::facts::FactsError> {
        if self.done.is_none() {
            let store = self.store.clone();
            self.done = Some(std::thread::spawn(move || {
                let plans = ak::assignments::AssignmentStore::open(&store)?;
                plans.record(&ak::assignments::NewAssignment {
                    assignment_id: "as-during",
                    actor_id: "actor:x",
                    task_json: "{}",
                    created_at: "2026-03-01T00:00:00Z",
                })?;
                Ok(())
            }));
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        self.inner.activity_of(sessions, visit)
    }
    fn fact_events_of(
        &mut self,
        sessions: &[&str],
        visit: &mut dyn FnMut(ak::derive::EventIn) -> ak::facts::Visit,
    ) -> Result<(), ak::facts::FactsError> {
        self.inner.fact_events_of(sessions, visit)
    }
}

#[test]
fn a_plan_committed_while_an_update_derives_is_kept() {
    let dir = tempfile::tempdir().expect("tmp");
    let ep = marked_world(dir.path());
    let store = dir.path().join("knowledge.sqlite");
    ak::build(&store, &ep, &[], &[]).expect("build");
    let c = Connection::open(&ep).expect("open");
    marked(&c, &["r01"]);
    let mut source = CommitDuring {
        inner: ak::facts::EpisodesFacts::open(&ep).expect("open"),
        store: store.clone(),
        done: None,
    };
    let s = ak::build_from(&store, Some(&mut source), &[], &[], false).expect("update");
    assert!(s.rederived_sessions.is_some(), "{s:?}");
    let committed = source.done.take().expect("started").join().expect("thread");
    assert!(committed.is_ok(), "{committed:?}");
    let k = Connection::open(&store).expect("store");
    let kept: i64 = k
        .query_row(
            "SELECT count(*) FROM ak_assignment WHERE assignment_id = 'as-during'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(kept, 1);
}
