//! Reading the lines of a code reference: one rule set for every front end.
//!
//! The explorer, the CLI's `knowledge code` and the MCP `knowledge_code` tool each used to read
//! code their own way, and the explorer read any absolute path a transcript named, whatever its
//! size. Now every one of them asks [`Engine::read_code`]:
//!
//! 1. the built-in code index, when it knows the file (current lines, redacted, with the file's
//!    freshness; a path in several repositories is resolved by the chunk the caller holds);
//! 2. else a file on disk, but only under a root the code index covers (or, with no code index
//!    at all, under the working directory), only a regular file of at most
//!    [`MAX_FILE_BYTES`], never a binary one, and redacted.
//!
//! An external code source (RAGRAF over MCP) answers in its own shape; the MCP server asks it
//! first when one is configured.

use std::path::{Path, PathBuf};

use super::Engine;
use crate::sources::code::{CodeLines, CodeStoreError, Freshness};
use crate::text::redact;

/// Files larger than this are not read outside the index.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Lines at most in one read (as the code index's `read_code`).
pub const MAX_LINES: u64 = 2_000;

/// Why lines could not be read. `NotReadable` is about the path the caller gave (a person can
/// fix it); `Unavailable` is about the store.
#[derive(Debug, thiserror::Error)]
pub enum ReadCodeError {
    #[error("{0}")]
    NotReadable(String),
    #[error("{0}")]
    Unavailable(String),
}

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
        let start = start.max(1);
        let mut roots: Vec<PathBuf> = Vec::new();
        if let Some(store) = self.code_store() {
            match read_indexed(store, path, start, end, chunk) {
                Ok(lines) => return Ok(lines),
                Err(CodeStoreError::NotIndexed(_)) => {}
                Err(e @ (CodeStoreError::Missing(_) | CodeStoreError::Sql(_))) => {
                    return Err(ReadCodeError::Unavailable(e.to_string()))
                }
                Err(e) => return Err(ReadCodeError::NotReadable(e.to_string())),
            }
            roots = store
                .roots()
                .map_err(|e| ReadCodeError::Unavailable(e.to_string()))?
                .into_iter()
                .map(PathBuf::from)
                .collect();
            if roots.is_empty() {
                return Err(ReadCodeError::NotReadable(format!(
                    "{path} is not in the code index"
                )));
            }
        }
        let (base, roots) = if roots.is_empty() {
            let cwd = std::env::current_dir().map_err(|_| {
                ReadCodeError::NotReadable(
                    "no code index and no working directory to read from".to_string(),
                )
            })?;
            (cwd.clone(), vec![cwd])
        } else {
            (roots[0].clone(), roots)
        };
        read_disk(path, start, end, &base, &roots)
    }
}

fn read_indexed(
    store: &crate::sources::code::CodeStore,
    path: &str,
    start: u64,
    end: Option<u64>,
    chunk: Option<&str>,
) -> Result<CodeLines, CodeStoreError> {
    match store.read_code(path, start, end) {
        Err(CodeStoreError::Ambiguous { path: p, roots }) => {
            // The lanes give root-relative paths: pick the root holding the caller's chunk.
            let mut first = None;
            for root in roots.split(", ") {
                let abs = format!("{}/{}", root.trim_end_matches('/'), path);
                if let Ok(lines) = store.read_code(&abs, start, end) {
                    if chunk.is_some_and(|c| lines.chunks.iter().any(|k| k.chunk_id == c)) {
                        return Ok(lines);
                    }
                    first.get_or_insert(lines);
                }
            }
            first.ok_or(CodeStoreError::Ambiguous { path: p, roots })
        }
        other => other,
    }
}

/// A file outside the index, under one of `roots` (a relative path is taken from `base`).
fn read_disk(
    path: &str,
    start: u64,
    end: Option<u64>,
    base: &Path,
    roots: &[PathBuf],
) -> Result<CodeLines, ReadCodeError> {
    let refuse = |why: &str| ReadCodeError::NotReadable(format!("{path}: {why}"));
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
    let meta = std::fs::metadata(&canon).map_err(|_| refuse("cannot be read"))?;
    if !meta.is_file() {
        return Err(refuse("not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(refuse(&format!(
            "{} bytes: larger than the {} MiB read outside the index",
            meta.len(),
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    let bytes = crate::sources::regular_file::read(&canon).map_err(|e| refuse(&e.to_string()))?;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(refuse("a binary file"));
    }
    let text = String::from_utf8_lossy(&bytes);
    let kind = crate::sources::code::chunk::file_text_kind(path, &text);
    let red = redact::redact_as(&text, kind);
    let all: Vec<&str> = red.text.lines().collect();
    let total = all.len() as u64;
    let last = end
        .unwrap_or(u64::MAX)
        .min(start.saturating_add(MAX_LINES - 1))
        .min(total);
    let lines: Vec<String> = if start <= last {
        all[(start - 1) as usize..last as usize]
            .iter()
            .map(|l| l.to_string())
            .collect()
    } else {
        Vec::new()
    };
    let redacted = lines
        .iter()
        .map(|l| l.matches(redact::REDACTED).count() as u64)
        .sum();
    let rel = canon
        .strip_prefix(&root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string());
    Ok(CodeLines {
        root: root.display().to_string(),
        path: rel,
        start_line: start,
        end_line: if lines.is_empty() { 0 } else { last },
        total_lines: total,
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
