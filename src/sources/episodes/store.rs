//! The `episodes.sqlite` schema and how it is opened.
//!
//! One owner writes it (the indexer); everyone else opens it read-only, so the coordinator can
//! never change L1 (KC-13). Raw transcripts are never touched: the store holds redacted event text;
//! its full-text index is Tantivy's, beside the file (`sources::lexical`, schema 5).
//!
//! Event rows live in `event_rows` in as few bytes as they can be given back from: long texts
//! packed (`sources::packed`, schema 2), the session id and the event type as integer keys into
//! `session_keys` / `event_types`, and `time` left out where it is exactly what `time_ms`
//! formats to (schema 3); no index on `time_ms`, and a tool id that is the previous event's
//! (a tool result names the call it answers) stored once (schema 4, see [`upgrade_from_3`]). Every reader reads the view
//! `events`, which has the columns the table had before any of this (`session_id`, `event_type`,
//! `time` and `text` as text), so no query changed. A store of schema 1, 2 or 3 is upgraded in
//! place by the indexer ([`open_rw`]), from its own rows: no transcript is read again, and the
//! sessions of transcripts deleted since stay.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::sources::sqlite;

/// Bumped when the schema changes; an older store is rebuilt from the transcripts, except
/// schemas 1 to 4, which are upgraded in place (see [`upgrade_from_1`], [`upgrade_from_2`],
/// [`upgrade_from_3`], [`upgrade_from_4`]).
pub const SCHEMA_VERSION: i64 = 5;

/// The physical events table (the indexer writes it; readers read the view `events`).
pub const EVENT_ROWS: &str = "event_rows";

/// The events as readers name their columns, with `text` still packed: for a query that only
/// asks whether a text is empty, which needs no unpacking (an LZ4 blob is never empty).
pub const EVENTS_PACKED: &str = "events_packed";

/// The stored `time` of an event whose text time is `?T` and whose parsed time is `?M`: NULL
/// when the time is exactly what [`TIME_OF`] gives back from `time_ms` (nearly every event: the
/// agents write ISO-8601 UTC with milliseconds), an empty blob when there is no time although
/// `time_ms` is set, else the text as written. Checked against the same expression that reads it
/// back, so what `events.time` gives is always the text as written.
const STORED_TIME: &str = "CASE WHEN ?T IS NULL THEN (CASE WHEN ?M IS NULL THEN NULL ELSE x'' END)
     WHEN ?T IS strftime('%Y-%m-%dT%H:%M:%fZ', ?M / 1000.0, 'unixepoch') THEN NULL ELSE ?T END";

/// `events.time` from the stored `time` (`?T`) and `time_ms` (`?M`), the inverse of
/// [`STORED_TIME`].
const TIME_OF: &str =
    "CASE WHEN ?T IS NULL THEN strftime('%Y-%m-%dT%H:%M:%fZ', ?M / 1000.0, 'unixepoch')
     WHEN typeof(?T) = 'blob' THEN NULL ELSE ?T END";

/// `events.tool_use_id` of the row `e`: the stored id, or where the row holds [`SAME_TOOL_ID`]
/// (an empty blob), the previous event's of the session, which is always stored as text (see
/// [`ToolIds`]).
const TOOL_USE_ID_OF: &str = "CASE WHEN typeof(e.tool_use_id) = 'blob' THEN
         (SELECT p.tool_use_id FROM event_rows p
          WHERE p.session_key = e.session_key AND p.seq = e.seq - 1)
         ELSE e.tool_use_id END";

/// What `event_rows.tool_use_id` holds when the id is the previous event's: nothing to tell
/// apart from a real id, which is text.
pub(super) const SAME_TOOL_ID: &[u8] = b"";

/// [`STORED_TIME`] over the SQL expressions `time` and `time_ms`.
pub(super) fn stored_time_sql(time: &str, time_ms: &str) -> String {
    STORED_TIME.replace("?T", time).replace("?M", time_ms)
}

pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    session_id TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    head_hash TEXT NOT NULL,
    resume_hash TEXT NOT NULL DEFAULT '',
    offset INTEGER NOT NULL,
    parser_state TEXT NOT NULL,
    lines INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sessions(
    session_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    cwd TEXT,
    created_at TEXT,
    last_event_at TEXT,
    agent_preset TEXT,
    title TEXT,
    parent_session_id TEXT,
    agent_id TEXT,
    agent_name TEXT,
    agent_description TEXT,
    spawn_tool_use_id TEXT,
    team_name TEXT,
    git_branch TEXT,
    version TEXT,
    outcome TEXT NOT NULL DEFAULT 'unknown',
    live INTEGER NOT NULL DEFAULT 0,
    events INTEGER NOT NULL DEFAULT 0,
    mark INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_cwd ON sessions(cwd);
CREATE TABLE IF NOT EXISTS lexical_pending(key INTEGER PRIMARY KEY);
"#;

/// The events table, its keys and its reading views (schema 3; schema 4 without `events_time`). `text` holds the packed value
/// (TEXT or an LZ4 BLOB, see `sources::packed`); `time` is untyped so that the empty blob of
/// [`STORED_TIME`] stays a blob.
fn events_schema() -> String {
    let time = TIME_OF.replace("?T", "e.time").replace("?M", "e.time_ms");
    let view = |name: &str, text: &str| {
        format!(
            "CREATE VIEW IF NOT EXISTS {name} AS
                SELECT e.id AS id, k.session_id AS session_id, e.seq AS seq,
                       t.name AS event_type, {time} AS time, e.time_ms AS time_ms,
                       {text} AS text, e.human AS human, e.tool_name AS tool_name,
                       {TOOL_USE_ID_OF} AS tool_use_id, e.is_error AS is_error,
                       e.sidechain_agent AS sidechain_agent, e.facts AS facts
                FROM event_rows e JOIN session_keys k ON k.key = e.session_key
                     JOIN event_types t ON t.key = e.type_key;"
        )
    };
    format!(
        "CREATE TABLE IF NOT EXISTS session_keys(
             key INTEGER PRIMARY KEY, session_id TEXT NOT NULL UNIQUE);
         CREATE TABLE IF NOT EXISTS event_types(
             key INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
         CREATE TABLE IF NOT EXISTS event_rows(
             id INTEGER PRIMARY KEY,
             session_key INTEGER NOT NULL,
             seq INTEGER NOT NULL,
             type_key INTEGER NOT NULL,
             time,
             time_ms INTEGER,
             text NOT NULL,
             human INTEGER NOT NULL,
             tool_name TEXT,
             tool_use_id TEXT,
             is_error INTEGER NOT NULL,
             sidechain_agent TEXT,
             facts TEXT,
             UNIQUE(session_key, seq)
         );
         {}
         {}",
        view(
            "events",
            "CASE WHEN typeof(e.text) = 'blob' THEN unpack_text(e.text) ELSE e.text END"
        ),
        view(EVENTS_PACKED, "e.text"),
    )
}

/// Open (creating if needed) the store for writing. Only the indexer calls this.
pub fn open_rw(path: &Path) -> rusqlite::Result<Connection> {
    let conn = sqlite::open_owned(
        path,
        &format!("{SCHEMA}{}", events_schema()),
        SCHEMA_VERSION,
        &[
            (1, upgrade_from_1 as sqlite::Upgrade),
            (2, upgrade_from_2 as sqlite::Upgrade),
            (3, upgrade_from_3 as sqlite::Upgrade),
            (4, upgrade_from_4 as sqlite::Upgrade),
        ],
        "DROP VIEW IF EXISTS events; DROP VIEW IF EXISTS events_packed;
         DROP TABLE IF EXISTS events_fts; DROP TABLE IF EXISTS lexical_pending;
         DROP TABLE IF EXISTS events;
         DROP TABLE IF EXISTS event_rows; DROP TABLE IF EXISTS session_keys;
         DROP TABLE IF EXISTS event_types;
         DROP TABLE IF EXISTS sessions; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS meta;",
    )?;
    // Stores written before the resume-point hash existed gain the column: an empty hash only
    // means the next change to that file is re-read in full, so nothing is rebuilt up front.
    let has_resume_hash = conn
        .prepare("SELECT resume_hash FROM files LIMIT 0")
        .is_ok();
    if !has_resume_hash {
        conn.execute_batch("ALTER TABLE files ADD COLUMN resume_hash TEXT NOT NULL DEFAULT ''")?;
    }
    // Stores written before sessions carried a change mark gain it as 0: the next L3 build is a
    // full one anyway (its store has no marks yet), and every later write gives a fresh mark.
    let has_mark = conn.prepare("SELECT mark FROM sessions LIMIT 0").is_ok();
    if !has_mark {
        conn.execute_batch("ALTER TABLE sessions ADD COLUMN mark INTEGER NOT NULL DEFAULT 0")?;
    }
    Ok(conn)
}

/// Schema 1 → 2: the events move to `event_rows` with their texts packed, same ids (so the
/// full-text index and the vector codes, keyed by id, stay valid), and `events` becomes the
/// view (the schema-2 layout, which [`upgrade_from_2`] then takes further). Runs in the caller's transaction; the space the plain texts took is given back by
/// `VACUUM` after it commits (see `sqlite::open_owned`).
fn upgrade_from_1(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "DROP INDEX IF EXISTS events_time;
         ALTER TABLE events RENAME TO events_v1;
         CREATE TABLE event_rows(id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,
             seq INTEGER NOT NULL, event_type TEXT NOT NULL, time TEXT, time_ms INTEGER,
             text NOT NULL, human INTEGER NOT NULL, tool_name TEXT, tool_use_id TEXT,
             is_error INTEGER NOT NULL, sidechain_agent TEXT, facts TEXT);
         INSERT INTO event_rows(id, session_id, seq, event_type, time, time_ms, text, human,
                                tool_name, tool_use_id, is_error, sidechain_agent, facts)
             SELECT id, session_id, seq, event_type, time, time_ms, pack_text(text), human,
                    tool_name, tool_use_id, is_error, sidechain_agent, facts
             FROM events_v1 ORDER BY id;
         DROP TABLE events_v1;
         CREATE VIEW events AS
             SELECT id, session_id, seq, event_type, time, time_ms,
                    CASE WHEN typeof(text) = 'blob' THEN unpack_text(text) ELSE text END AS text,
                    human, tool_name, tool_use_id, is_error, sidechain_agent, facts
             FROM event_rows;",
    )
}

