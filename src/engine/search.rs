//! The search pipeline: route → fan out lanes (concurrently, each with a timeout) → RRF →
//! actors → redact → budget → response. Each step is a plain function of its inputs so the
//! same request over the same index revisions gives the same bytes (KC-12).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lanes::{
    CodeAnswer, CodeSource, EpisodesAnswer, EpisodesSource, LaneRequest, SkillsAnswer,
    SkillsSource, SourceFailure,
};
use super::routing::{route, Route};
use super::{actors, Engine};
use crate::contract::*;
use crate::text::{embed, tokens};

/// RRF constant (contract §7).
pub const RRF_K: u32 = 60;
/// Candidate depth of each lane before fusion (DECISIONS §2).
pub const DEPTH: usize = 30;

/// The outcome of one lane's call.
pub enum LaneResult<T> {
    Ok(T, f64),
    Failed(SourceFailure, f64),
    TimedOut(f64),
    NotRequested,
}

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

    /// Search with a checked request.
    pub fn search(&self, req: &SearchRequest) -> SearchResponse {
        let started = Instant::now();
        let route = route(&req.query, req.mode, &req.include);
        let mut lane_req = lane_request(req);
        // The query's vector and the English terms of its Russian words are computed here,
        // before the lanes' deadlines start: the first use parses the embedding table.
        if self.config.semantic {
            lane_req.vector = embed::prepare_query(&req.query, &mut lane_req.terms);
        }
        let timeout = self.config.lane_timeout;
        let lane_req = Arc::new(lane_req);

        let ep = run_lane(
            req.include.contains(&Lane::Episodes),
            self.episodes.clone(),
            lane_req.clone(),
            timeout,
            |s: Arc<dyn EpisodesSource>, r| s.search(&r),
        );
        let code = run_lane(
            req.include.contains(&Lane::Code),
            self.code.clone(),
            lane_req.clone(),
            timeout,
            |s: Arc<dyn CodeSource>, r| s.search(&r),
        );
        let skills = run_lane(
            req.include.contains(&Lane::Skills),
            self.skills.clone(),
            lane_req.clone(),
            timeout,
            |s: Arc<dyn SkillsSource>, r| s.search(&r),
        );
        let ep = ep();
        let code = code();
        let skills = skills();

        let mut resp = assemble(self, req, &route, &lane_req, ep, code, skills);
        let traces = resp.trace.clone();
        if !req.trace {
            resp.trace = None;
        }
        let primary = route.lanes.first().map_or("episodes", |l| l.as_str());
        super::finish::finish(&mut resp, req, primary);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        self.logger
            .write(super::log::search_line(req, &resp, traces.as_ref(), ms));
        resp
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
        outcome: match f.outcome() {
            Outcome::Any => None,
            o => Some(o.as_str().to_string()),
        },
        depth: DEPTH.max(req.limit as usize),
        snippet_chars: req.snippet_chars as usize,
        vector: None,
    }
}

/// Start a lane on its own thread and return a closure that waits for it until the deadline.
/// A lane that misses the deadline is abandoned (its thread finishes on its own and its answer
/// is dropped); the others are not held up.
fn run_lane<S: ?Sized + Send + Sync + 'static, T: Send + 'static>(
    requested: bool,
    source: Arc<S>,
    req: Arc<LaneRequest>,
    timeout: Duration,
    call: impl FnOnce(Arc<S>, Arc<LaneRequest>) -> Result<T, SourceFailure> + Send + 'static,
) -> impl FnOnce() -> LaneResult<T> {
    let started = Instant::now();
    let rx = if requested {
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("knowledge-lane".into())
            .spawn(move || {
                let out = call(source, req);
                let _ = tx.send(out);
            });
        spawned.ok().map(|_| rx)
    } else {
        None
    };
    move || {
        if !requested {
            return LaneResult::NotRequested;
        }
        let Some(rx) = rx else {
            return LaneResult::Failed(
                SourceFailure::new(Code::Internal, "could not start the lane's worker thread"),
                0.0,
            );
        };
        let remaining = timeout.saturating_sub(started.elapsed());
        let res = rx.recv_timeout(remaining);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        match res {
            Ok(Ok(v)) => LaneResult::Ok(v, ms),
            Ok(Err(f)) => LaneResult::Failed(f, ms),
            Err(mpsc::RecvTimeoutError::Timeout) => LaneResult::TimedOut(ms),
            Err(mpsc::RecvTimeoutError::Disconnected) => LaneResult::Failed(
                SourceFailure::new(Code::Internal, "the lane's worker stopped unexpectedly"),
                ms,
            ),
        }
    }
}

/// RRF score of a 1-based rank in a lane of the given weight.
pub fn rrf(weight: f64, rank: usize) -> f64 {
    let s = weight / (RRF_K as f64 + rank as f64);
    (s * 1e6).round() / 1e6
}

struct LaneState {
    header: LaneHeader,
    trace: LaneTrace,
    issues: Vec<(bool, Issue)>,
    failed: bool,
}

