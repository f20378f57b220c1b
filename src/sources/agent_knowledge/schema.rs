//! The `knowledge.sqlite` schema (L3) and how it is opened.
//!
//! Everything but `ak_assignment` (its schema and its writes are in [`super::assignments`]) is
//! derived: the builder writes a fresh file and renames it over the old one, so there are no
//! migrations: a schema change only bumps [`SCHEMA_VERSION`] and the next build writes the new
//! layout. The store keeps the default rollback journal (never WAL) so a finished file is
//! self-contained when it is renamed into place.

/// Bumped when the layout changes (it is part of the store's `index_rev`).
pub const SCHEMA_VERSION: i64 = 3;

/// Tables of the store. No column holds raw session or code text: only ids, locators, names,
/// tags, outcomes and counts, plus catalog text from `SKILL.md`/agent files.
pub const SCHEMA: &str = r#"
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ak_skill(
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    when_to_use TEXT,
    content_hash TEXT NOT NULL,
    plugin TEXT,
    kind TEXT NOT NULL,
    tags TEXT NOT NULL,
    vector BLOB
);
CREATE INDEX ak_skill_name ON ak_skill(name);
CREATE TABLE ak_agent_def(
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    model TEXT,
    tools TEXT NOT NULL,
    content_hash TEXT NOT NULL
);
CREATE TABLE ak_actor(
    actor_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    root_session TEXT NOT NULL,
    first_seen TEXT,
    last_seen TEXT,
    last_seen_ms INTEGER,
    sessions INTEGER NOT NULL,
    events INTEGER NOT NULL,
    skill_uses INTEGER NOT NULL,
    edits INTEGER NOT NULL,
    outcome_success INTEGER NOT NULL,
    outcome_failure INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    definition TEXT
);
CREATE TABLE ak_actor_session(
    actor_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    sidechain_agent TEXT NOT NULL DEFAULT '',
    events INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY(actor_id, session_id, role, sidechain_agent)
);
CREATE INDEX ak_actor_session_session ON ak_actor_session(session_id);
CREATE TABLE ak_skill_use(
    id INTEGER PRIMARY KEY,
    actor_id TEXT NOT NULL,
    skill_name TEXT NOT NULL,
    skill_base TEXT NOT NULL,
    skill_plugin TEXT,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    time TEXT,
    time_ms INTEGER,
    via TEXT NOT NULL,
    outcome TEXT NOT NULL
);
CREATE INDEX ak_skill_use_base ON ak_skill_use(skill_base);
CREATE INDEX ak_skill_use_actor ON ak_skill_use(actor_id);
CREATE TABLE ak_edit(
    id INTEGER PRIMARY KEY,
    actor_id TEXT NOT NULL,
    path TEXT NOT NULL,
    abs_path TEXT,
    rel_path TEXT,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    time TEXT,
    time_ms INTEGER
);
CREATE INDEX ak_edit_path ON ak_edit(path);
CREATE INDEX ak_edit_abs ON ak_edit(abs_path);
CREATE INDEX ak_edit_actor ON ak_edit(actor_id);
CREATE TABLE ak_activity(
    session_id TEXT NOT NULL,
    sidechain_agent TEXT NOT NULL DEFAULT '',
    hour INTEGER NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY(session_id, sidechain_agent, hour)
);
CREATE INDEX ak_activity_hour ON ak_activity(hour);
"#;

/// The change mark of every session the store was derived from, and its family
/// (`derive::family`), so the next build derives again only the families whose sessions changed
/// (`build/incremental.rs`). Written only when the source keeps marks; no reader uses it.
pub const MARKS_SCHEMA: &str = "
CREATE TABLE ak_session_mark(
    session_id TEXT PRIMARY KEY,
    family TEXT NOT NULL,
    mark INTEGER NOT NULL
) WITHOUT ROWID;
";

/// Readers open the store read-only (they never write L3; only dispatch writes assignments),
/// the same way as every other store.
pub use crate::sources::sqlite::{meta_get, open_ro};
