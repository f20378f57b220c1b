//! The compact event rows through the binary: a fresh index stores long texts packed, session ids
//! and event types as keys and times only where `time_ms` does not give them back, and
//! `get-episode` gives every text and time back exactly; a store of the first schema (plain text)
//! or of the second (packed text, ids and times as text) is upgraded by `knowledge index` in
//! place — no transcript read again (the transcript is gone by then), the same rows, search
//! finding the same events, no text re-embedded — and it is smaller after. A store of the third
//! schema loses its index on `time_ms` the same way, and the time-filtered searches, which were
//! the only queries it could serve, answer as they did with it.

use std::path::{Path, PathBuf};
use std::process::Command;

use knowledge::sources::episodes::store::SCHEMA_VERSION;
use serde_json::{json, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_knowledge"))
}

/// A long text of `n` sentences, different per `seed` (words of real sessions, repeated the
/// way tool output and code repeat: what packing is for).
fn long_text(seed: usize, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "step {i} of run {seed}: the deploy of service-{seed} failed because the mysql \
                 connection to db-{} timed out after {} ms; retried with backoff.",
                (seed * 7 + i) % 13,
                100 + i * 17
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first events' times as agents also write them (no milliseconds, an offset, microseconds):
/// none of them is what `time_ms` formats back to, so each must be kept as written.
const TIMES: [&str; 4] = [
    "2026-10-01T10:00:00Z",
    "2026-10-01T12:01:00.500+02:00",
    "2026-10-01T10:02:00.123456Z",
    "2026-10-01T10:03:00.000Z",
];

fn transcript() -> (String, Vec<String>) {
    let mut texts = Vec::new();
    let mut body = String::new();
    for i in 0..40 {
        let (role, text) = match i % 3 {
            0 => (
                "user",
                format!("why does service-{i} fail (short question {i})"),
            ),
            _ => ("assistant", long_text(i, 12 + i % 7)),
        };
        let mut record = json!({
            "type": role, "sessionId": "s1", "uuid": format!("u{i}"), "cwd": "/srv/app",
            "timestamp": TIMES.get(i).map_or(format!("2026-10-01T10:{i:02}:00.000Z"), |t| t.to_string()),
            "message": {"role": role, "content": text},
        });
        if i == 5 {
            record.as_object_mut().expect("object").remove("timestamp");
        }
        body += &(record.to_string() + "\n");
        texts.push(text);
    }
    (body, texts)
}

struct Home {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
}

impl Home {
    fn new() -> (Home, Vec<String>) {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("sessions/claude/projects/-srv-app");
        std::fs::create_dir_all(&root).expect("root");
        let (body, texts) = transcript();
        std::fs::write(root.join("s1.jsonl"), body).expect("write");
        let data = tmp.path().join("data");
        // A deadline no loaded machine reaches: these tests check answers, not speed.
        std::fs::create_dir_all(&data).expect("data");
        std::fs::write(data.join("config.toml"), "[lanes]\ntimeout_ms = 60000\n").expect("config");
        let home = Home {
            root: tmp.path().join("sessions"),
            data,
            _tmp: tmp,
        };
        (home, texts)
    }

    fn run(&self, args: &[&str]) -> Vec<u8> {
        let out = bin()
            .env("HOME", self.data.join("home"))
            .arg("--data-dir")
            .arg(&self.data)
            .args(args)
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    fn index(&self) -> Value {
        let root = self.root.to_string_lossy().to_string();
        serde_json::from_slice(&self.run(&["index", "--sessions", &root, "--json"])).expect("json")
    }

    /// Every event's text as `get-episode` prints it (JSON), one call per event.
    fn episode_texts(&self, n: usize) -> Vec<String> {
        (1..=n)
            .map(|seq| {
                let out = self.run(&[
                    "get-episode",
                    &format!("ep:s1:{seq}"),
                    "--context",
                    "0",
                    "--json",
                ]);
                let v: Value = serde_json::from_slice(&out).expect("json");
                let events = v["events"].as_array().expect("events");
                assert_eq!(events.len(), 1, "{v}");
                events[0]["text"].as_str().expect("text").to_string()
            })
            .collect()
    }

    fn db(&self) -> PathBuf {
        self.data.join("episodes.sqlite")
    }
}

/// Indexes `home` with its transcripts gone, so whatever the store keeps comes from the store
/// alone: the old store is upgraded to the current schema and its full-text index made from its
/// rows; nothing is read or embedded again.
fn upgrade_without_the_transcripts(home: &Home) {
    std::fs::remove_dir_all(&home.root).expect("remove transcripts");
    std::fs::create_dir_all(&home.root).expect("empty root");
    let v = home.index();
    assert_eq!(user_version(&home.db()), SCHEMA_VERSION, "upgraded");
    assert_eq!(
        v["episodes"]["events_added"],
        json!(0),
        "nothing was read again"
    );
    assert_eq!(
        v["vectors"]["events"],
        json!(0),
        "the codes stay valid: no text is embedded again"
    );
}

fn user_version(db: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).expect("open");
    c.query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version")
}

fn packed_rows(db: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).expect("open");
    c.query_row(
        "SELECT count(*) FROM event_rows WHERE typeof(text) = 'blob'",
        [],
        |r| r.get(0),
    )
    .expect("count")
}

