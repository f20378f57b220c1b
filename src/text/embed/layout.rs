//! The lookup layout of an embedding table: what a process needs to find a word's row without
//! building anything, derived once from the table's bytes.
//!
//! `build.rs` includes this file and derives the layout of the compiled-in table into `OUT_DIR`
//! (the binary carries it beside the table, read in place); [`derive`] runs at run time only for
//! another table's bytes (a test's, a damaged one). So a one-shot call parses nothing: a lookup
//! hashes the word, probes an open-addressing slot array and compares the stored string, and
//! only the slots and strings of the query's words are touched. The file depends on `std` alone
//! (a build script cannot use the crate it builds).
//!
//! Layout (little endian u32 unless noted): `b"KEMI"`, version, the table's length, the table's
//! 28-byte header (copied: a layout is used only with the table it was derived from), the
//! longest piece in chars, the slot count (a power of two), the number of expansion rows; then
//! one string offset per row plus one (row `i`'s string is `strings[off[i]..off[i + 1] - 1]`),
//! the slots (`row + 1`, 0 when empty), the expansion rows (English words, sorted) and their
//! sign codes (`u64` words).

/// The table's magic and the one version this build reads.
pub const TABLE_MAGIC: &[u8; 4] = b"KEMB";
pub const TABLE_VERSION: u32 = 2;
/// The table's header: magic, version, dims, pieces, words, stems, strings length.
pub const TABLE_HEADER: usize = 28;

const MAGIC: &[u8; 4] = b"KEMI";
const VERSION: u32 = 1;
/// Words before the offsets: magic, version, table length, 7 header words, max piece chars,
/// slots, expansion rows.
const FIXED_WORDS: usize = 13;

/// Marks a SentencePiece piece that starts a word.
pub const WORD_START: char = '\u{2581}';
const WORD_START_BYTES: &[u8] = "\u{2581}".as_bytes();

/// Shorter words are too ambiguous to be an expansion's translation.
pub const EXPANSION_MIN_CHARS: usize = 3;

/// Why a table cannot be read (the library turns this into its `TableError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutError {
    Header,
    Version(u32),
    Size(usize, usize),
    Strings,
}

/// The four kinds of string a table holds; a lookup names the kind it wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A piece that starts a word (stored with its `▁`, looked up without it).
    Start = 0,
    /// A piece inside a word.
    Piece = 1,
    Word = 2,
    /// A Russian Snowball stem.
    Stem = 3,
}

/// Where the parts of a table are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub dims: usize,
    pub pieces: usize,
    pub words: usize,
    pub stems: usize,
    pub scales_at: usize,
    pub rows_at: usize,
    pub strings_at: usize,
}

