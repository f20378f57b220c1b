//! Which changed paths matter to which stage: a transcript under a session root, a code file
//! under a code root (not in a VCS or vendored folder, not in the data dir itself, whose SQLite
//! writes would otherwise wake the watcher forever), a file under a skill or agent folder.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use notify::event::{AccessKind, AccessMode, EventKind, MetadataKind, ModifyKind};

use crate::indexing::IndexPlan;
use crate::sources::code::lang::{VCS_DIRS, VENDORED_DIRS};
use crate::sources::episodes::agents::{store_of_change, watch_beside};

/// The stages a batch of changes asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dirty {
    /// Transcripts changed: these (named as `knowledge index` names them under their root) …
    pub session_files: BTreeSet<PathBuf>,
    /// … or every session root (a new folder, a lost event, the first pass).
    pub all_sessions: bool,
    pub code: bool,
    pub skills: bool,
}

impl Dirty {
    /// Everything: the first pass, or after the watcher lost events.
    pub fn everything() -> Dirty {
        Dirty {
            all_sessions: true,
            code: true,
            skills: true,
            ..Dirty::default()
        }
    }

    pub fn sessions(&self) -> bool {
        self.all_sessions || !self.session_files.is_empty()
    }

    pub fn any(&self) -> bool {
        self.sessions() || self.code || self.skills
    }

    pub fn merge(&mut self, other: Dirty) {
        self.session_files.extend(other.session_files);
        self.all_sessions |= other.all_sessions;
        self.code |= other.code;
        self.skills |= other.skills;
    }
}

/// The watched roots of a plan, canonical, with the data dir to ignore.
#[derive(Debug, Clone)]
pub struct Scope {
    /// (canonical, as given): events arrive under the canonical form, the index knows a
    /// transcript by its path under the root as given.
    sessions: Vec<(PathBuf, PathBuf)>,
    /// Folders outside the session roots that their stores read from (an OpenCode tree's
    /// `storage/`), canonical; their changes map to a store under a root.
    beside: Vec<PathBuf>,
    code: Vec<PathBuf>,
    skills: Vec<PathBuf>,
    data_dir: PathBuf,
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl Scope {
    pub fn new(data_dir: &Path, plan: &IndexPlan) -> Scope {
        let existing = |v: &[PathBuf]| -> Vec<PathBuf> {
            v.iter()
                .filter(|p| p.exists())
                .map(|p| canonical(p))
                .collect()
        };
        let sessions: Vec<(PathBuf, PathBuf)> = plan
            .sessions
            .iter()
            .filter(|p| p.exists())
            .map(|p| (canonical(p), p.clone()))
            .collect();
        let beside = sessions
            .iter()
            .flat_map(|(c, _)| watch_beside(c))
            .filter(|p| p.is_dir())
            .collect();
        Scope {
            sessions,
            beside,
            code: existing(&plan.code),
            skills: existing(
                &plan
                    .skills
                    .iter()
                    .chain(&plan.agents)
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
            data_dir: canonical(data_dir),
        }
    }

    /// Every root to watch, without duplicates and without roots inside another watched root.
    pub fn roots(&self) -> Vec<PathBuf> {
        // A database root (`opencode.db`) is watched through its folder: its writes land in
        // the `-wal` file beside it.
        let session_dirs: Vec<PathBuf> = self
            .sessions
            .iter()
            .map(|(c, _)| match c.parent() {
                Some(dir) if c.is_file() => dir.to_path_buf(),
                _ => c.clone(),
            })
            .collect();
        let mut all: Vec<PathBuf> = session_dirs
            .iter()
            .chain(&self.beside)
            .chain(&self.code)
            .chain(&self.skills)
            .cloned()
            .collect();
        all.sort();
        all.dedup();
        let outer: Vec<PathBuf> = all
            .iter()
            .filter(|p| !all.iter().any(|q| q != *p && p.starts_with(q)))
            .cloned()
            .collect();
        outer
    }

    /// The stages one file-system event asks for.
    pub fn classify(&self, kind: &EventKind, paths: &[PathBuf]) -> Dirty {
        let mut d = Dirty::default();
        if !is_content_change(kind) {
            return d;
        }
        for p in paths {
            if p.starts_with(&self.data_dir) {
                continue;
            }
            // The store may sit under another root than the path (an OpenCode part maps to
            // its session file under `storage/session`).
            match store_of_change(p) {
                Some(store) => {
                    if let Some((c, given)) =
                        self.sessions.iter().find(|(c, _)| store.starts_with(c))
                    {
                        if store.is_dir() {
                            // The reader could not tell which of the stores there changed.
                            d.all_sessions = true;
                        } else {
                            match store.strip_prefix(c) {
                                Ok(rel) if !rel.as_os_str().is_empty() => {
                                    d.session_files.insert(given.join(rel))
                                }
                                _ => d.session_files.insert(given.clone()),
                            };
                        }
                    }
                }
                None => {
                    let in_scope = self.sessions.iter().any(|(c, _)| p.starts_with(c))
                        || self.beside.iter().any(|b| p.starts_with(b));
                    if in_scope && p.is_dir() {
                        // A new folder: its first transcript may predate the watch on it.
                        d.all_sessions = true;
                    }
                }
            }
            if let Some(root) = self.code.iter().find(|r| p.starts_with(r)) {
                if !in_skipped_dir(root, p) {
                    d.code = true;
                }
            }
            if self.skills.iter().any(|r| p.starts_with(r)) {
                d.skills = true;
            }
        }
        d
    }
}

/// Whether the event may change what a file holds (reads and permission changes do not).
fn is_content_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(m)) => {
            matches!(m, MetadataKind::WriteTime | MetadataKind::Any)
        }
        _ => true,
    }
}

