//! Which changed paths matter to which stage: a transcript under a session root, a code file
//! under a code root (not in a VCS or vendored folder, not in the data dir itself, whose SQLite
//! writes would otherwise wake the watcher forever), a file under a skill or agent folder.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use notify::event::{AccessKind, AccessMode, EventKind, MetadataKind, ModifyKind};

use crate::indexing::IndexPlan;
use crate::sources::code::lang::{VCS_DIRS, VENDORED_DIRS};
use crate::sources::episodes::agents::store_of_change;

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
        Scope {
            sessions: plan
                .sessions
                .iter()
                .filter(|p| p.exists())
                .map(|p| (canonical(p), p.clone()))
                .collect(),
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
        let mut all: Vec<PathBuf> = self
            .sessions
            .iter()
            .map(|(c, _)| c)
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
            if let Some((canonical, given)) = self.sessions.iter().find(|(c, _)| p.starts_with(c)) {
                if let Some(store) = store_of_change(p) {
                    let rel = store.strip_prefix(canonical).unwrap_or(&store);
                    d.session_files.insert(given.join(rel));
                } else if p.is_dir() {
                    // A new folder: its first transcript may predate the watch on it.
                    d.all_sessions = true;
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
}
