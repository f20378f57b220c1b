//! Actor ranking (contract §7.5): who did the work, aggregated from the lane items.
//!
//! An actor's score is `max + 0.3·mean(top 3)` of the fused scores of its evidence, with at most
//! three episodes per actor. Evidence comes from episodes (the actor wrote or ran the event),
//! skills (the actor used a matching skill, from L3) and code (the actor edited a matching path,
//! from L3). Without L3 the ranking falls back to actors inferred from L1 alone, with lower
//! confidence (DECISIONS §16).

use std::collections::{BTreeMap, HashMap};

use super::fusion::items::{code_abs_path, order};
use super::routing::Route;
use crate::config::DispatchAvailability;
use crate::contract::{
    Actor, CodeItem, DispatchInfo, EpisodeItem, EvidenceRef, SkillItem, SkillUses,
};
use crate::contract::{Lane, Mode, Outcome};
use crate::lanes::episode_id;
use crate::lanes::EpisodeHit;
use crate::lanes::SkillHit;
use crate::sources::actor_id::{actor_of, ActorKey, SessionFacts};

/// At most this many episodes of one actor count towards its score and evidence.
pub const EPISODES_PER_ACTOR: usize = 3;
/// Score weight of an actor whose work succeeded / failed, for `find_agent` questions.
pub const OUTCOME_SUCCESS_WEIGHT: f64 = 1.15;
pub const OUTCOME_FAILURE_WEIGHT: f64 = 0.85;
/// Score weight of an actor the question names (`encoding-janitor`).
pub const NAMED_ACTOR_WEIGHT: f64 = 1.5;
/// Weight of an episode a person wrote (`user/message`) as evidence for the session's actor.
pub const HUMAN_PROMPT_WEIGHT: f64 = 0.5;

/// Actor facts from L3 that the lanes alone cannot give.
pub use crate::sources::agent_knowledge::ActorFacts;

/// L3's lookup of the actor behind an event.
pub type ResolveActor<'a> = dyn Fn(&EpisodeHit) -> Option<ActorKey> + 'a;

pub struct Inputs<'a> {
    pub episodes: &'a [EpisodeItem],
    pub episode_hits: &'a [EpisodeHit],
    pub code: &'a [CodeItem],
    pub skills: &'a [SkillItem],
    pub skill_hits: &'a [SkillHit],
    pub facts: Option<&'a ActorFacts>,
    /// L3's actor for an event (so a subagent linked to its spawn gets the spawn's name).
    pub resolve: Option<&'a ResolveActor<'a>>,
    pub route: &'a Route,
    /// Episode filters are active (workspaces, sessions, time, outcome): actors then come only
    /// from evidence that passed them; code and skills only add to those actors.
    pub filtered: bool,
    /// The query's stemmed terms (to notice an actor named in the question).
    pub query_terms: &'a [String],
    pub limit: usize,
    pub actor_filter: &'a [String],
    pub dispatch: &'a DispatchAvailability,
}

#[derive(Default)]
struct Acc {
    key: Option<ActorKey>,
    episodes: Vec<(f64, String, Option<String>)>,
    code: Vec<(f64, String)>,
    skills: Vec<(f64, String)>,
    outcome_success: bool,
    outcome_failure: bool,
    latest: Option<String>,
}

/// Rank the actors behind the lane items: gather each actor's evidence from the three lanes,
/// score and explain every actor, then order them (invariant 10) and keep `limit`.
pub fn aggregate(inp: &Inputs<'_>) -> Vec<Actor> {
    let mut acc: BTreeMap<String, Acc> = BTreeMap::new();
    add_episode_evidence(inp, &mut acc);
    if let Some(facts) = inp.facts {
        add_code_evidence(inp, facts, &mut acc);
    }
    add_skill_evidence(inp, &mut acc);
    let mut out: Vec<(Actor, Option<String>)> = acc
        .into_iter()
        .filter_map(|(actor_id, a)| rank_actor(inp, actor_id, a))
        .collect();
    out.sort_by(|(a, at), (b, bt)| {
        order(
            (a.score, at.as_deref(), &a.actor_id),
            (b.score, bt.as_deref(), &b.actor_id),
        )
    });
    out.into_iter().map(|(a, _)| a).take(inp.limit).collect()
}

