//! Tests of the explorer on the demo world: whole-screen snapshots on `TestBackend` and flows
//! driven through `update`, with the effects carried out inline the way the runtime's worker
//! would (searches really run on the engine over the indexed demo world).
//!
//! Snapshots are deterministic: the demo world's temporary root is shown as `/demo` and its
//! data dir as `/data` (the explorer's own path aliases), index revisions (fingerprints of the
//! temporary paths) and the handoff's creation time are fixed, timings are zeroed and the clock
//! is fixed.

mod activity;
mod flows;
mod live;
mod new_agents;
mod snapshots;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::OnceLock;

use knowledge::contract::SearchResponse;
use knowledge::engine::{Engine, EngineConfig};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::action::Action;
use super::backend;
use super::state::App;
use super::ui;
use super::update::{update, Effect};

/// 2026-11-30T12:00:00Z, the tests' "now".
pub const NOW_MS: i64 = 1_796_040_000_000;

pub struct World {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub data_dir: PathBuf,
}

/// A temp dir named by this process and a counter (`kn<pid>x<n>`), not by random letters: the
/// demo transcripts hold the path they are materialised at, so random letters would put a
/// different number of terms into the indexed events and move BM25 scores from run to run.
fn plain_temp_dir() -> tempfile::TempDir {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    loop {
        let name = format!(
            "kn{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        match tempfile::Builder::new()
            .prefix(&name)
            .rand_bytes(0)
            .tempdir()
        {
            Ok(dir) => return dir,
            // A dir left by a killed run whose pid this one reuses: take the next number.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => panic!("temp dir: {e}"),
        }
    }
}

/// The demo world, materialised and fully indexed once per test binary.
pub fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let tmp = plain_temp_dir();
        let w = knowledge::demo::materialize(
            &knowledge::demo::bundled_world(),
            &tmp.path().join("world"),
        )
        .expect("materialise the demo world");
        let data_dir = tmp.path().join("data");
        knowledge::indexing::index_all(&data_dir, &w.plan(), &mut |_| {})
            .expect("index the demo world");
        World {
            root: w.root.clone(),
            data_dir,
            _tmp: tmp,
        }
    })
}

/// A data dir holding only the demo world's episodes index (code and skills are degraded).
pub fn episodes_only() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let full = world();
        let tmp = tempfile::tempdir().expect("temp dir");
        let data_dir = tmp.path().join("data");
        std::fs::create_dir_all(&data_dir).expect("data dir");
        let store = full.data_dir.join("episodes.sqlite");
        std::fs::copy(&store, data_dir.join("episodes.sqlite")).expect("copy the episodes index");
        // Its full-text index beside it.
        let lexical = knowledge::sources::lexical::dir_for(&store);
        let copy = knowledge::sources::lexical::dir_for(&data_dir.join("episodes.sqlite"));
        std::fs::create_dir_all(&copy).expect("lexical dir");
        for e in std::fs::read_dir(&lexical).expect("lexical index") {
            let e = e.expect("entry");
            std::fs::copy(e.path(), copy.join(e.file_name())).expect("copy the full-text index");
        }
        World {
            root: full.root.clone(),
            data_dir,
            _tmp: tmp,
        }
    })
}

pub fn engine_for(w: &World) -> Engine {
    let mut config = EngineConfig::load(&w.data_dir).expect("config");
    config.log = false;
    // The screens pinned here are the lexical lanes' (the vector arm is tested in
    // tests/semantic_arm.rs); its marker is covered by `arm_marker_names_the_arms`.
    config.semantic = false;
    Engine::open(config)
}

/// What the test harness saw the explorer ask for.
#[derive(Default)]
pub struct Seen {
    pub copied: Vec<String>,
    pub editor: Vec<(String, u64)>,
    pub searches: usize,
}

/// An explorer over `engine`, `w`×`h`, with the world's paths aliased.
pub fn harness(engine: Engine, w: &World, width: u16, height: u16) -> Harness {
    let mut app = super::new_app(&engine);
    app.no_color = true;
    app.paths.aliases = vec![
        (w.data_dir.display().to_string(), "/data".to_string()),
        (w.root.display().to_string(), "/demo".to_string()),
    ];
    app.now_ms = NOW_MS;
    let mut h = Harness {
        app,
        engine,
        seen: Seen::default(),
    };
    h.act(Action::Resize(width, height));
    h
}

pub struct Harness {
    pub app: App,
    pub engine: Engine,
    pub seen: Seen,
}

