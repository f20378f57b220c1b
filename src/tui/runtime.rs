//! The event loop: terminal events become actions through the keymap, worker answers arrive on
//! a channel, timers (the typing debounce, spinner ticks) fire, `update` runs, its effects are
//! carried out, and the screen is redrawn. The loop never blocks on anything but a short poll.

use std::collections::VecDeque;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyEventKind, MouseButton, MouseEventKind};
use ratatui_textarea::Input;

use super::action::{Action, MouseInput, MouseKind};
use super::clipboard::Clipboard;
use super::keymap::KeyChord;
use super::state::App;
use super::terminal::{self, Term};
use super::ui;
use super::update::{update, Effect, DEBOUNCE_MS};
use super::worker::Worker;

/// Two clicks on the same cell within this time are a double click.
const DOUBLE_CLICK_MS: u128 = 400;

pub struct Runtime {
    pub worker: Worker,
    pub clipboard: Clipboard,
    pub results: Receiver<Action>,
    debounce: Option<(Instant, u64)>,
    last_click: Option<(Instant, u16, u16)>,
    last_tick: Instant,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Runtime {
    pub fn new(worker: Worker, clipboard: Clipboard, results: Receiver<Action>) -> Self {
        Runtime {
            worker,
            clipboard,
            results,
            debounce: None,
            last_click: None,
            last_tick: Instant::now(),
        }
    }

    /// Run until the app quits.
    pub fn run(
        &mut self,
        term: &mut Term,
        app: &mut App,
        first: Vec<Action>,
    ) -> std::io::Result<()> {
        let mut queue: VecDeque<Action> = first.into();
        queue.push_front(Action::Tick(now_ms()));
        let mut dirty = true;
        while !app.quit {
            while let Some(a) = queue.pop_front() {
                let fx = update(app, a);
                self.effects(term, fx, &mut queue);
                dirty = true;
                if app.quit {
                    return Ok(());
                }
            }
            if dirty {
                term.draw(|f| ui::draw(f, app))?;
                dirty = false;
            }
            // Short polls while something is on its way, so answers show at once.
            let busy = app.search.in_flight.is_some()
                || self.debounce.is_some()
                || self.clipboard.busy()
                || loading(app);
            let slice = Duration::from_millis(if busy { 8 } else { 50 });
            let wait = match self.debounce {
                Some((at, _)) => slice.min(at.saturating_duration_since(Instant::now())),
                None => slice,
            };
            if event::poll(wait)? {
                if let Some(a) = self.translate(app, event::read()?) {
                    queue.push_back(a);
                }
                // Drain what else is queued so fast typing costs one frame.
                while event::poll(Duration::ZERO)? {
                    if let Some(a) = self.translate(app, event::read()?) {
                        queue.push_back(a);
                    }
                    if queue.len() > 64 {
                        break;
                    }
                }
            }
            while let Ok(a) = self.results.try_recv() {
                queue.push_back(a);
            }
            if let Some(res) = self.clipboard.poll() {
                queue.push_back(Action::CopyDone(res));
            }
            if let Some((at, g)) = self.debounce {
                if Instant::now() >= at {
                    self.debounce = None;
                    queue.push_back(Action::DebounceElapsed(g));
                }
            }
            let tick_every = if busy || app.search.pending() {
                80
            } else {
                1000
            };
            if self.last_tick.elapsed() >= Duration::from_millis(tick_every) {
                self.last_tick = Instant::now();
                queue.push_back(Action::Tick(now_ms()));
            }
        }
        Ok(())
    }

    /// A terminal event as an action (keys through the keymap).
    fn translate(&mut self, app: &App, ev: Event) -> Option<Action> {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                let chord = KeyChord::from_event(&k);
                match app.keymap.lookup(&app.contexts(), chord) {
                    Some(a) => Some(a),
                    None if app.text_input_active() => Some(Action::Input(Input::from(k))),
                    None => None,
                }
            }
            Event::Paste(s) => Some(Action::Paste(s)),
            Event::Resize(w, h) => Some(Action::Resize(w, h)),
            Event::Mouse(m) => {
                let kind = match m.kind {
                    MouseEventKind::ScrollUp => MouseKind::ScrollUp,
                    MouseEventKind::ScrollDown => MouseKind::ScrollDown,
                    MouseEventKind::Down(MouseButton::Left) => {
                        let now = Instant::now();
                        let double = self.last_click.is_some_and(|(t, c, r)| {
                            c == m.column
                                && r == m.row
                                && now.duration_since(t).as_millis() < DOUBLE_CLICK_MS
                        });
                        self.last_click = Some((now, m.column, m.row));
                        if double {
                            MouseKind::DoubleClick
                        } else {
                            MouseKind::Click
                        }
                    }
                    _ => return None,
                };
                Some(Action::Mouse(MouseInput {
                    kind,
                    column: m.column,
                    row: m.row,
                }))
            }
            _ => None,
        }
    }

    /// Carry out effects; immediate answers go back on the queue.
    fn effects(&mut self, term: &mut Term, fx: Vec<Effect>, queue: &mut VecDeque<Action>) {
        for e in fx {
            match e {
                Effect::Debounce(g) => {
                    self.debounce = Some((Instant::now() + Duration::from_millis(DEBOUNCE_MS), g))
                }
                Effect::Search(req, g) => {
                    self.debounce = None;
                    self.worker.search(req, g);
                }
                Effect::Copy { text, what } => {
                    if let Some(res) = self.clipboard.copy(text, what) {
                        queue.push_back(Action::CopyDone(res));
                    }
                }
                Effect::OpenEditor { path, line } => {
                    let res = terminal::run_editor(term, &path, line);
                    queue.push_back(Action::EditorDone(res));
                    let size = term.size().unwrap_or_default();
                    queue.push_back(Action::Resize(size.width, size.height));
                }
                other => self.worker.job(other),
            }
        }
    }
}

/// Whether a view waits for the worker.
fn loading(app: &App) -> bool {
    use super::state::View;
    app.views.iter().any(|v| match v {
        View::Episode(e) => e.loading,
        View::Code(c) => c.loading,
        View::Dispatch(d) => d.loading,
        View::Outbox(o) => o.loading || o.detail.as_ref().is_some_and(|d| d.loading),
        View::Activity(a) => a.loading,
    })
}
