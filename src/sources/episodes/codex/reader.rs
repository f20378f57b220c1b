//! Codex as an agent of the registry: its rollout roots, how a rollout is recognised, and the
//! read, driven by the shared line parser.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sources::episodes::agent::{AgentReader, Env, Head, Rank, Recognised};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::discover::Layout;

/// The Codex reader.
pub struct Reader;

/// Whether one record is a Codex envelope, a legacy `{id,timestamp,instructions}` header or a
/// legacy `record_type` line.
fn is_codex_record(v: &Value) -> bool {
    v.get("payload").is_some_and(Value::is_object)
        || (v.get("type").and_then(Value::as_str).is_none()
            && v.get("id").is_some()
            && v.get("instructions").is_some())
        || v.get("record_type").is_some()
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<super::CodexState>()
    }
    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn name(&self) -> &'static str {
        "codex"
    }

    fn label(&self) -> &'static str {
        "Codex"
    }

    /// `$CODEX_HOME/sessions` and `$CODEX_HOME/archived_sessions`, else under `~/.codex`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir_or_home("CODEX_HOME", ".codex")
            .map(|c| vec![c.join("sessions"), c.join("archived_sessions")])
            .unwrap_or_default()
    }

    /// `rollout-*.jsonl` by name; any other `.jsonl` whose head holds a Codex record.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        // Claude workflow journals are never transcripts.
        if !name.ends_with(".jsonl") || name == "journal.jsonl" {
            return None;
        }
        let rank = if name.starts_with("rollout-") {
            Rank::Name
        } else {
            Rank::Record(head.first(is_codex_record)?)
        };
        Some(Recognised {
            layout: Layout::Main,
            rank,
        })
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("codex resume {quoted_session_id}"))
    }
}
