//! Gemini CLI as an agent of the registry: `~/.gemini/tmp/<slot>/chats/` (`GEMINI_CLI_HOME`
//! replaces the home), main sessions `session-*.jsonl` (appended) or legacy `session-*.json`
//! (rewritten whole every turn), subagents `chats/<parent sessionId>/<id>.jsonl`. The files hold
//! no working directory: it comes from the slot's `.project_root`, or from `projects.json`
//! (absolute path → slot), or from a slot named by the sha256 of a registered path.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::sources::episodes::agent::{
    read_json_document, small_sidecar, AgentReader, Env, EventSink, FillCwd, Head, Rank, ReadEnd,
    ReadLimits, Recognised, Resume, StoreKind,
};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::conversation::read_conversation;
use crate::sources::episodes::discover::{Layout, TranscriptFile};
use crate::sources::episodes::parser::TranscriptParser;

/// Largest legacy `.json` session read (it is parsed whole); a larger one is counted oversized.
const MAX_JSON_BYTES: u64 = 64 * 1024 * 1024;

/// The Gemini CLI reader.
pub struct Reader;

fn in_chats(path: &Path, levels: usize) -> bool {
    path.ancestors()
        .nth(levels)
        .and_then(|d| d.file_name())
        .is_some_and(|n| n == "chats")
}

/// Whether a head record is a Gemini CLI session header.
fn is_gemini_header(v: &Value) -> bool {
    v.get("sessionId").is_some() && v.get("projectHash").is_some() && v.get("type").is_none()
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<super::GeminiState>()
    }
    fn agent(&self) -> Agent {
        Agent::Gemini
    }

    fn name(&self) -> &'static str {
        "gemini"
    }

    fn label(&self) -> &'static str {
        "Gemini CLI"
    }

    fn store_kind(&self, path: &Path) -> StoreKind {
        if path.extension().is_some_and(|e| e == "json") {
            StoreKind::Rewritten
        } else {
            StoreKind::AppendOnly
        }
    }

    /// `$GEMINI_CLI_HOME/.gemini/tmp`, else `~/.gemini/tmp`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir("GEMINI_CLI_HOME")
            .or_else(|| env.home())
            .map(|h| vec![h.join(".gemini").join("tmp")])
            .unwrap_or_default()
    }

    /// `chats/session-*.jsonl|json` by name, `chats/<parent>/<id>.jsonl` as a subagent, and any
    /// other `.jsonl` whose head is a Gemini CLI header.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        let (stem, jsonl) = match (name.strip_suffix(".jsonl"), name.strip_suffix(".json")) {
            (Some(s), _) => (s, true),
            (None, Some(s)) => (s, false),
            _ => return None,
        };
        if stem.starts_with("session-") && in_chats(path, 1) {
            return Some(Recognised {
                layout: Layout::Main,
                rank: Rank::Name,
            });
        }
        if !jsonl {
            return None;
        }
        // `tmp/<slot>/chats/<parent>/<id>.jsonl` (Qwen Code keeps `chats/archive/` elsewhere).
        let under_tmp = path.ancestors().nth(4).and_then(|d| d.file_name()) == Some("tmp".as_ref());
        if in_chats(path, 2) && under_tmp {
            let parent = path.parent()?.file_name()?.to_str()?.to_string();
            return Some(Recognised {
                layout: Layout::Subagent {
                    parent_session_hint: Some(parent),
                    agent_id_hint: Some(stem.to_string()),
                    sidecar: None,
                },
                rank: Rank::Name,
            });
        }
        let i = head.first(is_gemini_header)?;
        Some(Recognised {
            layout: Layout::Main,
            rank: Rank::Record(i),
        })
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let mut sink = FillCwd {
            inner: sink,
            cwd: project_root(&file.path),
        };
        match self.store_kind(&file.path) {
            StoreKind::Rewritten => read_legacy(file, limits, &mut sink),
            _ => read_conversation(file, from, limits, &mut sink, || {
                TranscriptParser::new(Agent::Gemini)
            }),
        }
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("gemini --resume {quoted_session_id}"))
    }

    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        let ext = changed.extension().and_then(|e| e.to_str());
        let chats = in_chats(changed, 1) || in_chats(changed, 2);
        (chats && matches!(ext, Some("jsonl") | Some("json"))).then(|| changed.to_path_buf())
    }
}

/// A legacy session: one JSON document `{sessionId, projectHash, startTime, messages:[…]}`, fed
/// record by record through the same rules as the JSONL form.
fn read_legacy(
    file: &TranscriptFile,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let parser = TranscriptParser::new(Agent::Gemini);
    let max_record = limits.max_line_bytes;
    read_json_document(file, MAX_JSON_BYTES, max_record, parser, "messages", sink)
}

/// The project directory of the slot holding `path` (`<root>/tmp/<slot>/chats/…`).
pub(crate) fn project_root(path: &Path) -> Option<String> {
    let slot = path
        .ancestors()
        .find(|d| d.file_name().is_some_and(|n| n == "chats"))?
        .parent()?;
    if let Some(root) = small_sidecar(&slot.join("chats"), ".project_root") {
        return Some(root);
    }
    let slot_name = slot.file_name()?.to_str()?;
    let registry = slot.parent()?.parent()?.join("projects.json");
    let text = crate::sources::regular_file::read_side_file(&registry).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let map = v
        .get("projects")
        .and_then(Value::as_object)
        .or_else(|| v.as_object())?;
    map.iter()
        .find(|(project, slug)| {
            slug.as_str() == Some(slot_name) || sha256_hex(project) == slot_name
        })
        .map(|(project, _)| project.clone())
}

fn sha256_hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
