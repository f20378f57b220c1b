//! The full-text index of a store: Tantivy beside the SQLite file, derived from it and
//! rebuildable from it at any time.
//!
//! Why not FTS5 any more (docs/RANKING.md, "Lexical engine"): FTS5 scores every row a query
//! matches and cannot prune, so a question of a dozen ordinary words over a million events had to
//! be narrowed conjunctively before it was ranked (bounded matching), its document counts
//! computed per query and cached, and its segments tidied after every run. Tantivy keeps each
//! term's statistics at index time and ranks a disjunction of every query term by BM25 with
//! block-max WAND: any term may match, a rare one dominates through its IDF, and only the top
//! documents are scored. At the 10× world its index is a quarter of FTS5's and a warm query's
//! P95 4 ms against 100 ms.
//!
//! What it holds per document: the text's terms (the project's own token stream, already
//! stemmed: `tokens::index_text`; a field that weighs more, such as a code chunk's symbol, is
//! repeated in it, BM25F's way: `sources::code::lexical_docs`), the row id in the store (`id`), the group the row belongs to
//! (`key`: a session, a file), by which a group is deleted and filtered, and the row's time in
//! milliseconds (`time`) for time filters. Nothing is stored: the text stays in SQLite, and a
//! hit is read back from there by id.
//!
//! One writer (the indexer, under the data dir's index lock) and any number of readers, each
//! reloading when the writer has committed ([`LexicalIndex::searcher`]). The store says in its
//! own table which groups changed since the last commit here, so a writer killed between its
//! SQLite commit and its Tantivy commit leaves nothing behind that the next run does not redo
//! (`sources::episodes::lexical_sync`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tantivy::directory::MmapDirectory;
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::schema::{FAST, INDEXED};
use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer};
use tantivy::{Index, IndexReader, ReloadPolicy, Searcher};

mod directory;
pub mod query;
pub mod sync;
pub mod writer;

pub use query::{LexicalQuery, Ranked, TermGroup};
pub use writer::{LexicalDoc, LexicalWriter};

/// Bumped when what a document holds or how its terms are split changes: an index of another
/// version is rebuilt from its store (never from the transcripts).
pub const VERSION: u32 = 1;

/// The tokenizer's name in the index's registry.
const TOKENIZER: &str = "knowledge";

/// Tokens longer than this many bytes are not indexed (a base64 blob, a minified line): no
/// question names one, and each would be a term of its own in the dictionary.
const MAX_TOKEN_BYTES: usize = 256;

/// The full-text index of `store` (`episodes.sqlite` → `episodes.lexical/`): one place that
/// says where, for the writer and every reader.
pub fn dir_for(store: &Path) -> PathBuf {
    store.with_extension("lexical")
}

/// The fields every document has.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    pub terms: Field,
    pub id: Field,
    pub key: Field,
    pub time: Field,
}

impl Fields {
    pub(crate) const ID: &'static str = "id";
    pub(crate) const KEY: &'static str = "key";
    pub(crate) const TIME: &'static str = "time";

    fn of(schema: &Schema) -> Result<Fields, LexicalError> {
        let field = |name: &str| {
            schema
                .get_field(name)
                .map_err(|_| LexicalError::Schema(name.to_string()))
        };
        Ok(Fields {
            terms: field("terms")?,
            id: field(Self::ID)?,
            key: field(Self::KEY)?,
            time: field(Self::TIME)?,
        })
    }
}

pub(crate) fn schema() -> Schema {
    let mut b = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    b.add_text_field(
        "terms",
        TextOptions::default().set_indexing_options(indexing),
    );
    b.add_u64_field(Fields::ID, FAST);
    b.add_u64_field(Fields::KEY, FAST | INDEXED);
    b.add_i64_field(Fields::TIME, FAST);
    b.build()
}

/// How terms are split: on what is not a letter or digit, so the team index (PostgreSQL) and this
/// one see the same token stream from `tokens::index_text` (the test below holds it).
pub(crate) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .build()
}

