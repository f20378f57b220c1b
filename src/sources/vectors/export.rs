//! The stored codes read out by parent row, for copying them to another store (`knowledge push`
//! sends each event's and chunk's codes to the team index beside the row they describe). Reads
//! only: the layout stays [`super::write`]'s business.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

use super::write::{parse_entries, BLOCK_SHIFT, CODE_BYTES};
use super::{split_id, VectorTable};
use crate::sources::sqlite;

/// One stored code: the parent row, the window of its text, the scanned sign bits.
pub type RowCode = (i64, usize, [u8; CODE_BYTES]);

/// Whether the store has a codes table at all (semantic search off: it has none).
fn has_table(conn: &Connection, t: &VectorTable) -> rusqlite::Result<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1",
            [t.name],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// Every parent row with an id up to this one has its codes stored (a row whose text has no
/// known word has none); -1 when nothing is. A row in a block waiting to be re-embedded (after
/// a neighbour was deleted or re-texted) has none until the next index, so coverage stops
/// before the first such block.
pub fn covered_upto(conn: &Connection, t: &VectorTable) -> rusqlite::Result<i64> {
    if !has_table(conn, t)? {
        return Ok(-1);
    }
    let upto: i64 = sqlite::meta_get(conn, &format!("{}_upto", t.name))
        .and_then(|s| s.parse().ok())
        .unwrap_or(-1);
    let first_dirty: Option<i64> = conn.query_row(
        &format!("SELECT min(block) FROM {}_dirty", t.name),
        [],
        |r| r.get(0),
    )?;
    Ok(match first_dirty {
        Some(b) => upto.min((b << BLOCK_SHIFT) - 1),
        None => upto,
    })
}

/// The store's codes revision (changes whenever codes are written), empty without codes.
pub fn codes_rev(conn: &Connection, t: &VectorTable) -> String {
    sqlite::meta_get(conn, &format!("{}_rev", t.name)).unwrap_or_default()
}

/// The stored codes of the parent rows `ids`, by row, each row's windows in order. Each block
/// is read once however many of its rows are asked for.
pub fn codes_of(
    conn: &Connection,
    t: &VectorTable,
    ids: &[i64],
) -> rusqlite::Result<HashMap<i64, Vec<(usize, [u8; CODE_BYTES])>>> {
    let mut out: HashMap<i64, Vec<(usize, [u8; CODE_BYTES])>> = HashMap::new();
    if ids.is_empty() || !has_table(conn, t)? {
        return Ok(out);
    }
    let wanted: std::collections::HashSet<i64> = ids.iter().copied().collect();
    let mut blocks: Vec<i64> = ids.iter().map(|id| id >> BLOCK_SHIFT).collect();
    blocks.sort_unstable();
    blocks.dedup();
    let mut stmt = conn.prepare_cached(&format!("SELECT codes FROM {} WHERE block=?1", t.name))?;
    for b in blocks {
        let blob: Option<Vec<u8>> = stmt.query_row([b], |r| r.get(0)).optional()?;
        let Some(blob) = blob else { continue };
        for (vid, bits) in parse_entries(&blob) {
            let (parent, window) = split_id(i64::from(vid));
            if wanted.contains(&parent) {
                out.entry(parent).or_default().push((window, bits));
            }
        }
    }
    for codes in out.values_mut() {
        codes.sort_unstable_by_key(|c| c.0);
    }
    Ok(out)
}

/// Every stored code, in parent row order, to `each`.
pub fn for_each_code(
    conn: &Connection,
    t: &VectorTable,
    mut each: impl FnMut(RowCode),
) -> rusqlite::Result<()> {
    if !has_table(conn, t)? {
        return Ok(());
    }
    let mut stmt = conn.prepare(&format!("SELECT codes FROM {} ORDER BY block", t.name))?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        for (vid, bits) in parse_entries(r.get_ref(0)?.as_blob()?) {
            let (parent, window) = split_id(i64::from(vid));
            each((parent, window, bits));
        }
    }
    Ok(())
}
