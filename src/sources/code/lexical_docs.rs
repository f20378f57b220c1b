//! How a stored chunk becomes a document of the code store's full-text index
//! (`sources::lexical`): the terms of its text, then its symbol's terms 9 times and its path's 3
//! times, so BM25 weighs a name above a mention. That is BM25F's way of weighing fields (a
//! field's term frequencies multiplied by its weight, then saturated once), with the weights the
//! FTS5 index had: a body column (text, symbol and path) at 1, the symbol at 8, the path at 2,
//! so a symbol's term counted 1 + 8 and a path's 1 + 2. Three fields scored apart and added up
//! (Tantivy's way for several fields) ranked worse on the tuning split (docs/RANKING.md). The
//! same terms are made when a chunk is stored and when the index is made anew from the stored
//! columns, so the two never differ.

use rusqlite::Row;

use crate::sources::lexical::sync::{Derivation, DerivedDoc};

/// How often a chunk's symbol terms and path terms are repeated in its document.
const SYMBOL_WEIGHT: usize = 9;
const PATH_WEIGHT: usize = 3;

/// How the stored chunks become the index's documents, a file's chunks as one group.
pub(super) const DERIVATION: Derivation = Derivation {
    count_rows: "SELECT count(*) FROM chunks",
    all_keys: "SELECT id FROM files",
    rows_of_key: "SELECT id, terms, sym_terms, path_terms FROM chunks WHERE file_id = ?1",
    doc: stored_doc,
};

/// A chunk's document terms from its stemmed text, symbol and path terms.
pub(super) fn terms(text_terms: &str, sym_terms: &str, path_terms: &str) -> String {
    let mut out = String::with_capacity(
        text_terms.len()
            + SYMBOL_WEIGHT * (sym_terms.len() + 1)
            + PATH_WEIGHT * (path_terms.len() + 1),
    );
    out.push_str(text_terms);
    for (field, times) in [(sym_terms, SYMBOL_WEIGHT), (path_terms, PATH_WEIGHT)] {
        if field.trim().is_empty() {
            continue;
        }
        for _ in 0..times {
            out.push(' ');
            out.push_str(field);
        }
    }
    out
}

fn stored_doc(r: &Row<'_>) -> rusqlite::Result<DerivedDoc> {
    let (text, sym, path): (String, String, String) = (r.get(1)?, r.get(2)?, r.get(3)?);
    Ok(DerivedDoc {
        id: r.get(0)?,
        time_ms: None,
        terms: terms(&text, &sym, &path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_counts_nine_times_a_path_three_and_empty_ones_add_nothing() {
        let t = terms("fetch user", "get user name", "src api rs");
        let count = |w: &str| t.split_whitespace().filter(|x| *x == w).count();
        assert_eq!(count("fetch"), 1);
        assert_eq!(count("name"), 9);
        assert_eq!(count("user"), 10);
        assert_eq!(count("api"), 3);
        assert_eq!(terms("only text", "", " "), "only text");
    }
}
