//! Work off the UI thread. Searches run on their own thread: before each search it drains its
//! queue and keeps only the newest request (the latest wins), and every answer carries its
//! generation so the UI drops answers it no longer wants. Everything else (episodes, files,
//! dispatch, outbox) runs on a second thread, so a slow search never delays opening an episode
//! and typing never waits for either.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

use knowledge::contract::SearchRequest;
use knowledge::watch::slot::EngineSlot;

use super::action::Action;
use super::backend;
use super::update::Effect;

pub struct Worker {
    search_tx: Sender<(Box<SearchRequest>, u64)>,
    job_tx: Sender<Effect>,
}

impl Worker {
    /// Start both threads; answers go to `out` as actions. Each job takes the slot's current
    /// engine, so a store a watch created since the start is used at once.
    pub fn spawn(engine: Arc<EngineSlot>, out: Sender<Action>) -> std::io::Result<Worker> {
        let (search_tx, search_rx) = mpsc::channel::<(Box<SearchRequest>, u64)>();
        let (job_tx, job_rx) = mpsc::channel::<Effect>();
        let e = engine.clone();
        let o = out.clone();
        std::thread::Builder::new()
            .name("knowledge-tui-search".into())
            .spawn(move || search_loop(&e, search_rx, o))?;
        std::thread::Builder::new()
            .name("knowledge-tui-jobs".into())
            .spawn(move || job_loop(&engine, job_rx, out))?;
        Ok(Worker { search_tx, job_tx })
    }

    pub fn search(&self, req: Box<SearchRequest>, generation: u64) {
        let _ = self.search_tx.send((req, generation));
    }

    pub fn job(&self, effect: Effect) {
        let _ = self.job_tx.send(effect);
    }
}

fn search_loop(slot: &EngineSlot, rx: Receiver<(Box<SearchRequest>, u64)>, out: Sender<Action>) {
    while let Ok(mut next) = rx.recv() {
        let engine = slot.current();
        let engine = engine.as_ref();
        // The latest request wins: skip everything queued behind it.
        while let Ok(newer) = rx.try_recv() {
            next = newer;
        }
        let (req, generation) = next;
        let started = Instant::now();
        let action = match guard(|| Ok(backend::search(engine, &req))) {
            Ok(resp) => {
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                Action::SearchDone(generation, Box::new(resp), ms)
            }
            Err(e) => Action::SearchFailed(generation, e),
        };
        if out.send(action).is_err() {
            return;
        }
    }
}

fn job_loop(slot: &EngineSlot, rx: Receiver<Effect>, out: Sender<Action>) {
    while let Ok(job) = rx.recv() {
        let engine = slot.current();
        let engine = engine.as_ref();
        let action = match job {
            Effect::LoadEpisode {
                job,
                session_id,
                seq,
                context,
            } => Action::EpisodeLoaded(
                job,
                guard(|| backend::load_episode(engine, &session_id, seq, context)),
            ),
            Effect::LoadCode {
                job,
                path,
                chunk_id,
                start_line,
                ..
            } => Action::CodeLoaded(
                job,
                guard(|| backend::read_code(engine, &path, chunk_id.as_deref(), start_line)),
            ),
            Effect::Dispatch { job, draft, commit } => Action::DispatchDone(
                job,
                commit,
                guard(|| backend::dispatch(engine, &draft, commit)),
            ),
            Effect::LoadActivity { job, request } => Action::ActivityLoaded(
                job,
                guard(|| Ok(Box::new(backend::activity(engine, &request)))),
            ),
            Effect::OutboxList => Action::OutboxListed(guard(|| backend::outbox_list(engine))),
            Effect::OutboxShow(id) => {
                let res = guard(|| backend::outbox_show(engine, &id));
                Action::OutboxShown(id, res)
            }
            Effect::OutboxDecide {
                id,
                approve,
                reason,
            } => {
                let res = guard(|| backend::outbox_decide(engine, &id, approve, reason.as_deref()));
                Action::OutboxDecided(id, res)
            }
            _ => continue,
        };
        if out.send(action).is_err() {
            return;
        }
    }
}

/// Run `f`, turning a panic into an error message (the explorer keeps running; the terminal's
/// panic hook leaves worker threads alone).
fn guard<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".to_string());
            Err(format!("internal error (a bug; please report it): {msg}"))
        }
    }
}
