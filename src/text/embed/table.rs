//! The static embedding table (`assets/embeddings/table.kemb`, built by
//! `scripts/build_embeddings.py`), read in place: rows, scales and strings are borrowed from the
//! bytes compiled into the binary, and words are found through the table's lookup layout
//! ([`super::layout`], derived from the table at build time), so opening the table builds
//! nothing and a lookup touches only the query's own slots, strings and rows.
//!
//! Layout (little endian): `b"KEMB"`, u32 version (2), u32 dims, u32 pieces, u32 words, u32
//! stems, u32 strings length; then one f32 scale per row, the int8 rows, and the row strings
//! (each ending in `\n`, pieces first — a leading `▁` marks a piece that starts a word — then
//! whole words, then Russian Snowball stems: one row for every inflection of a dictionary word).

use super::layout::{self, Header, Kind, LayoutError, LayoutView};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TableError {
    #[error("the embedding table is truncated or has a bad header")]
    Header,
    #[error("the embedding table has version {0}; this build reads version 2")]
    Version(u32),
    #[error("the embedding table's sizes do not add up ({0} bytes, header says {1})")]
    Size(usize, usize),
    #[error("the embedding table's strings are not UTF-8 or not one per row")]
    Strings,
}

impl From<LayoutError> for TableError {
    fn from(e: LayoutError) -> Self {
        match e {
            LayoutError::Header => TableError::Header,
            LayoutError::Version(v) => TableError::Version(v),
            LayoutError::Size(a, b) => TableError::Size(a, b),
            LayoutError::Strings => TableError::Strings,
        }
    }
}

/// A table read in place.
pub struct Table {
    header: Header,
    scales: &'static [u8],
    rows: &'static [u8],
    strings: &'static [u8],
    view: LayoutView<'static>,
}

impl Table {
    /// Open a table, deriving its lookup layout now (a walk over every string): for a table
    /// that was not compiled in with its layout. The layout lives as long as the table's bytes
    /// (a process opens a table once).
    pub fn parse(bytes: &'static [u8]) -> Result<Table, TableError> {
        let derived: &'static [u8] = Box::leak(layout::derive(bytes)?.into_boxed_slice());
        Self::with_layout(bytes, derived)
    }

    /// Open a table with the layout derived from it at build time; a layout that was derived
    /// from other bytes (or not at all: the build found the table damaged) is derived again,
    /// which reports what is wrong with the table.
    pub fn with_layout(bytes: &'static [u8], derived: &'static [u8]) -> Result<Table, TableError> {
        let header = layout::header(bytes)?;
        let Some(view) = LayoutView::open(derived, bytes, &header) else {
            return Self::parse(bytes);
        };
        Ok(Table {
            header,
            scales: &bytes[header.scales_at..header.rows_at],
            rows: &bytes[header.rows_at..header.strings_at],
            strings: &bytes[header.strings_at..],
            view,
        })
    }

    pub fn dims(&self) -> usize {
        self.header.dims
    }

    pub fn max_piece_chars(&self) -> usize {
        self.view.max_piece_chars
    }

    fn find(&self, kind: Kind, key: &str) -> Option<u32> {
        self.view
            .find(&self.header, self.strings, kind, key.as_bytes())
    }

    pub fn word(&self, word: &str) -> Option<u32> {
        self.find(Kind::Word, word)
    }

    /// The row of a Russian Snowball stem.
    pub fn stem(&self, stem: &str) -> Option<u32> {
        self.find(Kind::Stem, stem)
    }

    /// The piece `piece` at the start of a word (`▁piece`) or inside one.
    pub fn piece(&self, piece: &str, word_start: bool) -> Option<u32> {
        self.find(if word_start { Kind::Start } else { Kind::Piece }, piece)
    }

    /// How many rows a cross-lingual expansion may pick (English words, in word order).
    pub fn english_len(&self) -> usize {
        self.view.english_len()
    }

    /// The `i`-th expansion row and its word.
    pub fn english(&self, i: usize) -> (u32, &'static str) {
        let row = self.view.english_row(i);
        let (start, end) = self.view.string_range(row as usize);
        let strings: &'static [u8] = self.strings;
        let word = strings
            .get(start..end)
            .and_then(|s| std::str::from_utf8(s).ok())
            .unwrap_or("");
        (row, word)
    }

    /// The sign code of the `i`-th expansion row, into `out` (as [`Table::row_sign_code`]
    /// computes it, precomputed).
    pub fn english_code(&self, i: usize, out: &mut [u64]) {
        self.view.english_code(i, out.len(), out);
    }

    fn scale(&self, r: usize) -> f32 {
        let s = &self.scales[4 * r..4 * r + 4];
        f32::from_le_bytes([s[0], s[1], s[2], s[3]])
    }

    fn values(&self, r: usize) -> &'static [u8] {
        let dims = self.header.dims;
        &self.rows[r * dims..(r + 1) * dims]
    }

    /// `acc += row` (dequantised).
    pub fn add_row(&self, row: u32, acc: &mut [f32]) {
        let r = row as usize;
        let scale = self.scale(r);
        for (a, &q) in acc.iter_mut().zip(self.values(r)) {
            *a += f32::from(q as i8) * scale;
        }
    }

    /// The length of a row (dequantised).
    pub fn row_norm(&self, row: u32) -> f32 {
        let r = row as usize;
        let sq: i32 = self
            .values(r)
            .iter()
            .map(|&q| i32::from(q as i8) * i32::from(q as i8))
            .sum();
        (sq as f32).sqrt() * self.scale(r).abs()
    }

    /// One bit per dimension, set where the row is positive, as 64-bit words (appended to
    /// `out`): read from the int8 values, with no dequantising.
    pub fn row_sign_code(&self, row: u32, out: &mut Vec<u64>) {
        let r = row as usize;
        layout::sign_code(self.values(r), self.scale(r) < 0.0, out);
    }

    /// `row · v` (dequantised).
    pub fn row_dot(&self, row: u32, v: &[f32]) -> f32 {
        let r = row as usize;
        let raw: f32 = self
            .values(r)
            .iter()
            .zip(v)
            .map(|(&q, x)| f32::from(q as i8) * x)
            .sum();
        raw * self.scale(r)
    }
}