fn lane_state<T>(
    lane: Lane,
    source: String,
    res: &LaneResult<T>,
    timeout: Duration,
    items: impl Fn(&T) -> usize,
) -> LaneState {
    let name = lane.as_str();
    let mut issues = Vec::new();
    let (degraded, reason, ms, n, failed) = match res {
        LaneResult::Ok(v, ms) => (false, None, *ms, items(v), false),
        LaneResult::Failed(f, ms) => {
            let is_error = !matches!(f.code, Code::IndexNotReady);
            issues.push((is_error, Issue::lane(f.code, name, f.reason.clone())));
            (true, Some(f.reason.clone()), *ms, 0, true)
        }
        LaneResult::TimedOut(ms) => {
            let reason = format!("timed out after {} ms", timeout.as_millis());
            issues.push((
                true,
                Issue::lane(Code::SourceUnavailable, name, reason.clone()),
            ));
            (true, Some(reason), *ms, 0, true)
        }
        LaneResult::NotRequested => (
            false,
            Some("not requested (include)".to_string()),
            0.0,
            0,
            false,
        ),
    };
    if degraded {
        let reason = reason.clone().unwrap_or_default();
        issues.push((false, Issue::lane(Code::LaneDegraded, name, reason)));
    }
    LaneState {
        header: LaneHeader {
            source,
            index_rev: None,
            observed_at: None,
            degraded,
            degradation_reason: reason,
        },
        trace: LaneTrace {
            lane: name.to_string(),
            ms: (ms * 1000.0).round() / 1000.0,
            items: n as u32,
            degraded,
            cache_hit: false,
        },
        issues,
        failed,
    }
}

