//! Every user intent the explorer understands, as data.
//!
//! Keys never reach `update` directly: the runtime turns a key into an [`Action`] through the
//! keymap (`keymap.rs`), and everything else that happens (a search result arriving, a tick, a
//! resize, a mouse click) is an `Action` too. That keeps `update` a pure function that tests can
//! drive step by step, and makes every bindable intent nameable in the config file.

use knowledge::contract::dispatch::{DispatchResponse, Handoff};
use knowledge::contract::SearchResponse;
use knowledge::engine::activity::ActivityReport;
use knowledge::engine::outbox::OutboxEntry;
use knowledge::engine::Episode;
use ratatui_textarea::Input;

/// One user intent or runtime event. The bindable variants (no payload) have a stable
/// snake_case name used by the keymap and the config file (`[keys] search = ["enter"]`).
#[derive(Debug, Clone)]
pub enum Action {
    // --- the application -------------------------------------------------------------------
    /// Leave the explorer (the terminal is restored).
    Quit,
    /// Close the topmost popup or view; on the main screen, leave the query box / quit.
    Back,
    /// Show or hide the help overlay (generated from the keymap).
    Help,

    // --- the query box ---------------------------------------------------------------------
    /// Put the cursor in the query box.
    FocusQuery,
    /// Search now (no debounce).
    SearchNow,
    /// Empty the query box.
    ClearQuery,
    /// Cycle the routing mode (auto → find_agent → … → auto) and search again.
    CycleMode,

    // --- moving around ---------------------------------------------------------------------
    /// Selection (or scroll) one row up.
    Up,
    /// Selection (or scroll) one row down.
    Down,
    /// One page up.
    PageUp,
    /// One page down.
    PageDown,
    /// To the first row.
    Top,
    /// To the last row.
    Bottom,
    /// Focus the next pane (episodes → code → skills → actors).
    NextPane,
    /// Focus the previous pane.
    PrevPane,
    /// Focus the episodes lane.
    FocusEpisodes,
    /// Focus the code lane.
    FocusCode,
    /// Focus the skills lane.
    FocusSkills,
    /// Focus the actor ranking.
    FocusActors,
    /// Open the selected item (episode, code reference, skill file) or follow an evidence link.
    Open,

    // --- drill-in views --------------------------------------------------------------------
    /// Jump to the next line that matches the query.
    NextMatch,
    /// Jump to the previous line that matches the query.
    PrevMatch,
    /// Show more neighbouring events (episode view).
    MoreContext,
    /// Show fewer neighbouring events (episode view).
    LessContext,
    /// Open the code reference in `$EDITOR` at its line.
    OpenEditor,

    // --- copying ---------------------------------------------------------------------------
    /// Open the copy menu for the current selection.
    CopyMenu,
    /// Copy the selected id (`ep:…`, `chunk:…`, `skill:…`, `actor:…`, `assign:…`).
    CopyId,
    /// Copy the locator (`session_id:seq` or `path:line`).
    CopyLocator,
    /// Copy the snippet (or the description of a skill).
    CopySnippet,
    /// Copy the command that resumes the selected session in its own directory.
    CopyResume,
    /// Copy the context pack of the dispatch preview.
    CopyContextPack,
    /// Copy the handoff package (dispatch preview or outbox entry).
    CopyHandoff,

    // --- filters ---------------------------------------------------------------------------
    /// Open the filter popup.
    OpenFilters,
    /// Next field of a form.
    NextField,
    /// Previous field of a form.
    PrevField,
    /// Next value of a choice field (or +1).
    Increase,
    /// Previous value of a choice field (or −1).
    Decrease,
    /// Toggle the option under the cursor (e.g. a lane in `include`).
    Toggle,
    /// Apply the form (the filter popup: search with the new filters).
    Apply,
    /// Reset every filter to its default.
    ResetFilters,

    // --- dispatch and outbox ---------------------------------------------------------------
    /// Open the dispatch pane for the selected actor (or `auto` when none is selected).
    Dispatch,
    /// Open the dispatch pane with target `auto`.
    DispatchAuto,
    /// Switch the dispatch target between the chosen actor and `auto`.
    ToggleTarget,
    /// Run the dispatch dry run again with the edited task.
    Preview,
    /// Commit: opens the confirmation dialog showing exactly what will be written.
    Commit,
    /// Open the outbox (every handoff package, newest first).
    Outbox,
    /// Approve the selected outbox package (behind the confirmation dialog).
    Approve,
    /// Reject the selected outbox package (asks for a reason, then confirms).
    Reject,
    /// Reload the current view (outbox list, episode).
    Refresh,

