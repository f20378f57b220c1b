//! The explorer's state: plain data, no I/O, no terminal. `update` changes it, `ui::draw` reads
//! it, tests build and inspect it directly.
//!
//! The main screen is the query box, the three lanes and the actor ranking; views (episode, code,
//! dispatch, outbox) stack on top of it and overlays (help, filters, confirmation, copy menu, a
//! prompt) on top of those. `q`/`Esc` pop the topmost thing.

use knowledge::contract::{
    Actor, CodeItem, EpisodeItem, Lane, Mode, OutcomeFilter, SearchResponse, SkillItem,
};
use knowledge::engine::Episode;
use ratatui::style::{Modifier, Style};
use ratatui_textarea::TextArea;

use super::action::CodeText;
use super::keymap::{Context, Keymap};

mod activity;
mod dispatch;
mod live;
mod overlay;
pub use activity::*;
pub use dispatch::*;
pub use live::Live;
pub use overlay::*;

/// The whole explorer.
pub struct App {
    /// The terminal size (width, height), for layout-dependent navigation and mouse hits.
    pub size: (u16, u16),
    /// `NO_COLOR` is set: meaning is carried by symbols and modifiers only.
    pub no_color: bool,
    pub keymap: Keymap,
    /// Shown in the title (where the indexes live).
    pub data_dir: String,
    pub paths: PathDisplay,
    pub query: TextArea<'static>,
    pub focus: Focus,
    /// The lane shown when the lanes are tabbed (narrow terminals).
    pub lane_tab: Lane,
    pub filters: FilterSet,
    pub search: SearchState,
    pub cursors: Cursors,
    /// The actor selection is in use (the actor panel had the focus since the results came):
    /// its evidence is unfolded and marked in the lanes.
    pub actor_pinned: bool,
    pub views: Vec<View>,
    pub overlay: Option<Overlay>,
    pub status: Status,
    /// What the background watch indexed since the shown results.
    pub live: Live,
    /// Animation frame counter (spinner).
    pub tick: u64,
    /// Wall clock (ms since the epoch), from ticks; relative filter dates use it.
    pub now_ms: i64,
    /// Local time's offset from UTC in seconds (the activity view's days are local days).
    pub utc_offset_s: i32,
    /// Counter for non-search jobs, so late answers for a closed view are dropped.
    pub next_job: u64,
    pub quit: bool,
}

/// What has the keyboard on the main screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Query,
    Lane(Lane),
    Actors,
}

/// The filters of the next search (the filter popup edits a copy).
#[derive(Debug, Clone, PartialEq)]
pub struct FilterSet {
    pub mode: Mode,
    pub workspaces: Vec<String>,
    /// As typed: RFC 3339, `YYYY-MM-DD`, or relative (`7d`, `12h`, `2w`); empty for none.
    pub since: String,
    pub until: String,
    pub outcome: OutcomeFilter,
    /// episodes, code, skills.
    pub include: [bool; 3],
    pub limit: u32,
    /// Only these actors (set from the activity view; the filter popup shows and resets them).
    pub actors: Vec<String>,
}

impl Default for FilterSet {
    fn default() -> Self {
        FilterSet {
            mode: Mode::Auto,
            workspaces: Vec::new(),
            since: String::new(),
            until: String::new(),
            outcome: OutcomeFilter::Any,
            include: [true; 3],
            limit: 10,
            actors: Vec::new(),
        }
    }
}

