//! The episodes' full-text index (`sources::lexical`, Tantivy beside `episodes.sqlite`) through
//! the indexer and the store: a rare term wins a disjunctive query, filters apply inside the
//! index, appended and replaced sessions are searchable after the next run, the index is
//! rebuilt from the store alone, a run killed between its two commits is redone, an index left
//! beside another store is never read as its own, and a reader follows a writer's commits.

use std::path::{Path, PathBuf};

use knowledge::sources::episodes::index::{index_episodes, IndexOptions};
use knowledge::sources::episodes::search::{
    EpisodeQuery, EpisodeStore, EpisodeStoreError, StoredHit,
};
use knowledge::sources::lexical::{self, LexicalError};
use knowledge::text::tokens;

/// A Claude Code transcript of `texts` (user, assistant, …) in `cwd`, one minute apart from
/// `start_minute`.
fn transcript(session: &str, cwd: &str, start_minute: u32, texts: &[&str]) -> String {
    let mut out = String::new();
    let mut parent: Option<String> = None;
    for (i, text) in texts.iter().enumerate() {
        let uuid = format!("{session}-{i}");
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let message = if role == "user" {
            serde_json::json!({"role": "user", "content": text})
        } else {
            serde_json::json!({"role": "assistant", "type": "message",
                "content": [{"type": "text", "text": text}]})
        };
        let minute = start_minute + i as u32;
        let line = serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": role,
            "message": message, "uuid": uuid,
            "timestamp": format!("2026-05-01T{:02}:{:02}:00.000Z", 10 + minute / 60, minute % 60),
            "cwd": cwd, "sessionId": session, "version": "2.1.172"});
        out.push_str(&line.to_string());
        out.push('\n');
        parent = Some(uuid);
    }
    out
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    db: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("projects");
        std::fs::create_dir_all(root.join("-work-app")).expect("projects");
        let db = tmp.path().join("data").join("episodes.sqlite");
        std::fs::create_dir_all(db.parent().expect("data")).expect("data dir");
        World {
            _tmp: tmp,
            root,
            db,
        }
    }

    fn file(&self, session: &str) -> PathBuf {
        self.root.join("-work-app").join(format!("{session}.jsonl"))
    }

    fn write(&self, session: &str, cwd: &str, start_minute: u32, texts: &[&str]) {
        std::fs::write(
            self.file(session),
            transcript(session, cwd, start_minute, texts),
        )
        .expect("write transcript");
    }

    fn index(&self) {
        self.index_roots(vec![self.root.clone()]);
    }

    fn index_roots(&self, roots: Vec<PathBuf>) {
        index_episodes(&self.db, &IndexOptions::new(roots), &mut |_| {}).expect("index");
    }

    fn store(&self) -> EpisodeStore {
        EpisodeStore::open(&self.db).expect("open store")
    }
}

fn query(text: &str) -> EpisodeQuery {
    let terms = tokens::query_terms(text);
    EpisodeQuery {
        own_terms: terms.clone(),
        identifiers: tokens::identifier_terms(text),
        terms,
        limit: 20,
        snippet_chars: 120,
        ..EpisodeQuery::default()
    }
}

fn sessions(hits: &[StoredHit]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in hits {
        if !out.contains(&h.session_id) {
            out.push(h.session_id.clone());
        }
    }
    out
}

const COMMON: &str = "the deploy pipeline failed while the integration tests ran on staging";

fn common_world(w: &World, n: usize) {
    for i in 0..n {
        w.write(
            &format!("common-{i:02}"),
            "/work/app",
            i as u32,
            &[
                COMMON,
                "I restarted the staging deploy and the tests passed",
            ],
        );
    }
}

#[test]
fn a_rare_term_wins_a_disjunctive_query_of_common_words() {
    let w = World::new();
    common_world(&w, 30);
    w.write(
        "rare-one",
        "/work/app",
        50,
        &[
            "raise qzvorbl_retry_budget to seven",
            "done, the budget is seven now",
        ],
    );
    w.index();
    let hits = w
        .store()
        .search(&query(
            "why did the deploy pipeline fail on staging after qzvorbl_retry_budget changed",
        ))
        .expect("search");
    assert_eq!(
        sessions(&hits).first().map(String::as_str),
        Some("rare-one"),
        "{:?}",
        sessions(&hits)
    );
    // Disjunctive: the sessions that hold only the common words are still found.
    assert!(sessions(&hits).len() > 5, "{:?}", sessions(&hits));
}