    // --- the activity view -----------------------------------------------------------------
    /// Open the activity view (sessions per day, who worked where, skills, lane health).
    Activity,
    /// Show the next period (last 7 / 30 / 90 days, the filters' since/until).
    CyclePeriod,

    // --- the confirmation dialog -----------------------------------------------------------
    /// The explicit yes of a confirmation dialog.
    Confirm,
    /// No: close the dialog without doing anything.
    Cancel,

    // --- not bound to keys: input for text fields and runtime events ------------------------
    /// A key for the focused text field (query box, form field, task editor).
    Input(Input),
    /// Text pasted into the terminal (bracketed paste).
    Paste(String),
    /// A mouse event at a cell of the screen.
    Mouse(MouseInput),
    /// The terminal was resized to (width, height).
    Resize(u16, u16),
    /// Time passes (spinner frames, relative dates); the wall clock in ms since the epoch.
    Tick(i64),
    /// The typing debounce of search `generation` has elapsed.
    DebounceElapsed(u64),
    /// A search finished.
    SearchDone(u64, Box<SearchResponse>, f64),
    /// A search failed inside the engine (a bug): the message.
    SearchFailed(u64, String),
    /// An episode loaded (or failed to).
    EpisodeLoaded(u64, Result<Box<Episode>, String>),
    /// A file around a code reference loaded (or failed to).
    CodeLoaded(u64, Result<Box<CodeText>, String>),
    /// A dispatch (dry run or commit) finished: the response, or why it failed.
    DispatchDone(u64, bool, Result<Box<DispatchResponse>, String>),
    /// The outbox listing arrived.
    OutboxListed(Result<OutboxListing, String>),
    /// One outbox package arrived in full.
    OutboxShown(String, Result<Box<OutboxPackage>, String>),
    /// An approve/reject decision was recorded (or failed).
    OutboxDecided(String, Result<String, String>),
    /// The activity report of job `u64` arrived (or why it could not be computed).
    ActivityLoaded(u64, Result<Box<ActivityReport>, String>),
    /// A copy finished: how it was delivered, or why it failed.
    CopyDone(Result<String, String>),
    /// `$EDITOR` returned.
    EditorDone(Result<(), String>),
    /// The background watch indexed a batch: events added, and whether code or skills changed.
    IndexUpdated {
        new_events: u64,
        other_changes: bool,
    },
    /// The background watch could not index (the lock is held, an error): why.
    IndexNote(String),
}

/// A mouse event, in screen cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseInput {
    pub kind: MouseKind,
    pub column: u16,
    pub row: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    Click,
    DoubleClick,
    ScrollUp,
    ScrollDown,
}

/// The outbox as listed: its packages, and why each file that is not a package could not be
/// read (a broken file is shown as such, never as a package with empty fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutboxListing {
    pub packages: Vec<OutboxEntry>,
    pub unreadable: Vec<String>,
}

/// One package of the outbox in full, with the file it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxPackage {
    pub path: String,
    pub handoff: Handoff,
}

/// The lines of a file around a code reference, already redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeText {
    /// The absolute path on this machine (for `$EDITOR`), when known.
    pub abs_path: Option<String>,
    /// The number of the first line in `lines`.
    pub first_line: u64,
    pub lines: Vec<String>,
    pub total_lines: u64,
    /// `fresh`, `stale: …`, `not indexed …`: how far the lines can be trusted.
    pub freshness: String,
    pub index_rev: Option<String>,
}

impl Action {
    /// A copy of one thing of the selection (not the copy menu).
    pub fn is_copy(&self) -> bool {
        matches!(
            self,
            Action::CopyId
                | Action::CopyLocator
                | Action::CopySnippet
                | Action::CopyResume
                | Action::CopyContextPack
                | Action::CopyHandoff
        )
    }

