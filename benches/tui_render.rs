//! Explorer benchmarks (run with `cargo bench --bench tui_render`): one full-screen render at
//! 200×60 with full panes (target ≤ 2 ms), and the time from the end of the typing debounce to
//! the results frame on the demo world (search on the engine + `update` + render; target
//! ≤ 50 ms). P50/P95/P99 go to stdout; `docs/PERFORMANCE.md` records them.
//!
//! The explorer lives in the binary, so its modules are compiled into this bench directly.

#[allow(dead_code, unused_imports)]
#[path = "../src/tui"]
mod tui {
    pub mod action;
    pub mod backend;
    pub mod keymap;
    pub mod state;
    pub mod ui;
    pub mod update;
}

use std::time::Instant;

use knowledge::engine::{Engine, EngineConfig};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use tui::action::Action;
use tui::state::{App, Focus};
use tui::update::{update, Effect};

const QUERIES: &[&str] = &[
    "кто чинил доступ к MySQL",
    "MySQL",
    "getUserName",
    "release checklist deploy",
    "миграции",
];

fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.50), at(0.95), at(0.99))
}

fn report(name: &str, v: Vec<f64>) {
    let n = v.len();
    let (p50, p95, p99) = percentiles(v);
    println!("  {name:<46} n={n:<5} P50 {p50:>7.3} ms  P95 {p95:>7.3} ms  P99 {p99:>7.3} ms");
}

/// Apply an action and run the effects that stay in-process (searches, loads) inline.
fn act(app: &mut App, engine: &Engine, action: Action) {
    let mut queue = vec![action];
    while let Some(a) = queue.pop() {
        for fx in update(app, a) {
            match fx {
                Effect::Debounce(g) => queue.push(Action::DebounceElapsed(g)),
                Effect::Search(req, g) => {
                    let resp = tui::backend::search(engine, &req);
                    queue.push(Action::SearchDone(g, Box::new(resp), 0.0));
                }
                Effect::LoadEpisode {
                    job,
                    session_id,
                    seq,
                    context,
                } => queue.push(Action::EpisodeLoaded(
                    job,
                    tui::backend::load_episode(engine, &session_id, seq, context),
                )),
                _ => {}
            }
        }
    }
}

fn type_query(app: &mut App, engine: &Engine, q: &str) {
    act(app, engine, Action::FocusQuery);
    act(app, engine, Action::ClearQuery);
    for c in q.chars() {
        let input = ratatui_textarea::Input {
            key: ratatui_textarea::Key::Char(c),
            ..Default::default()
        };
        // Keys only: the debounce is not allowed to fire while typing.
        let _ = update(app, Action::Input(input));
    }
}

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let world =
        knowledge::demo::materialize(&knowledge::demo::bundled_world(), &tmp.path().join("world"))
            .expect("demo world");
    let data_dir = tmp.path().join("data");
    knowledge::indexing::index_all(&data_dir, &world.plan(), &mut |_| {}).expect("index");
    let mut config = EngineConfig::load(&data_dir).expect("config");
    config.log = false;
    let engine = Engine::open(config);

    let keys = knowledge::config::Config::key_overrides(&data_dir).expect("config");
    let keymap = tui::keymap::Keymap::new(&keys);
    let mut app = App::new(keymap, data_dir.display().to_string(), false);
    act(&mut app, &engine, Action::Resize(200, 60));
    app.filters.limit = 50;
    type_query(&mut app, &engine, "MySQL");
    act(&mut app, &engine, Action::SearchNow);
    act(&mut app, &engine, Action::FocusActors);
    act(&mut app, &engine, Action::Down);
    let items: usize = tui::state::App::lane_len(&app, knowledge::contract::Lane::Episodes)
        + app.code().len()
        + app.skills().len();
    println!(
        "tui_render (demo world, 200x60, {items} lane items, {} actors)",
        app.actors().len()
    );

    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let mut frame = |app: &App| {
        let t = Instant::now();
        term.draw(|f| tui::ui::draw(f, app)).expect("draw");
        t.elapsed().as_secs_f64() * 1000.0
    };
    for _ in 0..50 {
        frame(&app);
    }
    let main: Vec<f64> = (0..1000).map(|_| frame(&app)).collect();
    report("render: main screen, full panes", main);

    app.focus = Focus::Lane(knowledge::contract::Lane::Episodes);
    act(&mut app, &engine, Action::Open);
    let view: Vec<f64> = (0..500).map(|_| frame(&app)).collect();
    report("render: episode view", view);
    act(&mut app, &engine, Action::Back);
    act(&mut app, &engine, Action::Help);
    let help: Vec<f64> = (0..500).map(|_| frame(&app)).collect();
    report("render: help overlay", help);
    act(&mut app, &engine, Action::Back);

    // From the end of the debounce to the results frame.
    app.filters.limit = 10;
    let mut to_frame = Vec::new();
    for round in 0..20 {
        for q in QUERIES {
            type_query(&mut app, &engine, &format!("{q}{}", " ".repeat(round % 2)));
            let g = app.search.generation;
            let t = Instant::now();
            act(&mut app, &engine, Action::DebounceElapsed(g));
            frame(&app);
            to_frame.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    report("debounce end → results frame (search+draw)", to_frame);
}

/// Until `[[bench]] name = "tui_render" harness = false` is declared, cargo builds this file
/// with the test harness; `cargo test --release --bench tui_render -- --ignored --nocapture`
/// runs the benchmark then.
#[cfg(test)]
#[test]
#[ignore = "a benchmark"]
fn benchmark_under_the_test_harness() {
    main()
}
