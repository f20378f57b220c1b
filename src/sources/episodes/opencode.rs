//! OpenCode as an agent of the registry: where its database lives, how one is recognised, and
//! the read.
//!
//! OpenCode v1.2+ keeps every session of a machine in one SQLite database,
//! `$XDG_DATA_HOME/opencode/opencode.db` (`opencode-<channel>.db` for other release channels;
//! `OPENCODE_DB` moves it: an absolute path, or a name inside the data directory), written in
//! WAL mode while we read it. A session started by another session's `task` tool has
//! `parent_id` set: it is that session's subagent. Installs before v1.2 (and forks) keep the
//! same records as a JSON tree under `storage/` ([`tree`]). Kilo Code's `kilo.db` has the same
//! schema and is read by this reader's database read ([`read_database`], [`DbFlavour`]) for the
//! Kilo Code agent ([`super::kilo`]). The formats as read are in `docs/formats/databases.md`.

mod db;
mod events;
mod tree;

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::sources::episodes::agent::{
    AgentReader, Env, EventSink, Head, ReadEnd, ReadLimits, Recognised, Resume, StoreKind,
};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::discover::TranscriptFile;

/// The OpenCode reader.
pub struct Reader;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What sets apart the agents that keep OpenCode's database: OpenCode and its fork Kilo Code
/// (`~/.local/share/kilo/kilo.db`, `KILO_DB`), read by this one reader.
pub(crate) struct DbFlavour {
    /// The data directory's name under `$XDG_DATA_HOME` and the database's name (`<dir>.db`,
    /// a channel's `<dir>-<channel>.db`).
    pub dir: &'static str,
    /// The variable naming another database (absolute, or a name inside the data directory).
    pub env: &'static str,
}

pub(crate) const OPENCODE: DbFlavour = DbFlavour {
    dir: "opencode",
    env: "OPENCODE_DB",
};

/// `$XDG_DATA_HOME/<dir>`, else `~/.local/share/<dir>`.
fn data_dir(flavour: &DbFlavour, env: &Env) -> Option<PathBuf> {
    env.dir("XDG_DATA_HOME")
        .map(|d| d.join(flavour.dir))
        .or_else(|| env.home().map(|h| h.join(".local/share").join(flavour.dir)))
}

impl DbFlavour {
    /// `<dir>.db` or a channel's `<dir>-<channel>.db`.
    pub(crate) fn is_db_name(&self, name: &str) -> bool {
        name.strip_suffix(".db").is_some_and(|stem| {
            stem == self.dir
                || stem
                    .strip_prefix(self.dir)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|channel| !channel.is_empty())
        })
    }

    /// The variable's database when set (none for `:memory:`), else every `<dir>*.db` in the
    /// data directory (the default `<dir>.db` when there is none yet).
    pub(crate) fn db_roots(&self, env: &Env) -> Vec<PathBuf> {
        let Some(data) = data_dir(self, env) else {
            return Vec::new();
        };
        if let Some(db) = env.dir(self.env) {
            if db.as_os_str() == ":memory:" {
                return Vec::new();
            }
            return vec![if db.is_absolute() { db } else { data.join(db) }];
        }
        let mut dbs: Vec<PathBuf> = std::fs::read_dir(&data)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| self.is_db_name(n))
            })
            .collect();
        if dbs.is_empty() {
            dbs.push(data.join(format!("{}.db", self.dir)));
        }
        dbs.sort();
        dbs
    }
}

/// `opencode.db` or a channel's `opencode-<channel>.db`.
fn is_opencode_db_name(name: &str) -> bool {
    OPENCODE.is_db_name(name)
}

/// Reads every changed session of an OpenCode-layout database (OpenCode's, Kilo Code's).
pub(crate) fn read_database(
    path: &Path,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    db::read_db(path, from, limits, sink)
}

/// A database's write lands in `<db>-wal` first (the database file changes only at a
/// checkpoint): the `-wal` maps to the database, a `.db` to itself. `-shm` is not followed:
/// readers (this one included) write it.
pub(crate) fn db_of_change(changed: &Path) -> Option<PathBuf> {
    let name = changed.file_name()?.to_str()?;
    if let Some(db) = name.strip_suffix("-wal").filter(|d| d.ends_with(".db")) {
        return Some(changed.with_file_name(db));
    }
    name.ends_with(".db").then(|| changed.to_path_buf())
}

/// A `.db` of another name (an `OPENCODE_DB` override, a fork's `kilo.db`) is OpenCode's when
/// it is SQLite and holds OpenCode's three tables.
pub(crate) fn has_opencode_schema(path: &Path) -> bool {
    let mut magic = [0u8; 16];
    let is_sqlite = crate::sources::regular_file::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == SQLITE_MAGIC;
    if !is_sqlite {
        return false;
    }
    let Ok(conn) = crate::sources::agent_db::AgentDb::open(path) else {
        return false;
    };
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type='table'
           AND name IN ('session', 'message', 'part')",
        [],
        |r| r.get::<_, i64>(0),
    )
    .is_ok_and(|n| n == 3)
}

impl AgentReader for Reader {
    fn agent(&self) -> Agent {
        Agent::OpenCode
    }

    fn name(&self) -> &'static str {
        "opencode"
    }

    fn label(&self) -> &'static str {
        "OpenCode"
    }

    fn store_kind(&self, path: &Path) -> StoreKind {
        if tree::is_tree_session(path) {
            StoreKind::Rewritten
        } else {
            StoreKind::Database
        }
    }

    /// `OPENCODE_DB` when set, else every `opencode*.db` in the data directory (the default
    /// `opencode.db` when there is none yet), then the tree's `storage/session`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        let Some(data) = data_dir(&OPENCODE, env) else {
            return Vec::new();
        };
        let mut roots = OPENCODE.db_roots(env);
        if env
            .dir(OPENCODE.env)
            .is_some_and(|d| d.as_os_str() == ":memory:")
        {
            return roots;
        }
        roots.push(data.join("storage").join("session"));
        roots
    }

    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        let in_place = tree::is_tree_session(path) || is_opencode_db_name(name);
        Recognised::database(path, in_place, has_opencode_schema)
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        if tree::is_tree_session(&file.path) {
            return tree::read_tree_session(&file.path, limits, sink);
        }
        read_database(&file.path, from, limits, sink)
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("opencode --session {quoted_session_id}"))
    }

    /// A tree session's message and part files (OpenCode writes a part without touching the
    /// session file).
    fn parts_modified(&self, path: &Path) -> Option<std::time::SystemTime> {
        tree::is_tree_session(path)
            .then(|| tree::parts_modified(path))
            .flatten()
    }

    /// A tree root (`storage/session`) reads its sessions' messages and parts from beside it.
    fn watch_beside(&self, root: &Path) -> Vec<PathBuf> {
        tree::storage_beside(root).into_iter().collect()
    }

    /// A tree's message or part maps to its session file (see [`tree::session_of_change`]);
    /// a database's change, see [`db_of_change`].
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        if tree::is_tree_session(changed) {
            return Some(changed.to_path_buf());
        }
        if let Some(session) = tree::session_of_change(changed) {
            return Some(session);
        }
        db_of_change(changed)
    }
}
