//! The full-screen terminal explorer (`knowledge`, `knowledge demo`): a query box, the three
//! lanes, the actor ranking, drill-in views, dispatch and the outbox, over the same engine as the
//! CLI and the MCP server.
//!
//! Built in the gitui/television style, so every part can be tested without a terminal:
//!
//! * [`state`]: the explorer's state, plain data;
//! * [`action`]: every user intent and runtime event as an `Action`;
//! * [`keymap`]: keys as data (defaults + `[keys]` in the config), the help overlay's source;
//! * [`update`]: `update(&mut App, Action) -> Vec<Effect>`, no I/O;
//! * [`ui`]: `draw(frame, &App)`, a pure function of the state;
//! * [`worker`] / [`backend`]: searches and loads off the UI thread, the latest search wins;
//! * [`clipboard`]: arboard on its own thread with a timeout, OSC 52 otherwise;
//! * [`terminal`]: setup/restore (also on panic), `$EDITOR` with the terminal suspended;
//! * [`runtime`]: the event loop that ties them together.

pub mod action;
pub mod backend;
pub mod clipboard;
pub mod keymap;
pub mod runtime;
pub mod state;
pub mod terminal;
pub mod ui;
pub mod update;
pub mod worker;

#[cfg(test)]
pub(crate) mod tests;

use std::sync::{mpsc, Arc};

use anyhow::{Context, Result};
use knowledge::engine::Engine;
use knowledge::text::sanitize::one_line;
use knowledge::watch::slot::EngineSlot;

use action::Action;
use keymap::Keymap;
use state::App;

/// Whether `NO_COLOR` asks for no colours (set and not empty, per no-color.org).
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// The explorer's initial state for an engine, with the `[keys]` of its data dir's config.
pub fn new_app(engine: &Engine) -> App {
    let keymap = match knowledge::config::Config::key_overrides(&engine.config.data_dir) {
        Ok(keys) => Keymap::new(&keys),
        Err(e) => {
            let mut keymap = Keymap::default();
            keymap.warnings.push(e.to_string());
            keymap
        }
    };
    let mut app = App::new(
        keymap,
        engine.config.data_dir.display().to_string(),
        no_color(),
    );
    app.utc_offset_s = chrono::Local::now().offset().local_minus_utc();
    app
}

/// A watch report as the action the explorer understands.
fn watch_action(ev: knowledge::watch::WatchEvent) -> Action {
    use knowledge::watch::WatchEvent;
    match ev {
        WatchEvent::Indexed(b) => {
            let code = b
                .summary
                .code
                .as_ref()
                .is_some_and(|c| c.files_new + c.files_changed + c.files_deleted > 0);
            let skills = b
                .summary
                .agent_knowledge
                .as_ref()
                .is_some_and(|k| !k.unchanged);
            Action::IndexUpdated {
                new_events: b.new_events,
                other_changes: code || skills,
            }
        }
        WatchEvent::Busy(why) | WatchEvent::Failed(why) => Action::IndexNote(why),
    }
}

/// Open the explorer over `engine`, with `query` typed into the query box when given; with
/// `watch`, the roots last indexed into its data dir are followed while it runs.
pub fn run(engine: Engine, query: Option<String>, watch: bool) -> Result<i32> {
    let mut app = new_app(&engine);
    let config = engine.config.clone();
    let reopen = config.clone();
    let engine = Arc::new(EngineSlot::new(engine, move || {
        let fresh = knowledge::open_engine(reopen.clone());
        fresh.warm_semantic();
        fresh
    }));
    let (tx, rx) = mpsc::channel();
    let _watch = if watch {
        let tx = tx.clone();
        let slot = engine.clone();
        knowledge::watch::background(&config.data_dir, move |ev| {
            if matches!(ev, knowledge::watch::WatchEvent::Indexed(_)) {
                slot.refresh();
            }
            let _ = tx.send(watch_action(ev));
        })
        .ok()
        .flatten()
    } else {
        None
    };
    let worker = worker::Worker::spawn(engine, tx).context("cannot start the search worker")?;
    let clipboard = clipboard::Clipboard::new();

    terminal::install_panic_hook();
    let (mut term, _guard) = terminal::setup().context("cannot set up the terminal")?;
    let size = term.size().context("cannot read the terminal size")?;
    let mut first = vec![Action::Resize(size.width, size.height)];
    if let Some(q) = query.filter(|q| !q.trim().is_empty()) {
        app.query.insert_str(one_line(&q));
        first.push(Action::SearchNow);
    }
    let mut rt = runtime::Runtime::new(worker, clipboard, rx);
    rt.run(&mut term, &mut app, first)
        .context("the terminal stopped working")?;
    Ok(0)
}
