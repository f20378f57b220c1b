//! Indexing throughput of the agents whose store is one SQLite database (run with
//! `cargo bench --bench sql_agents_bench`): the OpenCode, Kilo Code, Cursor IDE, Crush, Goose and
//! Zed fixtures (`fixtures/agents/*/…sql`) copied many times under fresh ids into one database
//! each, in WAL mode with a writer connection open, as the agent keeps it. Prints, per agent, the from-scratch
//! index (MB/s of database + WAL, events/s; median of three runs), a re-run with nothing changed
//! (the fingerprint check) and a re-run after one new row (the per-session fingerprint scan plus
//! one session re-read).

use std::path::Path;
use std::time::Instant;

use knowledge::sources::episodes::index::{index_episodes, IndexOptions};
use rusqlite::Connection;

const COPIES: usize = 2000;
const RUNS: usize = 3;

struct Agent {
    name: &'static str,
    sql: &'static str,
    /// The fixture's rows start after this statement (the schema and shared rows come first).
    data_after: &'static str,
    /// Id fragments made unique per copy.
    ids: &'static [&'static str],
    db_name: &'static str,
    /// One more row, for the incremental run.
    append: &'static str,
}

fn build(dir: &Path, a: &Agent) -> (std::path::PathBuf, Connection) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(a.sql);
    let sql = std::fs::read_to_string(path).expect("fixture");
    let cut = sql.find(a.data_after).expect("marker") + a.data_after.len();
    let (head, rows) = sql.split_at(cut);
    let db = dir.join(a.db_name);
    std::fs::create_dir_all(db.parent().expect("parent")).expect("mkdir");
    let c = Connection::open(&db).expect("db");
    c.execute_batch("PRAGMA journal_mode=WAL;").expect("wal");
    c.execute_batch(head).expect("schema");
    c.execute_batch("BEGIN").expect("begin");
    for n in 0..COPIES {
        let mut copy = rows.to_string();
        for id in a.ids {
            copy = copy.replace(id, &format!("{id}{n:05}"));
        }
        c.execute_batch(&copy).expect("rows");
    }
    c.execute_batch("COMMIT").expect("commit");
    if a.name == "zed" {
        zstd_threads(&c);
    }
    (db, c)
}

/// Zed's `0.3.0` thread documents stored zstd-compressed, as current Zed stores them (the
/// fixture's SQL holds them as JSON text).
fn zstd_threads(c: &Connection) {
    let rows: Vec<(String, String)> = c
        .prepare("SELECT id, data FROM threads WHERE json_extract(data, '$.version') = '0.3.0'")
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()
        })
        .expect("threads");
    c.execute_batch("BEGIN").expect("begin");
    for (id, data) in rows {
        let packed = ruzstd::encoding::compress_to_vec(
            data.as_bytes(),
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        c.execute(
            "UPDATE threads SET data_type = 'zstd', data = ?2 WHERE id = ?1",
            rusqlite::params![id, packed],
        )
        .expect("compress");
    }
    c.execute_batch("COMMIT").expect("commit");
}

/// Sessions one copy of an agent's fixture holds.
fn sessions_per_copy(agent: &str) -> usize {
    match agent {
        // A thread, its subagent and an agent-1 thread.
        "zed" => 3,
        // A session and its child (Crush's title-generation child is not read).
        _ => 2,
    }
}

fn size(db: &Path) -> u64 {
    let wal = std::path::PathBuf::from(format!("{}-wal", db.display()));
    [db.to_path_buf(), wal]
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum()
}

