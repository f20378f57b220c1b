//! What each lane says about itself in the response: its header (source, index revision,
//! degraded and why), its trace row and its issues (warnings and errors), from its answer or its
//! failure. A lane that answered with nothing says whether the filters are the reason.

use std::time::Duration;

use super::fan_out::{LaneAnswers, LaneResult};
use crate::contract::{
    Capability, Code, CodeLane, EpisodeCounts, EpisodesLane, Filters, Freshness, Issue, Lane,
    LaneHeader, LaneTrace, SkillsLane,
};
use crate::engine::fusion::FusedLanes;
use crate::engine::Engine;
use crate::lanes::{CodeAnswer, SourceFailure};

/// One lane's header, trace and issues.
pub struct LaneState {
    pub header: LaneHeader,
    pub trace: LaneTrace,
    /// Each issue with whether it is an error (else a warning).
    pub issues: Vec<(bool, Issue)>,
    /// The lane was asked and gave no answer (failed or timed out).
    pub failed: bool,
}

/// Every lane's report; the lanes' items are filled in when the response is built.
pub struct LaneReports {
    pub episodes: LaneState,
    pub counts: Option<EpisodeCounts>,
    pub code: LaneState,
    pub code_index: CodeIndex,
    pub skills: LaneState,
}

/// What the code lane says about its index beside the header.
pub struct CodeIndex {
    pub capability: Capability,
    pub freshness: Freshness,
    pub drift: Option<serde_json::Value>,
}

/// Report every lane from its answer or failure.
pub fn lane_reports(engine: &Engine, answers: &LaneAnswers) -> LaneReports {
    let t = engine.config.lane_timeout;
    let mut episodes = lane_state(Lane::Episodes, engine.episodes.name(), &answers.episodes, t);
    let counts = answers.episodes.answer().map(|a| {
        episodes.answered(a.stats.index_rev.clone(), a.hits.len());
        episodes.partly(Lane::Episodes, &a.unanswered);
        EpisodeCounts {
            sessions: a.stats.sessions,
            indexed_docs: a.stats.events,
            live: a.stats.live,
        }
    });
    let mut code = lane_state(Lane::Code, engine.code.name(), &answers.code, t);
    let code_index = code_index(&mut code, answers.code.answer());
    let mut skills = lane_state(Lane::Skills, engine.skills.name(), &answers.skills, t);
    if let Some(a) = answers.skills.answer() {
        skills.answered(a.index_rev.clone(), a.hits.len());
        skills.partly(Lane::Skills, &a.unanswered);
    }
    LaneReports {
        episodes,
        counts,
        code,
        code_index,
        skills,
    }
}

impl LaneState {
    /// What an answer adds: the index revision it came from and how many hits it held.
    fn answered(&mut self, index_rev: Option<String>, hits: usize) {
        self.header.index_rev = index_rev;
        self.trace.items = hits as u32;
    }

    /// A lane that answered without some of its sources (local + team): degraded, with a
    /// warning naming each source that could not answer and why; its items stand.
    fn partly(&mut self, lane: Lane, unanswered: &[SourceFailure]) {
        if unanswered.is_empty() {
            return;
        }
        let reasons: Vec<String> = unanswered.iter().map(|f| f.to_string()).collect();
        let reason = reasons.join("; ");
        for (f, why) in unanswered.iter().zip(reasons) {
            self.issues.push((false, Issue::lane(f.code, lane, why)));
        }
        self.issues
            .push((false, Issue::lane(Code::LaneDegraded, lane, reason.clone())));
        self.header.degraded = true;
        self.header.degradation_reason = Some(reason);
        self.trace.degraded = true;
    }
}