fn assemble(
    engine: &Engine,
    req: &SearchRequest,
    route: &Route,
    lane_req: &LaneRequest,
    ep: LaneResult<EpisodesAnswer>,
    code: LaneResult<CodeAnswer>,
    skills: LaneResult<SkillsAnswer>,
) -> SearchResponse {
    let timeout = engine.config.lane_timeout;
    let limit = req.limit as usize;
    let mut warnings = Vec::new();
    let mut errors = Vec::new();

    // Episodes.
    let mut es = lane_state(
        Lane::Episodes,
        engine.episodes.name(),
        &ep,
        timeout,
        |a: &EpisodesAnswer| a.hits.len(),
    );
    let mut ep_items = Vec::new();
    let mut counts = None;
    if let LaneResult::Ok(a, _) = &ep {
        es.header.index_rev = a.stats.index_rev.clone();
        counts = Some(EpisodeCounts {
            sessions: a.stats.sessions,
            indexed_docs: a.stats.events,
            live: a.stats.live,
        });
        ep_items = super::items::episode_items(&a.hits, route.weight(Lane::Episodes));
        if ep_items.is_empty() {
            es.header.degradation_reason = Some(empty_reason(&req.filters, "episodes"));
        }
    }

    // Code.
    let mut cs = lane_state(
        Lane::Code,
        engine.code.name(),
        &code,
        timeout,
        |a: &CodeAnswer| a.hits.len(),
    );
    let mut code_items = Vec::new();
    let mut capability = "degraded".to_string();
    let mut freshness = Freshness {
        stale: false,
        verified_by: "fingerprint".to_string(),
    };
    let mut drift = None;
    if let LaneResult::Ok(a, _) = &code {
        cs.header.index_rev = a.index_rev.clone();
        capability = a.capability.clone();
        freshness.stale = a.stale;
        drift = a.drift.clone();
        if a.capability == "degraded" {
            let reason = a
                .capability_reason
                .clone()
                .unwrap_or_else(|| "capability=degraded".to_string());
            cs.header.degraded = true;
            cs.header.degradation_reason = Some(reason.clone());
            cs.trace.degraded = true;
            cs.issues
                .push((false, Issue::lane(Code::LaneDegraded, "code", reason)));
        }
        if a.stale {
            let mut msg = "the code index is stale: files changed since indexing".to_string();
            if !a.stale_paths.is_empty() {
                msg.push_str(&format!(" ({} files)", a.stale_paths.len()));
            }
            cs.issues
                .push((false, Issue::lane(Code::StaleIndex, "code", msg)));
        }
        code_items = super::items::code_items(&a.hits, route.weight(Lane::Code));
        if code_items.is_empty() && cs.header.degradation_reason.is_none() {
            cs.header.degradation_reason = Some(empty_reason(&req.filters, "code"));
        }
    }

    // Skills.
    let mut ss = lane_state(
        Lane::Skills,
        engine.skills.name(),
        &skills,
        timeout,
        |a: &SkillsAnswer| a.hits.len(),
    );
    let mut skill_items = Vec::new();
    if let LaneResult::Ok(a, _) = &skills {
        ss.header.index_rev = a.index_rev.clone();
        skill_items = super::items::skill_items(&a.hits, route.weight(Lane::Skills));
        if let Some(store) = engine.episode_store() {
            super::filters::filter_skill_uses(&mut skill_items, &req.filters, store);
        }
        if skill_items.is_empty() {
            ss.header.degradation_reason = Some(empty_reason(&req.filters, "skills"));
        }
    }

    for (is_error, issue) in es
        .issues
        .drain(..)
        .chain(cs.issues.drain(..))
        .chain(ss.issues.drain(..))
    {
        if is_error {
            errors.push(issue);
        } else {
            warnings.push(issue);
        }
    }

    let no_source = es.failed && cs.failed;
    let ep_hits = match &ep {
        LaneResult::Ok(a, _) => a.hits.as_slice(),
        _ => &[],
    };
    let query_terms = &lane_req.terms;
    // L3 names the actor behind each event (a subagent by its spawn's name) and knows who edited
    // the returned files; ask it only about what this response holds.
    let store = engine.knowledge_store();
    let resolved: std::collections::HashMap<String, crate::sources::actor_id::ActorKey> = store
        .map(|store| {
            ep_hits
                .iter()
                .filter_map(|h| {
                    let key = store
                        .actor_for_session(&h.session_id, h.sidechain_agent.as_deref())
                        .ok()
                        .flatten()?;
                    Some((super::items::episode_id(&h.session_id, h.seq), key))
                })
                .collect()
        })
        .unwrap_or_default();
    let facts = store.and_then(|store| {
        let paths: Vec<String> = code_items.iter().map(super::items::code_abs_path).collect();
        let mut ids: Vec<String> = resolved.values().map(|k| k.actor_id.clone()).collect();
        if let LaneResult::Ok(a, _) = &skills {
            ids.extend(
                a.hits
                    .iter()
                    .flat_map(|h| h.used_by.iter().map(|u| u.0.clone())),
            );
        }
        ids.sort();
        ids.dedup();
        store.facts_for(&paths, &ids).ok()
    });
    let resolve = |hit: &crate::sources::episodes::search::EpisodeHit| {
        resolved
            .get(&super::items::episode_id(&hit.session_id, hit.seq))
            .cloned()
    };
    let mut actor_list = if no_source {
        Vec::new()
    } else {
        actors::aggregate(&actors::Inputs {
            episodes: &ep_items,
            episode_hits: ep_hits,
            code: &code_items,
            skills: &skill_items,
            skill_hits: match &skills {
                LaneResult::Ok(a, _) => a.hits.as_slice(),
                _ => &[],
            },
            facts: facts.as_ref(),
            resolve: store.map(|_| &resolve as &super::actors::ResolveActor<'_>),
            route,
            query_terms,
            filtered: super::filters::episode_filters_active(&req.filters),
            limit,
            actor_filter: &req.filters.actor_ids,
            dispatch: &engine.config.dispatch,
        })
    };
    if no_source {
        ep_items.clear();
        code_items.clear();
        skill_items.clear();
        errors.push(Issue::new(
            Code::NoSource,
            "neither the episodes nor the code source is available",
        ));
    }
    ep_items.truncate(limit);
    code_items.truncate(limit);
    skill_items.truncate(limit);
    actor_list.truncate(limit);
    // Evidence may only name items that survived the lane limits (invariant 5).
    super::items::prune_dangling_evidence(&mut actor_list, &ep_items, &code_items, &skill_items);
    super::profiles::fill(&mut actor_list, engine.episode_store(), store);

    let include_skills = req.include.contains(&Lane::Skills);
    let returned = (ep_items.len() + code_items.len() + skill_items.len()) as u32;
    let mut traces = vec![es.trace, cs.trace];
    if include_skills {
        traces.push(ss.trace);
    }
    SearchResponse {
        schema: SEARCH_SCHEMA.to_string(),
        request_id: req.request_id.clone(),
        query: req.query.clone(),
        found: !no_source,
        routing: Routing {
            intent: route.intent.as_str().to_string(),
            lanes: route.lanes.iter().map(|l| l.as_str().to_string()).collect(),
            confidence: route.confidence,
            reason: route.reason.clone(),
        },
        lanes: Lanes {
            episodes: EpisodesLane {
                header: es.header,
                counts,
                items: ep_items,
            },
            code: CodeLane {
                header: cs.header,
                capability,
                freshness,
                drift,
                items: code_items,
            },
            skills: include_skills.then_some(SkillsLane {
                header: ss.header,
                items: skill_items,
            }),
        },
        actors: actor_list,
        fusion: Fusion {
            strategy: "rrf".to_string(),
            k: RRF_K,
            weights: [
                ("episodes".to_string(), route.weight(Lane::Episodes)),
                ("code".to_string(), route.weight(Lane::Code)),
                ("skills".to_string(), route.weight(Lane::Skills)),
            ]
            .into_iter()
            .collect(),
            dedup: "by id".to_string(),
        },
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

fn empty_reason(f: &Filters, lane: &str) -> String {
    let filtered =
        super::filters::episode_filters_active(f) || (lane == "code" && !f.paths.is_empty());
    if filtered {
        "no match for the query within the filters".to_string()
    } else {
        "no match for the query".to_string()
    }
}
