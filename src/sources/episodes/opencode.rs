//! OpenCode as an agent of the registry: where its database lives, how one is recognised, and
//! the read.
//!
//! OpenCode v1.2+ keeps every session of a machine in one SQLite database,
//! `$XDG_DATA_HOME/opencode/opencode.db` (`opencode-<channel>.db` for other release channels;
//! `OPENCODE_DB` moves it: an absolute path, or a name inside the data directory), written in
//! WAL mode while we read it. A session started by another session's `task` tool has
//! `parent_id` set: it is that session's subagent. Installs before v1.2 (and forks) keep the
//! same records as a JSON tree under `storage/` ([`tree`]). The formats as read are in
//! `docs/EVENTS.md`.

mod db;
mod events;
mod tree;

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::sources::episodes::agent::{
    AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume, StoreKind,
};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::discover::{Layout, TranscriptFile};

/// The OpenCode reader.
pub struct Reader;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`.
fn data_dir(env: &Env) -> Option<PathBuf> {
    env.dir("XDG_DATA_HOME")
        .map(|d| d.join("opencode"))
        .or_else(|| env.home().map(|h| h.join(".local/share/opencode")))
}

/// `opencode.db` or a channel's `opencode-<channel>.db`.
fn is_opencode_db_name(name: &str) -> bool {
    name == "opencode.db"
        || name
            .strip_prefix("opencode-")
            .is_some_and(|rest| rest.len() > 3 && rest.ends_with(".db"))
}

/// A `.db` of another name (an `OPENCODE_DB` override, a fork's `kilo.db`) is OpenCode's when
/// it is SQLite and holds OpenCode's three tables.
fn has_opencode_schema(path: &Path) -> bool {
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
    /// `opencode.db` when there is none yet).
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        let Some(data) = data_dir(env) else {
            return Vec::new();
        };
        let tree = data.join("storage").join("session");
        if let Some(db) = env.dir("OPENCODE_DB") {
            if db.as_os_str() == ":memory:" {
                return Vec::new();
            }
            return vec![if db.is_absolute() { db } else { data.join(db) }, tree];
        }
        let mut dbs: Vec<PathBuf> = std::fs::read_dir(&data)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_opencode_db_name)
            })
            .collect();
        if dbs.is_empty() {
            dbs.push(data.join("opencode.db"));
        }
        dbs.sort();
        dbs.push(tree);
        dbs
    }

    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        let rank = if tree::is_tree_session(path) || is_opencode_db_name(name) {
            Rank::Name
        } else if name.ends_with(".db") && has_opencode_schema(path) {
            Rank::Record(0)
        } else {
            return None;
        };
        Some(Recognised {
            layout: Layout::Main,
            rank,
        })
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
        db::read_db(&file.path, from, limits, sink)
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

    /// A tree's message or part maps to its session file (see [`tree::session_of_change`]).
    /// A write lands in `<db>-wal` first (the database file changes only at a checkpoint).
    /// `-shm` is not followed: readers (this one included) write it.
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        let name = changed.file_name()?.to_str()?;
        if tree::is_tree_session(changed) {
            return Some(changed.to_path_buf());
        }
        if let Some(session) = tree::session_of_change(changed) {
            return Some(session);
        }
        if let Some(db) = name.strip_suffix("-wal").filter(|d| d.ends_with(".db")) {
            return Some(changed.with_file_name(db));
        }
        name.ends_with(".db").then(|| changed.to_path_buf())
    }
}