/// Why the full-text index cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LexicalError {
    #[error("the full-text index {0} does not exist yet; run `knowledge index`")]
    Missing(PathBuf),
    #[error("the full-text index {path} cannot be read ({source}); run `knowledge index`")]
    Open {
        path: PathBuf,
        #[source]
        source: tantivy::TantivyError,
    },
    #[error("the full-text index has no field {0}; run `knowledge index`")]
    Schema(String),
    #[error("the full-text index {path} is of another version; run `knowledge index`")]
    Version { path: PathBuf },
    #[error("the full-text index failed: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error("the full-text index cannot be written at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What a commit records beside the segments: the index's version and the store it was built
/// from, so an index left beside another store (or of another version) is never read as this
/// one's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Payload {
    pub version: u32,
    pub store_id: String,
}

impl Payload {
    pub(crate) fn read(index: &Index) -> Option<Payload> {
        let metas = index.load_metas().ok()?;
        serde_json::from_str(metas.payload.as_deref()?).ok()
    }
}

/// A read-only handle on a full-text index, reloading what the writer commits.
pub struct LexicalIndex {
    dir: PathBuf,
    reader: IndexReader,
    fields: Fields,
    /// The store's id the index must carry (`None`: not checked).
    store_id: Option<String>,
    /// The identity of `meta.json` the reader last loaded (the writer replaces it on commit).
    loaded: Mutex<Option<MetaStamp>>,
    /// Held in memory ([`LexicalIndex::in_memory`]): nothing on disk to reload from.
    in_memory: bool,
}

/// What tells one commit's `meta.json` from another's without reading it: the writer replaces
/// the file whole (a new inode) on every commit.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MetaStamp {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

fn meta_stamp(dir: &Path) -> Option<MetaStamp> {
    let m = std::fs::metadata(dir.join("meta.json")).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let inode = 0;
    Some(MetaStamp {
        inode,
        len: m.len(),
        modified: m.modified().ok(),
    })
}

impl LexicalIndex {
    /// Opens the index of `store` for reading; `expected_store_id` is the store's own id
    /// (`None`: not checked).
    pub fn open(store: &Path, expected_store_id: Option<&str>) -> Result<Self, LexicalError> {
        let dir = dir_for(store);
        if !dir.join("meta.json").is_file() {
            return Err(LexicalError::Missing(dir));
        }
        let open_err = |source| LexicalError::Open {
            path: dir.clone(),
            source,
        };
        let mmap = MmapDirectory::open(&dir).map_err(|e| open_err(e.into()))?;
        let index = Index::open(directory::ReadTolerant::new(mmap)).map_err(open_err)?;
        index.tokenizers().register(TOKENIZER, analyzer());
        match Payload::read(&index) {
            Some(p)
                if p.version == VERSION
                    && expected_store_id.is_none_or(|want| want == p.store_id) => {}
            _ => return Err(LexicalError::Version { path: dir }),
        }
        let fields = Fields::of(&index.schema())?;
        let stamp = meta_stamp(&dir);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(open_err)?;
        Ok(LexicalIndex {
            dir,
            reader,
            fields,
            store_id: expected_store_id.map(str::to_string),
            loaded: Mutex::new(stamp),
            in_memory: false,
        })
    }