#[test]
fn workspace_session_outcome_and_time_filters_apply_inside_the_index() {
    let w = World::new();
    common_world(&w, 6);
    w.write("elsewhere", "/work/other", 20, &[COMMON, "ok"]);
    w.index();
    let store = w.store();
    let mut q = query("deploy pipeline staging");
    q.workspaces = vec!["/work/other".into()];
    assert_eq!(sessions(&store.search(&q).expect("search")), ["elsewhere"]);
    // At a path boundary only: `/work/ap` does not hold `/work/app`.
    q.workspaces = vec!["/work/ap".into()];
    assert!(store.search(&q).expect("search").is_empty());

    let mut q = query("deploy pipeline staging");
    q.session_ids = vec!["common-03".into()];
    assert_eq!(sessions(&store.search(&q).expect("search")), ["common-03"]);

    // Session `common-i` starts at minute i: its first event is at 10:0i.
    let at = |minute: i64| {
        knowledge::sources::episodes::index::parse_time_ms(&format!(
            "2026-05-01T10:{minute:02}:00.000Z"
        ))
        .expect("time")
    };
    let mut q = query("deploy pipeline staging");
    q.since_ms = Some(at(2));
    q.until_ms = Some(at(4));
    let found = sessions(&store.search(&q).expect("search"));
    assert!(!found.is_empty());
    for h in store.search(&q).expect("search") {
        let t = h.time_ms.expect("time");
        assert!((at(2)..=at(4)).contains(&t), "{} at {t}", h.session_id);
    }
    assert!(!found.contains(&"common-00".to_string()), "{found:?}");
    assert!(!found.contains(&"common-05".to_string()), "{found:?}");
}

#[test]
fn appended_and_rewritten_sessions_are_searchable_after_the_next_run() {
    let w = World::new();
    common_world(&w, 3);
    w.index();
    let store = w.store();
    assert!(store.search(&query("florbix")).expect("search").is_empty());
    // Appended: the new words are found, the old events are found once.
    let before = store
        .search(&query("deploy pipeline"))
        .expect("search")
        .len();
    w.write(
        "common-01",
        "/work/app",
        1,
        &[
            COMMON,
            "I restarted the staging deploy and the tests passed",
            "now florbix it",
        ],
    );
    w.index();
    assert_eq!(
        sessions(&store.search(&query("florbix")).expect("search")),
        ["common-01"],
        "the same reader sees the next commit"
    );
    assert_eq!(
        store
            .search(&query("deploy pipeline"))
            .expect("search")
            .len(),
        before
    );
    // Rewritten (not an append): what it says now is found, what only it said before stays
    // (a re-read keeps stored events).
    w.write(
        "common-02",
        "/work/app",
        2,
        &["a wholly new text about grombly"],
    );
    w.index();
    assert_eq!(
        sessions(&store.search(&query("grombly")).expect("search")),
        ["common-02"]
    );
}

fn answers(store: &EpisodeStore, queries: &[&str]) -> Vec<Vec<(String, u64)>> {
    queries
        .iter()
        .map(|q| {
            store
                .search(&query(q))
                .expect("search")
                .iter()
                .map(|h| (h.session_id.clone(), h.seq))
                .collect()
        })
        .collect()
}

const ASKED: [&str; 3] = [
    "deploy pipeline staging",
    "qzvorbl_retry_budget",
    "restarted tests passed",
];

