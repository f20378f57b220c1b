//! What the background watch has indexed since the shown results were searched.

/// Changes the shown results do not include yet; a search clears them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Live {
    /// Events added to the episodes index.
    pub new_events: u64,
    /// Code or skills changed too (no count worth showing).
    pub other_changes: bool,
}

impl Live {
    pub fn pending(&self) -> bool {
        self.new_events > 0 || self.other_changes
    }
}
