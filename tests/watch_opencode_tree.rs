//! Watch mode follows OpenCode's JSON tree (issue 18), through the built binary with the real
//! watcher, as `watch_agents.rs` does for every agent's main store: OpenCode writes a session's
//! messages and parts beside its session file, on their own, and each such write must become
//! searchable under OpenCode's name and the session's own id.

mod common;

use std::time::{Duration, Instant};

use common::agent_home::copy_tree;
use common::watching::{items, search, Watcher, DEADLINE};
use knowledge::sources::episodes::agents::Agent;

const OC_TREE_PARENT: &str = "ses_7f01a2b3c4d5PARENT";
const OC_TREE_CHILD: &str = "ses_7f01a2b3c4d6CHILD";
const OC_FLAT: &str = "ses_7f02f1a7000aFLAT";

/// OpenCode's JSON tree (its layout before the database) keeps a session's messages and parts
/// beside the session file, and OpenCode writes a part without touching the session file. The
/// watch follows such writes into the tree found at its default place — a part written alone
/// into a message's folder, a new message with its new part folder — and a part of a tree
/// that keeps its parts flat, rewritten in place.
#[test]
fn watch_follows_opencode_tree_parts_written_on_their_own() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let formats = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/formats");
    let storage = home.join(".local/share/opencode/storage");
    copy_tree(&formats.join("opencode/storage"), &storage);
    let flat = tmp.path().join("flat/storage");
    copy_tree(&formats.join("opencode_flat/storage"), &flat);
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::write(data.join("config.toml"), "[lanes]\ntimeout_ms = 10000\n").expect("config");
    let mut cmd = common::cli::bin();
    cmd.env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("--data-dir")
        .arg(&data)
        .args(["index", "--watch", "--quiet", "--sessions"])
        .arg(storage.join("session"))
        .arg("--sessions")
        .arg(flat.join("session"));
    let watch = Watcher::spawn(cmd);
    assert!(
        watch.banner.contains("file-system notifications"),
        "{}",
        watch.banner
    );
    let wait = |word: &str, session: &str| {
        let started = Instant::now();
        loop {
            let resp = search(&data, word, "episodes");
            let hits = items(&resp, "episodes");
            if hits.iter().any(|it| {
                it["surface"].as_str().and_then(Agent::from_source) == Some(Agent::OpenCode)
                    && it["session_id"].as_str() == Some(session)
            }) {
                return;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "{word} not found in {session}: {hits:?}\nwatcher said: {:?}",
                watch.lines()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    };
    wait("bounce", OC_TREE_PARENT);
    wait("gigabyte", OC_FLAT);

    // A part alone, into the folder of a message that exists.
    std::fs::write(
        storage.join("part/msg_7f01a2b3c502/prt_7f01a2b3c502f.json"),
        r#"{"id":"prt_7f01a2b3c502f","sessionID":"ses_7f01a2b3c4d5PARENT","messageID":"msg_7f01a2b3c502","type":"text","text":"The walrusquota retry cap is five."}"#,
    )
    .expect("write part");
    wait("walrusquota", OC_TREE_PARENT);
    // A new message of the subagent's session, then its part in a new folder.
    std::fs::write(
        storage.join(format!("message/{OC_TREE_CHILD}/msg_7f01a2b3c603.json")),
        r#"{"id":"msg_7f01a2b3c603","sessionID":"ses_7f01a2b3c4d6CHILD","role":"assistant","parentID":"msg_7f01a2b3c601","modelID":"claude-sonnet-4-5","providerID":"anthropic","path":{"cwd":"/home/dev/mailer","root":"/home/dev/mailer"},"time":{"created":1783231241000,"completed":1783231242000},"finish":"stop"}"#,
    )
    .expect("write message");
    let parts = storage.join("part/msg_7f01a2b3c603");
    std::fs::create_dir_all(&parts).expect("part folder");
    std::fs::write(
        parts.join("prt_7f01a2b3c603a.json"),
        r#"{"id":"prt_7f01a2b3c603a","sessionID":"ses_7f01a2b3c4d6CHILD","messageID":"msg_7f01a2b3c603","type":"text","text":"The classifier lives in ospreyrules.py."}"#,
    )
    .expect("write part");
    wait("ospreyrules", OC_TREE_CHILD);
    // A flat part rewritten in place: no folder changes, and the part names only its message.
    std::fs::write(
        flat.join("part/prt_7f02f1a70102b.json"),
        r#"{"id":"prt_7f02f1a70102b","messageID":"msg_7f02f1a70102","type":"text","text":"The reader loads every row; a kestrelbatch size fixes it."}"#,
    )
    .expect("rewrite flat part");
    wait("kestrelbatch", OC_FLAT);
}
