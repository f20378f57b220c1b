//! The search pipeline. `Engine::search` runs these stages in this order, one function each
//! (`Engine::assemble` holds stages 3 to 7):
//!
//! 1. **route**: `routing::route`, the intent and the lane weights;
//! 2. **lanes**: `search::fan_out::run_lanes` asks every requested lane at once under one
//!    deadline; `search::report::lane_reports` turns each answer or failure into the lane's
//!    header, trace row and issues;
//! 3. **per-lane caps and dedup, then fusion**: `Engine::fuse` (`fusion::fuse`: per lane
//!    `fusion::diversity::keep`, then the weighted RRF `fusion::rrf` and the order of invariant
//!    10), then the episode filters on skill uses;
//! 4. **L3 lookup**: `Engine::l3_lookup`, the actor behind each event and who edited the
//!    returned paths;
//! 5. **actors**: `Engine::rank_actors` (`actors::aggregate`);
//! 6. **limit**: `Engine::apply_limit`, every lane and the actors cut to `limit`, evidence to a
//!    cut item dropped, the actors' profiles filled;
//! 7. **response**: `response`, the typed document;
//! 8. **budget**: `finish::finish`, snippets redacted again and clipped, provenance, the budget
//!    (`budget::apply`) and the tokens used; then the request log.
//!
//! Each step is a plain function of its inputs so the same request over the same index
//! revisions gives the same bytes (KC-12).

mod fan_out;
mod report;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

pub use fan_out::LaneResult;
use fan_out::{run_lanes, LaneAnswers};
use report::{lane_reports, LaneReports};

use super::actors::{self, ActorFacts, ResolveActor};
use super::fusion::{self, FusedLanes, LaneHits};
use super::routing::{route, Route};
use super::Engine;
use crate::contract::*;
use crate::lanes::episode_id;
use crate::lanes::EpisodeHit;
use crate::lanes::LaneRequest;
use crate::sources::actor_id::ActorKey;
use crate::text::{embed, tokens};

/// Candidate depth of each lane before fusion (DECISIONS §2).
pub const DEPTH: usize = 30;

/// What a front end gets back from a request given as JSON text.
pub enum SearchOutcome {
    Ok(Box<SearchResponse>),
    Invalid(ErrorResponse),
}

impl SearchOutcome {
    /// The error document for a request refused before validation (unreadable text, no data).
    pub fn refused(issue: Issue) -> Self {
        SearchOutcome::Invalid(invalid("", vec![issue]))
    }

    pub fn to_json(&self) -> Value {
        match self {
            SearchOutcome::Ok(r) => serde_json::to_value(r.as_ref()).unwrap_or(Value::Null),
            SearchOutcome::Invalid(e) => serde_json::to_value(e).unwrap_or(Value::Null),
        }
    }
}

/// What L3 says about the evidence of this response.
struct L3Lookup {
    /// The actor behind each returned event, by episode id (a subagent by its spawn's name).
    resolved: HashMap<String, ActorKey>,
    /// Editors of the returned paths, the actors' outcomes and skill uses (`None`: the
    /// agent-knowledge source could not answer; actors are then inferred from sessions).
    facts: Option<ActorFacts>,
}

impl Engine {
    /// Validate request text and search; an invalid request yields the error document.
    pub fn search_json(&self, text: &str) -> SearchOutcome {
        match validate_search(text) {
            Ok((req, warnings)) => {
                let mut resp = self.search(&req);
                resp.warnings.splice(0..0, warnings);
                SearchOutcome::Ok(Box::new(resp))
            }
            Err(errors) => SearchOutcome::Invalid(invalid(text, errors)),
        }
    }

