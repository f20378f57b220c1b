//! Cursor as an agent of the registry: its two stores, how each is recognised, and the reads.
//!
//! Cursor keeps chats in two places. The IDE writes every composer (chat) of every workspace
//! into one SQLite key/value store, `<user data>/User/globalStorage/state.vscdb` (`~/.config/Cursor`
//! on Linux, honouring `XDG_CONFIG_HOME`; `~/Library/Application Support/Cursor` on macOS;
//! `%APPDATA%\Cursor` on Windows): a [`StoreKind::Database`] read by [`vscdb`]. The agent (IDE
//! agent mode and the `cursor-agent` CLI) also writes JSONL transcripts under
//! `~/.cursor/projects/<slug>/agent-transcripts/` (`CURSOR_CONFIG_DIR` moves `~/.cursor`), one
//! append-only file per chat with an optional `subagents/` folder, read by the shared line
//! parser with the rules in [`transcript`]; older installs wrote the same transcripts as plain
//! text (`<id>.txt`, [`text`]). The formats as read are in `docs/formats/databases.md`.

mod text;
mod transcript;
mod vscdb;

use std::io;
use std::path::{Path, PathBuf};

pub use transcript::CursorState;

use crate::sources::episodes::agent::{
    file_mtime, AgentReader, Env, EventSink, Head, NoIdsSink, Rank, ReadEnd, ReadLimits,
    Recognised, Resume, StoreKind,
};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::discover::{parent_session_of, Layout, TranscriptFile};
use crate::sources::episodes::model::SessionMeta;
use crate::sources::episodes::parser::{read_jsonl, TranscriptParser};

/// The Cursor reader.
pub struct Reader;

fn is_global_store(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "state.vscdb")
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "globalStorage")
}

fn in_agent_transcripts(path: &Path) -> bool {
    path.components()
        .any(|c| c.as_os_str() == "agent-transcripts")
}

/// The first 4 KiB of a file as text (empty when unreadable).
fn text_head(path: &Path) -> String {
    use std::io::Read;
    let mut head = Vec::new();
    if let Ok(f) = crate::sources::regular_file::open(path) {
        let _ = f.take(4096).read_to_end(&mut head);
    }
    String::from_utf8_lossy(&head).into_owned()
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<transcript::CursorState>()
    }
    fn agent(&self) -> Agent {
        Agent::Cursor
    }

    fn name(&self) -> &'static str {
        "cursor"
    }

    fn label(&self) -> &'static str {
        "Cursor"
    }

    fn store_kind(&self, path: &Path) -> StoreKind {
        match path.extension().and_then(|e| e.to_str()) {
            Some("vscdb") => StoreKind::Database,
            Some("txt") => StoreKind::Rewritten,
            _ => StoreKind::AppendOnly,
        }
    }

    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        let global = |base: PathBuf| base.join("Cursor/User/globalStorage/state.vscdb");
        let mut roots = Vec::new();
        if let Some(cfg) = env.dir_or_home("XDG_CONFIG_HOME", ".config") {
            roots.push(global(cfg));
        }
        if let Some(home) = env.home() {
            roots.push(global(home.join("Library/Application Support")));
        }
        if let Some(appdata) = env.dir("APPDATA") {
            roots.push(global(appdata));
        }
        if let Some(dot) = env.dir_or_home("CURSOR_CONFIG_DIR", ".cursor") {
            roots.push(dot.join("projects"));
        }
        roots
    }

    /// The global `state.vscdb` by place; a `.jsonl` under `agent-transcripts/` by place, any
    /// other whose head holds a Cursor line by content. `subagents/<id>.jsonl` is a subagent.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        if is_global_store(path) {
            return Some(Recognised {
                layout: Layout::Main,
                rank: Rank::Name,
            });
        }
        let name = path.file_name()?.to_str()?;
        let rank;
        let stem = if let Some(stem) = name.strip_suffix(".txt") {
            // The text form only where Cursor keeps transcripts, and only when it reads as one.
            if !in_agent_transcripts(path) || !text::looks_like_text_transcript(&text_head(path)) {
                return None;
            }
            rank = Rank::Name;
            stem
        } else {
            let stem = name.strip_suffix(".jsonl")?;
            rank = if in_agent_transcripts(path) {
                Rank::Name
            } else {
                Rank::Record(head.first(transcript::is_cursor_record)?)
            };
            stem
        };
        let under_subagents = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "subagents");
        let layout = if under_subagents {
            Layout::Subagent {
                parent_session_hint: parent_session_of(path),
                agent_id_hint: (!stem.is_empty()).then(|| stem.to_string()),
                sidecar: None,
            }
        } else {
            Layout::Main
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
        let store = self.store_kind(&file.path);
        if store == StoreKind::Database {
            return vscdb::read_vscdb(&file.path, from, limits, sink);
        }
        let mut wrapped = NoIdsSink {
            inner: sink,
            subagent: matches!(file.layout, Layout::Subagent { .. }),
            mtime: file_mtime(&file.path),
        };
        if store == StoreKind::Rewritten {
            return text::read_text(file, &mut wrapped, text::parser());
        }
        read_jsonl(file, from, limits, &mut wrapped, || {
            TranscriptParser::new(Agent::Cursor)
        })
    }

    /// A transcript is `<composerId>.jsonl`: its stem is the chat id.
    fn file_session_id(&self, file: &TranscriptFile, _meta: &SessionMeta) -> Option<String> {
        file.path
            .file_stem()
            .map(|s| crate::sources::episodes::bounds::safe_id(&s.to_string_lossy()).into_owned())
            .filter(|s| !s.is_empty())
    }

    /// `cursor-agent --resume` reopens a CLI chat; an IDE composer is reopened from the IDE's
    /// chat history, which has no command.
    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("cursor-agent --resume {quoted_session_id}"))
    }

    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        let name = changed.file_name()?.to_str()?;
        if name == "state.vscdb-wal" {
            return Some(changed.with_file_name("state.vscdb"));
        }
        let text = name.ends_with(".txt") && in_agent_transcripts(changed);
        if name == "state.vscdb" || name.ends_with(".jsonl") || text {
            return Some(changed.to_path_buf());
        }
        None
    }
}
