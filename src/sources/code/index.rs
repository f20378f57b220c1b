//! The code indexer: the only writer of `code.sqlite`.
//!
//! Only the roots given are walked; roots indexed earlier and not given now are left as they are.
//! A file whose size and mtime match the index is not read; one whose content hash matches is
//! only re-stamped; anything else is re-chunked, and its old chunks are replaced. Files of a
//! walked root that are gone (or no longer indexable) are removed. Chunk text is redacted before
//! it is stored, and the full-text terms are made from the redacted text, the path and the
//! symbol. Each chunk stored is added to the full-text index (`sources::lexical`) at once, its
//! file named in `lexical_pending` in the same transaction; the index commits once at the end
//! (`lexical::sync`).
//! With semantic search on, each stored chunk is also handed to the vector builder, which embeds
//! it on other threads while the walk goes on (see `vectors::Builder`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{params, Connection, Transaction};

use super::chunk::{chunk_file, ChunkedFile};
use super::lexical_docs;
use super::model::{Chunk, CodeIndexError, CodeIndexOptions, CodeIndexProgress, CodeIndexSummary};
use super::store;
use super::walk::{walk_root, WalkedFile};
use crate::sources::lexical::{sync, LexicalDoc, LexicalError, LexicalWriter};
use crate::sources::vectors::{self, Builder};
use crate::text::{embed, tokens};

/// Files handled per write transaction.
const BATCH: usize = 256;
/// Bytes inspected for a NUL to call a file binary.
const BINARY_PROBE: usize = 8 * 1024;