    /// Search with a checked request: the stages of the module doc.
    pub fn search(&self, req: &SearchRequest) -> SearchResponse {
        let started = Instant::now();
        let route = route(&req.query, req.mode, &req.include);
        let mut lane_req = lane_request(req);
        // The query's vector and the English terms of its Russian words are computed here,
        // before the lanes' deadlines start: the first use parses the embedding table.
        if self.config.semantic {
            lane_req.vector = embed::prepare_query(&req.query, &mut lane_req.terms);
        }
        let lane_req = Arc::new(lane_req);
        let answers = run_lanes(self, &req.include, lane_req.clone());
        let mut resp = self.assemble(req, &route, &lane_req, &answers);
        let traces = resp.trace.clone();
        if !req.trace {
            resp.trace = None;
        }
        // The lane the question is about is the first routed lane that has something to keep: a
        // failed or empty primary lane must not make the budget offer nothing at all.
        let primary = route
            .lanes
            .iter()
            .copied()
            .find(|l| !resp.lane_ids(*l).is_empty())
            .or_else(|| route.lanes.first().copied())
            .unwrap_or(Lane::Episodes);
        super::finish::finish(&mut resp, req, primary);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        self.logger
            .write(super::log::search_line(req, &resp, traces.as_ref(), ms));
        resp
    }

    /// The stages from the lanes' answers to the response document, before the budget.
    fn assemble(
        &self,
        req: &SearchRequest,
        route: &Route,
        lane_req: &LaneRequest,
        answers: &LaneAnswers,
    ) -> SearchResponse {
        let mut reports = lane_reports(self, answers);
        let mut fused = self.fuse(req, route, answers);
        reports.note_empty_lanes(answers, &fused, &req.filters);
        let no_source = reports.no_source();
        let l3 = self.l3_lookup(answers, &fused);
        // Without the episodes and the code source nothing stands: no items, no actors.
        let mut actors = if no_source {
            fused.clear();
            Vec::new()
        } else {
            self.rank_actors(req, route, lane_req, answers, &fused, &l3)
        };
        self.apply_limit(req.limit as usize, &mut fused, &mut actors);
        response(req, route, reports, fused, actors, no_source)
    }

    /// Per-lane caps and dedup, then fusion; under episode filters a skill keeps only the uses
    /// inside them.
    fn fuse(&self, req: &SearchRequest, route: &Route, answers: &LaneAnswers) -> FusedLanes {
        let hits = LaneHits {
            episodes: answers.episode_hits(),
            code: answers.code_hits(),
            skills: answers.skill_hits(),
        };
        let mut fused = fusion::fuse(hits, route);
        super::filters::filter_skill_uses(&mut fused.skills, &req.filters, &*self.episodes);
        fused
    }

    /// L3 names the actor behind each event (a subagent by its spawn's name) and knows who
    /// edited the returned files; ask it only about what this response holds.
    fn l3_lookup(&self, answers: &LaneAnswers, fused: &FusedLanes) -> L3Lookup {
        let l3 = &self.skills;
        let resolved: HashMap<String, ActorKey> = answers
            .episode_hits()
            .iter()
            .filter_map(|h| {
                let key = l3
                    .actor_for_session(&h.session_id, h.sidechain_agent.as_deref())
                    .ok()
                    .flatten()?;
                Some((episode_id(&h.session_id, h.seq), key))
            })
            .collect();
        let paths: Vec<String> = fused
            .code
            .iter()
            .map(fusion::items::code_abs_path)
            .collect();
        let mut ids: Vec<String> = resolved.values().map(|k| k.actor_id.clone()).collect();
        ids.extend(
            answers
                .skill_hits()
                .iter()
                .flat_map(|h| h.used_by.iter().map(|u| u.0.clone())),
        );
        ids.sort();
        ids.dedup();
        let facts = l3.facts_for(&paths, &ids).ok();
        L3Lookup { resolved, facts }
    }

