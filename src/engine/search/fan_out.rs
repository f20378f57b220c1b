//! The lanes stage of a search: every requested lane asked at once, each on its own thread, all
//! under one deadline (contract §11), so a slow or broken source degrades its lane instead of
//! holding up the answer.

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::contract::{Code, Lane};
use crate::engine::Engine;
use crate::lanes::EpisodeHit;
use crate::lanes::{
    CodeAnswer, CodeHit, CodeSource, EpisodesAnswer, EpisodesSource, LaneRequest, SkillHit,
    SkillsAnswer, SkillsSource, SourceFailure,
};

/// The outcome of one lane's call.
pub enum LaneResult<T> {
    Ok(T, f64),
    Failed(SourceFailure, f64),
    TimedOut(f64),
    NotRequested,
}

impl<T> LaneResult<T> {
    /// The lane's answer when it gave one.
    pub fn answer(&self) -> Option<&T> {
        match self {
            LaneResult::Ok(a, _) => Some(a),
            _ => None,
        }
    }
}

/// What the three lanes said.
pub struct LaneAnswers {
    pub episodes: LaneResult<EpisodesAnswer>,
    pub code: LaneResult<CodeAnswer>,
    pub skills: LaneResult<SkillsAnswer>,
}

impl LaneAnswers {
    pub fn episode_hits(&self) -> &[EpisodeHit] {
        self.episodes.answer().map_or(&[], |a| &a.hits)
    }

    pub fn code_hits(&self) -> &[CodeHit] {
        self.code.answer().map_or(&[], |a| &a.hits)
    }

    pub fn skill_hits(&self) -> &[SkillHit] {
        self.skills.answer().map_or(&[], |a| &a.hits)
    }
}

/// Ask every lane of `include` the same request; a lane outside it is `NotRequested`.
pub fn run_lanes(engine: &Engine, include: &BTreeSet<Lane>, req: Arc<LaneRequest>) -> LaneAnswers {
    let start = Start {
        include,
        req,
        timeout: engine.config.lane_timeout,
    };
    let episodes = start.lane(Lane::Episodes, engine.episodes.clone(), |s, r| {
        EpisodesSource::search(&*s, &r)
    });
    let code = start.lane(Lane::Code, engine.code.clone(), |s, r| {
        CodeSource::search(&*s, &r)
    });
    let skills = start.lane(Lane::Skills, engine.skills.clone(), |s, r| {
        SkillsSource::search(&*s, &r)
    });
    LaneAnswers {
        episodes: episodes(),
        code: code(),
        skills: skills(),
    }
}

/// What every lane's start shares: which lanes were asked, the request and the deadline.
struct Start<'a> {
    include: &'a BTreeSet<Lane>,
    req: Arc<LaneRequest>,
    timeout: Duration,
}

impl Start<'_> {
    /// Start a lane on its own thread and return a closure that waits for it until the deadline.
    /// A lane that misses the deadline is abandoned (its thread finishes on its own and its
    /// answer is dropped); the others are not held up.
    fn lane<S: ?Sized + Send + Sync + 'static, T: Send + 'static>(
        &self,
        lane: Lane,
        source: Arc<S>,
        call: impl FnOnce(Arc<S>, Arc<LaneRequest>) -> Result<T, SourceFailure> + Send + 'static,
    ) -> impl FnOnce() -> LaneResult<T> {
        let requested = self.include.contains(&lane);
        let (req, timeout) = (self.req.clone(), self.timeout);
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
}
