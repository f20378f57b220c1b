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

/// Whether `s` is a UUID in its text form (`8-4-4-4-12` hex digits), as Claude Code's session
/// ids are.
pub(crate) fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether one record is in Claude Code's envelope.
pub(crate) fn is_claude_record(v: &Value) -> bool {
    v.get("sessionId").is_some() || v.get("uuid").is_some() || v.get("parentUuid").is_some()
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<super::ClaudeState>()
    }
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
                    // A `<sessionId>/subagents/` folder; a renamed one gives way to the
                    // records' `sessionId` (the parent's), as its main file does.
                    parent_session_hint: parent_session_of(path).filter(|p| is_uuid(p)),
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
                if let Ok(bytes) = crate::sources::regular_file::read_limited(
                    sidecar,
                    crate::sources::regular_file::SIDE_FILE_LIMIT,
                ) {
                    parser.apply_sidecar(&bytes);
                }
            }
            parser
        })
    }

    /// Claude Code names a main file `<sessionId>.jsonl`, and that stem is what `claude
    /// --resume` opens. A file renamed from it (an export, a copy: `general-tool-calls.jsonl`)
    /// keeps the session its records name: a stem that is not a UUID gives way to the
    /// records' `sessionId`.
    fn file_session_id(&self, file: &TranscriptFile, meta: &SessionMeta) -> Option<String> {
        let stem = file
            .path
            .file_stem()
            .map(|s| crate::sources::episodes::bounds::safe_id(&s.to_string_lossy()).into_owned())
            .filter(|s| !s.is_empty());
        match stem {
            Some(stem) if is_uuid(&stem) || meta.session_id.is_none() => Some(stem),
            _ => meta.session_id.clone(),
        }
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("claude --resume {quoted_session_id}"))
    }
}
