//! The engine a long-running front end (`knowledge mcp`, the explorer) answers from while a
//! watch writes the stores. Searches through an open engine already see every committed
//! revision (WAL, read-only connections); the engine is only reopened when a store that did not
//! exist at start has appeared, so its lane stops being "not ready".

use std::sync::{Arc, RwLock};

use crate::engine::Engine;

pub struct EngineSlot {
    current: RwLock<Arc<Engine>>,
    reopen: Box<dyn Fn() -> Engine + Send + Sync>,
}

impl EngineSlot {
    /// `reopen` opens the engine again with the same config.
    pub fn new(engine: Engine, reopen: impl Fn() -> Engine + Send + Sync + 'static) -> EngineSlot {
        EngineSlot {
            current: RwLock::new(Arc::new(engine)),
            reopen: Box::new(reopen),
        }
    }

    /// The engine to answer the next request with.
    pub fn current(&self) -> Arc<Engine> {
        match self.current.read() {
            Ok(e) => e.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reopen when a built-in store now exists that the current engine could not open. Returns
    /// whether the engine was replaced; requests in flight finish on the old one.
    pub fn refresh(&self) -> bool {
        let engine = self.current();
        let c = &engine.config;
        let opened = engine.builtin().opened;
        let appeared = (!opened[0] && c.episodes_db().exists())
            || (!opened[1] && c.code_db().exists())
            || (!opened[2] && c.knowledge_db().exists());
        if !appeared {
            return false;
        }
        let fresh = Arc::new((self.reopen)());
        match self.current.write() {
            Ok(mut e) => *e = fresh,
            Err(poisoned) => *poisoned.into_inner() = fresh,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineConfig;

    #[test]
    fn a_store_that_appears_reopens_the_engine() {
        let dir = tempfile::tempdir().unwrap();
        let config = EngineConfig::new(dir.path());
        let c2 = config.clone();
        let slot = EngineSlot::new(Engine::open(config.clone()), move || {
            Engine::open(c2.clone())
        });
        assert!(!slot.current().builtin().opened[0]);
        assert!(!slot.refresh(), "nothing appeared");
        crate::sources::episodes::index::index_episodes(
            &config.episodes_db(),
            &crate::sources::episodes::index::IndexOptions::new(Vec::new()),
            &mut |_| {},
        )
        .unwrap();
        assert!(slot.refresh());
        assert!(slot.current().builtin().opened[0]);
    }
}