/// Every row of the `events` view, as readers see it, with the vector codes: what an upgrade
/// must keep.
fn rows(db: &Path) -> Vec<String> {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    let mut stmt = c
        .prepare(
            "SELECT json_array(id, session_id, seq, event_type, time, time_ms, text, human,
                    tool_name, tool_use_id, is_error, sidechain_agent, facts)
             FROM events ORDER BY id",
        )
        .expect("prepare");
    let mut out: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let codes: String = c
        .query_row(
            "SELECT coalesce(group_concat(hex(codes), ','), '') FROM
                 (SELECT codes FROM event_vec_blocks ORDER BY block)",
            [],
            |r| r.get(0),
        )
        .expect("codes");
    out.push(codes);
    out
}

fn has_time_index(db: &Path) -> bool {
    let c = rusqlite::Connection::open(db).expect("open");
    c.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'events_time'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .expect("count")
        > 0
}

/// Turn a store back into the third schema, as a build before schema 4 wrote it: every tool id
/// stored as text, views that read it as stored, an index on `time_ms`, user_version 3, vacuumed.
fn downgrade_to_schema_3(db: &Path) {
    let c = knowledge::sources::sqlite::open_writer(db).expect("open");
    let time = "CASE WHEN e.time IS NULL THEN strftime('%Y-%m-%dT%H:%M:%fZ', e.time_ms / 1000.0, 'unixepoch')
                WHEN typeof(e.time) = 'blob' THEN NULL ELSE e.time END";
    let view = |name: &str, text: &str| {
        format!(
            "CREATE VIEW {name} AS
                SELECT e.id AS id, k.session_id AS session_id, e.seq AS seq,
                       t.name AS event_type, {time} AS time, e.time_ms AS time_ms,
                       {text} AS text, e.human AS human, e.tool_name AS tool_name,
                       e.tool_use_id AS tool_use_id, e.is_error AS is_error,
                       e.sidechain_agent AS sidechain_agent, e.facts AS facts
                FROM event_rows e JOIN session_keys k ON k.key = e.session_key
                     JOIN event_types t ON t.key = e.type_key;"
        )
    };
    c.execute_batch(&format!(
        "CREATE TEMP TABLE ids AS SELECT id, tool_use_id FROM events;
         UPDATE event_rows SET tool_use_id = (SELECT i.tool_use_id FROM ids i WHERE i.id = event_rows.id)
             WHERE typeof(tool_use_id) = 'blob';
         DROP VIEW events; DROP VIEW events_packed;
         {}
         {}
         CREATE INDEX events_time ON event_rows(time_ms);
         PRAGMA user_version = 3;",
        view("events", "CASE WHEN typeof(e.text) = 'blob' THEN unpack_text(e.text) ELSE e.text END"),
        view("events_packed", "e.text"),
    ))
    .expect("downgrade");
    drop(c);
    let c = rusqlite::Connection::open(db).expect("open");
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
        .expect("vacuum");
}