#[test]
fn the_index_is_rebuilt_from_the_store_alone() {
    let w = World::new();
    common_world(&w, 8);
    w.write(
        "rare-one",
        "/work/app",
        50,
        &["raise qzvorbl_retry_budget", "done"],
    );
    w.index();
    let before = answers(&w.store(), &ASKED);
    assert!(before.iter().all(|a| !a.is_empty()));
    // No transcript left to read: everything comes from the store.
    std::fs::remove_dir_all(&w.root).expect("remove transcripts");
    std::fs::remove_dir_all(lexical::dir_for(&w.db)).expect("remove the index");
    assert!(matches!(
        EpisodeStore::open(&w.db)
            .expect("open")
            .search(&query("deploy")),
        Err(EpisodeStoreError::Lexical(LexicalError::Missing(_)))
    ));
    w.index_roots(Vec::new());
    assert_eq!(answers(&w.store(), &ASKED), before);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

#[test]
fn a_run_killed_between_its_store_commit_and_its_index_commit_is_redone() {
    let w = World::new();
    common_world(&w, 3);
    w.index();
    let dir = lexical::dir_for(&w.db);
    let saved = w._tmp.path().join("saved-index");
    copy_dir(&dir, &saved);
    w.write(
        "common-01",
        "/work/app",
        1,
        &[
            COMMON,
            "I restarted the staging deploy and the tests passed",
            "now florbix it",
        ],
    );
    w.index();
    // The index as a killed run leaves it: without the appended event, which the store holds.
    let put_back = || {
        std::fs::remove_dir_all(&dir).expect("remove");
        copy_dir(&saved, &dir);
    };
    put_back();
    assert!(
        w.store()
            .search(&query("florbix"))
            .expect("search")
            .is_empty(),
        "the old index does not hold the new event"
    );
    // The killed run's store transaction named the session it changed.
    let conn = rusqlite::Connection::open(&w.db).expect("open");
    conn.execute(
        "INSERT INTO lexical_pending(key)
         SELECT key FROM session_keys WHERE session_id = 'common-01'",
        [],
    )
    .expect("pending");
    drop(conn);
    w.index();
    let hits = w.store().search(&query("florbix")).expect("search");
    assert_eq!(sessions(&hits), ["common-01"]);
    // Re-added once: the session's events are not found twice.
    let deploy = w.store().search(&query("restarted")).expect("search");
    let of_one: Vec<_> = deploy
        .iter()
        .filter(|h| h.session_id == "common-01")
        .collect();
    assert_eq!(of_one.len(), 1, "{of_one:?}");
}

#[test]
fn an_index_left_beside_another_store_is_never_read_as_its_own() {
    let a = World::new();
    common_world(&a, 3);
    a.index();
    let b = World::new();
    b.write("only-b", "/work/app", 0, &["a text about zindlewort", "ok"]);
    b.index();
    // A's index put beside B's store.
    let b_dir = lexical::dir_for(&b.db);
    std::fs::remove_dir_all(&b_dir).expect("remove");
    copy_dir(&lexical::dir_for(&a.db), &b_dir);
    assert!(matches!(
        EpisodeStore::open(&b.db)
            .expect("open")
            .search(&query("deploy")),
        Err(EpisodeStoreError::Lexical(LexicalError::Version { .. }))
    ));
    // The next run makes B's own again, from B's store.
    b.index_roots(Vec::new());
    let store = b.store();
    assert_eq!(
        sessions(&store.search(&query("zindlewort")).expect("search")),
        ["only-b"]
    );
    assert!(store.search(&query("deploy")).expect("search").is_empty());
}

#[test]
fn a_reader_searching_while_the_writer_commits_sees_whole_sessions_only() {
    let w = World::new();
    common_world(&w, 4);
    w.index();
    let store = w.store();
    let db = w.db.clone();
    let root = w.root.clone();
    let file = w.file("growing");
    let writer = std::thread::spawn(move || {
        let mut texts: Vec<String> = Vec::new();
        for round in 0..12 {
            texts.push(format!("round {round} of the staging deploy"));
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            std::fs::write(&file, transcript("growing", "/work/app", 30, &refs)).expect("write");
            index_episodes(&db, &IndexOptions::new(vec![root.clone()]), &mut |_| {})
                .expect("index");
        }
    });
    let mut seen_rounds = 0;
    while !writer.is_finished() {
        let hits = store.search(&query("staging deploy")).expect("search");
        for h in &hits {
            // Every hit is an event of its session as the store holds it now.
            let events = store
                .event_with_context(&h.session_id, h.seq, 0)
                .expect("event");
            assert_eq!(events.len(), 1, "{}:{}", h.session_id, h.seq);
        }
        seen_rounds = seen_rounds.max(hits.iter().filter(|h| h.session_id == "growing").count());
    }
    writer.join().expect("writer");
    let hits = store.search(&query("round staging")).expect("search");
    assert!(hits.iter().any(|h| h.session_id == "growing"));
    let _ = seen_rounds;
}

#[test]
fn a_damaged_segment_is_made_anew_by_the_next_run_that_changes_nothing() {
    let w = World::new();
    common_world(&w, 6);
    w.write(
        "rare-one",
        "/work/app",
        50,
        &["raise qzvorbl_retry_budget", "done"],
    );
    w.index();
    let before = answers(&w.store(), &ASKED);
    let dir = lexical::dir_for(&w.db);
    for e in std::fs::read_dir(&dir).expect("index dir") {
        let path = e.expect("entry").path();
        if path.extension().is_some_and(|x| x == "term") {
            let len = std::fs::metadata(&path).expect("size").len();
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .expect("open");
            f.set_len(len / 2).expect("truncate");
        }
    }
    assert!(
        w.store().search(&query("deploy")).is_err(),
        "a truncated segment cannot be searched"
    );
    w.index();
    assert_eq!(answers(&w.store(), &ASKED), before);
}

#[test]
fn a_store_rolled_back_behind_its_index_never_answers_an_event_twice() {
    let w = World::new();
    common_world(&w, 3);
    w.index();
    // The store as a restored backup (or a lost WAL) leaves it: before the next run's events.
    let saved = w._tmp.path().join("saved-store.sqlite");
    std::fs::copy(&w.db, &saved).expect("save the store");
    w.write(
        "common-01",
        "/work/app",
        1,
        &[
            COMMON,
            "now florbix one",
            "and florbix two",
            "florbix three",
        ],
    );
    w.index();
    std::fs::copy(&saved, &w.db).expect("roll the store back");
    // The same transcripts again: the events are stored anew, and must be found once each.
    w.index();
    let hits = w.store().search(&query("florbix")).expect("search");
    let mut seqs: Vec<u64> = hits.iter().map(|h| h.seq).collect();
    seqs.sort_unstable();
    let n = seqs.len();
    seqs.dedup();
    assert_eq!(seqs.len(), n, "an event found twice: {hits:?}");
    assert_eq!(n, 3, "{hits:?}");
}

#[test]
fn a_file_in_place_of_the_index_is_replaced_and_the_index_is_readable_as_the_store() {
    let w = World::new();
    common_world(&w, 2);
    let dir = lexical::dir_for(&w.db);
    std::fs::create_dir_all(dir.parent().expect("data")).expect("data dir");
    std::fs::write(&dir, "not an index").expect("a file in its place");
    w.index();
    assert!(dir.is_dir());
    assert!(!w
        .store()
        .search(&query("deploy"))
        .expect("search")
        .is_empty());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let store = std::fs::metadata(&w.db)
            .expect("store")
            .permissions()
            .mode()
            & 0o666;
        let meta = std::fs::metadata(dir.join("meta.json"))
            .expect("meta.json")
            .permissions()
            .mode()
            & 0o666;
        assert_eq!(meta, store, "meta.json {meta:o}, store {store:o}");
    }
}