    /// Rank who did the work from the fused items and what L3 knows.
    fn rank_actors(
        &self,
        req: &SearchRequest,
        route: &Route,
        lane_req: &LaneRequest,
        answers: &LaneAnswers,
        fused: &FusedLanes,
        l3: &L3Lookup,
    ) -> Vec<Actor> {
        let resolve = |hit: &EpisodeHit| {
            l3.resolved
                .get(&episode_id(&hit.session_id, hit.seq))
                .cloned()
        };
        actors::aggregate(&actors::Inputs {
            episodes: &fused.episodes,
            episode_hits: answers.episode_hits(),
            code: &fused.code,
            skills: &fused.skills,
            skill_hits: answers.skill_hits(),
            facts: l3.facts.as_ref(),
            resolve: l3.facts.as_ref().map(|_| &resolve as &ResolveActor<'_>),
            route,
            query_terms: &lane_req.terms,
            filtered: super::filters::episode_filters_active(&req.filters),
            limit: req.limit as usize,
            actor_filter: &req.filters.actor_ids,
            dispatch: &self.config.dispatch,
        })
    }

    /// Every lane and the actors cut to `limit`; evidence may only name items that survived
    /// (invariant 5); the surviving actors get their titles, workspace and last activity.
    fn apply_limit(&self, limit: usize, fused: &mut FusedLanes, actors: &mut Vec<Actor>) {
        fused.truncate(limit);
        actors.truncate(limit);
        fusion::items::prune_dangling_evidence(actors, &fused.episodes, &fused.code, &fused.skills);
        super::profiles::fill(actors, &*self.episodes, &*self.skills);
    }
}

/// The error document for an invalid request; echoes the request id when it can be read.
pub fn invalid(text: &str, errors: Vec<Issue>) -> ErrorResponse {
    let request_id = serde_json::from_str::<Value>(text).ok().and_then(|v| {
        v.get("request_id")
            .and_then(|x| x.as_str())
            .map(|s| s.chars().take(200).collect())
    });
    ErrorResponse {
        schema: SEARCH_SCHEMA.to_string(),
        request_id,
        found: false,
        warnings: Vec::new(),
        errors,
    }
}

fn lane_request(req: &SearchRequest) -> LaneRequest {
    let f = &req.filters;
    LaneRequest {
        terms: tokens::query_terms(&req.query),
        query: req.query.clone(),
        workspaces: f.workspaces.clone(),
        session_ids: f.session_ids.clone(),
        actor_ids: f.actor_ids.clone(),
        skills: f.skills.clone(),
        paths: f.paths.clone(),
        since_ms: f.since.map(|t| t.timestamp_millis()),
        until_ms: f.until.map(|t| t.timestamp_millis()),
        outcome: f.outcome().wanted(),
        depth: DEPTH.max(req.limit as usize),
        snippet_chars: req.snippet_chars as usize,
        vector: None,
        sentence: Default::default(),
    }
}

/// The response document: routing, the lanes with their items, actors, the fusion applied, the
/// limits (the budget fills in what it used) and every lane's issues.
fn response(
    req: &SearchRequest,
    route: &Route,
    mut reports: LaneReports,
    fused: FusedLanes,
    actors: Vec<Actor>,
    no_source: bool,
) -> SearchResponse {
    let (warnings, mut errors) = reports.take_issues();
    if no_source {
        errors.push(Issue::new(
            Code::NoSource,
            "neither the episodes nor the code source is available",
        ));
    }
    let returned = fused.len() as u32;
    let (lanes, traces) = reports.into_lanes(fused, req.include.contains(&Lane::Skills));
    SearchResponse {
        schema: SEARCH_SCHEMA.to_string(),
        request_id: req.request_id.clone(),
        query: req.query.clone(),
        found: !no_source,
        routing: Routing {
            intent: route.intent,
            lanes: route.lanes.clone(),
            confidence: route.confidence,
            reason: route.reason.clone(),
        },
        lanes,
        actors,
        fusion: fusion::header(route),
        limits: Limits {
            requested: req.limit,
            returned,
            truncated: false,
            budget: BudgetUse {
                max_tokens: req.max_tokens,
                used_tokens: 0,
            },
            dropped: Vec::new(),
        },
        warnings,
        errors,
        trace: Some(Trace { lanes: traces }),
    }
}
