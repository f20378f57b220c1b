//! The roots the last `knowledge index` was given, kept in `<data_dir>/plan.json` so that the
//! front ends that never see those flags (the explorer, `knowledge mcp`, `knowledge doctor`)
//! can watch and check the same session roots, code roots and skill folders.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::indexing::IndexPlan;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
struct SavedPlan {
    sessions: Vec<PathBuf>,
    code: Vec<PathBuf>,
    skills: Vec<PathBuf>,
    agents: Vec<PathBuf>,
}

pub fn plan_path(data_dir: &Path) -> PathBuf {
    crate::config::DataDir::new(data_dir).saved_plan()
}

/// Remember `plan` (as absolute paths) for the data dir; a failure only loses the convenience.
pub fn save(data_dir: &Path, plan: &IndexPlan) -> std::io::Result<()> {
    let abs = |v: &[PathBuf]| -> Vec<PathBuf> {
        v.iter()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .collect()
    };
    let saved = SavedPlan {
        sessions: abs(&plan.sessions),
        code: abs(&plan.code),
        skills: abs(&plan.skills),
        agents: abs(&plan.agents),
    };
    let text = serde_json::to_string_pretty(&saved).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(data_dir)?;
    let path = plan_path(data_dir);
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    // Whatever is left at the temporary name goes first: opening a FIFO there for writing
    // would wait for a reader forever.
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    std::fs::rename(tmp, path)
}

/// Why the saved plan is there but cannot be read (a FIFO, not JSON, too large); `None` when
/// it reads or is absent.
pub fn unreadable(data_dir: &Path) -> Option<String> {
    let path = plan_path(data_dir);
    std::fs::symlink_metadata(&path).ok()?;
    let text = match crate::sources::regular_file::read_side_file(&path) {
        Ok(text) => text,
        Err(e) => return Some(e.to_string()),
    };
    serde_json::from_str::<SavedPlan>(&text)
        .err()
        .map(|e| format!("{}: {e}", path.display()))
}

/// The plan saved for the data dir, if `knowledge index` ever ran on it.
pub fn load(data_dir: &Path) -> Option<IndexPlan> {
    let text = crate::sources::regular_file::read_side_file(&plan_path(data_dir)).ok()?;
    let saved: SavedPlan = serde_json::from_str(&text).ok()?;
    Some(IndexPlan {
        sessions: saved.sessions,
        code: saved.code,
        skills: saved.skills,
        agents: saved.agents,
        rebuild: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_plan_comes_back_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let plan = IndexPlan {
            sessions: vec![PathBuf::from("relative/sessions")],
            code: vec![dir.path().to_path_buf()],
            skills: Vec::new(),
            agents: Vec::new(),
            rebuild: false,
        };
        assert!(load(dir.path()).is_none());
        save(dir.path(), &plan).unwrap();
        let back = load(dir.path()).unwrap();
        assert!(back.sessions[0].is_absolute());
        assert!(back.sessions[0].ends_with("relative/sessions"));
        assert_eq!(back.code, plan.code);
    }
}
