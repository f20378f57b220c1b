//! The per-lane caps and dedup by id, applied to a lane's hits before they are ranked (contract
//! §7 diversity). They apply whatever the source, since an external session-query server does
//! not cap: a long session or a large file cannot hide the rest, and the same evidence never
//! takes two ranks.

use std::collections::{HashMap, HashSet};

use crate::lanes::CodeHit;
use crate::lanes::EpisodeHit;

/// At most this many events of one session in the episodes lane.
pub use crate::sources::episodes::search::PER_SESSION_CAP;

/// At most this many code hits of one path in the code lane.
pub const PER_PATH_CAP: usize = 5;

/// The episodes lane's cap counts the events of a session.
pub fn session_of(hit: &EpisodeHit) -> Option<&str> {
    Some(&hit.session_id)
}

/// The code lane's cap counts the chunks of a path.
pub fn path_of(hit: &CodeHit) -> Option<&str> {
    Some(&hit.path)
}

/// The hits a lane keeps, in the lane's order, each with its item id: the first hit of an id,
/// and at most `cap` hits of one group (a session, a path; `None`: no group, no cap).
pub fn keep<'h, H>(
    hits: &'h [H],
    id_of: impl Fn(&H) -> String,
    group_of: impl Fn(&'h H) -> Option<&'h str>,
    cap: usize,
) -> Vec<(String, &'h H)> {
    let mut seen = HashSet::new();
    let mut per_group: HashMap<&str, usize> = HashMap::new();
    let mut kept = Vec::new();
    for hit in hits {
        let id = id_of(hit);
        let taken = group_of(hit).map(|g| per_group.entry(g).or_default());
        if taken.as_ref().is_some_and(|n| **n >= cap) || !seen.insert(id.clone()) {
            continue;
        }
        if let Some(n) = taken {
            *n += 1;
        }
        kept.push((id, hit));
    }
    kept
}
