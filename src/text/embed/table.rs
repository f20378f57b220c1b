//! The static embedding table (`assets/embeddings/table.kemb`, built by
//! `scripts/build_embeddings.py`): parsed once, borrowed from the bytes compiled into the binary.
//!
//! Layout (little endian): `b"KEMB"`, u32 version (2), u32 dims, u32 pieces, u32 words, u32
//! stems, u32 strings length; then one f32 scale per row, the int8 rows, and the row strings
//! (each ending in `\n`, pieces first — a leading `▁` marks a piece that starts a word — then
//! whole words, then Russian Snowball stems: one row for every inflection of a dictionary word).

use crate::text::tokens::FastMap;

/// Marks a SentencePiece piece that starts a word.
pub const WORD_START: char = '\u{2581}';

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

/// A parsed table: rows are read in place from the static bytes.
pub struct Table {
    dims: usize,
    scales: &'static [u8],
    rows: &'static [u8],
    /// Pieces that start a word, keyed without their `▁`.
    starts: FastMap<&'static str, u32>,
    /// Pieces inside a word.
    pieces: FastMap<&'static str, u32>,
    words: FastMap<&'static str, u32>,
    /// Russian Snowball stems (of `ё`-folded words).
    stems: FastMap<&'static str, u32>,
    max_piece_chars: usize,
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, TableError> {
    let b = bytes.get(at..at + 4).ok_or(TableError::Header)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl Table {
    /// Check and index the table. Only the strings are walked; rows stay where they are.
    pub fn parse(bytes: &'static [u8]) -> Result<Table, TableError> {
        if bytes.get(..4) != Some(b"KEMB".as_slice()) {
            return Err(TableError::Header);
        }
        let version = u32_at(bytes, 4)?;
        if version != 2 {
            return Err(TableError::Version(version));
        }
        let dims = u32_at(bytes, 8)? as usize;
        let n_pieces = u32_at(bytes, 12)? as usize;
        let n_words = u32_at(bytes, 16)? as usize;
        let n_stems = u32_at(bytes, 20)? as usize;
        let strings_len = u32_at(bytes, 24)? as usize;
        let n_rows = n_pieces + n_words + n_stems;
        if dims == 0 {
            return Err(TableError::Header);
        }
        let scales_at = 28;
        let rows_at = scales_at + 4 * n_rows;
        let strings_at = rows_at + dims * n_rows;
        let expected = strings_at + strings_len;
        if bytes.len() != expected {
            return Err(TableError::Size(bytes.len(), expected));
        }
        let strings = std::str::from_utf8(&bytes[strings_at..]).map_err(|_| TableError::Strings)?;
        let mut starts = FastMap::default();
        let mut pieces = FastMap::default();
        let mut words = FastMap::default();
        words.reserve(n_words);
        let mut stems = FastMap::default();
        stems.reserve(n_stems);
        let mut max_piece_chars = 0;
        let mut n = 0usize;
        for (i, s) in strings.split_terminator('\n').enumerate() {
            if i < n_pieces {
                match s.strip_prefix(WORD_START) {
                    Some(rest) => {
                        max_piece_chars = max_piece_chars.max(rest.chars().count());
                        starts.insert(rest, i as u32);
                    }
                    None => {
                        max_piece_chars = max_piece_chars.max(s.chars().count());
                        pieces.insert(s, i as u32);
                    }
                }
            } else if i < n_pieces + n_words {
                words.insert(s, i as u32);
            } else {
                stems.insert(s, i as u32);
            }
            n += 1;
        }
        if n != n_rows || !strings.ends_with('\n') {
            return Err(TableError::Strings);
        }
        Ok(Table {
            dims,
            scales: &bytes[scales_at..rows_at],
            rows: &bytes[rows_at..strings_at],
            starts,
            pieces,
            words,
            stems,
            max_piece_chars,
        })
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn max_piece_chars(&self) -> usize {
        self.max_piece_chars
    }

    pub fn word(&self, word: &str) -> Option<u32> {
        self.words.get(word).copied()
    }

    /// The row of a Russian Snowball stem.
    pub fn stem(&self, stem: &str) -> Option<u32> {
        self.stems.get(stem).copied()
    }

    /// The piece `piece` at the start of a word (`▁piece`) or inside one.
    pub fn piece(&self, piece: &str, word_start: bool) -> Option<u32> {
        if word_start {
            self.starts.get(piece).copied()
        } else {
            self.pieces.get(piece).copied()
        }
    }

    /// Every whole-word row.
    pub fn words(&self) -> impl Iterator<Item = (&'static str, u32)> + '_ {
        self.words.iter().map(|(w, r)| (*w, *r))
    }

    /// Every piece that starts a word (keyed without its `▁`).
    pub fn word_start_pieces(&self) -> impl Iterator<Item = (&'static str, u32)> + '_ {
        self.starts.iter().map(|(w, r)| (*w, *r))
    }

    fn scale(&self, r: usize) -> f32 {
        let s = &self.scales[4 * r..4 * r + 4];
        f32::from_le_bytes([s[0], s[1], s[2], s[3]])
    }

    fn values(&self, r: usize) -> &'static [u8] {
        &self.rows[r * self.dims..(r + 1) * self.dims]
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
        let flip = self.scale(r) < 0.0;
        let at = out.len();
        out.resize(at + self.dims.div_ceil(64), 0);
        for (i, &q) in self.values(r).iter().enumerate() {
            let q = q as i8;
            if (q > 0 && !flip) || (q < 0 && flip) {
                out[at + i / 64] |= 1 << (i % 64);
            }
        }
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
