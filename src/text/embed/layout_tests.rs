//! The lookup layout finds exactly what maps filled from the table's strings would, for the
//! compiled-in table and for any other table in the same format.

use std::collections::HashMap;

use super::layout::{self, Kind};
use super::{Table, TableError, TABLE_BYTES, TABLE_LAYOUT};

/// The reference: one map per kind, filled in row order (a key held twice keeps its last row).
fn reference_maps(bytes: &[u8]) -> HashMap<(u8, String), u32> {
    let h = layout::header(bytes).unwrap();
    let strings = std::str::from_utf8(&bytes[h.strings_at..]).unwrap();
    let mut map = HashMap::new();
    for (i, s) in strings.split_terminator('\n').enumerate() {
        let key = if i < h.pieces {
            match s.strip_prefix(layout::WORD_START) {
                Some(rest) => (Kind::Start as u8, rest.to_string()),
                None => (Kind::Piece as u8, s.to_string()),
            }
        } else if i < h.pieces + h.words {
            (Kind::Word as u8, s.to_string())
        } else {
            (Kind::Stem as u8, s.to_string())
        };
        map.insert(key, i as u32);
    }
    map
}

fn lookup(t: &Table, kind: u8, key: &str) -> Option<u32> {
    match kind {
        0 => t.piece(key, true),
        1 => t.piece(key, false),
        2 => t.word(key),
        _ => t.stem(key),
    }
}

#[test]
fn the_compiled_in_layout_is_derived_from_the_compiled_in_table() {
    assert!(!TABLE_LAYOUT.is_empty(), "build.rs derived no layout");
    assert_eq!(layout::derive(TABLE_BYTES).unwrap(), TABLE_LAYOUT);
}

#[test]
fn every_string_of_the_table_finds_the_row_a_map_would() {
    let t = Table::with_layout(TABLE_BYTES, TABLE_LAYOUT).unwrap();
    let map = reference_maps(TABLE_BYTES);
    for ((kind, key), row) in &map {
        assert_eq!(lookup(&t, *kind, key), Some(*row), "kind {kind} {key:?}");
    }
    // Strings the table does not hold, and a held string asked as another kind.
    for (kind, key) in [(2, "zanzibarquokka"), (3, "zanzibarquokka"), (1, "")] {
        let held = map.get(&(kind, key.to_string())).copied();
        assert_eq!(lookup(&t, kind, key), held, "{key:?}");
    }
    let max = map
        .keys()
        .filter(|(k, _)| *k <= 1)
        .map(|(_, s)| s.chars().count())
        .max()
        .unwrap();
    assert_eq!(t.max_piece_chars(), max);
}

#[test]
fn the_expansion_rows_are_the_english_words_in_order_with_their_sign_codes() {
    let t = Table::with_layout(TABLE_BYTES, TABLE_LAYOUT).unwrap();
    let mut english: Vec<(String, u32)> = reference_maps(TABLE_BYTES)
        .into_iter()
        .filter(|((k, w), _)| *k == Kind::Word as u8 && layout::is_expansion_word(w))
        .map(|((_, w), r)| (w, r))
        .collect();
    english.sort_unstable();
    assert_eq!(t.english_len(), english.len());
    assert!(english.len() > 10_000, "{} English rows", english.len());
    let words = layout::code_words(t.dims());
    let mut code = vec![0u64; words];
    for (i, (w, r)) in english.iter().enumerate() {
        assert_eq!(t.english(i), (*r, w.as_str()));
        t.english_code(i, &mut code);
        let mut want = Vec::new();
        t.row_sign_code(*r, &mut want);
        assert_eq!(code, want, "{w}");
    }
}

/// A table in the shipped format: `pieces`, `words`, `stems` strings, 4 dims, row `i` all `i`.
fn small_table(pieces: &[&str], words: &[&str], stems: &[&str]) -> &'static [u8] {
    let strings: String = pieces
        .iter()
        .chain(words)
        .chain(stems)
        .map(|s| format!("{s}\n"))
        .collect();
    let rows = pieces.len() + words.len() + stems.len();
    let mut b = b"KEMB".to_vec();
    for v in [2, 4, pieces.len(), words.len(), stems.len(), strings.len()] {
        b.extend_from_slice(&(v as u32).to_le_bytes());
    }
    for _ in 0..rows {
        b.extend_from_slice(&1f32.to_le_bytes());
    }
    for i in 0..rows {
        b.extend_from_slice(&[i as u8; 4]);
    }
    b.extend_from_slice(strings.as_bytes());
    Box::leak(b.into_boxed_slice())
}

#[test]
fn another_table_in_the_same_format_is_read_with_its_own_layout() {
    let bytes = small_table(
        &["\u{2581}ab", "ab", "c", "\u{2581}ab"],
        &["test", "alpha", "test"],
        &["тест"],
    );
    // The compiled-in layout belongs to another table: it is not used.
    let t = Table::with_layout(bytes, TABLE_LAYOUT).unwrap();
    assert_eq!(
        t.piece("ab", true),
        Some(3),
        "a key held twice keeps its last row"
    );
    assert_eq!(t.piece("ab", false), Some(1));
    assert_eq!(t.piece("c", true), None);
    assert_eq!(t.word("test"), Some(6));
    assert_eq!(t.word("alpha"), Some(5));
    assert_eq!(t.word("ab"), None);
    assert_eq!(t.stem("тест"), Some(7));
    assert_eq!(t.stem("test"), None);
    assert_eq!(t.max_piece_chars(), 2);
    let english: Vec<_> = (0..t.english_len()).map(|i| t.english(i)).collect();
    assert_eq!(english, [(5u32, "alpha"), (6, "test")]);
    let mut acc = [0f32; 4];
    t.add_row(6, &mut acc);
    assert_eq!(acc, [6.0; 4]);
}

#[test]
fn a_table_whose_strings_do_not_add_up_is_refused() {
    let mut b = small_table(&["a"], &["b"], &[]).to_vec();
    let n = b.len();
    b[n - 2] = b'\n'; // "a\n\n\n": three strings for two rows
    let bytes: &'static [u8] = Box::leak(b.into_boxed_slice());
    assert_eq!(Table::parse(bytes).err(), Some(TableError::Strings));
    assert_eq!(
        Table::with_layout(bytes, TABLE_LAYOUT).err(),
        Some(TableError::Strings)
    );
}