fn main() {
    let agents = [
        Agent {
            name: "opencode",
            sql: "fixtures/agents/opencode/opencode.sql",
            data_after: "'/home/dev/shop', 'git', 'shop', 1780000000000, 1780000000000, '[]');\n",
            ids: &["RootSessionAbCd", "ChildSessionXy", "msg_e5d4c3b", "prt_e5d4c3b"],
            db_name: "opencode/opencode.db",
            append: "INSERT INTO part VALUES ('prt_bench_new', 'msg_e5d4c3b000073b001ChildAnswer1',
                'ses_1a2b3c5e6ffeChildSessionXy00007', 1780000030500, 1780000030500,
                '{\"type\":\"text\",\"text\":\"one more line\"}');",
        },
        Agent {
            name: "kilo",
            sql: "fixtures/formats/kilo/kilo.sql",
            data_after: "'/home/dev/importer', 'git', 'importer', 1785600000000, 1785600000000, '[]');\n",
            ids: &["KiloRootSession", "KiloChildSessn", "msg_", "prt_"],
            db_name: "kilo/kilo.db",
            append: "INSERT INTO part VALUES ('bench_new', 'msg_00007e001KiloChildAnswer000001',
                'ses_0a1b2c4e5ffeKiloChildSessn00007', 1785600040500, 1785600040500,
                '{\"type\":\"text\",\"text\":\"one more line\"}');",
        },
        Agent {
            name: "cursor",
            sql: "fixtures/agents/cursor/state.vscdb.sql",
            data_after: "'Cursor Dark');\n",
            ids: &["5f3c9e2a-1111", "7a1d4b6c-2222"],
            db_name: "Cursor/User/globalStorage/state.vscdb",
            append: "INSERT INTO cursorDiskKV VALUES ('bubbleId:7a1d4b6c-222200007-4d3e-8f9a-0b1c2d3e4f5a:s-9',
                '{\"_v\":3,\"type\":2,\"text\":\"one more line\"}');",
        },
        Agent {
            name: "crush",
            sql: "fixtures/agents/crush/crush.sql",
            data_after: "WHERE id = new.session_id;\nEND;\n",
            ids: &["90a1b2c3d4e5", "msg-"],
            db_name: "ledger/.crush/crush.db",
            append: "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
                VALUES ('msg-bench-new', '6f1c2d3e-4a5b-4c6d-8e7f-90a1b2c3d4e500007', 'user',
                '[{\"type\":\"text\",\"data\":{\"text\":\"one more line\"}}]',
                1788600900, 1788600900);",
        },
        // A CLI session and a specialist (subagent) run a copy.
        Agent {
            name: "goose",
            sql: "fixtures/agents/goose/sessions.sql",
            data_after: "CREATE INDEX idx_sessions_updated ON sessions(updated_at DESC);\n",
            ids: &["20260904_", "msg_", "toolu_0"],
            db_name: "goose/sessions/sessions.db",
            append: "INSERT INTO messages (message_id, session_id, role, content_json,
                created_timestamp, metadata_json) VALUES ('msg-bench-new', '20260904_000071',
                'user', '[{\"type\":\"text\",\"text\":\"one more line\"}]', 1788510900,
                '{\"userVisible\":true,\"agentVisible\":true}');",
        },
        // Its current threads stored zstd-compressed (`zstd_threads`), as Zed stores them.
        Agent {
            name: "zed",
            sql: "fixtures/agents/zed/threads.sql",
            data_after: "ALTER TABLE threads ADD COLUMN created_at TEXT;\n",
            ids: &["1a0b9c8d7e6f", "0e1f2a3b4c5d", "1f2a3b4c5d6e"],
            db_name: "zed/threads/threads.db",
            append: "INSERT INTO threads (id, summary, updated_at, data_type, data)
                VALUES ('bench-new', 'one more', '2026-09-07T00:00:00+00:00', 'json',
                '{\"title\":\"one more\",\"messages\":[{\"User\":{\"id\":\"u\",
                \"content\":[{\"Text\":\"one more line\"}]}}],\"version\":\"0.3.0\"}');",
        },
    ];
    println!("sql_agents_bench: {COPIES} copies of each fixture, median of {RUNS}");
    for a in &agents {
        let tmp = tempfile::tempdir().expect("tmp");
        let (db, writer) = build(tmp.path(), a);
        let bytes = size(&db);
        let mut secs = Vec::new();
        let mut events = 0;
        for run in 0..RUNS {
            let store = tmp.path().join(format!("episodes-{run}.sqlite"));
            let t = Instant::now();
            let s = index_episodes(&store, &IndexOptions::new(vec![db.clone()]), &mut |_| {})
                .expect("index");
            secs.push(t.elapsed().as_secs_f64());
            events = s.events_added;
        }
        secs.sort_by(f64::total_cmp);
        let median = secs[RUNS / 2];
        let store = tmp.path().join("episodes-0.sqlite");
        let t = Instant::now();
        index_episodes(&store, &IndexOptions::new(vec![db.clone()]), &mut |_| {}).expect("index");
        let unchanged = t.elapsed().as_secs_f64();
        writer.execute_batch(a.append).expect("append");
        let t = Instant::now();
        let s = index_episodes(&store, &IndexOptions::new(vec![db.clone()]), &mut |_| {})
            .expect("index");
        let one = t.elapsed().as_secs_f64();
        println!(
            "  {:<8} {:>6.2} MB, {} sessions: {median:.3} s = {:>5.1} MB/s, {:>7.0} events/s; \
             unchanged re-run {:.0} ms; one new row {:.0} ms ({} events added)",
            a.name,
            bytes as f64 / 1e6,
            COPIES * sessions_per_copy(a.name),
            bytes as f64 / 1e6 / median,
            events as f64 / median,
            unchanged * 1e3,
            one * 1e3,
            s.events_added,
        );
    }
}
