//! Reading the lines of a code reference: one rule set for every front end.
//!
//! The explorer, the CLI's `knowledge code` and the MCP `knowledge_code` tool each used to read
//! code their own way, and the explorer read any absolute path a transcript named, whatever its
//! size. Now every one of them asks [`Engine::read_code`], which goes through the code lane:
//!
//! 1. the built-in code index, when it knows the file (current lines, redacted, with the file's
//!    freshness; a path in several repositories is resolved by the chunk the caller holds; a
//!    file that grew past [`MAX_FILE_BYTES`] or turned binary is served from the index, stale);
//! 2. else the external code source, when one replaced the index in the lane (RAGRAF's
//!    `ragraf_code`, redacted again on the way in);
//! 3. else a file on disk, but only under a root the code index covers (or, with no code index
//!    at all, under the working directory), only a regular file of at most
//!    [`MAX_FILE_BYTES`], never a binary one, and redacted.

use std::path::{Path, PathBuf};

use super::Engine;
pub use crate::lanes::ReadCodeError;
use crate::lanes::{CodeLines, LineRange, NeitherRead, Reason, SourceFailure};
use crate::sources::code::chunk::{file_text_kind, redact_lines};
use crate::sources::code::read::{read_text_file, window, TextFileError};
use crate::sources::code::Freshness;

/// Files larger than this are never read from disk.
pub const MAX_FILE_BYTES: u64 = crate::sources::code::read::MAX_READ_BYTES;
/// Lines at most in one read (as the code index's `read_code`).
pub const MAX_LINES: u64 = crate::sources::code::read::MAX_READ_LINES;

impl Engine {
    /// Lines `start..=end` (at most [`MAX_LINES`]) of a code reference. `chunk` is the chunk the
    /// caller got the path from, if any: it picks the repository when the path is in several.
    pub fn read_code(
        &self,
        path: &str,
        start: u64,
        end: Option<u64>,
        chunk: Option<&str>,
    ) -> Result<CodeLines, ReadCodeError> {
        let range = LineRange {
            start: start.max(1),
            end,
        };
        let external = self.config.sources.code.is_some();
        // 1 and 2. The code lane: the built-in index, then the external source that replaced it
        // in the lane, if any (`layered.rs`).
        let mut external_failure = None;
        match self.code.read(path, range, chunk) {
            Err(ReadCodeError::NotInSource(_)) => {}
            Err(ReadCodeError::Unavailable(why)) if external => external_failure = Some(why),
            found => return found,
        }
        // 3. Disk, under the indexed roots.
        self.read_disk(path, range)
            .map_err(|e| match external_failure {
                Some(external) => ReadCodeError::Unavailable(SourceFailure::caused(
                    external.code,
                    NeitherRead {
                        external,
                        disk: Box::new(e),
                    },
                )),
                None => e,
            })
    }

    /// A file outside the index, under a root the code index covers (the working directory
    /// when there is no code index).
    fn read_disk(&self, path: &str, range: LineRange) -> Result<CodeLines, ReadCodeError> {
        let mut roots: Vec<PathBuf> = Vec::new();
        if self.builtin().opened[1] {
            roots = self
                .builtin()
                .code
                .stats()
                .map_err(ReadCodeError::Unavailable)?
                .roots
                .into_iter()
                .map(PathBuf::from)
                .collect();
            if roots.is_empty() {
                return Err(ReadCodeError::NotReadable(
                    format!("{path} is not in the code index").into(),
                ));
            }
        }
        let (base, roots) = if roots.is_empty() {
            let cwd = std::env::current_dir().map_err(|_| {
                ReadCodeError::NotReadable(
                    "no code index and no working directory to read from".into(),
                )
            })?;
            (cwd.clone(), vec![cwd])
        } else {
            (roots[0].clone(), roots)
        };
        read_under(path, range, &base, &roots)
    }
}

/// A file under an indexed root that is not read: too large, binary, or not a regular file
/// that can be read (the error under it is its source).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {}", not_text(.why))]
pub struct NotText {
    pub path: String,
    #[source]
    pub why: TextFileError,
}

fn not_text(why: &TextFileError) -> String {
    match why {
        TextFileError::Io(_) => "not a regular file that can be read".to_string(),
        other => other.to_string(),
    }
}

/// A file outside the index, under one of `roots` (a relative path is taken from `base`).
fn read_under(
    path: &str,
    range: LineRange,
    base: &Path,
    roots: &[PathBuf],
) -> Result<CodeLines, ReadCodeError> {
    let refuse = |why: &str| ReadCodeError::NotReadable(format!("{path}: {why}").into());
    let given = Path::new(path);
    let full = if given.is_absolute() {
        given.to_path_buf()
    } else {
        base.join(given)
    };
    let canon = full
        .canonicalize()
        .map_err(|_| refuse("no such file, and it is not in the code index"))?;
    let Some(root) = roots
        .iter()
        .filter_map(|r| r.canonicalize().ok())
        .find(|r| canon.starts_with(r))
    else {
        return Err(refuse(
            "outside every indexed repository (only files under them are read; index it with \
             `knowledge index --code ROOT`)",
        ));
    };
    let bytes = read_text_file(&canon).map_err(|why| {
        ReadCodeError::NotReadable(Reason::error(NotText {
            path: path.to_string(),
            why,
        }))
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let (all, _) = redact_lines(&text, file_text_kind(path, &text));
    let (lines, end_line, redacted) = window(&all, range.start, range.end);
    let rel = canon
        .strip_prefix(&root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string());
    Ok(CodeLines {
        root: root.display().to_string(),
        path: rel,
        start_line: range.start,
        end_line,
        total_lines: all.len() as u64,
        lines,
        read_from: "disk".to_string(),
        redacted,
        index_rev: None,
        freshness: Freshness {
            stale: false,
            verified_by: "not indexed".to_string(),
        },
        chunks: Vec::new(),
    })
}