/// A second session with tool calls, written beside `home`'s transcript: one call answered
/// right after it, then two calls made together and answered together. Returns the tool ids
/// its events carry, in seq order.
fn write_tool_session(home: &Home) -> Vec<Option<String>> {
    let common = |i: usize| {
        format!(
            "\"parentUuid\":null,\"isSidechain\":false,\"cwd\":\"/srv/app\",\"sessionId\":\"s2\",\"uuid\":\"t{i}\",\"timestamp\":\"2026-10-02T09:{i:02}:00.000Z\""
        )
    };
    let call = |i: usize, id: &str| {
        format!(
            "{{{},\"type\":\"assistant\",\"message\":{{\"id\":\"m{i}\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"Bash\",\"input\":{{\"command\":\"cargo test --lib step{i}\"}}}}]}}}}",
            common(i)
        )
    };
    let result = |i: usize, id: &str| {
        format!(
            "{{{},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"{id}\",\"content\":\"test result step{i}: ok\",\"is_error\":false}}]}}}}",
            common(i)
        )
    };
    let prompt = format!(
        "{{{},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"run the tests of the deploy\"}}}}",
        common(0)
    );
    let (a, b, c) = (
        "toolu_01AaaaaaaaaaaaaaaaaaaaaA",
        "toolu_01BbbbbbbbbbbbbbbbbbbbbB",
        "toolu_01CccccccccccccccccccccC",
    );
    let lines = [
        prompt,
        call(1, a),
        result(2, a),
        call(3, b),
        call(4, c),
        result(5, b),
        result(6, c),
    ];
    std::fs::write(
        home.root.join("claude/projects/-srv-app/s2.jsonl"),
        lines.join("\n") + "\n",
    )
    .expect("write");
    [None, Some(a), Some(a), Some(b), Some(c), Some(b), Some(c)]
        .iter()
        .map(|t| t.map(str::to_string))
        .collect()
}

fn tool_ids(db: &Path, session: &str) -> Vec<Option<String>> {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    let mut stmt = c
        .prepare("SELECT tool_use_id FROM events WHERE session_id = ?1 ORDER BY seq")
        .expect("prepare");
    stmt.query_map([session], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("ids")
}

/// How many tool ids are stored as "the previous event's".
fn shared_tool_ids(db: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).expect("open");
    c.query_row(
        "SELECT count(*) FROM event_rows WHERE typeof(tool_use_id) = 'blob'",
        [],
        |r| r.get(0),
    )
    .expect("count")
}

