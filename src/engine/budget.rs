//! The token budget (contract §8, DECISIONS §9): a conservative token estimator and the trimming
//! that keeps a serialized response under `budget.max_tokens`.
//!
//! The estimator never counts fewer tokens than the o200k BPE tokenizer for the same text (a test
//! checks this on the demo world): BPE merges at most a few characters of a class into one
//! token, so counting by character class with pessimistic run lengths is an upper bound.
//!
//! | text | counted as |
//! |---|---|
//! | a run of ASCII letters | 1 token per 3 letters, rounded up |
//! | a run of ASCII digits | 1 token per 2 digits, rounded up (o200k groups at most 3) |
//! | ASCII punctuation or symbol | 1 token each |
//! | a run of whitespace | 1 token |
//! | any other character (Cyrillic, CJK, emoji, …) | 1 token each |

use crate::contract::{Dropped, SearchResponse};

/// Estimated tokens of a text (see the module table).
pub fn estimate_tokens(text: &str) -> usize {
    #[derive(PartialEq, Clone, Copy)]
    enum Run {
        None,
        Alpha,
        Digit,
        Space,
    }
    let mut total = 0usize;
    let mut run = Run::None;
    let mut run_len = 0usize;
    let flush = |run: Run, len: usize| -> usize {
        match run {
            Run::Alpha => len.div_ceil(3),
            Run::Digit => len.div_ceil(2),
            Run::Space => 1,
            Run::None => 0,
        }
    };
    for ch in text.chars() {
        let class = if ch.is_ascii_alphabetic() {
            Run::Alpha
        } else if ch.is_ascii_digit() {
            Run::Digit
        } else if ch.is_whitespace() {
            Run::Space
        } else {
            Run::None
        };
        if class != run {
            total += flush(run, run_len);
            run = class;
            run_len = 0;
        }
        if class == Run::None {
            total += 1;
        } else {
            run_len += 1;
        }
    }
    total + flush(run, run_len)
}

fn estimate_json<T: serde::Serialize>(v: &T) -> usize {
    serde_json::to_string(v)
        .map(|s| estimate_tokens(&s))
        .unwrap_or(usize::MAX / 4)
}

/// One trimmable thing: a snippet or a whole item, with its rank key (lowest dropped first).
struct Candidate {
    lane: &'static str,
    index: usize,
    score: f64,
}

/// Trim `resp` in place until its estimate fits `max_tokens`. Returns whether anything was
/// dropped and whether even the skeleton does not fit.
pub fn apply(resp: &mut SearchResponse, max_tokens: usize) -> (bool, bool) {
    let mut total = estimate_json(resp);
    if total <= max_tokens {
        return (false, false);
    }
    let mut dropped: Vec<Dropped> = Vec::new();

    // 1. Snippets, lowest-ranked first, across lanes.
    let mut snippets = candidates(resp, true);
    snippets.sort_by(|a, b| a.score.total_cmp(&b.score).then(b.index.cmp(&a.index)));
    for c in snippets {
        if total <= max_tokens {
            break;
        }
        let (id, saved) = drop_snippet(resp, c.lane, c.index);
        if let Some(id) = id {
            total = total.saturating_sub(saved);
            dropped.push(Dropped {
                lane: c.lane.to_string(),
                id,
                what: "snippet".to_string(),
            });
        }
    }
    total = estimate_json(resp);

    // 2. Whole items from the end (lowest score first), recounting exactly as we go.
    while total > max_tokens {
        let mut items = candidates(resp, false);
        items.sort_by(|a, b| a.score.total_cmp(&b.score).then(b.index.cmp(&a.index)));
        let Some(c) = items.first() else { break };
        let id = remove_item(resp, c.lane, c.index);
        dropped.push(Dropped {
            lane: c.lane.to_string(),
            id: id.clone(),
            what: "item".to_string(),
        });
        prune_evidence(resp, c.lane, &id);
        total = estimate_json(resp) + dropped.len() * 16;
    }
    let any = !dropped.is_empty();
    resp.limits.dropped.extend(dropped);
    let over = estimate_json(resp) > max_tokens;
    (any, over)
}

fn candidates(resp: &SearchResponse, snippets_only: bool) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (i, it) in resp.lanes.episodes.items.iter().enumerate() {
        if !snippets_only || it.snippet.is_some() {
            out.push(Candidate {
                lane: "episodes",
                index: i,
                score: it.score,
            });
        }
    }
    for (i, it) in resp.lanes.code.items.iter().enumerate() {
        if !snippets_only || it.snippet.is_some() {
            out.push(Candidate {
                lane: "code",
                index: i,
                score: it.score,
            });
        }
    }
    if !snippets_only {
        if let Some(skills) = &resp.lanes.skills {
            for (i, it) in skills.items.iter().enumerate() {
                out.push(Candidate {
                    lane: "skills",
                    index: i,
                    score: it.score,
                });
            }
        }
    }
    out
}

fn drop_snippet(resp: &mut SearchResponse, lane: &str, index: usize) -> (Option<String>, usize) {
    let slot = match lane {
        "episodes" => resp
            .lanes
            .episodes
            .items
            .get_mut(index)
            .map(|i| (i.id.clone(), &mut i.snippet)),
        _ => resp
            .lanes
            .code
            .items
            .get_mut(index)
            .map(|i| (i.id.clone(), &mut i.snippet)),
    };
    match slot {
        Some((id, snippet)) => match snippet.take() {
            Some(s) => (Some(id), estimate_tokens(&s) + 6),
            None => (None, 0),
        },
        None => (None, 0),
    }
}

fn remove_item(resp: &mut SearchResponse, lane: &str, index: usize) -> String {
    match lane {
        "episodes" => resp.lanes.episodes.items.remove(index).id,
        "code" => resp.lanes.code.items.remove(index).id,
        _ => match resp.lanes.skills.as_mut() {
            Some(s) => s.items.remove(index).id,
            None => String::new(),
        },
    }
}

/// Keep invariant 5: evidence never names a dropped item; an actor left without evidence goes.
fn prune_evidence(resp: &mut SearchResponse, lane: &str, id: &str) {
    for a in &mut resp.actors {
        a.evidence.retain(|e| !(e.lane == lane && e.id == id));
    }
    resp.actors.retain(|a| !a.evidence.is_empty());
}