impl FilterSet {
    /// The active filters as short text (`workspace billing · since 7d`), empty when none.
    pub fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        for w in &self.workspaces {
            out.push(format!("workspace {w}"));
        }
        if !self.since.is_empty() {
            out.push(format!("since {}", self.since));
        }
        if !self.until.is_empty() {
            out.push(format!("until {}", self.until));
        }
        if self.outcome != OutcomeFilter::Any {
            out.push(format!("outcome {}", self.outcome.as_str()));
        }
        if self.include != [true; 3] {
            let lanes: Vec<&str> = Lane::ALL
                .iter()
                .zip(self.include)
                .filter(|(_, on)| *on)
                .map(|(l, _)| l.as_str())
                .collect();
            out.push(format!("only {}", lanes.join("+")));
        }
        if self.limit != 10 {
            out.push(format!("limit {}", self.limit));
        }
        for a in &self.actors {
            // `actor:claude:root_session:5af11f95-…:main` → `main@5af11f95`.
            let parts: Vec<&str> = a.split(':').collect();
            let name = parts.last().copied().unwrap_or(a);
            let root: String = parts.get(3).map_or("", |r| r).chars().take(8).collect();
            out.push(format!("actor {name}@{root}"));
        }
        out
    }
}

/// The searches: what was asked, what is shown.
#[derive(Debug, Clone, Default)]
pub struct SearchState {
    /// The newest generation issued (every edit and every search bumps it).
    pub generation: u64,
    /// The generation a request was sent for and has not answered yet.
    pub in_flight: Option<u64>,
    /// A debounce is running for `generation`.
    pub debouncing: bool,
    /// The response shown, and the query and terms it answered.
    pub response: Option<Box<SearchResponse>>,
    pub shown_query: String,
    pub terms: Vec<String>,
    /// Wall time of the shown search, as the worker measured it.
    pub elapsed_ms: Option<f64>,
}

impl SearchState {
    /// A search for the current text is on its way (debounce or worker).
    pub fn pending(&self) -> bool {
        self.debouncing || self.in_flight == Some(self.generation)
    }
}

/// A list selection with its scroll offset (in items).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListCursor {
    pub selected: usize,
    pub offset: usize,
}

/// The actor ranking's selection: an actor, or one of its evidence links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActorCursor {
    pub actor: usize,
    pub evidence: Option<usize>,
    /// Scroll offset in rows.
    pub offset: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursors {
    pub episodes: ListCursor,
    pub code: ListCursor,
    pub skills: ListCursor,
    pub actors: ActorCursor,
}

impl Cursors {
    pub fn lane(&self, lane: Lane) -> &ListCursor {
        match lane {
            Lane::Episodes => &self.episodes,
            Lane::Code => &self.code,
            Lane::Skills => &self.skills,
        }
    }
    pub fn lane_mut(&mut self, lane: Lane) -> &mut ListCursor {
        match lane {
            Lane::Episodes => &mut self.episodes,
            Lane::Code => &mut self.code,
            Lane::Skills => &mut self.skills,
        }
    }
}

/// A full-screen view over the main screen.
pub enum View {
    Episode(EpisodeView),
    Code(CodeView),
    Dispatch(Box<DispatchView>),
    Outbox(OutboxView),
    Activity(Box<ActivityView>),
}

/// An event in full with its neighbours.
#[derive(Debug, Clone)]
pub struct EpisodeView {
    pub job: u64,
    pub session_id: String,
    pub seq: u64,
    pub context: u64,
    pub loading: bool,
    pub error: Option<String>,
    pub episode: Option<Box<Episode>>,
    /// First visible row.
    pub scroll: usize,
    /// The row of the match last jumped to.
    pub match_row: Option<usize>,
}

/// A file around a code reference (or a skill's file).
#[derive(Debug, Clone)]
pub struct CodeView {
    pub job: u64,
    /// The path as the lane gave it (root-relative for code, absolute for skills).
    pub path: String,
    /// The path read (absolute when the lane named the repository root).
    pub load_path: String,
    /// The chunk shown (picks the right repository when a relative path is in several).
    pub chunk_id: Option<String>,
    pub start_line: u64,
    pub end_line: u64,
    pub title: String,
    pub loading: bool,
    pub error: Option<String>,
    pub text: Option<Box<CodeText>>,
    pub scroll: usize,
    pub match_row: Option<usize>,
    /// Open `$EDITOR` as soon as the file is located.
    pub edit_when_loaded: bool,
}

/// The status line's message.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub message: Option<StatusMessage>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone)]
pub struct StatusMessage {
    pub level: Level,
    pub text: String,
    pub at_ms: i64,
}