    /// An index held in memory, made from `docs` at once: for a store small enough that
    /// indexing it costs less than keeping an index beside it in step (the skill catalog: a few
    /// hundred rows), so it can never be stale, missing or of another store.
    pub fn in_memory<'a>(
        docs: impl IntoIterator<Item = LexicalDoc<'a>>,
    ) -> Result<Self, LexicalError> {
        let index = Index::create_in_ram(schema());
        index.tokenizers().register(TOKENIZER, analyzer());
        let fields = Fields::of(&index.schema())?;
        let mut writer = index
            .writer_with_num_threads::<tantivy::TantivyDocument>(1, writer::MIN_ARENA_BYTES)?;
        for doc in docs {
            writer.add_document(writer::document(fields, doc))?;
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(LexicalIndex {
            dir: PathBuf::new(),
            reader,
            fields,
            store_id: None,
            loaded: Mutex::new(None),
            in_memory: true,
        })
    }

    /// A searcher over the latest commit: reloaded first when the writer has committed since.
    pub fn searcher(&self) -> Result<Searcher, LexicalError> {
        if self.in_memory {
            return Ok(self.reader.searcher());
        }
        let now = meta_stamp(&self.dir);
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if *loaded != now {
            self.reader.reload()?;
            // The commit may be of an index made anew: for another version or another store.
            let searcher = self.reader.searcher();
            match Payload::read(searcher.index()) {
                Some(p)
                    if p.version == VERSION
                        && self.store_id.as_ref().is_none_or(|id| *id == p.store_id) => {}
                _ => {
                    return Err(LexicalError::Version {
                        path: self.dir.clone(),
                    })
                }
            }
            *loaded = now;
        }
        Ok(self.reader.searcher())
    }

    pub(crate) fn fields(&self) -> Fields {
        self.fields
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Bytes of the index's files (for `stats` and the benches).
pub fn size_on_disk(store: &Path) -> u64 {
    std::fs::read_dir(dir_for(store))
        .map(|it| {
            it.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Removes `path` whatever it is (a folder and what it holds, a file, a link, a FIFO); gone
/// already is fine.
pub(crate) fn remove_any(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes the full-text index of `store` (`knowledge index --rebuild`).
pub fn remove(store: &Path) -> std::io::Result<()> {
    remove_any(&dir_for(store))
}

/// A store's full-text index, opened on its first search and kept: the one way the episodes
/// and code stores reach theirs.
#[derive(Default)]
pub struct LexicalSlot(Mutex<Option<Arc<LexicalIndex>>>);

impl LexicalSlot {
    /// The index of `store`, checked to be built from it (its id read through `conn`).
    pub fn get(
        &self,
        store: &Path,
        conn: &rusqlite::Connection,
    ) -> Result<Arc<LexicalIndex>, LexicalError> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(index) = slot.as_ref() {
            return Ok(index.clone());
        }
        let index = Arc::new(LexicalIndex::open(store, sync::stored_id(conn).as_deref())?);
        *slot = Some(index.clone());
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    /// The stored form is what the full-text index (Tantivy's `SimpleTokenizer`, lowercased) splits
    /// into exactly the same terms: no term is cut, joined or changed on the way in, whatever the
    /// text held (query syntax, IPs, identifiers, Cyrillic, hashes).
    #[test]
    fn the_full_text_index_keeps_every_stored_term_intact() {
        use tantivy::tokenizer::TokenStream;
        let texts = [
            "Fixed the access to databases on 176.99.5.35",
            "починил доступ к базам данных, ёлка",
            "fn getUserName() -> String; user_name HTTP2Server",
            "NEAR OR AND NOT the words \"* ( ) x:y ^start a* col:term {x y}: z",
            "sha 3f2a9c0d1e4b5a6c7d8e9f00a1b2c3d4 v1.2.3 base64 ZXZpbA==",
            "Ünïcödé façade naïve — emoji 🚀 tabs\tand\nnewlines",
            "Ёжик getUserName HTTPServer 176.99.5.35 naïve café Straße ﬁle İI \
             漢字 かな 한국어 العربية ελληνικά x²y ½ Ⅻ v1.2.3 a1b2c3 ДОСТУПА fixing_it \
             🙂 emoji\u{200d}join tab\there",
        ];
        let mut analyzer = super::analyzer();
        for text in texts {
            let stored = crate::text::tokens::index_text(text);
            let mut stream = analyzer.token_stream(&stored);
            let mut split = Vec::new();
            while stream.advance() {
                split.push(stream.token().text.clone());
            }
            let ours: Vec<&str> = stored.split(' ').filter(|t| !t.is_empty()).collect();
            assert_eq!(split, ours, "{text:?}");
            for t in &ours {
                assert!(
                    t.chars().all(|c| c.is_alphanumeric() && !c.is_uppercase()),
                    "{t:?}"
                );
            }
        }
    }
}
