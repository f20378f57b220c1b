//! The token budget (contract §8, DECISIONS §9): a conservative token estimator and the trimming
//! that keeps a serialized response under `budget.max_tokens`.
//!
//! The estimator never counts fewer tokens than the o200k BPE tokenizer for the same text (a test
//! checks this on the demo world): BPE merges at most a few characters of a class into one
//! token, so counting by character class with pessimistic run lengths is an upper bound.
//!
//! | text | counted as |
//! |---|---|
//! | an ASCII word (letters and digits) | split at case and digit boundaries; a lowercase part 1 token per 5 letters, an uppercase part 1 per 3, digits 1 per 2; a word whose parts average under 3 characters (hashes, base64) 2 tokens per 3 characters |
//! | a run of ASCII punctuation | up to 4 characters (JSON's `":"`, `"},{"`): 1 token per 3; longer runs 1 per 2 |
//! | a single space | 0 (BPE joins it to the next word); any other whitespace run 1 |
//! | a run of Cyrillic letters | 1 token per 2 letters |
//! | any other character | its UTF-8 byte length (byte-level BPE never makes more tokens than bytes) |
//!
//! The total is multiplied by 1.1 as a margin. A test compares it with o200k on every demo and
//! real-transcript response and on hard texts (hex ids, base64, emoji, punctuation runs).

use super::items::prune_dangling_evidence;
use crate::contract::{Dropped, SearchResponse};

/// Estimated tokens of a text (see the module table).
pub fn estimate_tokens(text: &str) -> usize {
    let mut total = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_alphanumeric() {
            let mut word = String::new();
            while let Some(&d) = chars.peek() {
                if !d.is_ascii_alphanumeric() {
                    break;
                }
                word.push(d);
                chars.next();
            }
            total += word_tokens(&word);
        } else if c.is_ascii_punctuation() {
            let mut n = 0usize;
            while chars.peek().is_some_and(|d| d.is_ascii_punctuation()) {
                chars.next();
                n += 1;
            }
            total += if n <= 4 { n.div_ceil(3) } else { n.div_ceil(2) };
        } else if c.is_whitespace() {
            let mut n = 0usize;
            let mut only_space = true;
            while let Some(&d) = chars.peek() {
                if !d.is_whitespace() {
                    break;
                }
                only_space &= d == ' ';
                chars.next();
                n += 1;
            }
            if !(n == 1 && only_space) {
                total += 1;
            }
        } else if is_cyrillic(c) {
            let mut n = 0usize;
            while chars.peek().is_some_and(|d| is_cyrillic(*d)) {
                chars.next();
                n += 1;
            }
            total += n.div_ceil(2);
        } else {
            chars.next();
            total += c.len_utf8();
        }
    }
    total + total.div_ceil(10)
}

fn is_cyrillic(c: char) -> bool {
    matches!(c, '\u{0400}'..='\u{04FF}')
}

/// Tokens of one ASCII alphanumeric word.
fn word_tokens(word: &str) -> usize {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Lower,
        Upper,
        Digit,
    }
    let class = |c: char| {
        if c.is_ascii_digit() {
            Class::Digit
        } else if c.is_ascii_uppercase() {
            Class::Upper
        } else {
            Class::Lower
        }
    };
    // Parts: maximal runs of one class, but a single capital starts a lowercase part (`User`).
    let mut parts: Vec<(Class, usize)> = Vec::new();
    for c in word.chars() {
        let k = class(c);
        match parts.last_mut() {
            Some((last, n)) if *last == k => *n += 1,
            Some((Class::Upper, 1)) if k == Class::Lower => {
                if let Some(p) = parts.last_mut() {
                    *p = (Class::Lower, 2);
                }
            }
            _ => parts.push((k, 1)),
        }
    }
    let len = word.len();
    if parts.len() > 1 && len < 3 * parts.len() {
        return (2 * len).div_ceil(3);
    }
    parts
        .iter()
        .map(|(k, n)| match k {
            Class::Lower => n.div_ceil(5),
            Class::Upper => n.div_ceil(3),
            Class::Digit => n.div_ceil(2),
        })
        .sum()
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
    let before = resp.limits.dropped.len();

    // 1. Snippets, lowest-ranked first, across lanes. Counted incrementally, then exactly.
    let mut removed: Vec<(&'static str, String, String)> = Vec::new();
    let mut snippets = snippet_candidates(resp);
    snippets.sort_by(|a, b| a.score.total_cmp(&b.score).then(b.index.cmp(&a.index)));
    for c in snippets {
        if total <= max_tokens {
            break;
        }
        let (id, saved) = drop_snippet(resp, c.lane, c.index);
        if let Some((id, snippet)) = id {
            removed.push((c.lane, id.clone(), snippet));
            let entry = Dropped {
                lane: c.lane.to_string(),
                id,
                what: "snippet".to_string(),
            };
            total = total.saturating_sub(saved) + estimate_json(&entry) + 1;
            resp.limits.dropped.push(entry);
        }
    }
    total = estimate_json(resp);

    // 2. Whole items from the end of the longest lane (so no lane is emptied to keep another
    //    whole), recounting exactly as we go.
    while total > max_tokens {
        let Some(c) = last_of_longest_lane(resp) else {
            break;
        };
        let id = remove_item(resp, c.lane, c.index);
        let SearchResponse { actors, lanes, .. } = &mut *resp;
        let skills = lanes.skills.as_ref().map_or(&[][..], |s| &s.items[..]);
        prune_dangling_evidence(actors, &lanes.episodes.items, &lanes.code.items, skills);
        // The item's entry names its snippet too.
        resp.limits
            .dropped
            .retain(|d| !(d.what == "snippet" && d.lane == c.lane && d.id == id));
        resp.limits.dropped.push(Dropped {
            lane: c.lane.to_string(),
            id,
            what: "item".to_string(),
        });
        total = estimate_json(resp);
    }

    // 3. Dropping items freed room: give snippets back to the best remaining items that fit.
    removed.reverse();
    for (lane, id, snippet) in removed {
        if !restore_snippet(resp, lane, &id, snippet) {
            continue;
        }
        let pos = resp
            .limits
            .dropped
            .iter()
            .position(|d| d.what == "snippet" && d.lane == lane && d.id == id);
        let entry = pos.map(|p| resp.limits.dropped.remove(p));
        let with = estimate_json(resp);
        if with <= max_tokens {
            total = with;
        } else {
            drop_snippet_by_id(resp, lane, &id);
            if let (Some(p), Some(e)) = (pos, entry) {
                resp.limits.dropped.insert(p, e);
            }
        }
    }
    (resp.limits.dropped.len() > before, total > max_tokens)
}

