//! Doctor's view of each agent of the registry: where its stores are on this machine and how
//! many of them and of its sessions the index holds. The registry is the one list read: an
//! agent's roots are its default roots that exist (env overrides honoured) plus every indexed
//! session root in which one of its stores was found (a `--sessions` folder, the history file
//! Aider keeps in a repository), so a store indexed from anywhere is shown under its agent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::sources::episodes::agent::Env;
use crate::sources::episodes::agents::{roots_in, Agent};
use crate::sources::sqlite::open_ro;

/// One agent as doctor sees it.
#[derive(Debug, Clone, Serialize)]
pub struct AgentReport {
    /// The stored `source` name (`gemini`).
    pub agent: &'static str,
    pub label: &'static str,
    /// Its default roots on this machine that exist (env overrides honoured), then the indexed
    /// session roots holding one of its stores.
    pub roots: Vec<String>,
    /// Its stores (session files, databases) found under the indexed session roots.
    pub stores: u64,
    /// Sessions of this agent in the episodes store.
    pub sessions: u64,
}

/// Each agent of the registry in `env`, given the stores found on disk as (agent, the session
/// root it was found under) and the episodes store `db`.
pub fn agent_reports(db: &Path, env: &Env, found: &[(Agent, PathBuf)]) -> Vec<AgentReport> {
    let counts: HashMap<String, u64> = open_ro(db)
        .and_then(|c| {
            let mut stmt = c.prepare("SELECT source, count(*) FROM sessions GROUP BY source")?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
                })?
                .collect();
            rows
        })
        .unwrap_or_default();
    let defaults = roots_in(env);
    Agent::ALL
        .into_iter()
        .map(|a| {
            let mut roots: Vec<String> = Vec::new();
            let own_defaults = defaults.iter().filter(|(of, r)| *of == a && r.exists());
            let indexed = found.iter().filter(|(of, _)| *of == a);
            for r in own_defaults
                .map(|(_, r)| r)
                .chain(indexed.clone().map(|(_, r)| r))
            {
                let shown = r.display().to_string();
                if !roots.contains(&shown) {
                    roots.push(shown);
                }
            }
            AgentReport {
                agent: a.as_str(),
                label: a.label(),
                roots,
                stores: indexed.count() as u64,
                sessions: counts.get(a.as_str()).copied().unwrap_or(0),
            }
        })
        .collect()
}
