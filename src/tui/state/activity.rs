//! The activity view's state: which period is shown, the engine's report for it, and what is
//! selected (a day's bar, an actor, a workspace, a skill). Enter on a selection runs the matching
//! search, so the view is a way into the evidence.

use knowledge::engine::activity::ActivityReport;

/// The period of the view: the last 7, 30 or 90 days, or the search filters' since/until.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivityPeriod {
    Days(u32),
    Filters,
}

impl ActivityPeriod {
    pub const CYCLE: [ActivityPeriod; 4] = [
        ActivityPeriod::Days(7),
        ActivityPeriod::Days(30),
        ActivityPeriod::Days(90),
        ActivityPeriod::Filters,
    ];

    pub fn next(self) -> Self {
        let i = Self::CYCLE.iter().position(|p| *p == self).unwrap_or(0);
        Self::CYCLE[(i + 1) % Self::CYCLE.len()]
    }

    pub fn label(self) -> String {
        match self {
            ActivityPeriod::Days(n) => format!("last {n} days"),
            ActivityPeriod::Filters => "the filters' period".to_string(),
        }
    }
}

/// The part of the view that has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivityPane {
    Days,
    Actors,
    Workspaces,
    Skills,
}

impl ActivityPane {
    pub const ALL: [ActivityPane; 4] = [
        ActivityPane::Days,
        ActivityPane::Actors,
        ActivityPane::Workspaces,
        ActivityPane::Skills,
    ];

    pub fn title(self) -> &'static str {
        match self {
            ActivityPane::Days => "Sessions per day",
            ActivityPane::Actors => "Who worked",
            ActivityPane::Workspaces => "Workspaces",
            ActivityPane::Skills => "Skills used most",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ActivityView {
    pub job: u64,
    pub period: ActivityPeriod,
    pub loading: bool,
    pub error: Option<String>,
    pub report: Option<Box<ActivityReport>>,
    pub pane: ActivityPane,
    /// Selected day (index into `report.days`), actor, workspace and skill.
    pub day: usize,
    pub actor: usize,
    pub workspace: usize,
    pub skill: usize,
}

impl ActivityView {
    pub fn new(job: u64, period: ActivityPeriod) -> Self {
        ActivityView {
            job,
            period,
            loading: true,
            error: None,
            report: None,
            pane: ActivityPane::Days,
            day: 0,
            actor: 0,
            workspace: 0,
            skill: 0,
        }
    }

    /// Rows of the focused pane.
    pub fn pane_len(&self) -> usize {
        let Some(r) = &self.report else { return 0 };
        match self.pane {
            ActivityPane::Days => r.days.len(),
            ActivityPane::Actors => r.actors.len(),
            ActivityPane::Workspaces => r.workspaces.len(),
            ActivityPane::Skills => r.skills.len(),
        }
    }

    pub fn cursor_mut(&mut self) -> &mut usize {
        match self.pane {
            ActivityPane::Days => &mut self.day,
            ActivityPane::Actors => &mut self.actor,
            ActivityPane::Workspaces => &mut self.workspace,
            ActivityPane::Skills => &mut self.skill,
        }
    }
}
