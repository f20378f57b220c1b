//! Keeping an FTS5 index in few segments after an index run.
//!
//! FTS5 writes every committed transaction as a new segment and merges them only lazily (a
//! level is merged in the background once enough pages were written, or when 16 segments pile
//! up on it), so the indexers, which commit per file or per batch, leave an index of ~15
//! segments, and every incremental run adds more. Every lookup opens each of its terms in every
//! segment: at 2,000 sessions a full-match point lookup of three terms cost ~1.1M instructions
//! over 15 segments, and one incremental code run made a one-shot search 18M dearer.
//!
//! After a run, [`tidy`] (called by the episodes and code indexers) reads the index's structure
//! record and either rewrites the whole index as one segment (FTS5's `optimize`) or merges only
//! the small segments among themselves (the `merge` command with `usermerge` 2, run only when
//! the levels show that its carry stops short of the largest segment's level, so the largest is
//! not rewritten). The whole rewrite is chosen when the segments beside the largest hold at
//! least an eighth ([`OPTIMIZE_SHARE`]) of its pages — after a full index, or once the index has
//! grown by that share since it was last rewritten — or when more than [`SEGMENTS_LEFT`]
//! segments would be left; so a watch runner re-indexing a live session every few seconds pays
//! for merging what it added, not for the whole index. At 2,000 sessions the rewrite after a
//! full index took 1.2 s (episodes) and 0.3 s (code); see `docs/PERFORMANCE.md`.
//! Merging changes no row, term, position or document count, so every match and score stays the
//! same.

use rusqlite::Connection;

/// The whole index is rewritten when the pages outside its largest segment are at least this
/// fraction (1/8) of the largest: each rewrite is 9/8 the size of the one before, so the
/// rewrites of an index grown to N pages wrote about 9N pages in all.
pub const OPTIMIZE_SHARE: u64 = 8;

/// Segments a run may leave. Merged small segments hold at most one per level below the
/// largest (a binary count of the segments written since the last rewrite), so more than this
/// are left after 255 written segments at the earliest; the merge is also skipped when its carry
/// would reach the largest's level (after 2^level segments), and FTS5 writes a rewritten index a
/// level or two above the highest in use, so that grows rarer with every rewrite.
pub const SEGMENTS_LEFT: usize = 8;

/// One segment as the structure record describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub id: u64,
    pub pages: u64,
}

/// The index's segments (from FTS5's structure record, row 10 of `<table>_data`), by level,
/// and whether a level is the input of a merge under way (FTS5 merges in steps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structure {
    pub levels: Vec<Vec<Segment>>,
    pub merging: Vec<bool>,
}

impl Structure {
    pub fn segments(&self) -> impl Iterator<Item = &Segment> {
        self.levels.iter().flatten()
    }

    pub fn count(&self) -> usize {
        self.segments().count()
    }

    pub fn pages(&self) -> u64 {
        self.segments().map(|s| s.pages).sum()
    }

    pub fn largest(&self) -> Option<Segment> {
        self.segments().copied().max_by_key(|s| s.pages)
    }

    /// Whether FTS5's `merge` with `usermerge` 2 leaves the largest segment as it is. That
    /// merge takes every level holding two or more segments, from the bottom up, into one
    /// segment on the next level (a carry, as in binary counting), and finishes a merge under
    /// way first; so the largest is spared when it is alone on its level, no merge is under
    /// way, the carry of the levels below stops short of its level, and no level above holds
    /// two segments (a merge output there may sink to the largest's level).
    fn small_merge_spares_largest(&self) -> bool {
        let Some(big) = self.largest() else {
            return true;
        };
        let Some(at) = self.levels.iter().position(|l| l.contains(&big)) else {
            return false;
        };
        if self.merging.iter().any(|m| *m) || self.levels[at].len() != 1 {
            return false;
        }
        let mut carry = 0;
        for level in &self.levels[..at] {
            carry = usize::from(level.len() + carry >= 2);
        }
        carry == 0 && self.levels[at + 1..].iter().all(|l| l.len() <= 1)
    }
}

/// What [`tidy`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tidied {
    /// One segment or none, or a structure this code cannot read: nothing to do.
    Nothing,
    /// The small segments were merged among themselves; the largest was not rewritten.
    Merged { before: usize, after: usize },
    /// Merging the small segments would have taken in the largest, and they are still few
    /// ([`SEGMENTS_LEFT`]): left as they are.
    Left { segments: usize },
    /// The whole index was rewritten as one segment.
    Optimized { before: usize },
}

