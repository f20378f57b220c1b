//! The search side of the message vectors: the mapped file, kept fresh in a long-running process,
//! and a brute-force scan of every live record by int8 dot product.
//!
//! A record's score is its cosine to the query minus its hub term in the query's language
//! ([`super::hub`]); an event's score is its best window's. The scan keeps the best records in a
//! bounded buffer, then drops those a later tombstone killed: tombstones are collected in the
//! same pass, so no second read of the file is needed.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use super::file::{is_dead, Mapped};
use crate::text::encoder::DIMS;

/// One event the scan found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest {
    pub event: i64,
    pub key: i64,
    pub seq: u32,
    /// Cosine minus hub term: what ranks.
    pub score: f32,
    /// The plain cosine of the best window.
    pub cosine: f32,
}

/// The file beside a store, mapped once and mapped again when it changed.
#[derive(Default)]
pub struct MessageIndex {
    slot: Mutex<Option<Arc<Mapped>>>,
}

impl MessageIndex {
    /// The current map of the file beside `db` for store `store_id` (`None`: no file, or not
    /// this store's).
    pub fn mapped(&self, db: &Path, store_id: &str) -> std::io::Result<Option<Arc<Mapped>>> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        let stamp = Mapped::stamp_of(db);
        if let Some(m) = slot.as_ref() {
            if m.stamp == stamp {
                return Ok(Some(m.clone()));
            }
        }
        let fresh = Mapped::open(db, store_id)?.map(Arc::new);
        slot.clone_from(&fresh);
        Ok(fresh)
    }
}

/// The query as int8 values and scale.
pub struct ScanQuery<'a> {
    pub vector: &'a [f32; DIMS],
    /// Correct with the Russian hub term.
    pub russian: bool,
    /// Only these session keys (a filtered request); `None` for all.
    pub keys: Option<&'a HashSet<u64>>,
    /// Events wanted at most (before the caller's own checks).
    pub depth: usize,
}

/// The best `q.depth` events by score, best first.
pub fn nearest(m: &Mapped, q: &ScanQuery<'_>) -> Vec<Nearest> {
    let (qv, qs) = super::file::quantize(q.vector);
    // Several windows of one event may be among the best records: keep a few times the depth.
    let keep = (q.depth * 4).max(32);
    let mut best: Vec<(f32, usize, f32)> = Vec::with_capacity(keep * 2);
    let mut floor = f32::MIN;
    let mut tombs: HashMap<i64, Vec<(usize, u32)>> = HashMap::new();
    for i in 0..m.len() {
        let r = m.raw(i);
        if r.is_tombstone() {
            tombs.entry(r.key()).or_default().push((i, r.seq()));
            continue;
        }
        if !r.is_vector() {
            continue;
        }
        if let Some(keys) = q.keys {
            if !keys.contains(&(r.key() as u64)) {
                continue;
            }
        }
        let cosine = dot_i8(&qv, r.values()) as f32 * qs * r.scale();
        let score = cosine - r.hub(q.russian);
        if !score.is_finite() || score < floor {
            continue;
        }
        best.push((score, i, cosine));
        if best.len() >= keep * 2 {
            best.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0));
            best.truncate(keep);
            floor = best.iter().map(|b| b.0).fold(f32::MAX, f32::min);
        }
    }
    best.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut seen: HashSet<i64> = HashSet::new();
    let mut out = Vec::new();
    for (score, i, cosine) in best {
        let r = m.raw(i);
        if is_dead(&tombs, i, &r) || !seen.insert(r.event()) {
            continue;
        }
        out.push(Nearest {
            event: r.event(),
            key: r.key(),
            seq: r.seq(),
            score,
            cosine,
        });
        if out.len() >= q.depth {
            break;
        }
    }
    out
}

/// The dot product of two int8 vectors, in lanes the compiler turns into SIMD.
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 32;
    let mut acc = [0i32; LANES];
    for (ca, cb) in a.chunks_exact(LANES).zip(b.chunks_exact(LANES)) {
        for k in 0..LANES {
            acc[k] += ca[k] as i16 as i32 * cb[k] as i16 as i32;
        }
    }
    let tail: i32 = a
        .chunks_exact(LANES)
        .remainder()
        .iter()
        .zip(b.chunks_exact(LANES).remainder())
        .map(|(x, y)| *x as i32 * *y as i32)
        .sum();
    acc.iter().sum::<i32>() + tail
}
