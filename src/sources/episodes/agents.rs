//! The registry of agents: the one place that lists every agent `knowledge` reads.
//!
//! Discovery (which reader claims a file), the default roots (`knowledge index` with no
//! arguments), watch scope (which store a changed path belongs to), doctor (each agent's roots),
//! the explorer's surface label and resume command, and the docs all read this list. Adding an
//! agent is its reader module (see [`super::agent::AgentReader`]; a JSONL agent driven by the
//! shared line parser keeps its line rules there too, `super::line_rules`) plus one entry here:
//! a variant of [`Agent`], its arm in [`Agent::reader`] and its place in [`Agent::ALL`]. The
//! `match` is exhaustive, so the compiler points at a variant without a reader; [`Agent::ALL`]
//! is no `match`, so the tests below fail when a variant is missing from it or a module's
//! reader is not registered.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::agent::{AgentReader, Env, Head, Recognised};
use super::discover::TranscriptFile;
use super::{
    aider, amp, claude, codex, continue_dev, copilot, crush, cursor, gemini, goose, iflow, kilo,
    kimi, kimi_code, opencode, openhands, pi, qwen, vscode_tasks, zed,
};

/// Which agent wrote a session. Stored (as [`Agent::as_str`]) in each session's `source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
    Pi,
    Qwen,
    Copilot,
    Aider,
    #[serde(rename = "opencode")]
    OpenCode,
    Cursor,
    Kimi,
    #[serde(rename = "iflow")]
    IFlow,
    KimiCode,
    Continue,
    Amp,
    #[serde(rename = "openhands")]
    OpenHands,
    Goose,
    Crush,
    Zed,
    Cline,
    RooCode,
    KiloCode,
}

impl Agent {
    /// Every agent, in the order readers are asked to recognise a file (a tie in
    /// [`super::agent::Rank`] goes to the earlier one).
    pub const ALL: [Agent; 21] = [
        Agent::Codex,
        Agent::Gemini,
        Agent::Pi,
        Agent::Qwen,
        Agent::Copilot,
        Agent::Kimi,
        Agent::KimiCode,
        Agent::IFlow,
        Agent::Continue,
        Agent::Amp,
        Agent::OpenHands,
        Agent::Claude,
        Agent::Aider,
        Agent::OpenCode,
        Agent::Goose,
        Agent::Crush,
        Agent::Zed,
        Agent::Cursor,
        Agent::Cline,
        Agent::RooCode,
        Agent::KiloCode,
    ];

    /// This agent's reader.
    pub fn reader(self) -> &'static dyn AgentReader {
        match self {
            Agent::Claude => &claude::Reader,
            Agent::Codex => &codex::Reader,
            Agent::Gemini => &gemini::Reader,
            Agent::Pi => &pi::Reader,
            Agent::Qwen => &qwen::Reader,
            Agent::Copilot => &copilot::Reader,
            Agent::Aider => &aider::Reader,
            Agent::OpenCode => &opencode::Reader,
            Agent::Cursor => &cursor::Reader,
            Agent::Kimi => &kimi::Reader,
            Agent::IFlow => &iflow::Reader,
            Agent::KimiCode => &kimi_code::Reader,
            Agent::Continue => &continue_dev::Reader,
            Agent::Amp => &amp::Reader,
            Agent::OpenHands => &openhands::Reader,
            Agent::Goose => &goose::Reader,
            Agent::Crush => &crush::Reader,
            Agent::Zed => &zed::Reader,
            Agent::Cline => &vscode_tasks::ClineReader,
            Agent::RooCode => &vscode_tasks::RooReader,
            Agent::KiloCode => &kilo::Reader,
        }
    }

    /// The stable short name (`claude`, `codex`, …).
    pub fn as_str(self) -> &'static str {
        self.reader().name()
    }

    /// The product name (`Claude Code`).
    pub fn label(self) -> &'static str {
        self.reader().label()
    }

    /// The agent of a stored `source` or a `surface` (`claude/subagent` → Claude).
    pub fn from_source(source: &str) -> Option<Agent> {
        let name = source.split('/').next().unwrap_or(source);
        Agent::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

/// The reader that claims `path`, and where the file sits in that agent's layout; `None` when
/// no agent's store is there. The most certain claim wins (see [`super::agent::Rank`]).
pub fn recognise(path: &Path) -> Option<TranscriptFile> {
    if Agent::ALL.iter().any(|a| a.reader().is_aside(path)) {
        return None;
    }
    let mut head = Head::new(path);
    let mut best: Option<(Agent, Recognised)> = None;
    for agent in Agent::ALL {
        let Some(claim) = agent.reader().recognise(path, &mut head) else {
            continue;
        };
        if best.as_ref().is_none_or(|(_, b)| claim.rank < b.rank) {
            best = Some((agent, claim));
        }
    }
    best.map(|(kind, claim)| TranscriptFile {
        path: path.to_path_buf(),
        kind,
        layout: claim.layout.with_safe_hints(),
    })
}

/// Every agent's default roots in `env`, existing or not, in registry order.
pub fn roots_in(env: &Env) -> Vec<(Agent, PathBuf)> {
    Agent::ALL
        .into_iter()
        .flat_map(|a| a.reader().roots(env).into_iter().map(move |r| (a, r)))
        .collect()
}

/// The default roots of this machine that exist (what a bare `knowledge index` reads), and
/// those this user may not even check (a root in a folder of mode 000): discovery names them.
pub fn default_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = roots_in(&Env::current())
        .into_iter()
        .map(|(_, r)| r)
        .filter(|r| r.try_exists().unwrap_or(true))
        .collect();
    roots.dedup();
    roots
}

