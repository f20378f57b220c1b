//! Aider as an agent of the registry: where its history files are (in each repository, moved
//! by `AIDER_CHAT_HISTORY_FILE`), how one is recognised, and the read from a saved cursor.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{run_start, AiderParser};
use crate::sources::episodes::agent::{
    AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume,
};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::discover::{Layout, TranscriptFile};
use crate::sources::episodes::lines::{read_lines_with_blanks, LineItem};
use crate::sources::regular_file;

/// The history file's name in a repository (Aider's default, `aider/args.py`).
pub const HISTORY_FILE: &str = ".aider.chat.history.md";
/// How much of another `.md` file is read to see whether it is an Aider history.
const SNIFF_BYTES: u64 = 64 * 1024;

/// The Aider reader.
pub struct Reader;

impl AgentReader for Reader {
    fn agent(&self) -> Agent {
        Agent::Aider
    }

    fn name(&self) -> &'static str {
        "aider"
    }

    fn label(&self) -> &'static str {
        "Aider"
    }

    /// `AIDER_CHAT_HISTORY_FILE` when set (Aider's own override of `--chat-history-file`); the
    /// default file lives in each repository, see [`AgentReader::project_stores`].
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir("AIDER_CHAT_HISTORY_FILE")
            .map(|p| std::path::absolute(&p).unwrap_or(p))
            .into_iter()
            .collect()
    }

    fn project_stores(&self, project: &Path) -> Vec<PathBuf> {
        vec![project.join(HISTORY_FILE)]
    }

    /// `.aider.chat.history.md` by name; another `.md` whose head holds a run header
    /// (`--chat-history-file` may name any file).
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        let rank = if name == HISTORY_FILE {
            Rank::Name
        } else if name.ends_with(".md") && has_run_header(path) {
            Rank::Record(0)
        } else {
            return None;
        };
        Some(Recognised {
            layout: Layout::Main,
            rank,
        })
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let resumed = from.and_then(|r| {
            serde_json::from_str::<AiderParser>(r.cursor)
                .ok()
                .map(|p| (p, r.offset))
        });
        let was_resumed = resumed.is_some();
        let (mut parser, start) = resumed.unwrap_or_else(|| {
            let cwd = file.path.parent().map(|d| d.display().to_string());
            (AiderParser::new(file_key(&file.path), cwd), 0)
        });
        if was_resumed {
            parser.resume(sink);
        }
        let before = *parser.stats();
        let end = read_lines_with_blanks(
            regular_file::open(&file.path)?,
            start,
            limits.max_line_bytes,
            |item| match item {
                LineItem::Line(bytes) => parser.feed(bytes, sink),
                LineItem::Oversized { .. } => parser.feed_oversized(),
            },
        )?;
        parser.finish(sink);
        Ok(ReadEnd {
            start,
            end,
            resumed: was_resumed,
            cursor: serde_json::to_string(&parser).unwrap_or_default(),
            lines: parser.stats().since(&before),
            total: *parser.stats(),
        })
    }

    /// Aider has no per-session resume: `--restore-chat-history` reloads the history file of
    /// the directory it starts in (the explorer prefixes `cd <repository>`).
    fn resume_command(&self, _quoted_session_id: &str) -> Option<String> {
        Some("aider --restore-chat-history".to_string())
    }

    /// Any `.md` under a session root may be a history (its name is the user's choice).
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        changed
            .extension()
            .is_some_and(|e| e == "md")
            .then(|| changed.to_path_buf())
    }
}

/// The short hash of the history file's path that prefixes its run ids: two repositories'
/// runs started in the same second stay two sessions. The canonical path, so a symlinked root
/// names the same runs.
fn file_key(path: &Path) -> String {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// Whether the head of `path` holds an Aider run header.
fn has_run_header(path: &Path) -> bool {
    let Ok(file) = regular_file::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(SNIFF_BYTES).read_to_end(&mut head).is_err() {
        return false;
    }
    String::from_utf8_lossy(&head)
        .lines()
        .any(|l| run_start(l.trim_end()).is_some())
}
