//! `read_code` (the `ragraf_code` equivalent) and the freshness check shared with search.
//!
//! A file is looked up in the index by its root-relative or absolute path; the lines returned are
//! the file's CURRENT lines, redacted (whole-file, line-preserving, so a private key block is
//! hidden even when the range starts inside it), together with the chunks that overlap them and a
//! fingerprint freshness verdict. When the file is gone (or has become something the index would
//! not take: larger than [`MAX_READ_BYTES`], binary), the lines are rebuilt from the indexed
//! chunks and marked stale: partial data beats a refusal, and a huge file is never read.
//! [`read_text_file`] and [`window`] are the rules every read of code from disk shares.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use super::chunk::{file_text_kind, redact_lines};
use super::model::{ChunkRef, CodeLines, CodeStoreError, Freshness};
use super::search::CodeStore;
use super::store;
use super::walk::mtime_ns;
use crate::text::redact::REDACTED;

/// At most this many lines per `read_code` call.
pub const MAX_READ_LINES: u64 = 2_000;
/// Files larger than this are never read from disk (the index itself takes smaller ones).
pub const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes inspected for a NUL to call a file binary.
const BINARY_PROBE: usize = 8 * 1024;

/// Why a file on disk is not read as text.
#[derive(Debug, thiserror::Error)]
pub enum TextFileError {
    #[error("{0} bytes: larger than the {max} MiB a read takes", max = MAX_READ_BYTES / (1024 * 1024))]
    TooLarge(u64),
    #[error("a binary file")]
    Binary,
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The bytes of a regular text file of at most [`MAX_READ_BYTES`] (a file that grows while it is
/// read is refused too, without reading past the cap).
pub fn read_text_file(path: &Path) -> Result<Vec<u8>, TextFileError> {
    let file = crate::sources::regular_file::open(path)?;
    let len = file.metadata()?.len();
    if len > MAX_READ_BYTES {
        return Err(TextFileError::TooLarge(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_READ_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(TextFileError::TooLarge(bytes.len() as u64));
    }
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return Err(TextFileError::Binary);
    }
    Ok(bytes)
}

/// Lines `start..=end` of a file's (redacted) lines, at most [`MAX_READ_LINES`] of them: the
/// lines, the last line returned (0 when none is in range) and the values redacted in them.
pub fn window(all: &[String], start: u64, end: Option<u64>) -> (Vec<String>, u64, u64) {
    let start = start.max(1);
    let last = end
        .unwrap_or(u64::MAX)
        .min(start.saturating_add(MAX_READ_LINES - 1))
        .min(all.len() as u64);
    if start > last {
        return (Vec::new(), 0, 0);
    }
    let lines = all[(start - 1) as usize..last as usize].to_vec();
    let redacted = lines
        .iter()
        .map(|l| l.matches(REDACTED).count() as u64)
        .sum();
    (lines, last, redacted)
}

/// What the code index recorded about a file's content, to tell whether it changed since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFingerprint {
    pub size: u64,
    pub mtime_ns: i64,
    pub sha256: String,
}

/// True when the file at `abs` no longer matches `row`: gone, another size, or (when only the
/// mtime moved) another content hash.
pub fn file_is_stale(abs: &Path, row: &FileFingerprint) -> bool {
    let Ok(meta) = std::fs::metadata(abs) else {
        return true;
    };
    if meta.len() != row.size {
        return true;
    }
    if mtime_ns(&meta) == row.mtime_ns {
        return false;
    }
    match read_text_file(abs) {
        Ok(bytes) => store::content_hash(&bytes) != row.sha256,
        Err(_) => true,
    }
}

/// An indexed file located from a user-given path.
struct Located {
    id: i64,
    root: String,
    path: String,
    lines: u64,
    row: FileFingerprint,
}

const FILE_COLS: &str = "id, root, path, lines, size, mtime_ns, sha256";

fn located(r: &rusqlite::Row<'_>) -> rusqlite::Result<Located> {
    Ok(Located {
        id: r.get(0)?,
        root: r.get(1)?,
        path: r.get(2)?,
        lines: r.get::<_, i64>(3)?.max(0) as u64,
        row: FileFingerprint {
            size: r.get::<_, i64>(4)?.max(0) as u64,
            mtime_ns: r.get(5)?,
            sha256: r.get(6)?,
        },
    })
}

fn locate(c: &Connection, given: &str) -> Result<Located, CodeStoreError> {
    let p = Path::new(given);
    if p.is_absolute() {
        let mut forms = vec![given.to_string()];
        if let Some(s) = p
            .canonicalize()
            .ok()
            .and_then(|c| c.to_str().map(String::from))
        {
            forms.push(s);
        }
        let sql = format!("SELECT {FILE_COLS} FROM files WHERE root || '/' || path = ?1");
        for form in forms {
            if let Some(found) = c.query_row(&sql, [&form], located).optional()? {
                return Ok(found);
            }
        }
        return Err(CodeStoreError::NotIndexed(given.to_string()));
    }
    let rel = given.replace('\\', "/");
    let rel = rel.trim_start_matches("./");
    let sql = format!("SELECT {FILE_COLS} FROM files WHERE path = ?1 ORDER BY root");
    let mut stmt = c.prepare_cached(&sql)?;
    let mut found: Vec<Located> = stmt
        .query_map([rel], located)?
        .collect::<Result<Vec<_>, _>>()?;
    match found.len() {
        0 => Err(CodeStoreError::NotIndexed(given.to_string())),
        1 => Ok(found.remove(0)),
        _ => Err(CodeStoreError::Ambiguous {
            path: given.to_string(),
            roots: found
                .iter()
                .map(|f| f.root.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

impl CodeStore {
    /// Lines `start..=end` (1-based; `end` defaults to, and is capped at, `start` + 1,999) of an
    /// indexed file, redacted, with freshness and the overlapping chunks.
    pub fn read_code(
        &self,
        path_or_abs: &str,
        start: u64,
        end: Option<u64>,
    ) -> Result<CodeLines, CodeStoreError> {
        let (file, index_rev) =
            self.with_conn(|c| Ok((locate(c, path_or_abs)?, store::meta_get(c, "index_rev"))))?;
        let start = start.max(1);
        let abs = Path::new(&file.root).join(&file.path);
        // Never read outside the repository: a file replaced by a symlink to elsewhere (or a
        // path that now resolves outside the root) is served from the index instead, as stale.
        let inside = match (
            std::fs::canonicalize(&abs),
            std::fs::canonicalize(&file.root),
        ) {
            (Ok(real), Ok(root)) => real.starts_with(&root),
            (Err(_), _) => true,
            (Ok(_), Err(_)) => false,
        };
        let read = if inside {
            read_text_file(&abs)
        } else {
            Err(TextFileError::Io(std::io::ErrorKind::NotFound.into()))
        };
        let (all, stale, read_from) = match read {
            Ok(bytes) => {
                let same_mtime =
                    std::fs::metadata(&abs).is_ok_and(|m| mtime_ns(&m) == file.row.mtime_ns);
                let stale = file.row.size != bytes.len() as u64
                    || (!same_mtime && store::content_hash(&bytes) != file.row.sha256);
                let text = String::from_utf8_lossy(&bytes);
                (
                    redact_lines(&text, file_text_kind(&file.path, &text)).0,
                    stale,
                    "disk",
                )
            }
            Err(TextFileError::Io(e)) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(CodeStoreError::Io {
                    path: abs.display().to_string(),
                    source: e,
                })
            }
            // Gone, or no longer a text file the index would take: what the index holds.
            Err(_) => (self.lines_from_index(file.id, file.lines)?, true, "index"),
        };
        let total = all.len() as u64;
        let (lines, end, redacted) = window(&all, start, end);
        let chunks = if lines.is_empty() {
            Vec::new()
        } else {
            self.overlapping(file.id, start, end)?
        };
        Ok(CodeLines {
            root: file.root,
            path: file.path,
            start_line: start,
            end_line: end,
            total_lines: total,
            lines,
            read_from: read_from.to_string(),
            redacted,
            index_rev,
            freshness: Freshness {
                stale,
                verified_by: "fingerprint".to_string(),
            },
            chunks,
        })
    }

    fn overlapping(
        &self,
        file_id: i64,
        start: u64,
        end: u64,
    ) -> Result<Vec<ChunkRef>, CodeStoreError> {
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT chunk_id, start_line, end_line, source_kind, symbol, symbol_kind
                 FROM chunks WHERE file_id=?1 AND start_line <= ?3 AND end_line >= ?2
                 ORDER BY start_line, end_line, chunk_id",
            )?;
            let rows =
                stmt.query_map(rusqlite::params![file_id, start as i64, end as i64], |r| {
                    Ok(ChunkRef {
                        chunk_id: r.get(0)?,
                        start_line: r.get::<_, i64>(1)?.max(0) as u64,
                        end_line: r.get::<_, i64>(2)?.max(0) as u64,
                        source_kind: r.get(3)?,
                        symbol: r.get(4)?,
                        symbol_kind: r.get(5)?,
                    })
                })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// The file's lines as the index holds them (already redacted); lines no chunk covers are
    /// empty.
    fn lines_from_index(&self, file_id: i64, total: u64) -> Result<Vec<String>, CodeStoreError> {
        self.with_conn(|c| {
            let mut stmt =
                c.prepare_cached("SELECT start_line, text FROM chunks WHERE file_id=?1")?;
            let rows = stmt.query_map([file_id], |r| {
                Ok((r.get::<_, i64>(0)?.max(1) as u64, r.get::<_, String>(1)?))
            })?;
            let mut map: BTreeMap<u64, String> = BTreeMap::new();
            for row in rows {
                let (start, text) = row?;
                for (k, line) in text.split('\n').enumerate() {
                    map.entry(start + k as u64)
                        .or_insert_with(|| line.to_string());
                }
            }
            let n = total.max(map.keys().next_back().copied().unwrap_or(0));
            Ok((1..=n)
                .map(|i| map.get(&i).cloned().unwrap_or_default())
                .collect())
        })
    }
}
