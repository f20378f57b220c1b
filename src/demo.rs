//! The bundled demo world: copied into a fresh directory with its `@DEMO@` placeholder replaced
//! by that directory's absolute path, so session `cwd`s and repository roots agree on a real
//! machine and the world can be indexed like anyone's own data.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The placeholder the demo transcripts use for the world's root.
pub const PLACEHOLDER: &str = "@DEMO@";

/// Where the bundled world lives in a source checkout.
pub fn bundled_world() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("demo")
}

/// A materialised demo world.
#[derive(Debug, Clone)]
pub struct DemoWorld {
    pub root: PathBuf,
}

impl DemoWorld {
    /// Each agent's store in the world, laid out as on a real machine.
    pub fn sessions_roots(&self) -> Vec<PathBuf> {
        [
            "claude",
            "codex",
            "gemini/tmp",
            "pi/sessions",
            "copilot/session-state",
            "vscode/User/globalStorage/saoudrizwan.claude-dev/tasks",
            "openhands/conversations",
        ]
        .iter()
        .map(|r| self.root.join(r))
        .collect()
    }
    pub fn repo_roots(&self) -> Vec<PathBuf> {
        crate::sources::agent_knowledge::catalog::subdirs(&self.root.join("repos"))
    }
    pub fn skills_root(&self) -> PathBuf {
        self.root.join("skills")
    }
    pub fn agents_root(&self) -> PathBuf {
        self.root.join("agents")
    }
    /// Everything in the world, as an index plan.
    pub fn plan(&self) -> crate::indexing::IndexPlan {
        crate::indexing::IndexPlan {
            sessions: self.sessions_roots(),
            code: self.repo_roots(),
            skills: vec![self.skills_root()],
            agents: vec![self.agents_root()],
            rebuild: false,
        }
    }

    /// A workspace root of the world, e.g. `repo("billing")`.
    pub fn repo(&self, name: &str) -> String {
        self.root
            .join("repos")
            .join(name)
            .to_string_lossy()
            .to_string()
    }
}

/// Copy `src` into `dest` (created if needed), replacing the placeholder in text files.
pub fn materialize(src: &Path, dest: &Path) -> io::Result<DemoWorld> {
    fs::create_dir_all(dest)?;
    let root = fs::canonicalize(dest)?;
    let root_str = root.to_string_lossy().to_string();
    copy_dir(src, &root, &root_str)?;
    Ok(DemoWorld { root })
}

fn copy_dir(src: &Path, dest: &Path, root: &str) -> io::Result<()> {
    fs::create_dir_all(dest)?;
    let mut entries: Vec<_> = fs::read_dir(src)?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let from = entry.path();
        let to = dest.join(entry.file_name());
        let ft = entry.file_type()?;
        if ft.is_dir() {
            copy_dir(&from, &to, root)?;
        } else if ft.is_file() {
            let bytes = fs::read(&from)?;
            let replaced = replace_bytes(&bytes, PLACEHOLDER.as_bytes(), root.as_bytes());
            fs::write(&to, replaced)?;
        }
    }
    Ok(())
}

fn replace_bytes(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}
