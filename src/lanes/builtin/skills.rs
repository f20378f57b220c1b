//! The skills lane and the actor facts over the agent-knowledge store (`knowledge.sqlite`).

use std::collections::HashSet;
use std::sync::Arc;

use super::unavailable;
use crate::contract::Code;
use crate::lanes::{
    ActivityQuery, ActorFacts, ActorKey, ActorRow, AgentKnowledgeStats, LaneRequest, SkillHit,
    SkillsActivity, SkillsAnswer, SkillsSource, SourceFailure,
};
use crate::sources::agent_knowledge::{AgentKnowledgeStore, SkillSearch};

/// The skills lane over the agent-knowledge store.
pub struct BuiltinSkills {
    pub store: Arc<AgentKnowledgeStore>,
}

impl SkillsSource for BuiltinSkills {
    fn name(&self) -> String {
        "builtin.skills+agent-knowledge".to_string()
    }
    fn search(&self, req: &LaneRequest) -> Result<SkillsAnswer, SourceFailure> {
        let stats = self.store.stats().map_err(unavailable)?;
        let own_terms = crate::text::tokens::query_terms(&req.query);
        let sentence = req.sentence();
        let rows = self
            .store
            .search_skills(&SkillSearch {
                terms: &req.terms,
                own_terms: &own_terms,
                sentence: sentence.as_ref().map(|s| &s.vector),
                filter: &req.skills,
                limit: req.depth,
            })
            .map_err(unavailable)?;
        let actor_filter: HashSet<&str> = req.actor_ids.iter().map(String::as_str).collect();
        let hits = rows
            .into_iter()
            .map(|r| SkillHit {
                name: r.qualified_name,
                path: r.path,
                description: r.description,
                when_to_use: r.when_to_use,
                content_hash: r.content_hash,
                bm25: r.bm25,
                uses: r.uses,
                used_by: r
                    .used_by
                    .into_iter()
                    .filter(|(a, _, _)| {
                        actor_filter.is_empty() || actor_filter.contains(a.as_str())
                    })
                    .collect(),
                why: r.why,
                named: r.named,
            })
            .collect();
        Ok(SkillsAnswer {
            index_rev: stats.index_rev,
            hits,
            unanswered: Vec::new(),
        })
    }
    fn stats(&self) -> Result<AgentKnowledgeStats, SourceFailure> {
        self.store.stats().map_err(unavailable)
    }
    fn actor_for_session(
        &self,
        session_id: &str,
        sidechain_agent: Option<&str>,
    ) -> Result<Option<ActorKey>, SourceFailure> {
        self.store
            .actor_for_session(session_id, sidechain_agent)
            .map_err(unavailable)
    }
    fn facts_for(
        &self,
        abs_paths: &[String],
        actor_ids: &[String],
    ) -> Result<ActorFacts, SourceFailure> {
        self.store
            .facts_for(abs_paths, actor_ids)
            .map_err(unavailable)
    }
    fn actor(&self, actor_id: &str) -> Result<Option<ActorRow>, SourceFailure> {
        self.store.actor(actor_id).map_err(unavailable)
    }
    fn sessions_of(&self, actor_id: &str) -> Result<Vec<String>, SourceFailure> {
        self.store.sessions_of(actor_id).map_err(unavailable)
    }
    fn top_actor_for_skill(&self, skill: &str) -> Result<Option<(String, u64)>, SourceFailure> {
        self.store.top_actor_for_skill(skill).map_err(unavailable)
    }
    fn activity(&self, q: &ActivityQuery) -> Result<SkillsActivity, SourceFailure> {
        self.store.activity(q.since_ms, q.until_ms).map_err(|e| {
            // A store written before the activity counts existed: the next index rebuilds it.
            if e.to_string().contains("no such table") {
                SourceFailure::new(
                    Code::SourceUnavailable,
                    "the skills-and-actors store predates the activity counts: run `knowledge \
                     index`",
                )
            } else {
                SourceFailure::caused(Code::SourceUnavailable, e)
            }
        })
    }
}