/// How paths are shown: known prefixes (the home dir) replaced by short names (`~`).
#[derive(Debug, Clone, Default)]
pub struct PathDisplay {
    pub aliases: Vec<(String, String)>,
}

impl PathDisplay {
    /// With `$HOME` shown as `~`.
    pub fn from_env() -> Self {
        let mut aliases = Vec::new();
        if let Some(h) = std::env::var_os("HOME") {
            let h = h.to_string_lossy().trim_end_matches('/').to_string();
            if h.len() > 1 {
                aliases.push((h, "~".to_string()));
            }
        }
        PathDisplay { aliases }
    }

    /// `path` with the first matching alias applied (only at a path boundary).
    pub fn show(&self, path: &str) -> String {
        for (prefix, short) in &self.aliases {
            if let Some(rest) = path.strip_prefix(prefix.as_str()) {
                if rest.is_empty() || rest.starts_with('/') {
                    return format!("{short}{rest}");
                }
            }
        }
        path.to_string()
    }

    /// Replace every aliased prefix inside free text (messages, snippets).
    pub fn show_in_text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (prefix, short) in &self.aliases {
            if out.contains(prefix.as_str()) {
                out = out.replace(prefix.as_str(), short);
            }
        }
        out
    }
}

/// What the empty query box says.
pub const QUERY_PLACEHOLDER: &str = "who fixed …? where is …? which skill …?";

/// A single-line text field with the explorer's look.
pub fn text_field(text: &str, placeholder: &str) -> TextArea<'static> {
    let mut t = TextArea::new(vec![text.to_string()]);
    t.move_cursor(ratatui_textarea::CursorMove::End);
    t.set_cursor_line_style(Style::default());
    t.set_placeholder_text(placeholder.to_string());
    t.set_placeholder_style(Style::default().add_modifier(Modifier::DIM));
    t
}

/// A multi-line text field.
pub fn text_block(lines: &[String], placeholder: &str) -> TextArea<'static> {
    let mut t = if lines.is_empty() {
        TextArea::default()
    } else {
        TextArea::new(lines.to_vec())
    };
    t.move_cursor(ratatui_textarea::CursorMove::Bottom);
    t.move_cursor(ratatui_textarea::CursorMove::End);
    t.set_cursor_line_style(Style::default());
    t.set_placeholder_text(placeholder.to_string());
    t.set_placeholder_style(Style::default().add_modifier(Modifier::DIM));
    t
}

impl App {
    /// A fresh explorer: empty results, the query box focused.
    pub fn new(keymap: Keymap, data_dir: String, no_color: bool) -> Self {
        let mut status = Status::default();
        if let Some(w) = keymap.warnings.first() {
            status.message = Some(StatusMessage {
                level: Level::Warn,
                text: format!("config: {w}"),
                at_ms: 0,
            });
        }
        App {
            size: (80, 24),
            no_color,
            keymap,
            data_dir,
            paths: PathDisplay::from_env(),
            query: text_field("", QUERY_PLACEHOLDER),
            focus: Focus::Query,
            lane_tab: Lane::Episodes,
            filters: FilterSet::default(),
            search: SearchState::default(),
            cursors: Cursors::default(),
            actor_pinned: false,
            views: Vec::new(),
            overlay: None,
            status,
            live: Live::default(),
            tick: 0,
            now_ms: 0,
            utc_offset_s: 0,
            next_job: 0,
            quit: false,
        }
    }

    /// The query as typed (one line).
    pub fn query_text(&self) -> String {
        self.query.lines().join(" ")
    }

    pub fn response(&self) -> Option<&SearchResponse> {
        self.search.response.as_deref()
    }

    pub fn episodes(&self) -> &[EpisodeItem] {
        self.response()
            .map(|r| r.lanes.episodes.items.as_slice())
            .unwrap_or(&[])
    }

    pub fn code(&self) -> &[CodeItem] {
        self.response()
            .map(|r| r.lanes.code.items.as_slice())
            .unwrap_or(&[])
    }

