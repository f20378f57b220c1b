//! Kilo Code: two stores, each read by the reader of the layout it shares.
//!
//! Today's Kilo Code (the `kilo` CLI, and the VS Code extension rebuilt on it in 2026) is a fork
//! of OpenCode and keeps OpenCode's database: `$XDG_DATA_HOME/kilo/kilo.db` (default
//! `~/.local/share/kilo`; `kilo-<channel>.db` for other channels; `KILO_DB` names another file,
//! absolute or inside the data directory), read by OpenCode's reader
//! ([`super::opencode::read_database`], parameterised by [`KILO_DB`]). A child session
//! (`parent_id`) is its parent's subagent, as in OpenCode. Resume: `kilo --session <ses_…>`.
//!
//! The extension before that was a fork of Roo Code and kept Roo's task folders,
//! `<globalStorage>/kilocode.kilo-code/tasks/<uuid>/` (`ui_messages.json`,
//! `api_conversation_history.json`, `task_metadata.json` with `files_in_context` only), read by
//! the task-folder reader ([`super::vscode_tasks`]); with no history item there, the cwd comes
//! from the environment details and no task names a parent. Those tasks have no command that
//! resumes them (the `kilo` CLI only opens sessions of its database).
//!
//! Checked against Kilo-Org/kilocode `packages/opencode/src/storage/db.ts` through the shared
//! facts in `FORMATS-next.md`, and the resume command against its TUI command
//! (`packages/opencode/src/cli/cmd/tui/thread.ts` @ 0c35781b: `--session`, alias `-s`, "session
//! id to continue"; read, nothing copied). Not confirmed: the legacy extension's own writer.

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::agent::{
    AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume, StoreKind,
};
use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::opencode::{db_of_change, read_database, DbFlavour};
use super::vscode_tasks::{
    extension_task_roots, read_task, recognise_task, sidecars_modified, task_of_change, KILO,
};

/// Kilo Code's database: OpenCode's layout under another name.
pub(crate) const KILO_DB: DbFlavour = DbFlavour {
    dir: "kilo",
    env: "KILO_DB",
};

/// The Kilo Code reader.
pub struct Reader;

fn is_kilo_db(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| KILO_DB.is_db_name(n))
}

impl AgentReader for Reader {
    fn agent(&self) -> Agent {
        Agent::KiloCode
    }

    fn name(&self) -> &'static str {
        "kilo_code"
    }

    fn label(&self) -> &'static str {
        "Kilo Code"
    }

    fn store_kind(&self, path: &Path) -> StoreKind {
        if path.extension().is_some_and(|e| e == "db") {
            StoreKind::Database
        } else {
            StoreKind::Rewritten
        }
    }

    /// The database (`KILO_DB`, else every `kilo*.db` of the data directory), then the legacy
    /// extension's `tasks/` in every VS Code build's globalStorage.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        let mut roots = KILO_DB.db_roots(env);
        roots.extend(extension_task_roots(&KILO, env));
        roots
    }

    /// `kilo.db` by name; a database named by `KILO_DB` is claimed by OpenCode's reader (same
    /// schema) unless its name says Kilo. The legacy task folders by place.
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        if is_kilo_db(path) {
            // A file that is no database is still claimed by name, and reported unreadable.
            return Some(Recognised {
                layout: Layout::Main,
                rank: Rank::Name,
            });
        }
        recognise_task(&KILO, path)
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        if file.path.extension().is_some_and(|e| e == "db") {
            return read_database(&file.path, from, limits, sink);
        }
        read_task(file, limits, sink)
    }

    /// `kilo --session <id>` for a session of the database (`ses_…`); a legacy task has none.
    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        quoted_session_id
            .starts_with("ses_")
            .then(|| format!("kilo --session {quoted_session_id}"))
    }

    fn parts_modified(&self, path: &Path) -> Option<SystemTime> {
        sidecars_modified(path)
    }

    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        let name = changed.file_name()?.to_str()?;
        let db = name.strip_suffix("-wal").unwrap_or(name);
        if KILO_DB.is_db_name(db) {
            return db_of_change(changed);
        }
        task_of_change(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kilo_roots_honour_kilo_db_and_xdg_data_home() {
        let env = Env::of(&[
            ("HOME", Path::new("/h")),
            ("XDG_DATA_HOME", Path::new("/data")),
        ]);
        let roots = Reader.roots(&env);
        assert_eq!(roots[0], PathBuf::from("/data/kilo/kilo.db"));
        assert!(roots.contains(&PathBuf::from(
            "/h/.config/Code/User/globalStorage/kilocode.kilo-code/tasks"
        )));
        let env = Env::of(&[("HOME", Path::new("/h")), ("KILO_DB", Path::new("dev.db"))]);
        assert_eq!(
            Reader.roots(&env)[0],
            PathBuf::from("/h/.local/share/kilo/dev.db")
        );
        let env = Env::of(&[("HOME", Path::new("/h")), ("KILO_DB", Path::new("/x/k.db"))]);
        assert_eq!(Reader.roots(&env)[0], PathBuf::from("/x/k.db"));
    }

    #[test]
    fn kilo_names_and_changes() {
        assert!(KILO_DB.is_db_name("kilo.db"));
        assert!(KILO_DB.is_db_name("kilo-beta.db"));
        assert!(!KILO_DB.is_db_name("kilo-.db"));
        assert!(!KILO_DB.is_db_name("opencode.db"));
        let d = Path::new("/s/kilo");
        assert_eq!(
            Reader.store_of_change(&d.join("kilo.db-wal")),
            Some(d.join("kilo.db"))
        );
        assert_eq!(Reader.store_of_change(&d.join("kilo.db-shm")), None);
        assert_eq!(
            Reader.resume_command("ses_1a2b").as_deref(),
            Some("kilo --session ses_1a2b")
        );
        assert_eq!(
            Reader.resume_command("0f1e2d3c-0000-4000-8000-000000000000"),
            None
        );
    }
}