/// A response with its timings zeroed and its index revisions fixed (both differ run to run:
/// the revisions fingerprint the temporary paths).
pub fn steady(mut resp: SearchResponse) -> SearchResponse {
    if let Some(t) = resp.trace.as_mut() {
        for l in &mut t.lanes {
            l.ms = 0.0;
        }
    }
    let fix = |rev: &mut Option<String>, lane: &str| {
        if rev.is_some() {
            *rev = Some(format!("{lane}:5e7e11ed5e7e"));
        }
    };
    fix(&mut resp.lanes.episodes.header.index_rev, "episodes");
    fix(&mut resp.lanes.code.header.index_rev, "code");
    if let Some(s) = resp.lanes.skills.as_mut() {
        fix(&mut s.header.index_rev, "skills");
    }
    resp
}

impl Harness {
    /// Apply an action and carry out every effect it leads to, to quiescence.
    pub fn act(&mut self, action: Action) {
        let mut queue = VecDeque::from([action]);
        while let Some(a) = queue.pop_front() {
            for fx in update(&mut self.app, a) {
                if let Some(next) = self.effect(fx) {
                    queue.push_back(next);
                }
            }
        }
    }

    /// Apply an action, keep its effects (not carried out).
    pub fn act_raw(&mut self, action: Action) -> Vec<Effect> {
        update(&mut self.app, action)
    }

    pub fn effect(&mut self, fx: Effect) -> Option<Action> {
        let e = &self.engine;
        Some(match fx {
            Effect::Debounce(g) => Action::DebounceElapsed(g),
            Effect::Search(req, g) => {
                self.seen.searches += 1;
                Action::SearchDone(g, Box::new(steady(backend::search(e, &req))), 0.0)
            }
            Effect::LoadEpisode {
                job,
                session_id,
                seq,
                context,
            } => Action::EpisodeLoaded(job, backend::load_episode(e, &session_id, seq, context)),
            Effect::LoadCode {
                job,
                path,
                chunk_id,
                start_line,
                ..
            } => {
                let mut res = backend::read_code(e, &path, chunk_id.as_deref(), start_line);
                if let Ok(t) = res.as_mut() {
                    if t.index_rev.is_some() {
                        t.index_rev = Some("code:5e7e11ed5e7e".into());
                    }
                }
                Action::CodeLoaded(job, res)
            }
            Effect::Dispatch { job, draft, commit } => {
                let mut res = backend::dispatch(e, &draft, commit);
                if let Ok(doc) = res.as_mut() {
                    if let Some(h) = doc.handoff.as_mut() {
                        h.created_at = "2026-11-30T12:00:00Z".into();
                    }
                }
                Action::DispatchDone(job, commit, res)
            }
            Effect::LoadActivity { job, request } => {
                Action::ActivityLoaded(job, Ok(Box::new(backend::activity(e, &request))))
            }
            Effect::OutboxList => Action::OutboxListed(backend::outbox_list(e)),
            Effect::OutboxShow(id) => {
                let r = backend::outbox_show(e, &id);
                Action::OutboxShown(id, r)
            }
            Effect::OutboxDecide {
                id,
                approve,
                reason,
            } => {
                let r = backend::outbox_decide(e, &id, approve, reason.as_deref());
                Action::OutboxDecided(id, r)
            }
            Effect::Copy { text, what } => {
                self.seen.copied.push(text);
                Action::CopyDone(Ok(format!("copied {what}")))
            }
            Effect::OpenEditor { path, line } => {
                self.seen.editor.push((path, line));
                return None;
            }
        })
    }

    /// Type text into the focused field, key by key.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            let input = ratatui_textarea::Input {
                key: ratatui_textarea::Key::Char(c),
                ..Default::default()
            };
            self.act(Action::Input(input));
        }
    }

    /// Type a query and search at once.
    pub fn search(&mut self, q: &str) {
        self.type_text(q);
        self.act(Action::SearchNow);
    }

    /// The screen as text, deterministic.
    pub fn screen(&self) -> String {
        render(&self.app)
    }
}

/// Render `app` at its size to text.
pub fn render(app: &App) -> String {
    let (w, h) = app.size;
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    term.draw(|f| ui::draw(f, app)).expect("draw");
    ui::buffer_text(term.backend().buffer())
}

/// A fresh copy of the demo world, indexed, for tests that write (dispatch commits).
pub fn writable_world() -> World {
    let tmp = plain_temp_dir();
    let w =
        knowledge::demo::materialize(&knowledge::demo::bundled_world(), &tmp.path().join("world"))
            .expect("materialise the demo world");
    let data_dir = tmp.path().join("data");
    knowledge::indexing::index_all(&data_dir, &w.plan(), &mut |_| {}).expect("index");
    World {
        root: w.root.clone(),
        data_dir,
        _tmp: tmp,
    }
}