/// Turn a store back into the second schema, as a build before the keys wrote it: `event_rows`
/// with the session id, event type and time as text, its texts packed, user_version 2.
fn downgrade_to_schema_2(db: &Path) {
    let c = knowledge::sources::sqlite::open_writer(db).expect("open");
    c.execute_batch(
        "CREATE TABLE rows_v2(
            id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
            event_type TEXT NOT NULL, time TEXT, time_ms INTEGER, text NOT NULL,
            human INTEGER NOT NULL, tool_name TEXT, tool_use_id TEXT, is_error INTEGER NOT NULL,
            sidechain_agent TEXT, facts TEXT, UNIQUE(session_id, seq));
         INSERT INTO rows_v2 SELECT p.id, p.session_id, p.seq, p.event_type, v.time, p.time_ms,
             p.text, p.human, p.tool_name, p.tool_use_id, p.is_error, p.sidechain_agent, p.facts
             FROM events_packed p JOIN events v ON v.id = p.id;
         DROP VIEW events; DROP VIEW events_packed;
         DROP TABLE event_rows; DROP TABLE session_keys; DROP TABLE event_types;
         ALTER TABLE rows_v2 RENAME TO event_rows;
         CREATE INDEX events_time ON event_rows(time_ms);
         CREATE VIEW events AS
             SELECT id, session_id, seq, event_type, time, time_ms,
                    CASE WHEN typeof(text) = 'blob' THEN unpack_text(text) ELSE text END AS text,
                    human, tool_name, tool_use_id, is_error, sidechain_agent, facts
             FROM event_rows;
         CREATE TRIGGER event_vec_blocks_del AFTER DELETE ON event_rows BEGIN
             DELETE FROM event_vec_blocks WHERE block = old.id >> 10;
             INSERT OR IGNORE INTO event_vec_blocks_dirty(block) VALUES(old.id >> 10);
         END;
         UPDATE files SET parser_state = unpack_text(parser_state);
         PRAGMA user_version = 2;",
    )
    .expect("downgrade");
    drop(c);
    let c = rusqlite::Connection::open(db).expect("open");
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
        .expect("vacuum");
}

/// Turn a store back into the first schema, as a build before packing wrote it: `events` a
/// table of plain text, user_version 1, vacuumed.
fn downgrade_to_schema_1(db: &Path) {
    let c = knowledge::sources::sqlite::open_writer(db).expect("open");
    c.execute_batch(
        "CREATE TABLE events_plain(
            id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
            event_type TEXT NOT NULL, time TEXT, time_ms INTEGER, text TEXT NOT NULL,
            human INTEGER NOT NULL, tool_name TEXT, tool_use_id TEXT, is_error INTEGER NOT NULL,
            sidechain_agent TEXT, facts TEXT, UNIQUE(session_id, seq));
         INSERT INTO events_plain SELECT * FROM events;
         DROP VIEW events; DROP VIEW events_packed;
         DROP TABLE event_rows; DROP TABLE session_keys; DROP TABLE event_types;
         UPDATE files SET parser_state = unpack_text(parser_state);
         ALTER TABLE events_plain RENAME TO events;
         CREATE INDEX events_time ON events(time_ms);
         PRAGMA user_version = 1;",
    )
    .expect("downgrade");
    drop(c);
    let c = rusqlite::Connection::open(db).expect("open");
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
        .expect("vacuum");
}

#[test]
fn long_texts_are_stored_packed_and_read_back_exactly() {
    let (home, texts) = Home::new();
    let v = home.index();
    assert_eq!(v["episodes"]["events_added"], json!(texts.len()));
    assert_eq!(user_version(&home.db()), SCHEMA_VERSION);
    assert!(
        !has_time_index(&home.db()),
        "a fresh store has no time index"
    );
    let long = texts.iter().filter(|t| t.len() >= 200).count() as i64;
    assert!(
        packed_rows(&home.db()) >= long,
        "every long text is packed ({long} long texts)"
    );
    assert_eq!(home.episode_texts(texts.len()), texts);
}

#[test]
fn times_come_back_as_written_and_most_are_not_stored() {
    let (home, texts) = Home::new();
    home.index();
    let c = knowledge::sources::sqlite::open_ro(&home.db()).expect("open");
    let times: Vec<Option<String>> = c
        .prepare("SELECT time FROM events ORDER BY seq")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("times");
    assert_eq!(times.len(), texts.len());
    for (i, t) in times.iter().enumerate() {
        let written = match i {
            5 => None,
            _ => Some(
                TIMES
                    .get(i)
                    .map_or(format!("2026-10-01T10:{i:02}:00.000Z"), |t| t.to_string()),
            ),
        };
        assert_eq!(t, &written, "event {i}");
    }
    let kept: i64 = c
        .query_row(
            "SELECT count(*) FROM event_rows WHERE time IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(
        kept, 3,
        "only the three times time_ms does not give back are stored"
    );
    let ids: i64 = c
        .query_row("SELECT count(*) FROM session_keys", [], |r| r.get(0))
        .expect("keys");
    assert_eq!(ids, 1, "one session, one key");
}

