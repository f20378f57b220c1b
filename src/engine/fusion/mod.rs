//! Fusion (contract §7): each lane's hits become the lane's scored contract items, in two steps a
//! lane at a time: the diversity caps and dedup by id ([`diversity::keep`]), then weighted
//! reciprocal-rank fusion ([`rrf`]: `weight / (k + rank)`, `k` = [`RRF_K`], the lane's weight
//! from the routed intent) and the stable order of invariant 10 ([`items::order`]).
//!
//! Why it exists: the scores every later stage compares (actors, the budget's fused order) are
//! made here and only here, and [`header`] reports in the response exactly what was applied.
//! Lanes never mix: a rank is a rank inside its own lane, and an episode and a code chunk stay
//! different evidence even when they say the same thing.

pub mod diversity;
pub mod items;

use super::routing::Route;
use crate::contract::{CodeItem, Dedup, EpisodeItem, Fusion, FusionStrategy, Lane, SkillItem};
use crate::lanes::EpisodeHit;
use crate::lanes::{CodeHit, SkillHit};

/// RRF constant (contract §7).
pub const RRF_K: u32 = 60;

/// RRF score of a 1-based rank in a lane of the given weight, rounded to 1e-6 so the same
/// request over the same index gives the same bytes (KC-12).
pub fn rrf(weight: f64, rank: usize) -> f64 {
    let s = weight / (RRF_K as f64 + rank as f64);
    (s * 1e6).round() / 1e6
}

/// The hits each lane answered (empty for a lane that failed, timed out or was not asked).
pub struct LaneHits<'a> {
    pub episodes: &'a [EpisodeHit],
    pub code: &'a [CodeHit],
    pub skills: &'a [SkillHit],
}

/// Every lane's items after fusion, each lane in the order of invariant 10.
pub struct FusedLanes {
    pub episodes: Vec<EpisodeItem>,
    pub code: Vec<CodeItem>,
    pub skills: Vec<SkillItem>,
}

impl FusedLanes {
    /// Keep at most `limit` items a lane (the best, as they are ordered).
    pub fn truncate(&mut self, limit: usize) {
        self.episodes.truncate(limit);
        self.code.truncate(limit);
        self.skills.truncate(limit);
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// How many items all lanes hold.
    pub fn len(&self) -> usize {
        self.episodes.len() + self.code.len() + self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Cap, dedup and score every lane with the weights of the routed intent.
pub fn fuse(hits: LaneHits<'_>, route: &Route) -> FusedLanes {
    FusedLanes {
        episodes: items::episode_items(hits.episodes, route.weight(Lane::Episodes)),
        code: items::code_items(hits.code, route.weight(Lane::Code)),
        skills: items::skill_items(hits.skills, route.weight(Lane::Skills)),
    }
}

/// The response's `fusion` header: the strategy, its `k`, the lane weights applied and the
/// dedup rule.
pub fn header(route: &Route) -> Fusion {
    Fusion {
        strategy: FusionStrategy::Rrf,
        k: RRF_K,
        weights: Lane::ALL
            .into_iter()
            .map(|lane| (lane.as_str().to_string(), route.weight(lane)))
            .collect(),
        dedup: Dedup::ById,
    }
}
