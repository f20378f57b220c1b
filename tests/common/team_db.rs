//! What the team tests (`tests/team_*.rs`) and the team bench set up alike: a synthetic data
//! dir indexed from the bench's generator, a push as a machine, counts on the throwaway cluster
//! (`pg.rs`), and a `knowledge push` process killed after a delay (the `kill -9` tests).
#![allow(dead_code)]

#[path = "../../benches/support/synth.rs"]
#[allow(dead_code)]
pub mod synth;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use knowledge::team::push::{push, PushPlan, PushSummary};
use knowledge::team::{TeamError, TeamUrl};

use super::pg::Cluster;

/// A synthetic world of `sessions` sessions × `events` events, indexed into a data dir with
/// `config` as its `config.toml`: (the temp dir holding both, the data dir).
pub fn synthetic(sessions: usize, events: usize, config: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let tree = tmp.path().join("tree");
    synth::generate(&tree, sessions, events).expect("synthetic world");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).expect("data");
    std::fs::write(data.join("config.toml"), config).expect("config");
    knowledge::indexing::index_all(
        &data,
        &knowledge::indexing::IndexPlan {
            sessions: vec![tree.join("claude"), tree.join("codex")],
            ..Default::default()
        },
        &mut |_| {},
    )
    .expect("index");
    (tmp, data)
}

/// Push `data` to `url` as `machine` (the person: "tester").
pub fn push_as(data: &Path, url: &str, machine: &str) -> Result<PushSummary, TeamError> {
    let plan = PushPlan {
        machine: machine.to_string(),
        person: Some("tester".into()),
    };
    push(data, &TeamUrl::parse(url).expect("url"), &plan, &mut |_| {})
}

pub fn client(c: &Cluster, user: &str, db: &str) -> postgres::Client {
    postgres::Client::connect(&c.url(user, db), postgres::NoTls).expect("connect")
}

/// The one number `sql` selects, as the superuser.
pub fn count(c: &Cluster, db: &str, sql: &str) -> i64 {
    client(c, "admin", db)
        .query_one(sql, &[])
        .expect(sql)
        .get(0)
}

/// Whether `db` has its team schema yet.
pub fn has_schema(c: &Cluster, db: &str) -> bool {
    count(
        c,
        db,
        "SELECT count(*) FROM pg_tables WHERE tablename = 'kn_session'",
    ) > 0
}

/// Start `knowledge push --machine MACHINE --to URL` on `data` and SIGKILL it after `delay`;
/// whether it was still running then (killed mid-way).
pub fn kill_push_after(data: &Path, url: &str, machine: &str, delay: Duration) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(data)
        .args(["push", "--machine", machine, "--to", url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn push");
    std::thread::sleep(delay);
    let running = child.try_wait().expect("wait").is_none();
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    running
}
