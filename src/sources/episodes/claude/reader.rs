//! Claude Code as an agent of the registry: where its transcripts live, how one is recognised
//! (and which are subagents), and the read, driven by the shared line parser.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sources::episodes::agent::{
    AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume,
};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::discover::{parent_session_of, Layout, TranscriptFile};
use crate::sources::episodes::model::SessionMeta;
use crate::sources::episodes::parser::{read_jsonl, TranscriptParser};

/// The Claude Code reader.
pub struct Reader;

/// Whether one record is in Claude Code's envelope.
pub(crate) fn is_claude_record(v: &Value) -> bool {
    v.get("sessionId").is_some() || v.get("uuid").is_some() || v.get("parentUuid").is_some()
}

impl AgentReader for Reader {
    fn agent(&self) -> Agent {
        Agent::Claude
    }

    fn name(&self) -> &'static str {
        "claude"
    }

    fn label(&self) -> &'static str {
        "Claude Code"
    }

    /// `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir_or_home("CLAUDE_CONFIG_DIR", ".claude")
            .map(|c| vec![c.join("projects")])
            .unwrap_or_default()
    }

    /// Any `.jsonl` but a workflow `journal.jsonl`; certain when a head record is in Claude's
    /// envelope, else the fallback (a JSONL nobody else recognises is read as Claude's and its
    /// unknown lines counted). `agent-<id>.jsonl` is a subagent, with its `.meta.json` sidecar.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        let stem = name.strip_suffix(".jsonl")?;
        if name == "journal.jsonl" {
            return None;
        }
        let rank = head
            .first(is_claude_record)
            .map_or(Rank::Fallback, Rank::Record);
        let layout = match stem.strip_prefix("agent-") {
            Some(id) => {
                let sidecar = path.with_file_name(format!("{stem}.meta.json"));
                Layout::Subagent {
                    parent_session_hint: parent_session_of(path),
                    agent_id_hint: (!id.is_empty()).then(|| id.to_string()),
                    sidecar: sidecar.is_file().then_some(sidecar),
                }
            }
            None => Layout::Main,
        };
        Some(Recognised { layout, rank })
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        read_jsonl(file, from, limits, sink, || {
            let mut parser = TranscriptParser::new(Agent::Claude);
            if let Layout::Subagent {
                sidecar: Some(sidecar),
                ..
            } = &file.layout
            {
                if let Ok(bytes) = std::fs::read(sidecar) {
                    parser.apply_sidecar(&bytes);
                }
            }
            parser
        })
    }

    /// A main file is `<sessionId>.jsonl`, and its stem is what `claude --resume` takes.
    fn file_session_id(&self, file: &TranscriptFile, meta: &SessionMeta) -> Option<String> {
        file.path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| meta.session_id.clone())
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("claude --resume {quoted_session_id}"))
    }
}
