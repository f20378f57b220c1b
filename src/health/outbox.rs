//! `doctor`'s look at the outbox. A package that cannot be read is left out of `knowledge outbox
//! list` (named on stderr only), so a script reading `--json` would see it vanish: doctor counts
//! such packages and says how to find what is wrong with each.

use super::doctor::Problem;
use crate::engine::{outbox, EngineConfig};

/// The outbox's packages that cannot be read, as one problem; `None` when every one reads.
pub fn unreadable_packages(config: &EngineConfig) -> Option<Problem> {
    let (_, bad) = outbox::list(config);
    let first = bad.first()?;
    Some(Problem {
        problem: format!(
            "{} outbox packages cannot be read, so `knowledge outbox list` leaves them out (e.g. \
             {first})",
            bad.len()
        ),
        fix: format!(
            "`knowledge outbox show ID` names what is wrong with one; repair it, or move it out \
             of {} (a package is never executed; the plan stays in the assignment store)",
            config.outbox_dir().display()
        ),
    })
}
