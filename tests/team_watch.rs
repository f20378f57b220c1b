//! `knowledge push --watch` as a person runs it (issue 20): over a data dir indexed with
//! `knowledge index`, a new session written to a watched folder reaches the team index without
//! anyone running anything else, and SIGTERM stops it with the database consistent. Nothing is
//! timed: the deadline only bounds a hang.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::cli::{bin, indexed_world};
use common::pg::cluster;
use common::watching::{append_line, DEADLINE};

fn count(url: &str, sql: &str) -> i64 {
    let mut c = postgres::Client::connect(url, postgres::NoTls).expect("connect");
    c.query_one(sql, &[]).expect(sql).get(0)
}

/// Poll until `done` holds (the deadline only bounds a hang).
fn eventually(what: &str, lines: &Mutex<Vec<String>>, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < DEADLINE,
            "{what} never happened; push --watch said: {:?}",
            lines.lock().expect("lines")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn push_watch_sends_a_new_session_within_seconds_and_sigterm_leaves_the_database_consistent() {
    let Some(c) = cluster() else { return };
    let db = c.database("watch");
    let url = c.url("admin", &db);
    let w = indexed_world();
    let local_events = {
        let conn =
            knowledge::sources::sqlite::open_ro(&w.data.join("episodes.sqlite")).expect("episodes");
        conn.query_row("SELECT count(*) FROM events", [], |r| r.get::<_, i64>(0))
            .expect("count")
    };
    let mut child = bin()
        .arg("--data-dir")
        .arg(&w.data)
        .args(["push", "--watch", "--machine", "watcher", "--to", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start push --watch");
    let lines = Arc::new(Mutex::new(Vec::new()));
    for pipe in [
        Box::new(child.stderr.take().expect("stderr")) as Box<dyn std::io::Read + Send>,
        Box::new(child.stdout.take().expect("stdout")),
    ] {
        let keep = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                keep.lock().expect("lines").push(line);
            }
        });
    }
    // The first push: everything indexed so far.
    eventually("the first push", &lines, || {
        count(&url, "SELECT count(*) FROM pg_tables WHERE tablename = 'kn_store_rev'") > 0
            && count(
                &url,
                "SELECT count(*) FROM kn_store_rev WHERE machine = 'watcher' AND store = 'agent_knowledge'",
            ) > 0
    });
    assert_eq!(
        count(
            &url,
            "SELECT count(*) FROM kn_event WHERE machine = 'watcher'"
        ),
        local_events
    );
    // A new session is written; nobody runs `knowledge index`.
    let sid = "7e57a11e-0000-4000-8000-00000000c0de";
    let file = w
        .world
        .root
        .join(format!("claude/projects/-DEMO--repos-billing/{sid}.jsonl"));
    let cwd = w.world.root.join("repos/billing").display().to_string();
    append_line(
        &file,
        sid,
        &cwd,
        "pushed from the watch: the kafka consumer lag alert",
    );
    eventually("the new session reaching the team", &lines, || {
        count(
            &url,
            &format!(
                "SELECT count(*) FROM kn_event WHERE machine = 'watcher' AND session_id = '{sid}'
                   AND text LIKE '%kafka consumer lag%'"
            ),
        ) > 0
    });
    // SIGTERM: it stops, and what it committed is whole.
    // SAFETY: kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(started.elapsed() < DEADLINE, "push --watch ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        status.success(),
        "{status:?}: {:?}",
        lines.lock().expect("lines")
    );
    assert!(
        lines
            .lock()
            .expect("lines")
            .iter()
            .any(|l| l.contains("push --watch stopped")),
        "{:?}",
        lines.lock().expect("lines")
    );
    let torn = count(
        &url,
        "SELECT count(*) FROM kn_session s WHERE s.pushed_seq <>
           coalesce((SELECT max(seq) FROM kn_event e
                     WHERE e.machine = s.machine AND e.session_id = s.session_id), -1)",
    );
    assert_eq!(torn, 0);
}