/// Why writing one file's rows failed: the store or its full-text index.
#[derive(Debug, thiserror::Error)]
enum WriteError {
    #[error(transparent)]
    Store(#[from] rusqlite::Error),
    #[error(transparent)]
    Lexical(#[from] LexicalError),
}

/// What the index knows about a file.
struct Known {
    id: i64,
    size: u64,
    mtime_ns: i64,
    sha256: String,
}

/// Index `roots` into the store at `db`, incrementally.
pub fn index_code(
    db: &Path,
    roots: &[PathBuf],
    opts: &CodeIndexOptions,
    progress: &mut dyn FnMut(&CodeIndexProgress),
) -> Result<CodeIndexSummary, CodeIndexError> {
    let started = Instant::now();
    let store_err = |source| CodeIndexError::Store {
        path: db.to_path_buf(),
        source,
    };
    let mut conn = store::open_rw(db).map_err(store_err)?;
    let lexical_err = |source| CodeIndexError::Lexical {
        path: db.to_path_buf(),
        source,
    };
    let write_err = |e| match e {
        WriteError::Store(source) => store_err(source),
        WriteError::Lexical(source) => lexical_err(sync::SyncError::Lexical(source)),
    };
    let lexical = sync::open(db, &conn, &lexical_docs::DERIVATION).map_err(lexical_err)?;
    let mut vectors = match opts.semantic.then(embed::shared) {
        Some(Ok(emb)) => Some(Builder::start(&conn, vectors::CHUNKS, emb).map_err(store_err)?),
        _ => None,
    };
    let mut summary = CodeIndexSummary::default();
    let roots = canonical_roots(roots, &mut summary.failed);

    let mut work: Vec<(usize, WalkedFile)> = Vec::new();
    for (k, (_, path)) in roots.iter().enumerate() {
        let walked = walk_root(
            path,
            opts.max_file_bytes,
            &opts.extra_skip_dirs,
            &opts.exclude_dirs,
        );
        for (reason, n) in walked.skipped {
            *summary.skipped.entry(reason).or_default() += n;
        }
        work.extend(walked.files.into_iter().map(|f| (k, f)));
    }
    summary.roots = roots.iter().map(|(s, _)| s.clone()).collect();
    summary.files_seen = work.len() as u64;
    let bytes_total: u64 = work.iter().map(|(_, f)| f.size).sum();

    let mut known: Vec<HashMap<String, Known>> = Vec::with_capacity(roots.len());
    for (root, _) in &roots {
        known.push(load_known(&conn, root).map_err(store_err)?);
    }
    let mut kept: Vec<HashSet<String>> = vec![HashSet::new(); roots.len()];
    let mut bytes_done = 0;
    for (b, batch) in work.chunks(BATCH).enumerate() {
        let tx = conn.transaction().map_err(store_err)?;
        for (i, (k, file)) in batch.iter().enumerate() {
            let root = &roots[*k].0;
            let keep = index_file(
                &tx,
                (root, file),
                known[*k].get(&file.rel),
                opts,
                &mut summary,
                Sinks {
                    lexical: &lexical,
                    vectors: vectors.as_mut(),
                },
            )
            .map_err(write_err)?;
            if keep {
                kept[*k].insert(file.rel.clone());
            }
            bytes_done += file.size;
            progress(&CodeIndexProgress {
                done: (b * BATCH + i + 1) as u64,
                total: work.len() as u64,
                bytes_done,
                bytes_total,
                path: file.rel.clone(),
            });
        }
        tx.commit().map_err(store_err)?;
    }

    let tx = conn.transaction().map_err(store_err)?;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for (k, (root, _)) in roots.iter().enumerate() {
        for (rel, old) in &known[k] {
            if !kept[k].contains(rel) {
                delete_file(&tx, old.id, &lexical).map_err(write_err)?;
                summary.files_deleted += 1;
            }
        }
        tx.execute(
            "INSERT INTO roots(root, indexed_at) VALUES(?1, ?2)
             ON CONFLICT(root) DO UPDATE SET indexed_at=excluded.indexed_at",
            params![root, now],
        )
        .map_err(store_err)?;
        let (files_chunks, lines, bytes): (i64, i64, i64) = tx
            .query_row(
                "SELECT coalesce(sum(chunks),0), coalesce(sum(lines),0), coalesce(sum(size),0)
                 FROM files WHERE root=?1",
                [root],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(store_err)?;
        summary.chunks += files_chunks.max(0) as u64;
        summary.lines += lines.max(0) as u64;
        summary.bytes += bytes.max(0) as u64;
    }
    let rev = store::compute_index_rev(&tx).map_err(store_err)?;
    store::meta_set(&tx, "index_rev", &rev).map_err(store_err)?;
    tx.commit().map_err(store_err)?;
    // Readers see the run's chunks once both the store and its full-text index hold them; the
    // store's commits are made durable first, so the index never holds rows a power loss could
    // take from the store.
    if lexical.has_changes() {
        conn.execute_batch("PRAGMA wal_checkpoint(FULL);")
            .map_err(store_err)?;
    }
    sync::commit(lexical, &conn).map_err(lexical_err)?;
    if let Some(v) = vectors {
        v.finish(&mut conn).map_err(store_err)?;
    }
    crate::sources::sqlite::give_back_free_pages(&conn).map_err(store_err)?;
    // Fold the WAL into the main file: readers then see one self-contained, unchanging file.
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    summary.index_rev = rev;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// Canonical, UTF-8, existing directory roots; duplicates and roots inside another given root
/// are dropped (their files are indexed once, under the outer root).
fn canonical_roots(
    roots: &[PathBuf],
    failed: &mut Vec<(String, String)>,
) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for root in roots {
        let shown = root.display().to_string();
        let canon = match root.canonicalize() {
            Ok(p) if p.is_dir() => p,
            Ok(_) => {
                failed.push((shown, "not a directory".into()));
                continue;
            }
            Err(e) => {
                failed.push((shown, e.to_string()));
                continue;
            }
        };
        let Some(s) = canon.to_str().map(str::to_string) else {
            failed.push((shown, "path is not valid UTF-8".into()));
            continue;
        };
        if !out.iter().any(|(o, _)| o == &s) {
            out.push((s, canon));
        }
    }
    let all = out.clone();
    out.retain(|(s, p)| {
        let outer = all.iter().find(|(o, op)| o != s && p.starts_with(op));
        if let Some((o, _)) = outer {
            failed.push((s.clone(), format!("inside root {o}; indexed there")));
        }
        outer.is_none()
    });
    out
}

fn load_known(conn: &Connection, root: &str) -> rusqlite::Result<HashMap<String, Known>> {
    let mut stmt =
        conn.prepare("SELECT id, path, size, mtime_ns, sha256 FROM files WHERE root=?1")?;
    let rows = stmt.query_map([root], |r| {
        Ok((
            r.get::<_, String>(1)?,
            Known {
                id: r.get(0)?,
                size: r.get::<_, i64>(2)?.max(0) as u64,
                mtime_ns: r.get(3)?,
                sha256: r.get(4)?,
            },
        ))
    })?;
    rows.collect()
}

fn bump(skipped: &mut BTreeMap<String, u64>, reason: &str) {
    *skipped.entry(reason.to_string()).or_default() += 1;
}

/// Where a stored chunk goes besides its table.
struct Sinks<'a> {
    lexical: &'a LexicalWriter,
    vectors: Option<&'a mut Builder>,
}

/// Index one file; returns whether it stays in the index.
fn index_file(
    tx: &Transaction<'_>,
    (root, file): (&str, &WalkedFile),
    known: Option<&Known>,
    opts: &CodeIndexOptions,
    summary: &mut CodeIndexSummary,
    sinks: Sinks<'_>,
) -> Result<bool, WriteError> {
    if let Some(k) = known {
        if k.size == file.size && k.mtime_ns == file.mtime_ns {
            summary.files_unchanged += 1;
            return Ok(true);
        }
    }
    let bytes = match crate::sources::regular_file::read(&file.abs) {
        Ok(b) => b,
        Err(e) => {
            summary
                .failed
                .push((format!("{root}/{}", file.rel), e.to_string()));
            bump(&mut summary.skipped, "unreadable");
            return Ok(known.is_some()); // keep what we had; it is reported stale on search
        }
    };
    summary.bytes_read += bytes.len() as u64;
    if bytes.len() as u64 > opts.max_file_bytes {
        bump(&mut summary.skipped, "too_large");
        return Ok(false);
    }
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        bump(&mut summary.skipped, "binary");
        return Ok(false);
    }
    let sha = store::content_hash(&bytes);
    let size = bytes.len() as i64;
    if let Some(k) = known {
        if k.sha256 == sha {
            tx.execute(
                "UPDATE files SET size=?1, mtime_ns=?2 WHERE id=?3",
                params![size, file.mtime_ns, k.id],
            )?;
            summary.files_unchanged += 1;
            return Ok(true);
        }
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            summary.lossy_utf8 += 1;
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    let chunked = chunk_file(root, &file.rel, &text, opts);
    summary.secrets_redacted += chunked.secrets;
    if chunked.parse_fallback {
        summary.parse_fallbacks += 1;
    }
    let file_id = upsert_file(
        tx,
        (root, file),
        known,
        (size, &sha),
        &chunked,
        summary,
        sinks.lexical,
    )?;
    insert_chunks(
        tx,
        (root, &file.rel, file_id),
        &chunked.chunks,
        summary,
        sinks,
    )?;
    Ok(true)
}

/// The file's row, written new or updated in place (its old chunks deleted); returns its id.
fn upsert_file(
    tx: &Transaction<'_>,
    (root, file): (&str, &WalkedFile),
    known: Option<&Known>,
    (size, sha): (i64, &str),
    chunked: &ChunkedFile,
    summary: &mut CodeIndexSummary,
    lexical: &LexicalWriter,
) -> Result<i64, WriteError> {
    Ok(match known {
        Some(k) => {
            delete_chunks(tx, k.id, lexical)?;
            tx.execute(
                "UPDATE files SET size=?1, mtime_ns=?2, sha256=?3, chunks=?4, lines=?5 WHERE id=?6",
                params![
                    size,
                    file.mtime_ns,
                    sha,
                    chunked.chunks.len() as i64,
                    chunked.lines as i64,
                    k.id
                ],
            )?;
            summary.files_changed += 1;
            k.id
        }
        None => {
            tx.execute(
                "INSERT INTO files(root, path, size, mtime_ns, sha256, chunks, lines)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    root,
                    file.rel,
                    size,
                    file.mtime_ns,
                    sha,
                    chunked.chunks.len() as i64,
                    chunked.lines as i64
                ],
            )?;
            summary.files_new += 1;
            tx.last_insert_rowid()
        }
    })
}

/// The chunks of one file into the table, its full-text index and (when semantic search is on)
/// the vector builder; a chunk id already stored (the same text elsewhere) is kept once.
fn insert_chunks(
    tx: &Transaction<'_>,
    (root, rel, file_id): (&str, &str, i64),
    chunks: &[Chunk],
    summary: &mut CodeIndexSummary,
    sinks: Sinks<'_>,
) -> Result<(), WriteError> {
    sync::mark(tx, file_id)?;
    let path_terms = tokens::index_text(rel);
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO chunks(chunk_id, file_id, root, path, start_line, end_line,
            source_kind, symbol, symbol_kind, text, terms, sym_terms, path_terms)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    let Sinks {
        lexical,
        mut vectors,
    } = sinks;
    for c in chunks {
        let sym_terms = c
            .symbol
            .as_deref()
            .map(tokens::index_text)
            .unwrap_or_default();
        let text_terms = tokens::index_text(&c.text);
        let inserted = insert.execute(params![
            c.chunk_id,
            file_id,
            root,
            c.path,
            c.start_line as i64,
            c.end_line as i64,
            c.source_kind,
            c.symbol,
            c.symbol_kind,
            c.text,
            text_terms,
            sym_terms,
            path_terms
        ])?;
        if inserted == 1 {
            let id = tx.last_insert_rowid();
            lexical.add(LexicalDoc {
                id,
                key: file_id as u64,
                time_ms: None,
                terms: &lexical_docs::terms(&text_terms, &sym_terms, &path_terms),
            })?;
            if let Some(v) = vectors.as_deref_mut() {
                v.add(
                    id,
                    vectors::chunk_text(&c.path, c.symbol.as_deref(), &c.text),
                );
            }
            summary.chunks_written += 1;
        }
    }
    Ok(())
}

fn delete_chunks(
    tx: &Transaction<'_>,
    file_id: i64,
    lexical: &LexicalWriter,
) -> Result<(), WriteError> {
    lexical.delete_key(file_id as u64)?;
    sync::mark(tx, file_id)?;
    tx.execute("DELETE FROM chunks WHERE file_id=?1", [file_id])?;
    Ok(())
}

fn delete_file(
    tx: &Transaction<'_>,
    file_id: i64,
    lexical: &LexicalWriter,
) -> Result<(), WriteError> {
    delete_chunks(tx, file_id, lexical)?;
    tx.execute("DELETE FROM files WHERE id=?1", [file_id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::code::CodeStore;

    #[test]
    fn weird_files_do_not_break_indexing() {
        let repo = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let w = |rel: &str, body: &[u8]| std::fs::write(repo.path().join(rel), body).unwrap();
        w("broken.rs", b"fn ok() {}\nimpl {{{{ fn (\n\xff\xfe");
        w("empty.py", b"");
        w("deep.js", "(".repeat(50_000).as_bytes());
        w(
            "long.json",
            format!("{{\"k\": \"{}\"}}", "x".repeat(300_000)).as_bytes(),
        );
        w("big.txt", &vec![b'a'; 2 * 1024 * 1024]);
        w("nul.rs", b"fn a() {}\0");
        let db = data.path().join("code.sqlite");
        let roots = [repo.path().to_path_buf(), repo.path().join("missing")];
        let s = index_code(&db, &roots, &CodeIndexOptions::default(), &mut |_| {}).unwrap();
        assert_eq!(s.skipped.get("too_large"), Some(&1), "{s:?}");
        assert_eq!(s.skipped.get("binary"), Some(&1), "{s:?}");
        assert_eq!(s.lossy_utf8, 1);
        assert_eq!(s.files_new, 4);
        assert_eq!(s.failed.len(), 1, "the missing root is reported: {s:?}");
        let store = CodeStore::open(&db).unwrap();
        let broken = store.read_code("broken.rs", 1, None).unwrap();
        assert!(broken
            .chunks
            .iter()
            .any(|c| c.symbol.as_deref() == Some("ok")));
        assert!(store
            .read_code("empty.py", 1, None)
            .unwrap()
            .lines
            .is_empty());
    }
}
