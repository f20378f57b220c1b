//! A sentence vector per catalogued skill (its name, description and when-to-use), so a question
//! in Russian or in other words than the skill's finds it (issue 34: skills too).
//!
//! Why stored in `ak_skill` and not made when searching: the encoder costs ~20 ms a skill, a
//! few hundred skills are seconds, and a one-shot search has tens of milliseconds. The builder
//! writes a new store on every full build, so a vector whose text is unchanged is carried over
//! from the store it replaces (the same text gives the same vector); only new or changed skills
//! are encoded. Without the encoder's assets the column stays empty and the skills lane ranks by
//! words alone.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{params, Connection};

use crate::text::encoder::{Encoder, DIMS};

/// At most this many characters of a skill are encoded (a description is a sentence or two; a
/// pasted manual would only cost time).
const MAX_CHARS: usize = 2_000;

/// The text a skill's vector is made from, out of its stored (redacted) columns.
pub fn text(name: &str, description: &str, when_to_use: Option<&str>) -> String {
    let mut t = name.replace(['-', '_'], " ");
    let mut sep = ". ";
    for part in [description, when_to_use.unwrap_or("")] {
        if !part.trim().is_empty() {
            t.push_str(sep);
            t.push_str(part.trim());
            sep = " ";
        }
    }
    match t.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => t[..end].to_string(),
        None => t,
    }
}

/// A vector as the column holds it: little-endian f32s.
pub fn to_blob(v: &[f32; DIMS]) -> Vec<u8> {
    crate::text::embed::to_le_bytes(v)
}

/// The vector of a column value (`None`: empty, or not a vector of this encoder).
pub fn from_blob(b: &[u8]) -> Option<[f32; DIMS]> {
    if b.len() != DIMS * 4 {
        return None;
    }
    crate::text::embed::from_le_bytes(b).try_into().ok()
}

/// Gives every skill of the store being written (`conn`) its vector: the one `old` (the store
/// it replaces) holds for the same text, else a new one. Returns how many were encoded. Without
/// the encoder's assets only the carried-over vectors are written.
pub fn fill(conn: &Connection, old: Option<&Path>) -> rusqlite::Result<u64> {
    let mut wanted: Vec<(i64, String)> = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT id, name, description, when_to_use FROM ak_skill WHERE vector IS NULL
             ORDER BY id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let (name, desc, when): (String, String, Option<String>) =
                (r.get(1)?, r.get(2)?, r.get(3)?);
            wanted.push((r.get(0)?, text(&name, &desc, when.as_deref())));
        }
    }
    if wanted.is_empty() {
        return Ok(0);
    }
    let mut known = old.map(carried).unwrap_or_default();
    let missing: Vec<&str> = wanted
        .iter()
        .filter(|(_, t)| !known.contains_key(t))
        .map(|(_, t)| t.as_str())
        .collect();
    let mut encoded = 0u64;
    if let (false, Ok(enc)) = (missing.is_empty(), Encoder::shared()) {
        for (t, v) in missing.iter().zip(enc.encode_all(&missing)) {
            known.insert((*t).to_string(), to_blob(&v));
            encoded += 1;
        }
    }
    let mut set = conn.prepare("UPDATE ak_skill SET vector = ?2 WHERE id = ?1")?;
    for (id, t) in &wanted {
        if let Some(v) = known.get(t) {
            set.execute(params![id, v])?;
        }
    }
    Ok(encoded)
}

/// The vectors of the store at `old` by their text (none when it cannot be read or predates
/// them): a store that cannot be read only means encoding again.
fn carried(old: &Path) -> HashMap<String, Vec<u8>> {
    let read = || -> rusqlite::Result<HashMap<String, Vec<u8>>> {
        let c = crate::sources::sqlite::open_ro(old)?;
        let mut stmt = c.prepare(
            "SELECT name, description, when_to_use, vector FROM ak_skill
             WHERE vector IS NOT NULL",
        )?;
        let rows = stmt.query_map([], |r| {
            let (name, desc, when): (String, String, Option<String>) =
                (r.get(0)?, r.get(1)?, r.get(2)?);
            Ok((text(&name, &desc, when.as_deref()), r.get::<_, Vec<u8>>(3)?))
        })?;
        rows.filter(|r| r.as_ref().map_or(true, |(_, v)| v.len() == DIMS * 4))
            .collect()
    };
    if !old.is_file() {
        return HashMap::new();
    }
    read().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_round_trips_and_a_wrong_length_is_none() {
        let mut v = [0f32; DIMS];
        v[0] = 0.5;
        v[DIMS - 1] = -1.25;
        assert_eq!(from_blob(&to_blob(&v)), Some(v));
        assert_eq!(from_blob(&[0u8; 12]), None);
    }

    #[test]
    fn the_text_joins_name_description_and_when_and_is_capped() {
        assert_eq!(
            text(
                "deploy-checklist",
                "Steps to ship.",
                Some("before a release")
            ),
            "deploy checklist. Steps to ship. before a release"
        );
        assert_eq!(text("x", "", None), "x");
        let long = "я".repeat(MAX_CHARS * 2);
        assert_eq!(text("x", &long, None).chars().count(), MAX_CHARS);
    }
}