impl Header {
    pub fn rows(&self) -> usize {
        self.pieces + self.words + self.stems
    }
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Check a table's header and sizes (nothing past the header is read).
pub fn header(bytes: &[u8]) -> Result<Header, LayoutError> {
    if bytes.get(..4) != Some(TABLE_MAGIC.as_slice()) {
        return Err(LayoutError::Header);
    }
    let word = |i: usize| {
        u32_at(bytes, 4 * i)
            .map(|v| v as usize)
            .ok_or(LayoutError::Header)
    };
    let version = word(1)? as u32;
    if version != TABLE_VERSION {
        return Err(LayoutError::Version(version));
    }
    let (dims, pieces, words, stems, strings_len) =
        (word(2)?, word(3)?, word(4)?, word(5)?, word(6)?);
    if dims == 0 {
        return Err(LayoutError::Header);
    }
    let rows = pieces + words + stems;
    let scales_at = TABLE_HEADER;
    let rows_at = scales_at + 4 * rows;
    let strings_at = rows_at + dims * rows;
    let expected = strings_at + strings_len;
    if bytes.len() != expected {
        return Err(LayoutError::Size(bytes.len(), expected));
    }
    Ok(Header {
        dims,
        pieces,
        words,
        stems,
        scales_at,
        rows_at,
        strings_at,
    })
}

/// FNV-1a over the kind and the key, then a final mix (the slots are picked by the low bits).
pub fn hash(kind: Kind, key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ kind as u64;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// The kind of row `row` and its key (the string a lookup compares, `▁` stripped).
pub fn kind_and_key(h: &Header, row: usize, s: &[u8]) -> (Kind, usize) {
    if row < h.pieces {
        match s.strip_prefix(WORD_START_BYTES) {
            Some(_) => (Kind::Start, WORD_START_BYTES.len()),
            None => (Kind::Piece, 0),
        }
    } else if row < h.pieces + h.words {
        (Kind::Word, 0)
    } else {
        (Kind::Stem, 0)
    }
}

/// Whether a word row is one a cross-lingual expansion may pick: an English word (ASCII
/// lowercase letters) long enough to be a translation.
pub fn is_expansion_word(w: &str) -> bool {
    w.len() >= EXPANSION_MIN_CHARS && w.bytes().all(|b| b.is_ascii_lowercase())
}

/// 64-bit words of a `dims`-dimension sign code.
pub fn code_words(dims: usize) -> usize {
    dims.div_ceil(64)
}

/// One bit per dimension, set where the dequantised row is positive, appended to `out`: read
/// from the int8 values and the sign of the row's scale.
pub fn sign_code(values: &[u8], scale_negative: bool, out: &mut Vec<u64>) {
    let at = out.len();
    out.resize(at + code_words(values.len()), 0);
    for (i, &q) in values.iter().enumerate() {
        let q = q as i8;
        if (q > 0 && !scale_negative) || (q < 0 && scale_negative) {
            out[at + i / 64] |= 1 << (i % 64);
        }
    }
}

/// A layout read in place: the offsets, the slots and the expansion rows of one table.
#[derive(Debug, Clone, Copy)]
pub struct LayoutView<'a> {
    bytes: &'a [u8],
    pub max_piece_chars: usize,
    slots: usize,
    english: usize,
    offsets_at: usize,
    slots_at: usize,
    english_at: usize,
    codes_at: usize,
}

impl<'a> LayoutView<'a> {
    /// The layout in `bytes`, if it was derived from the table `table` (checked by its length
    /// and header, in constant time) and its sizes add up.
    pub fn open(bytes: &'a [u8], table: &[u8], h: &Header) -> Option<LayoutView<'a>> {
        let word = |i: usize| u32_at(bytes, 4 * i).map(|v| v as usize);
        if bytes.get(..4)? != MAGIC.as_slice()
            || word(1)? != VERSION as usize
            || word(2)? != table.len()
            || bytes.get(12..12 + TABLE_HEADER)? != table.get(..TABLE_HEADER)?
        {
            return None;
        }
        let (max_piece_chars, slots, english) = (word(10)?, word(11)?, word(12)?);
        let offsets_at = 4 * FIXED_WORDS;
        let slots_at = offsets_at + 4 * (h.rows() + 1);
        let english_at = slots_at + 4 * slots;
        let codes_at = english_at + 4 * english;
        let end = codes_at + 8 * code_words(h.dims) * english;
        // At most half the slots are used, so a probe always reaches an empty one.
        if bytes.len() != end || !slots.is_power_of_two() || slots < 2 * h.rows() {
            return None;
        }
        Some(LayoutView {
            bytes,
            max_piece_chars,
            slots,
            english,
            offsets_at,
            slots_at,
            english_at,
            codes_at,
        })
    }

    fn at(&self, i: usize) -> usize {
        u32_at(self.bytes, i).unwrap_or(0) as usize
    }

    /// The byte range of row `row`'s string in the table's strings section.
    pub fn string_range(&self, row: usize) -> (usize, usize) {
        let start = self.at(self.offsets_at + 4 * row);
        let end = self.at(self.offsets_at + 4 * (row + 1));
        (start, end.saturating_sub(1).max(start))
    }

    /// The row of `key` of kind `kind`: `strings` is the table's strings section.
    pub fn find(&self, h: &Header, strings: &[u8], kind: Kind, key: &[u8]) -> Option<u32> {
        let mask = self.slots - 1;
        let mut i = hash(kind, key) as usize & mask;
        loop {
            let slot = self.at(self.slots_at + 4 * i);
            if slot == 0 {
                return None;
            }
            let row = slot - 1;
            let (start, end) = self.string_range(row);
            let s = strings.get(start..end)?;
            let (k, skip) = kind_and_key(h, row, s);
            if k == kind && &s[skip..] == key {
                return Some(row as u32);
            }
            i = (i + 1) & mask;
        }
    }

    /// How many rows an expansion may pick.
    pub fn english_len(&self) -> usize {
        self.english
    }

    /// The `i`-th expansion row (in word order).
    pub fn english_row(&self, i: usize) -> u32 {
        self.at(self.english_at + 4 * i) as u32
    }

    /// The sign code of the `i`-th expansion row (`words` 64-bit words).
    pub fn english_code(&self, i: usize, words: usize, out: &mut [u64]) {
        let at = self.codes_at + 8 * words * i;
        for (w, o) in out.iter_mut().enumerate().take(words) {
            let b = &self.bytes[at + 8 * w..at + 8 * w + 8];
            *o = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        }
    }
}

/// Derive the layout of `table` (checks the strings: UTF-8, exactly one per row). A key held
/// twice resolves to its last row, as a map filled in row order would.
pub fn derive(table: &[u8]) -> Result<Vec<u8>, LayoutError> {
    let h = header(table)?;
    let strings = std::str::from_utf8(&table[h.strings_at..]).map_err(|_| LayoutError::Strings)?;
    let mut offsets: Vec<usize> = Vec::with_capacity(h.rows() + 1);
    let mut at = 0usize;
    for s in strings.split_terminator('\n') {
        offsets.push(at);
        at += s.len() + 1;
    }
    if offsets.len() != h.rows() || !strings.ends_with('\n') {
        return Err(LayoutError::Strings);
    }
    offsets.push(at);
    let string = |row: usize| &strings[offsets[row]..offsets[row + 1] - 1];
    let n_slots = (2 * h.rows()).next_power_of_two();
    let mut slots = vec![0u32; n_slots];
    // The slot holding `key` of `kind`, else the empty slot where it goes.
    let probe = |slots: &[u32], kind: Kind, key: &[u8]| {
        let mut i = hash(kind, key) as usize & (n_slots - 1);
        loop {
            let slot = slots[i] as usize;
            if slot == 0 {
                return i;
            }
            let s = string(slot - 1).as_bytes();
            let (k, skip) = kind_and_key(&h, slot - 1, s);
            if k == kind && &s[skip..] == key {
                return i;
            }
            i = (i + 1) & (n_slots - 1);
        }
    };
    let mut max_piece_chars = 0;
    for row in 0..h.rows() {
        let s = string(row);
        let (kind, skip) = kind_and_key(&h, row, s.as_bytes());
        if row < h.pieces {
            max_piece_chars = usize::max(max_piece_chars, s[skip..].chars().count());
        }
        let i = probe(&slots, kind, &s.as_bytes()[skip..]);
        slots[i] = row as u32 + 1;
    }
    // The expansion rows: every distinct English word by the row a lookup finds, in word order.
    let mut english: Vec<(&str, u32)> = (h.pieces..h.pieces + h.words)
        .filter(|&row| {
            let w = string(row);
            is_expansion_word(w)
                && slots[probe(&slots, Kind::Word, w.as_bytes())] as usize == row + 1
        })
        .map(|row| (string(row), row as u32))
        .collect();
    english.sort_unstable();
    let mut codes = Vec::with_capacity(english.len() * code_words(h.dims));
    for &(_, row) in &english {
        let r = row as usize;
        let s = &table[h.scales_at + 4 * r..h.scales_at + 4 * r + 4];
        let scale = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let values = &table[h.rows_at + r * h.dims..h.rows_at + (r + 1) * h.dims];
        sign_code(values, scale < 0.0, &mut codes);
    }
    let mut out = Vec::with_capacity(
        4 * (FIXED_WORDS + offsets.len() + n_slots + english.len()) + 8 * codes.len(),
    );
    out.extend_from_slice(MAGIC);
    for w in [VERSION, table.len() as u32] {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(&table[..TABLE_HEADER]);
    for w in [max_piece_chars, n_slots, english.len()] {
        out.extend_from_slice(&(w as u32).to_le_bytes());
    }
    let words = offsets.iter().map(|&o| o as u32);
    let words = words.chain(slots.iter().copied());
    for w in words.chain(english.iter().map(|e| e.1)) {
        out.extend_from_slice(&w.to_le_bytes());
    }
    for c in &codes {
        out.extend_from_slice(&c.to_le_bytes());
    }
    Ok(out)
}