/// Episodes: each event counts for the actor who wrote or ran it (L3's answer when it has one,
/// else the actor the session itself names), with the session's outcome and the latest time.
fn add_episode_evidence(inp: &Inputs<'_>, acc: &mut BTreeMap<String, Acc>) {
    let hit_by_id: HashMap<String, &EpisodeHit> = inp
        .episode_hits
        .iter()
        .map(|h| (episode_id(&h.session_id, h.seq), h))
        .collect();
    for item in inp.episodes {
        let Some(hit) = hit_by_id.get(&item.id) else {
            continue;
        };
        let key = inp
            .resolve
            .and_then(|f| f(hit))
            .unwrap_or_else(|| session_actor(hit));
        let a = acc.entry(key.actor_id.clone()).or_default();
        match hit.session.outcome {
            Outcome::Success => a.outcome_success = true,
            Outcome::Failure => a.outcome_failure = true,
            Outcome::Unknown => {}
        }
        if a.latest.as_deref() < item.time.as_deref() {
            a.latest = item.time.clone();
        }
        a.key.get_or_insert(key);
        // A prompt a person typed is evidence of who asked, not of what the agent did.
        let weight = if hit.human { HUMAN_PROMPT_WEIGHT } else { 1.0 };
        if !a.episodes.iter().any(|e| e.1 == item.id) {
            a.episodes
                .push((item.score * weight, item.id.clone(), item.time.clone()));
        }
    }
}

/// The actor a session names by itself (L1 alone: DECISIONS §16).
fn session_actor(hit: &EpisodeHit) -> ActorKey {
    actor_of(SessionFacts {
        source: &hit.session.source,
        session_id: &hit.session_id,
        parent_session_id: hit.session.parent_session_id.as_deref(),
        agent_id: hit.session.agent_id.as_deref(),
        agent_name: hit.session.agent_name.as_deref(),
        agent_preset: hit.session.agent_preset.as_deref(),
        team_name: hit.session.team_name.as_deref(),
        sidechain_agent: hit.sidechain_agent.as_deref(),
    })
}

/// Code: a returned chunk counts for every actor L3 saw edit its file.
fn add_code_evidence(inp: &Inputs<'_>, facts: &ActorFacts, acc: &mut BTreeMap<String, Acc>) {
    for item in inp.code {
        let path = code_abs_path(item);
        for key in facts.editors.get(&path).into_iter().flatten() {
            if inp.filtered && !acc.contains_key(&key.actor_id) {
                continue;
            }
            let a = acc.entry(key.actor_id.clone()).or_default();
            a.key.get_or_insert_with(|| key.clone());
            if !a.code.iter().any(|(_, id)| id == &item.id) {
                a.code.push((item.score, item.id.clone()));
            }
        }
    }
}

/// Skills: a returned skill counts for every actor recorded using it.
fn add_skill_evidence(inp: &Inputs<'_>, acc: &mut BTreeMap<String, Acc>) {
    // Skill items are matched to their hits by id (the lane deduplicated the items).
    let hit_of = |id: &str| {
        inp.skill_hits
            .iter()
            .find(|h| format!("skill:{}", h.name) == id)
    };
    for item in inp.skills {
        let Some(hit) = hit_of(&item.id) else {
            continue;
        };
        for (actor, _, _) in &hit.used_by {
            // Under a filter, skills only add to actors whose own evidence passed it.
            if inp.filtered && !acc.contains_key(actor) {
                continue;
            }
            let known = inp.facts.and_then(|f| f.known.get(actor)).cloned();
            let a = acc.entry(actor.clone()).or_default();
            if a.key.is_none() {
                a.key = known;
            }
            if !a.skills.iter().any(|(_, id)| id == &item.id) {
                a.skills.push((item.score, item.id.clone()));
            }
        }
    }
}

/// One actor's entry with its latest event time (the order's tie-break); none for an actor
/// nobody can name, machinery, one the filter leaves out, or one without evidence.
fn rank_actor(inp: &Inputs<'_>, actor_id: String, mut a: Acc) -> Option<(Actor, Option<String>)> {
    let key = a.key.take()?;
    // A compaction summariser is machinery, not someone who did the work.
    if key.name.starts_with("acompact") {
        return None;
    }
    if !inp.actor_filter.is_empty() && !inp.actor_filter.contains(&actor_id) {
        return None;
    }
    a.episodes.truncate(EPISODES_PER_ACTOR);
    let (best, mean) = best_and_mean_top3(&a)?;
    if let Some(o) = inp.facts.and_then(|f| f.outcomes.get(&actor_id)) {
        a.outcome_success |= *o == Outcome::Success;
        a.outcome_failure |= *o == Outcome::Failure;
    }
    let named = key.name != "main" && names_actor(inp.query_terms, &key.name);
    let skills = skill_uses(inp.facts, &actor_id);
    let l3 = inp.facts.is_some();
    let mode = key.kind.dispatch_mode();
    let actor = Actor {
        actor_id,
        name: key.name.clone(),
        kind: key.kind,
        source: key.source.clone(),
        confidence: confidence(&a, l3),
        score: score(best, mean, outcome_weight(inp.route.intent, &a), named),
        why: why(&a, named, &skills, l3),
        evidence: evidence_refs(&a),
        skills,
        dispatch: DispatchInfo {
            mode,
            available: inp.dispatch.available(mode),
        },
        title: None,
        root_title: None,
        workspace: None,
        last_active: None,
    };
    Some((actor, a.latest))
}