#[test]
fn doctor_names_a_missing_full_text_index_and_the_run_that_makes_it() {
    let w = World::new();
    common_world(&w, 2);
    w.index();
    let data = w.db.parent().expect("data dir").to_path_buf();
    let doctor = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_knowledge"))
            .arg("--data-dir")
            .arg(&data)
            .arg("doctor")
            .output()
            .expect("doctor runs");
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    assert!(!doctor().contains("full-text index"), "{}", doctor());
    std::fs::remove_dir_all(lexical::dir_for(&w.db)).expect("remove the index");
    let said = doctor();
    assert!(
        said.contains("full-text index") && said.contains("knowledge index"),
        "{said}"
    );
    w.index_roots(Vec::new());
    assert!(!doctor().contains("full-text index"), "{}", doctor());
}

#[test]
fn an_event_holding_only_words_every_event_holds_is_not_a_lexical_hit() {
    let w = World::new();
    for i in 0..20 {
        w.write(
            &format!("plain-{i:02}"),
            "/work/app",
            i,
            &["status update about the service", "the service is fine"],
        );
    }
    w.write(
        "the-one",
        "/work/app",
        40,
        &[
            "status update: the service hit qqvorpal again",
            "the service is fine",
        ],
    );
    w.index();
    let hits = w
        .store()
        .search(&query("service qqvorpal"))
        .expect("search");
    assert_eq!(sessions(&hits), ["the-one"], "{:?}", sessions(&hits));
}