fn in_skipped_dir(root: &Path, p: &Path) -> bool {
    let Ok(rel) = p.strip_prefix(root) else {
        return false;
    };
    rel.components().any(|c| {
        let name = c.as_os_str().to_string_lossy();
        VCS_DIRS.contains(&name.as_ref()) || VENDORED_DIRS.contains(&name.as_ref())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::CreateKind;

    #[test]
    fn changes_are_sorted_to_their_stages() {
        let dir = tempfile::tempdir().unwrap();
        let base = canonical(dir.path());
        for d in ["sessions", "repo/src", "repo/target", "skills", "data"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        let plan = IndexPlan {
            sessions: vec![base.join("sessions")],
            code: vec![base.join("repo")],
            skills: vec![base.join("skills")],
            agents: Vec::new(),
            rebuild: false,
        };
        let scope = Scope::new(&base.join("repo/data"), &plan);
        let write = EventKind::Modify(ModifyKind::Data(notify::event::DataChange::Any));
        let at = |p: &str| scope.classify(&write, &[base.join(p)]);
        assert_eq!(
            at("sessions/p/a.jsonl").session_files,
            BTreeSet::from([base.join("sessions/p/a.jsonl")])
        );
        assert!(at("sessions").all_sessions, "a folder asks for a full pass");
        assert!(!at("sessions/p/notes.txt").any());
        assert!(at("repo/src/lib.rs").code);
        assert!(
            !at("repo/target/debug/x").any(),
            "build output wakes nobody"
        );
        assert!(!at("repo/.git/index").any());
        assert!(
            !at("repo/data/episodes.sqlite-wal").any(),
            "own writes ignored"
        );
        assert!(at("skills/s/SKILL.md").skills);
        let read = EventKind::Access(AccessKind::Open(AccessMode::Read));
        assert!(!scope.classify(&read, &[base.join("repo/src/lib.rs")]).any());
        let created = EventKind::Create(CreateKind::File);
        assert!(
            scope
                .classify(&created, &[base.join("skills/t/SKILL.md")])
                .skills
        );
        assert_eq!(scope.roots().len(), 3);
    }

    #[test]
    fn a_database_root_is_watched_through_its_folder_and_its_wal() {
        let dir = tempfile::tempdir().unwrap();
        let base = canonical(dir.path());
        let db = base.join("opencode/opencode.db");
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        std::fs::write(&db, b"x").unwrap();
        let plan = IndexPlan {
            sessions: vec![db.clone()],
            code: Vec::new(),
            skills: Vec::new(),
            agents: Vec::new(),
            rebuild: false,
        };
        let scope = Scope::new(&base.join("data"), &plan);
        assert_eq!(scope.roots(), vec![base.join("opencode")]);
        let write = EventKind::Modify(ModifyKind::Data(notify::event::DataChange::Any));
        let at = |p: &str| scope.classify(&write, &[base.join(p)]);
        assert_eq!(
            at("opencode/opencode.db-wal").session_files,
            BTreeSet::from([db.clone()])
        );
        assert_eq!(
            at("opencode/opencode.db").session_files,
            BTreeSet::from([db])
        );
        assert!(
            !at("opencode/opencode.db-shm").any(),
            "readers write the shm"
        );
        assert!(!at("opencode/log/2026.log").any());
    }

    #[test]
    fn an_opencode_tree_part_or_message_maps_to_its_session_file() {
        let dir = tempfile::tempdir().unwrap();
        let base = canonical(dir.path());
        let storage = base.join("opencode/storage");
        let session = storage.join("session/global/ses_a.json");
        for d in ["session/global", "message/ses_a", "part/msg_1"] {
            std::fs::create_dir_all(storage.join(d)).unwrap();
        }
        std::fs::write(&session, b"{}").unwrap();
        std::fs::write(storage.join("message/ses_a/msg_1.json"), b"{}").unwrap();
        let part = storage.join("part/msg_1/prt_1.json");
        std::fs::write(
            &part,
            br#"{"id":"prt_1","sessionID":"ses_a","messageID":"msg_1"}"#,
        )
        .unwrap();
        // Flat parts: one naming only its message, one naming nothing that can be found.
        std::fs::write(storage.join("part/prt_2.json"), br#"{"messageID":"msg_1"}"#).unwrap();
        std::fs::write(storage.join("part/prt_3.json"), b"{\"id\":").unwrap();
        // A part whose ids point out of the tree is not followed there.
        std::fs::write(base.join("opencode/x.json"), b"{}").unwrap();
        std::fs::write(
            storage.join("part/prt_4.json"),
            br#"{"sessionID":"../../../x","messageID":"../x"}"#,
        )
        .unwrap();
        let plan = IndexPlan {
            sessions: vec![storage.join("session")],
            code: Vec::new(),
            skills: Vec::new(),
            agents: Vec::new(),
            rebuild: false,
        };
        let scope = Scope::new(&base.join("data"), &plan);
        assert_eq!(
            scope.roots(),
            vec![storage.clone()],
            "the tree's storage is watched"
        );
        let write = EventKind::Modify(ModifyKind::Data(notify::event::DataChange::Any));
        let at = |p: &str| scope.classify(&write, &[storage.join(p)]);
        let just_session = BTreeSet::from([session.clone()]);
        assert_eq!(at("part/msg_1/prt_1.json").session_files, just_session);
        assert_eq!(at("message/ses_a/msg_1.json").session_files, just_session);
        assert_eq!(at("part/prt_2.json").session_files, just_session);
        // A part folder whose message is not written yet, a part that cannot be read: every
        // tree session is checked (unchanged ones are skipped by fingerprint).
        assert!(at("part/prt_3.json").all_sessions);
        let outside = at("part/prt_4.json");
        assert!(outside.all_sessions && outside.session_files.is_empty());
        std::fs::create_dir_all(storage.join("part/msg_9")).unwrap();
        assert!(at("part/msg_9").all_sessions);
        assert!(
            !at("part/msg_1/.oc-prt_1.json.1.2.tmp").any(),
            "a writer's temp file"
        );
        assert!(!at("migration").any());
    }
}