/// The best fused score of an actor's evidence and the mean of its top three; none without
/// evidence.
fn best_and_mean_top3(a: &Acc) -> Option<(f64, f64)> {
    let mut scores: Vec<f64> = a
        .episodes
        .iter()
        .map(|e| e.0)
        .chain(a.code.iter().map(|c| c.0))
        .chain(a.skills.iter().map(|s| s.0))
        .collect();
    if scores.is_empty() {
        return None;
    }
    scores.sort_by(|x, y| y.total_cmp(x));
    let top3 = &scores[..scores.len().min(3)];
    let mean = top3.iter().sum::<f64>() / top3.len() as f64;
    Some((scores[0], mean))
}

/// "Who fixed it" wants the one who succeeded, not the one who tried: for that intent the
/// contract's `max + 0.3·mean(top3)` is weighted by the outcome (docs/RANKING.md).
fn outcome_weight(intent: Mode, a: &Acc) -> f64 {
    match (intent, a.outcome_success, a.outcome_failure) {
        (Mode::FindAgent, true, _) => OUTCOME_SUCCESS_WEIGHT,
        (Mode::FindAgent, false, true) => OUTCOME_FAILURE_WEIGHT,
        _ => 1.0,
    }
}

/// `max + 0.3·mean(top3)`, weighted by the outcome and by being named in the question.
fn score(best: f64, mean: f64, outcome_weight: f64, named: bool) -> f64 {
    let name_weight = if named { NAMED_ACTOR_WEIGHT } else { 1.0 };
    ((best + 0.3 * mean) * outcome_weight * name_weight * 1e6).round() / 1e6
}

/// The skills L3 recorded the actor using, with how often.
fn skill_uses(facts: Option<&ActorFacts>, actor_id: &str) -> Vec<SkillUses> {
    facts
        .and_then(|f| f.skill_uses.get(actor_id))
        .map(|v| {
            v.iter()
                .map(|(name, uses)| SkillUses {
                    name: name.clone(),
                    uses: *uses,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Why the actor ranks: named, what evidence of each lane, the outcome, and whether L3 helped.
fn why(a: &Acc, named: bool, skill_uses: &[SkillUses], l3: bool) -> Vec<String> {
    let mut why = Vec::new();
    if named {
        why.push("named in the question".to_string());
    }
    if !a.episodes.is_empty() {
        why.push(format!("{} matching episode(s)", a.episodes.len()));
    }
    if !a.code.is_empty() {
        why.push(format!("edited {} matching code chunk(s)", a.code.len()));
    }
    for (_, id) in &a.skills {
        let name = id.trim_start_matches("skill:");
        let uses = skill_uses
            .iter()
            .find(|s| s.name == name)
            .map_or(1, |s| s.uses);
        why.push(format!("used skill {name} ({uses}×)"));
    }
    if a.outcome_success {
        why.push("successful outcome".to_string());
    } else if a.outcome_failure {
        why.push("failed outcome".to_string());
    }
    if !l3 {
        why.push("inferred from sessions only (no agent-knowledge store)".to_string());
    }
    why
}

/// More evidence, a used skill and a success raise the confidence; without L3 it is lower.
fn confidence(a: &Acc, l3: bool) -> f64 {
    let evidence_n = a.episodes.len() + a.code.len() + a.skills.len();
    let mut confidence = 0.3 + 0.1 * evidence_n.min(5) as f64;
    if !a.skills.is_empty() {
        confidence += 0.1;
    }
    if a.outcome_success {
        confidence += 0.1;
    } else if a.outcome_failure {
        confidence -= 0.1;
    }
    if !l3 {
        confidence *= 0.8;
    }
    (confidence.clamp(0.05, 0.95) * 100.0).round() / 100.0
}

/// The lane items the actor's entry points at: episodes, then code, then skills.
fn evidence_refs(a: &Acc) -> Vec<EvidenceRef> {
    let episodes = a.episodes.iter().map(|e| (Lane::Episodes, &e.1));
    let code = a.code.iter().map(|c| (Lane::Code, &c.1));
    let skills = a.skills.iter().map(|s| (Lane::Skills, &s.1));
    episodes
        .chain(code)
        .chain(skills)
        .map(|(lane, id)| EvidenceRef {
            lane,
            id: id.clone(),
        })
        .collect()
}

/// True when every term of the actor's name is a query term.
fn names_actor(query_terms: &[String], name: &str) -> bool {
    let terms = crate::text::tokens::query_terms(name);
    !terms.is_empty() && terms.iter().all(|t| query_terms.contains(t))
}
