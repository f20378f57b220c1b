//! Lane hits → contract items: each lane's kept hits (after [`super::diversity::keep`]) scored by
//! rank with [`super::rrf`], in the stable order of invariant 10, with the `why[]` that says what
//! matched; and the ids that name items across the engine.

use std::cmp::Ordering;
use std::collections::HashSet;

use super::diversity::{keep, path_of, session_of};
use super::rrf;
use crate::contract::ChunkProvenance;
use crate::contract::{
    Actor, CodeItem, EpisodeItem, Lane, Outcome, SessionInfo, SkillItem, UsedBy,
};
use crate::lanes::{episode_id, CodeHit, EpisodeHit, SkillHit};

pub use super::diversity::{PER_PATH_CAP, PER_SESSION_CAP};

/// Where a session lives, for the `surface` field.
pub fn surface(hit: &EpisodeHit) -> String {
    let s = &hit.session;
    if s.parent_session_id.is_some() || s.agent_id.is_some() {
        format!("{}/subagent", s.source)
    } else if hit.sidechain_agent.is_some() {
        format!("{}/sidechain", s.source)
    } else {
        s.source.clone()
    }
}

/// Order of invariant 10 within one lane: score desc, time desc (timeless last), id asc.
pub fn order(a: (f64, Option<&str>, &str), b: (f64, Option<&str>, &str)) -> Ordering {
    b.0.total_cmp(&a.0)
        .then_with(|| match (a.1, b.1) {
            (Some(x), Some(y)) => y.cmp(x),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        })
        .then_with(|| a.2.cmp(b.2))
}

/// A lane's items: each kept hit scored by its 1-based rank with [`rrf`], then the lane sorted
/// by [`order`] of the items' (score, time, id).
fn ranked<H, I>(
    kept: Vec<(String, &H)>,
    weight: f64,
    item: impl Fn(String, &H, f64) -> I,
    key: impl Fn(&I) -> (f64, Option<&str>, &str),
) -> Vec<I> {
    let mut items: Vec<I> = kept
        .into_iter()
        .enumerate()
        .map(|(i, (id, hit))| item(id, hit, rrf(weight, i + 1)))
        .collect();
    items.sort_by(|a, b| order(key(a), key(b)));
    items
}

/// The episodes lane: at most [`PER_SESSION_CAP`] events a session, one item an event.
pub fn episode_items(hits: &[EpisodeHit], weight: f64) -> Vec<EpisodeItem> {
    let kept = keep(hits, event_item_id, session_of, PER_SESSION_CAP);
    ranked(kept, weight, episode_item, |i| {
        (i.score, i.time.as_deref(), &i.id)
    })
}

fn event_item_id(h: &EpisodeHit) -> String {
    episode_id(&h.session_id, h.seq)
}

fn episode_item(id: String, h: &EpisodeHit, score: f64) -> EpisodeItem {
    EpisodeItem {
        id,
        session_id: h.session_id.clone(),
        seq: h.seq,
        event_type: h.event_type.clone(),
        time: h.time.clone(),
        surface: surface(h),
        score,
        snippet: Some(h.snippet.clone()),
        session: session_info(h),
        why: episode_why(h),
    }
}

/// The session an event belongs to, as an item shows it.
fn session_info(h: &EpisodeHit) -> SessionInfo {
    let s = &h.session;
    SessionInfo {
        cwd: s.cwd.clone(),
        created_at: s.created_at.clone(),
        agent_preset: s.agent_preset.clone(),
        live: s.live,
        persisted: true,
        left_out: false,
        outcome: Some(s.outcome),
        machine: s.machine.clone(),
    }
}

/// What matched in an event and what else made it evidence.
fn episode_why(h: &EpisodeHit) -> Vec<String> {
    let mut why = Vec::new();
    if h.lexical {
        why.push(format!("lex: match in {}", h.event_type));
        why.push(format!("bm25: {:.2}", h.bm25));
    }
    if let Some(cos) = h.cosine {
        why.push(format!("vec: {cos:.2}"));
    }
    if h.human {
        why.push("written by a person".to_string());
    }
    if h.is_error {
        why.push("tool error".to_string());
    }
    if h.session.outcome != Outcome::Unknown {
        why.push(format!("session outcome: {}", h.session.outcome));
    }
    why
}

/// The code lane: at most [`PER_PATH_CAP`] chunks a path, one item a chunk.
pub fn code_items(hits: &[CodeHit], weight: f64) -> Vec<CodeItem> {
    let kept = keep(
        hits,
        |h| format!("chunk:{}", h.chunk_id),
        path_of,
        PER_PATH_CAP,
    );
    ranked(kept, weight, code_item, |i| {
        (i.score, i.mtime.as_deref(), &i.id)
    })
}

fn code_item(id: String, h: &CodeHit, score: f64) -> CodeItem {
    CodeItem {
        id,
        chunk_id: h.chunk_id.clone(),
        path: h.path.clone(),
        root: (!h.root.is_empty()).then(|| h.root.clone()),
        start_line: h.start_line.max(1),
        end_line: h.end_line.max(h.start_line.max(1)),
        source_kind: h.source_kind.clone(),
        provenance: ChunkProvenance::Stated,
        score,
        why: h.why.clone(),
        snippet: Some(h.snippet.clone()),
        symbol: h.symbol.clone(),
        mtime: h.mtime.clone(),
        machine: h.machine.clone(),
    }
}

/// The skills lane: one item a skill name, no cap.
pub fn skill_items(hits: &[SkillHit], weight: f64) -> Vec<SkillItem> {
    let kept = keep(hits, |h| format!("skill:{}", h.name), |_| None, 0);
    ranked(kept, weight, skill_item, |i| (i.score, None, &i.id))
}

fn skill_item(id: String, h: &SkillHit, score: f64) -> SkillItem {
    SkillItem {
        id,
        name: h.name.clone(),
        path: h.path.clone(),
        description: h.description.clone(),
        when_to_use: h.when_to_use.clone(),
        content_hash: h.content_hash.clone(),
        score,
        uses: h.uses,
        used_by: h
            .used_by
            .iter()
            .map(|(actor, sid, seq)| UsedBy {
                actor_id: actor.clone(),
                episode_id: episode_id(sid, *seq),
            })
            .collect(),
        why: h.why.clone(),
    }
}

/// Drop evidence that names an item no longer in its lane; drop actors left with none.
pub fn prune_dangling_evidence(
    actors: &mut Vec<Actor>,
    episodes: &[EpisodeItem],
    code: &[CodeItem],
    skills: &[SkillItem],
) {
    let ids: HashSet<(Lane, &str)> = episodes
        .iter()
        .map(|i| (Lane::Episodes, i.id.as_str()))
        .chain(code.iter().map(|i| (Lane::Code, i.id.as_str())))
        .chain(skills.iter().map(|i| (Lane::Skills, i.id.as_str())))
        .collect();
    for a in actors.iter_mut() {
        a.evidence
            .retain(|e| ids.contains(&(e.lane, e.id.as_str())));
    }
    actors.retain(|a| !a.evidence.is_empty());
}

/// The absolute path of a code item (its root joined with its path), the key L3 knows edits by.
pub fn code_abs_path(item: &CodeItem) -> String {
    match &item.root {
        Some(root) => format!("{}/{}", root.trim_end_matches('/'), item.path),
        None => item.path.clone(),
    }
}