/// A lane's header, trace and issues from its outcome (an answer's own figures are added by
/// [`LaneState::answered`]).
fn lane_state<T>(lane: Lane, source: String, res: &LaneResult<T>, timeout: Duration) -> LaneState {
    let mut issues = Vec::new();
    let (degraded, reason, ms, n, failed) = match res {
        LaneResult::Ok(_, ms) => (false, None, *ms, 0, false),
        LaneResult::Failed(f, ms) => {
            let is_error = !matches!(f.code, Code::IndexNotReady);
            let why = f.to_string();
            issues.push((is_error, Issue::lane(f.code, lane, why.clone())));
            (true, Some(why), *ms, 0, true)
        }
        LaneResult::TimedOut(ms) => {
            let reason = format!("timed out after {} ms", timeout.as_millis());
            issues.push((
                true,
                Issue::lane(Code::SourceUnavailable, lane, reason.clone()),
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
        issues.push((false, Issue::lane(Code::LaneDegraded, lane, reason)));
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
            lane,
            ms: (ms * 1000.0).round() / 1000.0,
            items: n as u32,
            degraded,
            cache_hit: false,
        },
        issues,
        failed,
    }
}

/// The code index's capability, freshness and drift; a degraded or stale index also marks the
/// lane and warns.
fn code_index(state: &mut LaneState, answer: Option<&CodeAnswer>) -> CodeIndex {
    let mut index = CodeIndex {
        capability: Capability::Degraded,
        freshness: Freshness {
            stale: false,
            verified_by: "fingerprint".to_string(),
        },
        drift: None,
    };
    let Some(a) = answer else { return index };
    state.answered(a.index_rev.clone(), a.hits.len());
    state.partly(Lane::Code, &a.unanswered);
    index.capability = a.capability;
    index.freshness.stale = a.stale;
    index.drift = a.drift.clone();
    if a.capability == Capability::Degraded {
        let reason = a
            .capability_reason
            .clone()
            .unwrap_or_else(|| "capability=degraded".to_string());
        state.header.degraded = true;
        state.header.degradation_reason = Some(reason.clone());
        state.trace.degraded = true;
        state
            .issues
            .push((false, Issue::lane(Code::LaneDegraded, Lane::Code, reason)));
    }
    if a.stale {
        let mut msg = "the code index is stale: files changed since indexing".to_string();
        if !a.stale_paths.is_empty() {
            msg.push_str(&format!(" ({} files)", a.stale_paths.len()));
        }
        state
            .issues
            .push((false, Issue::lane(Code::StaleIndex, Lane::Code, msg)));
    }
    index
}

impl LaneReports {
    /// A lane that answered with no item says why: nothing relevant (the source's own reason),
    /// no match, or no match within the filters. (A lane keeps a reason it already gave: a
    /// degraded index, a source that did not answer.)
    pub fn note_empty_lanes(
        &mut self,
        answers: &LaneAnswers,
        fused: &FusedLanes,
        filters: &Filters,
    ) {
        if let Some(a) = answers
            .episodes
            .answer()
            .filter(|_| fused.episodes.is_empty())
        {
            let episodes = &mut self.episodes.header;
            if episodes.degradation_reason.is_none() {
                let reason = a.nothing_relevant.clone();
                episodes.degradation_reason =
                    Some(reason.unwrap_or_else(|| empty_reason(filters, Lane::Episodes)));
            }
        }
        let code = &mut self.code.header;
        if let Some(a) = answers
            .code
            .answer()
            .filter(|_| fused.code.is_empty() && code.degradation_reason.is_none())
        {
            let reason = a.nothing_relevant.clone();
            code.degradation_reason =
                Some(reason.unwrap_or_else(|| empty_reason(filters, Lane::Code)));
        }
        let skills = &mut self.skills.header;
        if answers.skills.answer().is_some()
            && fused.skills.is_empty()
            && skills.degradation_reason.is_none()
        {
            skills.degradation_reason = Some(empty_reason(filters, Lane::Skills));
        }
    }

    /// Neither the episodes nor the code source answered: the response has nothing to stand on.
    pub fn no_source(&self) -> bool {
        self.episodes.failed && self.code.failed
    }

    /// Every lane's issues, episodes then code then skills, as (warnings, errors).
    pub fn take_issues(&mut self) -> (Vec<Issue>, Vec<Issue>) {
        let (mut warnings, mut errors) = (Vec::new(), Vec::new());
        for (is_error, issue) in self
            .episodes
            .issues
            .drain(..)
            .chain(self.code.issues.drain(..))
            .chain(self.skills.issues.drain(..))
        {
            if is_error {
                errors.push(issue);
            } else {
                warnings.push(issue);
            }
        }
        (warnings, errors)
    }

    /// The lanes of the response with their items; skills only when the request included them.
    /// Also the trace rows, in the same lane order.
    pub fn into_lanes(
        self,
        fused: FusedLanes,
        include_skills: bool,
    ) -> (crate::contract::Lanes, Vec<LaneTrace>) {
        let mut traces = vec![self.episodes.trace, self.code.trace];
        if include_skills {
            traces.push(self.skills.trace);
        }
        let lanes = crate::contract::Lanes {
            episodes: EpisodesLane {
                header: self.episodes.header,
                counts: self.counts,
                items: fused.episodes,
            },
            code: CodeLane {
                header: self.code.header,
                capability: self.code_index.capability,
                freshness: self.code_index.freshness,
                drift: self.code_index.drift,
                items: fused.code,
            },
            skills: include_skills.then_some(SkillsLane {
                header: self.skills.header,
                items: fused.skills,
            }),
        };
        (lanes, traces)
    }
}

fn empty_reason(f: &Filters, lane: Lane) -> String {
    let filtered = crate::engine::filters::episode_filters_active(f)
        || (lane == Lane::Code && !f.paths.is_empty());
    if filtered {
        "no match for the query within the filters".to_string()
    } else {
        "no match for the query".to_string()
    }
}