/// Schema 2 → 3: the session ids and event types become keys, `time` is dropped where
/// `time_ms` gives it back, the files' parser states are packed; same ids and the same packed texts (so the full-text index and the
/// vector codes stay valid). The triggers the vector codes keep on `event_rows` are recreated
/// on the new table as they were.
fn upgrade_from_2(conn: &Connection) -> rusqlite::Result<()> {
    let triggers: Vec<String> = conn
        .prepare(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'event_rows'",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    conn.execute_batch(
        "DROP VIEW IF EXISTS events;
         DROP INDEX IF EXISTS events_time;
         ALTER TABLE event_rows RENAME TO event_rows_v2;",
    )?;
    conn.execute_batch(&events_schema())?;
    conn.execute_batch(&format!(
        "INSERT INTO session_keys(session_id)
             SELECT DISTINCT session_id FROM event_rows_v2 ORDER BY session_id;
         INSERT INTO event_types(name)
             SELECT DISTINCT event_type FROM event_rows_v2 ORDER BY event_type;
         INSERT INTO event_rows(id, session_key, seq, type_key, time, time_ms, text, human,
                                tool_name, tool_use_id, is_error, sidechain_agent, facts)
             SELECT v.id, k.key, v.seq, t.key, {}, v.time_ms, v.text, v.human,
                    v.tool_name, v.tool_use_id, v.is_error, v.sidechain_agent, v.facts
             FROM event_rows_v2 v JOIN session_keys k ON k.session_id = v.session_id
                  JOIN event_types t ON t.name = v.event_type
             ORDER BY v.id;
         DROP TABLE event_rows_v2;
         UPDATE files SET parser_state = pack_text(parser_state);",
        stored_time_sql("v.time", "v.time_ms")
    ))?;
    for sql in triggers {
        conn.execute_batch(&sql)?;
    }
    Ok(())
}

/// Schema 3 → 4: the index on `time_ms` goes, and a tool id that is the previous event's is
/// stored once (each about a twentieth of the store at 2,000 sessions, see docs/PERFORMANCE.md,
/// "Issue 21, store (second pass)"). No query needs the index: the time filters (`--since`,
/// `--until`) only ever narrow rows that a full-text match, a vector hit (by id) or a session
/// (by `(session_key, seq)`) already names, and SQLite's planner picked it for none of them.
/// Ids, texts, the full-text index and the vector codes stay as they are.
fn upgrade_from_3(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "DROP INDEX IF EXISTS events_time;
         DROP VIEW IF EXISTS events; DROP VIEW IF EXISTS events_packed;",
    )?;
    conn.execute_batch(&events_schema())?;
    share_tool_ids(conn)
}

