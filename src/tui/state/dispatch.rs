//! The dispatch pane's state (the task being prepared, the dry run's typed response) and the
//! outbox view's (the listed packages, the one open in full).

use knowledge::contract::dispatch::DispatchResponse;
use ratatui_textarea::TextArea;

use super::ListCursor;
use crate::tui::action::OutboxPackage;

/// Which part of the dispatch pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchField {
    Task,
    Acceptance,
    Constraints,
    Preview,
}

impl DispatchField {
    pub const ALL: [DispatchField; 4] = [
        DispatchField::Task,
        DispatchField::Acceptance,
        DispatchField::Constraints,
        DispatchField::Preview,
    ];
}

/// The dispatch pane: the task being prepared and the dry run's preview.
pub struct DispatchView {
    /// The actor chosen when the pane opened (target toggles between it and `auto`).
    pub chosen: Option<(String, String)>,
    pub use_actor: bool,
    pub task: TextArea<'static>,
    pub acceptance: TextArea<'static>,
    pub constraints: TextArea<'static>,
    pub field: DispatchField,
    pub job: u64,
    pub loading: bool,
    pub error: Option<String>,
    /// The dry run's `knowledge.dispatch/v1` response.
    pub preview: Option<Box<DispatchResponse>>,
    /// The task changed since the preview was made.
    pub dirty: bool,
    /// Open the confirmation as soon as the fresh preview arrives.
    pub confirm_after_preview: bool,
    pub scroll: usize,
}

impl DispatchView {
    /// The editor that has the keyboard (none while the preview has it).
    pub fn focused_editor(&mut self) -> Option<&mut TextArea<'static>> {
        match self.field {
            DispatchField::Task => Some(&mut self.task),
            DispatchField::Acceptance => Some(&mut self.acceptance),
            DispatchField::Constraints => Some(&mut self.constraints),
            DispatchField::Preview => None,
        }
    }

    /// The task as the pane holds it now.
    pub fn draft(&self) -> TaskDraft {
        let lines = |t: &TextArea<'static>| -> Vec<String> {
            t.lines()
                .iter()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        };
        TaskDraft {
            text: self.task.lines().join("\n").trim().to_string(),
            acceptance: lines(&self.acceptance),
            constraints: lines(&self.constraints),
            actor_id: if self.use_actor {
                self.chosen.as_ref().map(|(id, _)| id.clone())
            } else {
                None
            },
        }
    }
}

/// A task for dispatch, independent of the engine's request type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskDraft {
    pub text: String,
    pub acceptance: Vec<String>,
    pub constraints: Vec<String>,
    /// `None` is target `auto`.
    pub actor_id: Option<String>,
}

/// The outbox list and the package open in it.
#[derive(Debug, Clone, Default)]
pub struct OutboxView {
    pub entries: Vec<OutboxRow>,
    pub cursor: ListCursor,
    pub loading: bool,
    pub error: Option<String>,
    pub detail: Option<OutboxDetail>,
}

/// One package of the outbox as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxRow {
    pub id: String,
    pub status: String,
    pub created_at: String,
    pub target: String,
    pub task: String,
    pub path: String,
    /// Why the file is not a readable package (the other fields are empty then).
    pub unreadable: Option<String>,
}

#[derive(Debug, Clone)]
pub struct OutboxDetail {
    pub id: String,
    pub loading: bool,
    pub error: Option<String>,
    pub doc: Option<Box<OutboxPackage>>,
    pub scroll: usize,
}