#[test]
fn a_schema_2_store_is_upgraded_in_place_keeping_every_row_and_answer() {
    let (home, texts) = Home::new();
    home.index();
    let fresh = rows(&home.db());
    let fresh_bytes = std::fs::metadata(home.db()).expect("db").len();
    let search = |home: &Home| -> Value {
        let mut v: Value =
            serde_json::from_slice(&home.run(&["search", "-q", "backoff service-7 db-10"]))
                .expect("json");
        v["lanes"]["episodes"].take()
    };
    let found = search(&home);
    assert!(!found["items"].as_array().expect("items").is_empty());

    downgrade_to_schema_2(&home.db());
    assert_eq!(user_version(&home.db()), 2);
    // A row a writer of any schema may hold: no time text, a parsed time all the same.
    let c = knowledge::sources::sqlite::open_writer(&home.db()).expect("open");
    c.execute("UPDATE event_rows SET time = NULL WHERE seq = 7", [])
        .expect("no time");
    drop(c);
    let expected = rows(&home.db());
    assert_ne!(expected, fresh, "the edited row differs");
    assert_eq!(expected.len(), fresh.len());
    upgrade_without_the_transcripts(&home);
    let after = rows(&home.db());
    assert_eq!(
        after, expected,
        "every row as readers see it, and the codes"
    );
    assert_eq!(home.episode_texts(texts.len()), texts);
    assert_eq!(
        search(&home)["items"],
        found["items"],
        "search finds the same events"
    );
    // At 40 events the four key tables' own pages outweigh what the keys save (measured at
    // scale in docs/PERFORMANCE.md); what holds at any size is that it is a fresh store's size.
    let upgraded_bytes = std::fs::metadata(home.db()).expect("db").len();
    assert!(
        upgraded_bytes <= fresh_bytes + 8192,
        "{upgraded_bytes} vs {fresh_bytes}"
    );

    // The vector codes' triggers came across to the new table.
    let c = knowledge::sources::sqlite::open_ro(&home.db()).expect("open");
    let triggers: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'event_rows'",
            [],
            |r| r.get(0),
        )
        .expect("triggers");
    assert!(triggers >= 1, "the vector triggers are on the new table");
}

#[test]
fn a_plain_text_store_is_upgraded_in_place_without_the_transcripts() {
    let (home, texts) = Home::new();
    home.index();
    let fresh_bytes = std::fs::metadata(home.db()).expect("db").len();
    let before = home.episode_texts(texts.len());
    let search = |home: &Home| -> Value {
        serde_json::from_slice(&home.run(&["search", "-q", "backoff service-7 db-10"]))
            .expect("json")
    };
    let found_before = search(&home)["lanes"]["episodes"]["items"].clone();
    assert!(!found_before.as_array().expect("items").is_empty());

    downgrade_to_schema_1(&home.db());
    assert_eq!(user_version(&home.db()), 1);
    let plain_bytes = std::fs::metadata(home.db()).expect("db").len();
    upgrade_without_the_transcripts(&home);
    assert!(packed_rows(&home.db()) > 0);
    assert_eq!(home.episode_texts(texts.len()), before, "the same episodes");
    assert_eq!(before, texts);
    assert_eq!(
        search(&home)["lanes"]["episodes"]["items"],
        found_before,
        "search finds the same events"
    );
    let upgraded_bytes = std::fs::metadata(home.db()).expect("db").len();
    assert!(
        upgraded_bytes < plain_bytes,
        "the upgraded store is smaller: {upgraded_bytes} vs {plain_bytes} bytes plain"
    );
    assert!(
        upgraded_bytes <= fresh_bytes + 8192,
        "{upgraded_bytes} vs {fresh_bytes}"
    );
}