    pub fn skills(&self) -> &[SkillItem] {
        self.response()
            .and_then(|r| r.lanes.skills.as_ref())
            .map(|s| s.items.as_slice())
            .unwrap_or(&[])
    }

    pub fn actors(&self) -> &[Actor] {
        self.response().map(|r| r.actors.as_slice()).unwrap_or(&[])
    }

    pub fn lane_len(&self, lane: Lane) -> usize {
        match lane {
            Lane::Episodes => self.episodes().len(),
            Lane::Code => self.code().len(),
            Lane::Skills => self.skills().len(),
        }
    }

    pub fn selected_actor(&self) -> Option<&Actor> {
        self.actors().get(self.cursors.actors.actor)
    }

    /// The rows of the actor panel: every actor, and under the selected one its evidence links.
    pub fn actor_rows(&self) -> Vec<(usize, Option<usize>)> {
        let mut rows = Vec::new();
        for (i, a) in self.actors().iter().enumerate() {
            rows.push((i, None));
            if self.actor_pinned && i == self.cursors.actors.actor {
                rows.extend((0..a.evidence.len()).map(|j| (i, Some(j))));
            }
        }
        rows
    }

    /// The evidence link under the cursor, when the cursor is on one.
    pub fn selected_evidence(&self) -> Option<(Lane, &str)> {
        let a = self.selected_actor()?;
        let e = a.evidence.get(self.cursors.actors.evidence?)?;
        Some((e.lane, e.id.as_str()))
    }

    /// Whether a lane item is evidence of the selected actor (highlighted in its lane).
    pub fn is_evidence(&self, lane: Lane, id: &str) -> bool {
        self.actor_pinned
            && self
                .selected_actor()
                .is_some_and(|a| a.evidence.iter().any(|e| e.lane == lane && e.id == id))
    }

    pub fn top_view(&self) -> Option<&View> {
        self.views.last()
    }

    /// The keymap contexts in force, innermost first.
    pub fn contexts(&self) -> Vec<Context> {
        let mut out = Vec::with_capacity(3);
        match &self.overlay {
            Some(Overlay::Help { .. }) => out.push(Context::Help),
            Some(Overlay::Filters(f)) => {
                out.push(if f.current().is_text() {
                    Context::FiltersText
                } else {
                    Context::FiltersChoice
                });
                out.push(Context::Filters);
            }
            Some(Overlay::Confirm(_)) => out.push(Context::Confirm),
            Some(Overlay::Copy(_)) => out.push(Context::Copy),
            Some(Overlay::Prompt(_)) => out.push(Context::Prompt),
            None => match self.top_view() {
                Some(View::Episode(_)) | Some(View::Code(_)) => out.push(Context::View),
                Some(View::Dispatch(d)) => out.push(if d.field == DispatchField::Preview {
                    Context::DispatchPreview
                } else {
                    Context::DispatchEdit
                }),
                Some(View::Outbox(_)) => out.push(Context::Outbox),
                Some(View::Activity(_)) => out.push(Context::Activity),
                None => out.push(if self.focus == Focus::Query {
                    Context::Query
                } else {
                    Context::Results
                }),
            },
        }
        out.push(Context::Global);
        out
    }

    /// Whether unbound keys go to a text field.
    pub fn text_input_active(&self) -> bool {
        match &self.overlay {
            Some(Overlay::Filters(f)) => f.current().is_text(),
            Some(Overlay::Prompt(_)) => true,
            Some(_) => false,
            None => match self.top_view() {
                Some(View::Dispatch(d)) => d.field != DispatchField::Preview,
                Some(_) => false,
                None => self.focus == Focus::Query,
            },
        }
    }

    /// Put a message in the status line.
    pub fn say(&mut self, level: Level, text: impl Into<String>) {
        self.status.message = Some(StatusMessage {
            level,
            text: text.into(),
            at_ms: self.now_ms,
        });
    }

    pub fn new_job(&mut self) -> u64 {
        self.next_job += 1;
        self.next_job
    }
}
