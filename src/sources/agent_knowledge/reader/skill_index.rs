//! What skill search ranks by, made from the catalog's stored rows: its words in a full-text
//! index (BM25, the same engine and token stream as the episodes and code lanes) and each
//! skill's sentence vector (`skill_vectors`).
//!
//! Why the index is held in memory and not kept beside the store: the catalog is a few hundred
//! rows, indexed in a few milliseconds, and the store is replaced whole on every full build (and
//! copied from the team index by the team source), so an index on disk would have to follow
//! every replacement. Made from the rows a reader sees, it is never stale or of another store.
//! It is made once per store revision and kept by the store's reader.

use std::collections::HashMap;

use rusqlite::Connection;

use crate::sources::agent_knowledge::skill_vectors;
use crate::sources::lexical::{LexicalDoc, LexicalError, LexicalIndex, LexicalQuery, TermGroup};
use crate::text::encoder::DIMS;
use crate::text::tokens;

/// How often a skill's name terms and when-to-use terms are repeated in its document, so a
/// name weighs above a mention (BM25F's way, as in the code lane: `code::lexical_docs`), with
/// the weights its FTS5 index had (name 4, when_to_use 2, description and tags 1).
const NAME_WEIGHT: usize = 4;
const WHEN_WEIGHT: usize = 2;

/// The catalog as skill search reads it, for one revision of the store.
pub(crate) struct SkillIndex {
    /// The store's `index_rev` this was made from.
    pub rev: Option<String>,
    lexical: LexicalIndex,
    vectors: Vec<(i64, [f32; DIMS])>,
}

/// Why the catalog could not be read into an index.
#[derive(Debug, thiserror::Error)]
pub enum SkillIndexError {
    #[error("cannot read the skill catalog: {0}")]
    Store(#[from] rusqlite::Error),
    #[error("cannot index the skill catalog: {0}")]
    Lexical(#[source] LexicalError),
}

impl SkillIndex {
    /// Reads every catalogued skill of the store behind `c` (revision `rev`).
    pub(crate) fn make(c: &Connection, rev: Option<String>) -> Result<SkillIndex, SkillIndexError> {
        let mut docs: Vec<(i64, String)> = Vec::new();
        let mut vectors = Vec::new();
        // A store built before skills had vectors is searched by its words until the next
        // `knowledge index` rebuilds it (its schema version is part of the revision).
        let vector = match c.prepare("SELECT vector FROM ak_skill LIMIT 0") {
            Ok(_) => "vector",
            Err(_) => "NULL",
        };
        let mut stmt = c.prepare(&format!(
            "SELECT id, name, qualified_name, description, when_to_use, tags, {vector}
             FROM ak_skill ORDER BY id"
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let (name, qualified, desc): (String, String, String) =
                (r.get(1)?, r.get(2)?, r.get(3)?);
            let when: Option<String> = r.get(4)?;
            let tags: Vec<String> =
                serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or_default();
            docs.push((
                id,
                document(&name, &qualified, &desc, when.as_deref(), &tags),
            ));
            if let Some(v) = r
                .get::<_, Option<Vec<u8>>>(6)?
                .and_then(|b| skill_vectors::from_blob(&b))
            {
                vectors.push((id, v));
            }
        }
        let lexical = LexicalIndex::in_memory(docs.iter().map(|(id, terms)| LexicalDoc {
            id: *id,
            key: (*id).max(0) as u64,
            time_ms: None,
            terms,
        }))
        .map_err(SkillIndexError::Lexical)?;
        Ok(SkillIndex {
            rev,
            lexical,
            vectors,
        })
    }

    /// BM25 of every skill the term groups match, by row id.
    pub(crate) fn bm25(&self, groups: Vec<TermGroup>) -> Result<HashMap<i64, f64>, LexicalError> {
        let searcher = self.lexical.searcher()?;
        let q = LexicalQuery {
            groups,
            limit: 500,
            ..LexicalQuery::default()
        };
        Ok(self
            .lexical
            .rank(&searcher, &q)?
            .into_iter()
            .map(|r| (r.id, r.score))
            .collect())
    }

    /// The cosine of every skill that has a vector to the query's unit vector `q`, by row id.
    pub(crate) fn cosines(&self, q: &[f32; DIMS]) -> HashMap<i64, f32> {
        self.vectors
            .iter()
            .map(|(id, v)| (*id, crate::text::embed::dot(v, q)))
            .collect()
    }
}

/// A skill's document terms: its name's (qualified, and with its hyphens joined), its
/// description's, its when-to-use's and its tags', stemmed, the name and when-to-use repeated.
fn document(
    name: &str,
    qualified: &str,
    description: &str,
    when_to_use: Option<&str>,
    tags: &[String],
) -> String {
    let name_terms = tokens::index_text(&format!("{qualified} {}", name.replace(['-', '_'], "")));
    let when_terms = tokens::index_text(when_to_use.unwrap_or(""));
    let mut out = tokens::index_text(description);
    for (field, times) in [
        (name_terms.as_str(), NAME_WEIGHT),
        (when_terms.as_str(), WHEN_WEIGHT),
    ] {
        if field.trim().is_empty() {
            continue;
        }
        for _ in 0..times {
            out.push(' ');
            out.push_str(field);
        }
    }
    let tag_terms = tokens::index_text(&tags.join(" "));
    if !tag_terms.trim().is_empty() {
        out.push(' ');
        out.push_str(&tag_terms);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_counts_four_times_when_to_use_twice_description_and_tags_once() {
        let d = document(
            "deploy-checklist",
            "deploy-checklist",
            "ship safely",
            Some("release day"),
            &["ops".to_string()],
        );
        let count = |w: &str| {
            let stem = tokens::index_text(w);
            d.split_whitespace().filter(|x| *x == stem).count()
        };
        assert_eq!(count("ship"), 1, "{d}");
        assert_eq!(count("release"), WHEN_WEIGHT, "{d}");
        assert_eq!(count("ops"), 1, "{d}");
        assert!(count("checklist") >= NAME_WEIGHT, "{d}");
    }
}