/// The structure of `table`'s index, or `None` when it has none yet or its record is not one
/// this code knows (then [`tidy`] leaves the index alone).
pub fn structure(conn: &Connection, table: &str) -> Option<Structure> {
    let block: Vec<u8> = conn
        .query_row(
            &format!("SELECT block FROM main.{table}_data WHERE id = 10"),
            [],
            |r| r.get(0),
        )
        .ok()?;
    decode(&block)
}

/// `fts5StructureDecode`: a 4-byte cookie, an optional version-2 marker, then varints: levels,
/// segments, the write counter, and per level its merge state, segment count and segments
/// (id, first and last leaf page; five more numbers each in version 2).
fn decode(b: &[u8]) -> Option<Structure> {
    let mut at = 4;
    let v2 = b.get(4..8)? == [0xff, 0x00, 0x00, 0x01];
    if v2 {
        at += 4;
    }
    let mut next = || -> Option<u64> {
        let (v, n) = varint(b.get(at..)?)?;
        at += n;
        Some(v)
    };
    let n_levels = next()?;
    let n_segments = next()?;
    let _write_counter = next()?;
    if n_levels > 64 || n_segments > 2000 {
        return None;
    }
    let mut levels = Vec::with_capacity(n_levels as usize);
    let mut merging = Vec::with_capacity(n_levels as usize);
    for _ in 0..n_levels {
        merging.push(next()? > 0);
        let n = next()?;
        let mut level = Vec::new();
        for _ in 0..n {
            let id = next()?;
            let first = next()?;
            let last = next()?;
            if v2 {
                for _ in 0..5 {
                    next()?;
                }
            }
            level.push(Segment {
                id,
                pages: last.checked_sub(first)? + 1,
            });
        }
        levels.push(level);
    }
    let s = Structure { levels, merging };
    (s.count() as u64 == n_segments).then_some(s)
}

/// An SQLite varint (big-endian groups of 7 bits, the ninth byte whole) and its length.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, &c) in b.iter().enumerate().take(8) {
        v = (v << 7) | u64::from(c & 0x7f);
        if c < 0x80 {
            return Some((v, i + 1));
        }
    }
    let last = *b.get(8)?;
    Some(((v << 8) | u64::from(last), 9))
}

/// Merge `table`'s segments after an index run (see the module doc for which merge and why).
pub fn tidy(conn: &Connection, table: &str) -> rusqlite::Result<Tidied> {
    let Some(before) = structure(conn, table) else {
        return Ok(Tidied::Nothing);
    };
    let count = before.count();
    let Some(largest) = before.largest() else {
        return Ok(Tidied::Nothing);
    };
    if count <= 1 {
        return Ok(Tidied::Nothing);
    }
    let rest = before.pages() - largest.pages;
    if rest.saturating_mul(OPTIMIZE_SHARE) >= largest.pages {
        optimize(conn, table)?;
        return Ok(Tidied::Optimized { before: count });
    }
    if !before.small_merge_spares_largest() {
        if count <= SEGMENTS_LEFT {
            return Ok(Tidied::Left { segments: count });
        }
        optimize(conn, table)?;
        return Ok(Tidied::Optimized { before: count });
    }
    let usermerge: Option<i64> = conn
        .query_row(
            &format!("SELECT v FROM main.{table}_config WHERE k = 'usermerge'"),
            [],
            |r| r.get(0),
        )
        .ok();
    if usermerge != Some(2) {
        conn.execute(
            &format!("INSERT INTO {table}({table}, rank) VALUES('usermerge', 2)"),
            [],
        )?;
    }
    // Merging the small segments into each other writes each of their pages once per level it
    // climbs; four times their pages (and a little for tiny ones) is enough to finish.
    let budget = rest
        .saturating_mul(4)
        .saturating_add(64)
        .min(i32::MAX as u64) as i64;
    conn.execute(
        &format!("INSERT INTO {table}({table}, rank) VALUES('merge', ?1)"),
        [budget],
    )?;
    let after = structure(conn, table).map_or(count, |s| s.count());
    if after > SEGMENTS_LEFT {
        optimize(conn, table)?;
        return Ok(Tidied::Optimized { before: after });
    }
    Ok(Tidied::Merged {
        before: count,
        after,
    })
}

fn optimize(conn: &Connection, table: &str) -> rusqlite::Result<()> {
    conn.execute(
        &format!("INSERT INTO {table}({table}) VALUES('optimize')"),
        [],
    )?;
    Ok(())
}

#[cfg(test)]
#[path = "segments_tests.rs"]
mod tests;
