//! The one writer of a full-text index: adds rows, deletes a group's rows, commits with the
//! payload that names its version and store.
//!
//! The Tantivy writer (its threads and memory arena) is started only when something is written,
//! so an index run that changes nothing costs an open of `meta.json` and no more.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tantivy::{Index, IndexWriter, TantivyDocument, Term};

use super::{analyzer, dir_for, Fields, LexicalError, Payload, TOKENIZER, VERSION};

/// The writer's memory arena: one indexing thread, flushed to a segment when full. Small enough
/// for the peak a full index may take (docs/PERFORMANCE.md), large enough for few segments.
const ARENA_BYTES: usize = 48_000_000;

/// The smallest arena Tantivy accepts: for an index made in memory at once from a few hundred rows.
pub(super) const MIN_ARENA_BYTES: usize = 15_000_000;

/// One row as the index holds it.
#[derive(Debug, Clone, Copy)]
pub struct LexicalDoc<'a> {
    pub id: i64,
    pub key: u64,
    pub time_ms: Option<i64>,
    pub terms: &'a str,
}

pub struct LexicalWriter {
    dir: PathBuf,
    /// Where this writer writes: `dir`, or for an index made anew a folder beside it that
    /// replaces `dir` only once committed, so readers never see it half built.
    build_dir: PathBuf,
    index: Index,
    fields: Fields,
    store_id: String,
    /// The store file, whose permissions the index's files take.
    store: PathBuf,
    writer: OnceLock<IndexWriter>,
    /// Made anew by this writer: committed even when no row is added, so readers can open it.
    fresh: bool,
}

impl LexicalWriter {
    /// The index of `store` for writing. It is made anew (empty: [`LexicalWriter::is_fresh`],
    /// every row must be added again) when it is missing, is not a folder, does not open (every
    /// segment is opened), is of another version or another store than `store_id`, or holds
    /// another number of rows than `expected_rows` (when the caller knows it: a store rolled
    /// back behind its index, a row added twice).
    pub fn open(
        store: &Path,
        store_id: &str,
        expected_rows: Option<u64>,
    ) -> Result<LexicalWriter, LexicalError> {
        let dir = dir_for(store);
        let existing = Index::open_in_dir(&dir).ok().filter(|index| {
            Payload::read(index).is_some_and(|p| p.version == VERSION && p.store_id == store_id)
                && Fields::of(&index.schema()).is_ok()
                && index
                    .reader()
                    .map(|r| r.searcher().num_docs())
                    .is_ok_and(|n| expected_rows.is_none_or(|want| want == n))
        });
        let (index, build_dir, fresh) = match existing {
            Some(index) => (index, dir.clone(), false),
            None => {
                let build_dir = building_dir(store);
                (create(&build_dir)?, build_dir, true)
            }
        };
        index.tokenizers().register(TOKENIZER, analyzer());
        let fields = Fields::of(&index.schema())?;
        Ok(LexicalWriter {
            dir,
            build_dir,
            index,
            fields,
            store_id: store_id.to_string(),
            store: store.to_path_buf(),
            writer: OnceLock::new(),
            fresh,
        })
    }

    /// Whether the index was made anew by [`LexicalWriter::open`] (it holds no row).
    pub fn is_fresh(&self) -> bool {
        self.fresh
    }

    fn writer(&self) -> Result<&IndexWriter, LexicalError> {
        if let Some(w) = self.writer.get() {
            return Ok(w);
        }
        let w = self
            .index
            .writer_with_num_threads::<TantivyDocument>(1, ARENA_BYTES)?;
        Ok(self.writer.get_or_init(|| w))
    }

    pub fn add(&self, doc: LexicalDoc<'_>) -> Result<(), LexicalError> {
        self.writer()?.add_document(document(self.fields, doc))?;
        Ok(())
    }

    /// Deletes every row of group `key` added before this call (rows added after it stay).
    pub fn delete_key(&self, key: u64) -> Result<(), LexicalError> {
        self.writer()?
            .delete_term(Term::from_field_u64(self.fields.key, key));
        Ok(())
    }

    /// Whether anything was written (or the index is new and must be committed to exist).
    pub fn has_changes(&self) -> bool {
        self.fresh || self.writer.get().is_some()
    }

    /// Makes everything written visible to readers, in one commit, and waits for the merges it
    /// started (a one-shot run must not leave them half done).
    pub fn commit(mut self) -> Result<(), LexicalError> {
        if !self.has_changes() {
            return Ok(());
        }
        self.writer()?;
        let Some(mut writer) = self.writer.take() else {
            return Ok(());
        };
        let payload = serde_json::to_string(&Payload {
            version: VERSION,
            store_id: self.store_id.clone(),
        })
        .unwrap_or_default();
        let mut prepared = writer.prepare_commit()?;
        prepared.set_payload(&payload);
        prepared.commit()?;
        writer.wait_merging_threads()?;
        let io = |source| LexicalError::Io {
            path: self.dir.clone(),
            source,
        };
        same_permissions(&self.store, &self.build_dir).map_err(io)?;
        if self.fresh {
            put_in_place(&self.build_dir, &self.dir).map_err(io)?;
        }
        Ok(())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// One row as a Tantivy document.
pub(super) fn document(fields: Fields, doc: LexicalDoc<'_>) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_text(fields.terms, doc.terms);
    d.add_u64(fields.id, doc.id.max(0) as u64);
    d.add_u64(fields.key, doc.key);
    if let Some(t) = doc.time_ms {
        d.add_i64(fields.time, t);
    }
    d
}

/// Where an index made anew is built before it replaces the index of `store`.
fn building_dir(store: &Path) -> PathBuf {
    store.with_extension("lexical-new")
}

/// A new, empty index in `dir` (whatever was there goes: it is derived data).
fn create(dir: &Path) -> Result<Index, LexicalError> {
    let io = |source| LexicalError::Io {
        path: dir.to_path_buf(),
        source,
    };
    super::remove_any(dir).map_err(io)?;
    std::fs::create_dir_all(dir).map_err(io)?;
    Ok(Index::create_in_dir(dir, super::schema())?)
}

/// `new` (a committed index) becomes `dir`: whatever `dir` was (an old index, a file, a link) is
/// moved aside first and removed after, so a reader finds either the old index or the new one.
fn put_in_place(new: &Path, dir: &Path) -> std::io::Result<()> {
    let old = dir.with_extension("lexical-old");
    super::remove_any(&old)?;
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => std::fs::rename(dir, &old)?,
        Ok(_) => std::fs::remove_file(dir)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::fs::rename(new, dir)?;
    super::remove_any(&old)
}

/// The index's files readable by whoever may read the store (Tantivy writes `meta.json` as 0600).
#[cfg(unix)]
fn same_permissions(store: &Path, dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(store) else {
        return Ok(());
    };
    let mode = meta.permissions().mode() & 0o666;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_file() {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(mode))?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn same_permissions(_store: &Path, _dir: &Path) -> std::io::Result<()> {
    Ok(())
}