    /// Every bindable action with its name and a one-line description (help overlay, docs).
    pub const BINDABLE: &'static [(&'static str, &'static str)] = &[
        ("quit", "quit the explorer"),
        ("back", "close the current view or popup"),
        ("help", "show or hide this help"),
        ("focus_query", "edit the query"),
        ("search", "search now"),
        ("clear_query", "clear the query"),
        ("cycle_mode", "cycle the routing mode"),
        ("up", "up"),
        ("down", "down"),
        ("page_up", "page up"),
        ("page_down", "page down"),
        ("top", "first row"),
        ("bottom", "last row"),
        ("next_pane", "next pane"),
        ("prev_pane", "previous pane"),
        ("focus_episodes", "episodes lane"),
        ("focus_code", "code lane"),
        ("focus_skills", "skills lane"),
        ("focus_actors", "actor ranking"),
        ("open", "open the selection / follow an evidence link"),
        ("next_match", "next match"),
        ("prev_match", "previous match"),
        ("more_context", "more neighbouring events"),
        ("less_context", "fewer neighbouring events"),
        ("open_editor", "open in $EDITOR at the line"),
        ("copy_menu", "copy…"),
        ("copy_id", "copy the id"),
        ("copy_locator", "copy the locator (path:line, session:seq)"),
        ("copy_snippet", "copy the snippet"),
        ("copy_resume", "copy the command that resumes the session"),
        ("copy_context_pack", "copy the context pack"),
        ("copy_handoff", "copy the handoff package"),
        ("filters", "filters"),
        ("next_field", "next field"),
        ("prev_field", "previous field"),
        ("increase", "next value"),
        ("decrease", "previous value"),
        ("toggle", "toggle"),
        ("apply", "apply"),
        ("reset_filters", "reset the filters"),
        ("dispatch", "dispatch to the selected actor"),
        ("dispatch_auto", "dispatch with target auto"),
        ("toggle_target", "switch target actor/auto"),
        ("preview", "refresh the dry-run preview"),
        ("commit", "commit (asks for confirmation)"),
        ("outbox", "open the outbox"),
        ("approve", "approve the package"),
        ("reject", "reject the package"),
        ("refresh", "reload"),
        ("activity", "activity: sessions per day, who worked where"),
        ("cycle_period", "next period (7 / 30 / 90 days, filters)"),
        ("confirm", "yes, do it"),
        ("cancel", "no"),
    ];

    /// The bindable action of a name (`"copy_id"` → [`Action::CopyId`]).
    pub fn from_name(name: &str) -> Option<Action> {
        use Action::*;
        Some(match name {
            "quit" => Quit,
            "back" => Back,
            "help" => Help,
            "focus_query" => FocusQuery,
            "search" => SearchNow,
            "clear_query" => ClearQuery,
            "cycle_mode" => CycleMode,
            "up" => Up,
            "down" => Down,
            "page_up" => PageUp,
            "page_down" => PageDown,
            "top" => Top,
            "bottom" => Bottom,
            "next_pane" => NextPane,
            "prev_pane" => PrevPane,
            "focus_episodes" => FocusEpisodes,
            "focus_code" => FocusCode,
            "focus_skills" => FocusSkills,
            "focus_actors" => FocusActors,
            "open" => Open,
            "next_match" => NextMatch,
            "prev_match" => PrevMatch,
            "more_context" => MoreContext,
            "less_context" => LessContext,
            "open_editor" => OpenEditor,
            "copy_menu" => CopyMenu,
            "copy_id" => CopyId,
            "copy_locator" => CopyLocator,
            "copy_snippet" => CopySnippet,
            "copy_resume" => CopyResume,
            "copy_context_pack" => CopyContextPack,
            "copy_handoff" => CopyHandoff,
            "filters" => OpenFilters,
            "next_field" => NextField,
            "prev_field" => PrevField,
            "increase" => Increase,
            "decrease" => Decrease,
            "toggle" => Toggle,
            "apply" => Apply,
            "reset_filters" => ResetFilters,
            "dispatch" => Dispatch,
            "dispatch_auto" => DispatchAuto,
            "toggle_target" => ToggleTarget,
            "preview" => Preview,
            "commit" => Commit,
            "outbox" => Outbox,
            "approve" => Approve,
            "reject" => Reject,
            "refresh" => Refresh,
            "activity" => Activity,
            "cycle_period" => CyclePeriod,
            "confirm" => Confirm,
            "cancel" => Cancel,
            _ => return None,
        })
    }

    /// The one-line description of a bindable action's name.
    pub fn describe(name: &str) -> &'static str {
        Action::BINDABLE
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| *d)
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bindable_name_parses() {
        for (name, desc) in Action::BINDABLE {
            assert!(Action::from_name(name).is_some(), "{name}");
            assert!(!desc.is_empty(), "{name}");
        }
        assert!(Action::from_name("nope").is_none());
    }
}
