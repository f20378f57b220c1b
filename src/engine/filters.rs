//! Episode filters applied to what the other lanes say about sessions: a skill's recorded uses
//! are evidence from sessions, so under a workspace, session, time or outcome filter only the
//! uses inside it count (DECISIONS §5).

use crate::contract::{Filters, OutcomeFilter, SkillItem};

/// Whether any filter that narrows the sessions is set.
pub fn episode_filters_active(f: &Filters) -> bool {
    !f.workspaces.is_empty()
        || !f.session_ids.is_empty()
        || f.since.is_some()
        || f.until.is_some()
        || f.outcome.is_some_and(|o| o != OutcomeFilter::Any)
}

/// Under episode filters (workspaces, sessions, time, outcome) a skill keeps only the uses whose
/// episode passes them, and a skill whose every use fell outside goes (DECISIONS §5: skills are
/// kept only when their evidence survives the filter). Skills never used stay: they are catalog
/// entries, not session evidence.
pub fn filter_skill_uses(
    items: &mut Vec<SkillItem>,
    f: &Filters,
    episodes: &dyn crate::lanes::EpisodesSource,
) {
    if !episode_filters_active(f) {
        return;
    }
    let under = |path: &str, root: &str| {
        path == root
            || path
                .strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/') || rest.starts_with('\\'))
    };
    let passes = |episode_id: &str| -> bool {
        let Some((sid, seq)) = crate::lanes::parse_episode_id(episode_id) else {
            return false;
        };
        let Ok(Some(session)) = episodes.session(&sid) else {
            return false;
        };
        if !f.workspaces.is_empty() {
            let cwd = session.cwd.as_deref().unwrap_or("");
            if !f.workspaces.iter().any(|w| under(cwd, w)) {
                return false;
            }
        }
        if !f.session_ids.is_empty() && !f.session_ids.iter().any(|s| sid == *s || under(&sid, s)) {
            return false;
        }
        if let Some(o) = f.outcome.and_then(OutcomeFilter::wanted) {
            if session.outcome != o {
                return false;
            }
        }
        if f.since.is_some() || f.until.is_some() {
            let time = episodes
                .event_time(&sid, seq)
                .ok()
                .flatten()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok());
            let Some(t) = time else { return false };
            if f.since.is_some_and(|s| t < s) || f.until.is_some_and(|u| t > u) {
                return false;
            }
        }
        true
    };
    items.retain_mut(|item| {
        if item.used_by.is_empty() {
            return true;
        }
        item.used_by.retain(|u| passes(&u.episode_id));
        !item.used_by.is_empty()
    });
}
