//! The popups' state: the filter form, the confirmation dialog (with the `ConfirmAction` →
//! `ConfirmedAction` step that is the only road to a write), the copy menu and the prompt.

use knowledge::contract::{Lane, Mode, OutcomeFilter};
use ratatui_textarea::TextArea;

use super::TaskDraft;

/// A popup over everything.
pub enum Overlay {
    Help { scroll: usize },
    Filters(Box<FilterForm>),
    Confirm(ConfirmDialog),
    Copy(CopyMenu),
    Prompt(Box<Prompt>),
}

/// The fields of the filter popup, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterField {
    Workspaces,
    Since,
    Until,
    Outcome,
    Lane(Lane),
    Mode,
    Limit,
}

impl FilterField {
    pub const ALL: [FilterField; 9] = [
        FilterField::Workspaces,
        FilterField::Since,
        FilterField::Until,
        FilterField::Outcome,
        FilterField::Lane(Lane::Episodes),
        FilterField::Lane(Lane::Code),
        FilterField::Lane(Lane::Skills),
        FilterField::Mode,
        FilterField::Limit,
    ];
    pub fn is_text(self) -> bool {
        matches!(
            self,
            FilterField::Workspaces | FilterField::Since | FilterField::Until
        )
    }
}

/// The filter popup: an editable copy of the filters.
pub struct FilterForm {
    pub field: usize,
    pub workspaces: TextArea<'static>,
    pub since: TextArea<'static>,
    pub until: TextArea<'static>,
    pub outcome: OutcomeFilter,
    pub include: [bool; 3],
    pub mode: Mode,
    pub limit: u32,
    pub error: Option<String>,
    /// Workspaces seen in the results, offered as a hint.
    pub known_workspaces: Vec<String>,
}

impl FilterForm {
    pub fn current(&self) -> FilterField {
        FilterField::ALL[self.field.min(FilterField::ALL.len() - 1)]
    }
}

/// What a confirmation dialog will do on an explicit yes.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfirmAction {
    /// Record the assignment and write the handoff package to the outbox.
    CommitDispatch(TaskDraft),
    /// Approve an outbox package.
    Approve { id: String },
    /// Reject an outbox package with a reason.
    Reject { id: String, reason: String },
}

/// What was confirmed: the only way to reach a write.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfirmedAction {
    CommitDispatch(TaskDraft),
    Approve { id: String },
    Reject { id: String, reason: String },
}

impl ConfirmAction {
    /// The yes. Only `update` on [`super::action::Action::Confirm`] calls it.
    pub fn confirm(self) -> ConfirmedAction {
        match self {
            ConfirmAction::CommitDispatch(d) => ConfirmedAction::CommitDispatch(d),
            ConfirmAction::Approve { id } => ConfirmedAction::Approve { id },
            ConfirmAction::Reject { id, reason } => ConfirmedAction::Reject { id, reason },
        }
    }
}

/// A confirmation dialog: what will happen, exactly what will be written, and y/n.
#[derive(Debug, Clone)]
pub struct ConfirmDialog {
    pub action: ConfirmAction,
    pub title: String,
    /// What will be written: (what, detail) facts, values already sanitised.
    pub summary: Vec<(String, String)>,
    /// The document that will be written (pretty JSON), scrollable.
    pub body: String,
    pub scroll: usize,
}

/// The copy menu: what can be copied from the current selection.
#[derive(Debug, Clone)]
pub struct CopyMenu {
    pub choices: Vec<CopyChoice>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CopyChoice {
    /// The bindable action that picks it (`copy_id`, …).
    pub action: &'static str,
    pub label: String,
    pub text: String,
}

/// A one-line text prompt.
pub struct Prompt {
    pub title: String,
    pub input: TextArea<'static>,
    pub purpose: PromptPurpose,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PromptPurpose {
    RejectReason { id: String },
}