/// The episodes lane of a search for "backoff service-7 db-10" under each time filter a user
/// can give (none, `--since`, `--until`, both), with what each item's time is.
fn time_filtered_answers(home: &Home) -> Vec<Value> {
    let filters: [&[&str]; 4] = [
        &[],
        &["--since", "2026-10-01T10:20:00Z"],
        &["--until", "2026-10-01T10:20:00Z"],
        &[
            "--since",
            "2026-10-01T10:10:00Z",
            "--until",
            "2026-10-01T10:30:00Z",
        ],
    ];
    filters
        .iter()
        .map(|f| {
            let mut args = vec![
                "search",
                "-q",
                "backoff service-7 db-10",
                "--include",
                "episodes",
            ];
            args.extend_from_slice(f);
            let mut v: Value = serde_json::from_slice(&home.run(&args)).expect("json");
            v["lanes"]["episodes"]["items"].take()
        })
        .collect()
}

#[test]
fn a_schema_3_store_loses_its_time_index_and_shares_tool_ids_answering_the_same() {
    let (home, texts) = Home::new();
    let tools = write_tool_session(&home);
    home.index();
    assert_eq!(tool_ids(&home.db(), "s2"), tools, "every tool id read back");
    assert_eq!(
        shared_tool_ids(&home.db()),
        1,
        "only the result right after its call shares the call's id"
    );
    downgrade_to_schema_3(&home.db());
    assert_eq!(shared_tool_ids(&home.db()), 0);
    assert_eq!(tool_ids(&home.db(), "s2"), tools);
    assert_eq!(user_version(&home.db()), 3);
    assert!(has_time_index(&home.db()));
    let expected = rows(&home.db());
    let answers = time_filtered_answers(&home);
    // Each item's time in ms (the transcript writes some with an offset, so text order is not
    // time order).
    let times = |items: &Value| -> Vec<i64> {
        items
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                chrono::DateTime::parse_from_rfc3339(i["time"].as_str().expect("time"))
                    .expect("rfc 3339")
                    .timestamp_millis()
            })
            .collect()
    };
    let at = |t: &str| {
        chrono::DateTime::parse_from_rfc3339(t)
            .expect("rfc 3339")
            .timestamp_millis()
    };
    let (t10, t20, t30) = (
        at("2026-10-01T10:10:00Z"),
        at("2026-10-01T10:20:00Z"),
        at("2026-10-01T10:30:00Z"),
    );
    // The filters do filter (so the comparison below is of answers that differ by filter).
    let all = times(&answers[0]);
    assert!(!all.is_empty());
    let since = times(&answers[1]);
    assert!(
        !since.is_empty() && since.iter().all(|&t| t >= t20),
        "{since:?}"
    );
    let until = times(&answers[2]);
    assert!(
        !until.is_empty() && until.iter().all(|&t| t <= t20),
        "{until:?}"
    );
    let both = times(&answers[3]);
    assert!(both.iter().all(|&t| (t10..=t30).contains(&t)), "{both:?}");
    assert_ne!(since, until);
    let indexed_bytes = std::fs::metadata(home.db()).expect("db").len();

    upgrade_without_the_transcripts(&home);
    assert!(!has_time_index(&home.db()), "the time index is gone");
    assert_eq!(
        shared_tool_ids(&home.db()),
        1,
        "the upgrade shares ids as a fresh index does"
    );
    assert_eq!(rows(&home.db()), expected, "every row, and the codes");
    assert_eq!(home.episode_texts(texts.len()), texts);
    assert_eq!(
        time_filtered_answers(&home),
        answers,
        "every time filter finds the same events in the same order"
    );
    let upgraded_bytes = std::fs::metadata(home.db()).expect("db").len();
    assert!(
        upgraded_bytes < indexed_bytes,
        "{upgraded_bytes} vs {indexed_bytes} with the index"
    );
}
