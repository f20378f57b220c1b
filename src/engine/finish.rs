//! The budget stage, the last of a search (`engine/search.rs`): what leaves the engine. Snippets
//! are redacted again and clipped, provenance applied, the limit lowered when the budget cannot
//! carry it, then the budget enforced (`budget::apply`) and the tokens used counted.

use super::budget;
use crate::contract::*;
use crate::text::redact;
use crate::text::snippet::clip_chars;

/// Redact (again), apply provenance, and enforce the budget; `primary` is the lane the routed
/// intent weighs most, which the budget never empties while another lane has items.
pub fn finish(resp: &mut SearchResponse, req: &SearchRequest, primary: Lane) {
    let locator_only = req.provenance == Provenance::Locator;
    let max = req.snippet_chars as usize;
    // Redacting again may lengthen a snippet ("[REDACTED]" for a short value): clip it back.
    let outbound = |s: Option<String>| -> Option<String> {
        if locator_only {
            return None;
        }
        s.map(|s| clip_chars(&redact::redact(&s).text, max))
    };
    for it in &mut resp.lanes.episodes.items {
        it.snippet = outbound(it.snippet.take());
    }
    for it in &mut resp.lanes.code.items {
        // Code is redacted as its file kind reads (a type or a counter is not a secret).
        let kind = crate::sources::code::chunk::file_text_kind(&it.path, "");
        it.snippet = (!locator_only)
            .then(|| it.snippet.take())
            .flatten()
            .map(|s| clip_chars(&redact::redact_as(&s, kind).text, max));
    }
    if let Some(skills) = &mut resp.lanes.skills {
        for it in &mut skills.items {
            it.description = redact::redact(&it.description).text;
            it.when_to_use = it.when_to_use.take().map(|w| redact::redact(&w).text);
        }
    }
    // Reserve room for the numbers filled in after trimming.
    resp.limits.budget.used_tokens = 99_999;
    fit_limit_to_budget(resp, req, primary);
    let (truncated, over) = budget::apply(resp, req.max_tokens as usize, primary);
    resp.limits.truncated = truncated;
    resp.limits.returned = (resp.lanes.episodes.items.len()
        + resp.lanes.code.items.len()
        + resp.lanes.skills.as_ref().map_or(0, |s| s.items.len()))
        as u32;
    if over {
        // `truncated` names what was dropped (§8); a skeleton too big with nothing left to drop
        // is said by this warning instead.
        resp.warnings.push(Issue::new(
            Code::BudgetExceeded,
            format!(
                "budget.max_tokens={} cannot hold the response together with the list of what \
                 was dropped; raise budget.max_tokens or lower limit",
                req.max_tokens
            ),
        ));
    }
    let used = serde_json::to_string(&resp)
        .map(|s| budget::estimate_tokens(&s))
        .unwrap_or(0);
    resp.limits.budget.used_tokens = used as u32;
}

/// How many items a lane are offered to the budget beyond what it can carry as locators: the
/// budget then chooses what to drop in fused order (so a lane the question is about keeps its
/// items) instead of every lane being cut at the same rank, while the list of what was dropped
/// stays short.
const OFFERED_PER_AFFORDABLE: usize = 2;

/// When the budget cannot carry `limit` items a lane, ask for fewer (as if the lanes had been
/// asked for fewer: about twice what fits, see [`OFFERED_PER_AFFORDABLE`]) and say so, naming
/// the limit actually used. What is cut here was never offered, so it is not listed in
/// `dropped[]`; the budget then trims what remains and lists that.
fn fit_limit_to_budget(resp: &mut SearchResponse, req: &SearchRequest, primary: Lane) {
    let message = |used: usize| {
        format!(
            "budget.max_tokens={} cannot carry {} item(s) a lane: limit {} was lowered to \
             {used}; raise budget.max_tokens for more",
            req.max_tokens, req.limit, req.limit
        )
    };
    // The warning is part of the response: count it (with the widest number) before fitting.
    resp.warnings.push(Issue::new(
        Code::BudgetExceeded,
        message(req.limit as usize),
    ));
    let (max, limit) = (req.max_tokens as usize, req.limit as usize);
    let mut fitted = budget::affordable_limit(resp, max, limit);
    let actors_offered = resp.actors.len();
    // Not even one item a lane beside every actor: keep the best actors that still leave room
    // for a row of items (an actor without its evidence means nothing).
    if fitted == Some(0) {
        let mut keep = resp.actors.len();
        let mut probe = resp.clone();
        while keep > 0 {
            probe.actors.truncate(keep);
            if budget::affordable_limit(&probe, max, limit) != Some(0) {
                break;
            }
            keep -= 1;
        }
        resp.actors.truncate(keep);
        fitted = budget::affordable_limit(resp, max, limit);
    }
    // Not even one item of every lane fits: offer only the best item of the lane the question
    // is about, so what is dropped cannot outgrow the budget.
    let primary_only = fitted == Some(0);
    let used = fitted.map(|k| (OFFERED_PER_AFFORDABLE * k + 1).min(limit));
    let cap = |lane: Lane, used: usize| {
        if primary_only && lane != primary {
            0
        } else {
            used
        }
    };
    // A lowered limit that cuts nothing (no actor left out, every lane already holding fewer
    // items) is not news.
    let cuts = |used: usize| {
        resp.actors.len() < actors_offered
            || Lane::ALL
                .into_iter()
                .any(|lane| resp.lane_ids(lane).len() > cap(lane, used))
    };
    let Some(used) = used.filter(|u| *u < limit && cuts(*u)) else {
        resp.warnings.pop();
        return;
    };
    if let Some(w) = resp.warnings.last_mut() {
        w.message = message(used);
    }
    let SearchResponse { actors, lanes, .. } = &mut *resp;
    let cap = |lane: Lane| cap(lane, used);
    lanes.episodes.items.truncate(cap(Lane::Episodes));
    lanes.code.items.truncate(cap(Lane::Code));
    if let Some(s) = lanes.skills.as_mut() {
        s.items.truncate(cap(Lane::Skills));
    }
    let skills = lanes.skills.as_ref().map_or(&[][..], |s| &s.items[..]);
    super::fusion::items::prune_dangling_evidence(
        actors,
        &lanes.episodes.items,
        &lanes.code.items,
        skills,
    );
}