/// The stores agents keep inside the given projects (repositories, the working directory)
/// that exist: Aider's `.aider.chat.history.md`. A bare `knowledge index` reads them for the
/// repository it indexes and the directory it runs in.
pub fn project_stores(projects: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for project in projects {
        for agent in Agent::ALL {
            for store in agent.reader().project_stores(project) {
                if store.is_file() && !out.contains(&store) {
                    out.push(store);
                }
            }
        }
    }
    out
}

/// The store a changed path belongs to, if any agent keeps one there (watch mode).
pub fn store_of_change(changed: &Path) -> Option<PathBuf> {
    Agent::ALL
        .into_iter()
        .find_map(|a| a.reader().store_of_change(changed))
}

/// The folders outside a session root that its stores are read from (watch mode follows them).
pub fn watch_beside(root: &Path) -> Vec<PathBuf> {
    Agent::ALL
        .into_iter()
        .flat_map(|a| a.reader().watch_beside(root))
        .collect()
}

/// The command that resumes a session in its own directory (copied, never run): `cd <cwd> &&
/// <the agent's resume command>`. A subagent resumes through its root session. `None` for a
/// source that is not a known agent or an agent without one.
pub fn resume_command(source: &str, session_id: &str, cwd: Option<&str>) -> Option<String> {
    let root = session_id.split('/').next().filter(|s| !s.is_empty())?;
    let agent = Agent::from_source(source)?;
    let cmd = agent.reader().resume_command(&shell_quote(root))?;
    Some(match cwd.filter(|d| !d.trim().is_empty()) {
        Some(d) => format!("cd {} && {cmd}", shell_quote(d)),
        None => cmd,
    })
}

/// `s` as one POSIX shell word.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-:@%+=,~".contains(c));
    if safe && !s.starts_with('~') {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;

    #[test]
    fn every_agent_has_a_unique_name_and_round_trips() {
        let mut names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Agent::ALL.len());
        for a in Agent::ALL {
            assert_eq!(Agent::from_source(a.as_str()), Some(a));
            assert_eq!(
                Agent::from_source(&format!("{}/subagent", a.as_str())),
                Some(a)
            );
            assert_eq!(a.reader().agent(), a);
            assert!(!a.label().is_empty());
        }
        assert_eq!(Agent::from_source("cursorx"), None);
    }

    /// Every variant of [`Agent`] is in [`Agent::ALL`], which discovery, the default roots,
    /// watch and doctor go through: a variant left out compiles and is never read. The variants
    /// are the ones serde's derive knows (its error for an unknown name lists each), so this
    /// test keeps no list of its own to forget; each is stored under its reader's name.
    #[test]
    fn every_variant_of_agent_is_in_all() {
        let said = serde_json::from_str::<Agent>("\"no such agent\"")
            .expect_err("an unknown name")
            .to_string();
        let (_, listed) = said
            .split_once("expected one of ")
            .unwrap_or_else(|| panic!("serde's list of the variants: {said}"));
        // `claude`, `codex`, … `kimi_code` at line 1 column 15: the names between backquotes.
        let variants: BTreeSet<&str> = listed.split('`').skip(1).step_by(2).collect();
        let names: Vec<String> = Agent::ALL
            .iter()
            .map(|a| match serde_json::to_value(a) {
                Ok(Value::String(name)) => name,
                other => panic!("{a:?} serialises as {other:?}"),
            })
            .collect();
        let in_all: BTreeSet<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(
            variants, in_all,
            "every variant of Agent must be listed in Agent::ALL"
        );
        assert_eq!(in_all.len(), Agent::ALL.len(), "Agent::ALL lists one twice");
        for (a, name) in Agent::ALL.iter().zip(&names) {
            assert_eq!(name, a.as_str(), "{a:?} is stored under its reader's name");
        }
    }

    /// Every reader in `src/sources/episodes` (a line `impl AgentReader for T` in module `m`) is
    /// the one [`Agent::reader`] returns for some agent (`&m::T`), and there is one per agent
    /// of [`Agent::ALL`]: a reader module written and never registered fails here.
    #[test]
    fn every_reader_module_is_registered() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sources/episodes");
        let registry = std::fs::read_to_string(root.join("agents.rs")).expect("agents.rs");
        let mut files = vec![];
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("read_dir").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        let mut readers = vec![];
        for file in files {
            let text = std::fs::read_to_string(&file).expect("read");
            let rel = file.strip_prefix(&root).expect("under the root");
            let module = rel
                .components()
                .next()
                .and_then(|c| c.as_os_str().to_str())
                .map(|m| m.trim_end_matches(".rs").to_string())
                .expect("a module");
            let impls = text
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("impl AgentReader for "));
            for rest in impls {
                let ty: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                readers.push(format!("{}: {module}::{ty}", rel.display()));
                assert!(
                    registry.contains(&format!("=> &{module}::{ty},")),
                    "{}: `{module}::{ty}` implements AgentReader but Agent::reader does not \
                     return it: add a variant of Agent, its arm in Agent::reader and its place \
                     in Agent::ALL",
                    rel.display()
                );
            }
        }
        assert_eq!(
            readers.len(),
            Agent::ALL.len(),
            "one reader per agent of Agent::ALL: {readers:#?}"
        );
    }

    #[test]
    fn default_roots_honour_each_agents_env_override() {
        let tmp = Path::new("/nonexistent-home");
        let env = Env::of(&[("HOME", tmp), ("CODEX_HOME", Path::new("/elsewhere/codex"))]);
        let roots: Vec<PathBuf> = roots_in(&env).into_iter().map(|(_, r)| r).collect();
        assert!(roots.contains(&tmp.join(".claude/projects")), "{roots:?}");
        assert!(roots.contains(&PathBuf::from("/elsewhere/codex/sessions")));
        assert!(!roots.iter().any(|r| r.starts_with(tmp.join(".codex"))));
    }
}