/// Schema 4 → 5: the full-text index leaves the store for Tantivy beside it
/// (`sources::lexical`), which the next index run builds from the stored events (the store it
/// was built from has no id yet, so it is made anew); `lexical_pending` names the sessions whose
/// events changed since that index's last commit.
fn upgrade_from_4(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "DROP TABLE IF EXISTS events_fts;
         CREATE TABLE IF NOT EXISTS lexical_pending(key INTEGER PRIMARY KEY);",
    )
}

/// Stores [`SAME_TOOL_ID`] for every tool id that is the previous event's, by the rule the
/// indexer writes with ([`ToolIds`]).
fn share_tool_ids(conn: &Connection) -> rusqlite::Result<()> {
    let mut same = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT id, session_key, seq, tool_use_id FROM event_rows ORDER BY session_key, seq",
        )?;
        let mut rows = stmt.query([])?;
        let (mut ids, mut last) = (ToolIds::default(), None);
        while let Some(r) = rows.next()? {
            let (id, key, seq): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
            if last != Some((key, seq - 1)) {
                ids = ToolIds::default();
            }
            last = Some((key, seq));
            if ids.same(r.get::<_, Option<String>>(3)?.as_deref()) {
                same.push(id);
            }
        }
    }
    let mut update = conn.prepare("UPDATE event_rows SET tool_use_id = ?2 WHERE id = ?1")?;
    for id in same {
        update.execute(rusqlite::params![id, SAME_TOOL_ID])?;
    }
    Ok(())
}

/// Which of a session's tool ids, in seq order, are stored as [`SAME_TOOL_ID`]: an id equal to
/// the previous event's, when that one is stored as text (so [`TOOL_USE_ID_OF`] reads it in
/// one step; a third event with the same id stores it again).
#[derive(Default)]
pub(super) struct ToolIds {
    /// The previous event's id, when it is stored as text.
    prev: Option<String>,
}

impl ToolIds {
    /// The rule for the events after `seq` of the session `session_key` (its stored id).
    pub(super) fn after(conn: &Connection, session_key: i64, seq: i64) -> rusqlite::Result<Self> {
        let prev = conn
            .prepare_cached(
                "SELECT tool_use_id FROM event_rows WHERE session_key = ?1 AND seq = ?2",
            )?
            .query_row([session_key, seq], |r| match r.get_ref(0)? {
                rusqlite::types::ValueRef::Text(t) => {
                    Ok(Some(String::from_utf8_lossy(t).into_owned()))
                }
                _ => Ok(None),
            })
            .optional()?
            .flatten();
        Ok(ToolIds { prev })
    }

    /// Whether the next event's `id` is stored as [`SAME_TOOL_ID`].
    pub(super) fn same(&mut self, id: Option<&str>) -> bool {
        let same = id.is_some() && id == self.prev.as_deref();
        self.prev = if same { None } else { id.map(str::to_string) };
        same
    }
}

/// The integer key `session_id`'s events are stored under (a new one for a new session).
pub(super) fn session_key(conn: &Connection, session_id: &str) -> rusqlite::Result<i64> {
    conn.prepare_cached("INSERT OR IGNORE INTO session_keys(session_id) VALUES(?1)")?
        .execute([session_id])?;
    conn.prepare_cached("SELECT key FROM session_keys WHERE session_id = ?1")?
        .query_row([session_id], |r| r.get(0))
}

/// The keys of the event types met so far in one write (a handful of names per store).
#[derive(Default)]
pub(super) struct EventTypes(HashMap<String, i64>);

impl EventTypes {
    /// The integer key `name` is stored under (a new one for a new type).
    pub(super) fn key(&mut self, conn: &Connection, name: &str) -> rusqlite::Result<i64> {
        if let Some(&k) = self.0.get(name) {
            return Ok(k);
        }
        conn.prepare_cached("INSERT OR IGNORE INTO event_types(name) VALUES(?1)")?
            .execute([name])?;
        let k = conn
            .prepare_cached("SELECT key FROM event_types WHERE name = ?1")?
            .query_row([name], |r| r.get(0))?;
        self.0.insert(name.to_string(), k);
        Ok(k)
    }
}

pub use crate::sources::sqlite::{meta_get, meta_set, open_ro};