fn restore_snippet(resp: &mut SearchResponse, lane: &str, id: &str, snippet: String) -> bool {
    let slot = match lane {
        "episodes" => resp
            .lanes
            .episodes
            .items
            .iter_mut()
            .find(|i| i.id == id)
            .map(|i| &mut i.snippet),
        _ => resp
            .lanes
            .code
            .items
            .iter_mut()
            .find(|i| i.id == id)
            .map(|i| &mut i.snippet),
    };
    match slot {
        Some(s) => {
            *s = Some(snippet);
            true
        }
        None => false,
    }
}

fn drop_snippet_by_id(resp: &mut SearchResponse, lane: &str, id: &str) {
    match lane {
        "episodes" => {
            if let Some(i) = resp.lanes.episodes.items.iter_mut().find(|i| i.id == id) {
                i.snippet = None;
            }
        }
        _ => {
            if let Some(i) = resp.lanes.code.items.iter_mut().find(|i| i.id == id) {
                i.snippet = None;
            }
        }
    }
}

/// The next item to drop: from the end of the lane with the most items (ties go to the
/// lower-priority lane: skills, then code, then episodes), preferring items that no actor cites
/// as evidence, so the actor ranking survives a tight budget as long as it can.
fn last_of_longest_lane(resp: &SearchResponse) -> Option<Candidate> {
    let cited: std::collections::HashSet<(&str, &str)> = resp
        .actors
        .iter()
        .flat_map(|a| a.evidence.iter().map(|e| (e.lane.as_str(), e.id.as_str())))
        .collect();
    let ids = |lane: &'static str| resp.lane_ids(lane);
    for only_uncited in [true, false] {
        let mut best: Option<(&'static str, usize, usize)> = None;
        for lane in ["skills", "code", "episodes"] {
            let list = ids(lane);
            let droppable: Vec<usize> = (0..list.len())
                .filter(|i| !only_uncited || !cited.contains(&(lane, list[*i])))
                .collect();
            let Some(&last) = droppable.last() else {
                continue;
            };
            if best.is_none_or(|(_, n, _)| list.len() > n) {
                best = Some((lane, list.len(), last));
            }
        }
        if let Some((lane, _, index)) = best {
            return Some(Candidate {
                lane,
                index,
                score: 0.0,
            });
        }
    }
    None
}

fn snippet_candidates(resp: &SearchResponse) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (i, it) in resp.lanes.episodes.items.iter().enumerate() {
        if it.snippet.is_some() {
            out.push(Candidate {
                lane: "episodes",
                index: i,
                score: it.score,
            });
        }
    }
    for (i, it) in resp.lanes.code.items.iter().enumerate() {
        if it.snippet.is_some() {
            out.push(Candidate {
                lane: "code",
                index: i,
                score: it.score,
            });
        }
    }
    out
}

fn drop_snippet(
    resp: &mut SearchResponse,
    lane: &str,
    index: usize,
) -> (Option<(String, String)>, usize) {
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
            Some(s) => {
                let saved = estimate_tokens(&s) + 6;
                (Some((id, s)), saved)
            }
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
