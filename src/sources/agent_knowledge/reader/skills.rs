//! Skill search over the agent-knowledge store: the catalog ranked by its words (BM25) and by
//! its sentence vectors, skills the query names, skills used in sessions but missing from the
//! catalog, then use counts, ranking and the reasons each skill matched.

use std::collections::HashSet;
use std::sync::Arc;

use rusqlite::{params, Connection};

use super::skill_index::{SkillIndex, SkillIndexError};
use super::{use_filter, AgentKnowledgeError, AgentKnowledgeStore, SkillRow, USED_BY_MAX};
use crate::sources::agent_knowledge::uses::split_skill_name;
use crate::sources::lexical::TermGroup;
use crate::text::encoder::DIMS;
use crate::text::tokens;

type UsedBy = Vec<(String, String, u64)>;

/// What skill search is asked.
#[derive(Debug, Clone, Copy, Default)]
pub struct SkillSearch<'a> {
    /// Stemmed query terms, the question's own and their cross-lingual expansions.
    pub terms: &'a [String],
    /// The question's own terms (the rest of `terms` weigh less: [`EXPANSION_WEIGHT`]); empty:
    /// every term is the question's own.
    pub own_terms: &'a [String],
    /// The question's sentence vector (`None`: semantic search is off or has no encoder).
    pub sentence: Option<&'a [f32; DIMS]>,
    /// Only these skills (and with no terms, every one of them).
    pub filter: &'a [String],
    pub limit: usize,
}

/// The weight of a cross-lingual expansion term against a question's own term, as in the
/// episodes lane (`episodes::lexical_arm`).
const EXPANSION_WEIGHT: f32 = 0.5;

/// A skill whose cosine to the question stands this far above the catalog's mean cosine to it is
/// evidence on its own; a lower one neither finds a skill nor lifts it. Relative, not absolute:
/// the encoder's cosines of related texts are low (0.2–0.4) and shift with the question, and a
/// question about nothing in the catalog has no skill standing out. Chosen on the tuning split
/// (docs/RANKING.md, "Skills").
const SEMANTIC_FLOOR: f32 = 0.10;

/// How much a skill's nearness (its lead over the mean above the floor, scaled to 0..1) adds to
/// its words' share of the best BM25 (0..1). Chosen on the tuning split.
const SEMANTIC_WEIGHT: f64 = 1.0;

impl AgentKnowledgeStore {
    /// Skills for the question (BM25 over name, description, when_to_use and tags, plus the
    /// nearness of each skill's sentence vector), plus skills the query names. A skill the query
    /// names ranks first, by uses; the rest by relevance, then uses. A non-empty filter keeps
    /// only those skills (and with no terms, lists them).
    pub fn search_skills(&self, s: &SkillSearch<'_>) -> Result<Vec<SkillRow>, AgentKnowledgeError> {
        let terms: Vec<String> = s
            .terms
            .iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
        if s.limit == 0 || (terms.is_empty() && s.filter.is_empty()) {
            return Ok(Vec::new());
        }
        let own: HashSet<&str> = s.own_terms.iter().map(String::as_str).collect();
        let q = SkillQuery {
            terms: &terms,
            term_set: terms.iter().map(String::as_str).collect(),
            own,
            sentence: s.sentence,
            filter: s.filter,
        };
        let found = self.with_conn(|c| {
            let index = match self.skill_index(c) {
                Ok(index) => index,
                Err(SkillIndexError::Store(e)) => return Err(e),
                Err(e) => return Ok(Err(e)),
            };
            let mut out = catalogued(c, &index, &q)?;
            out.extend(uncatalogued(c, &q)?);
            count_uses(c, &mut out)?;
            rank(&mut out);
            out.truncate(s.limit);
            explain(c, &mut out)?;
            Ok(Ok(out))
        })?;
        found.map_err(|source| AgentKnowledgeError::SkillIndex {
            path: self.path.clone(),
            source,
        })
    }

    /// The catalog's index for the store `c` reads: made on first use and again when the store
    /// was rebuilt (another `index_rev`). Read through the search's own connection, so the index
    /// and the rows it is checked against are of one store even while the builder replaces it.
    fn skill_index(&self, c: &Connection) -> Result<Arc<SkillIndex>, SkillIndexError> {
        let rev = super::schema::meta_get(c, "index_rev");
        let mut slot = self
            .skill_index
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(index) = slot.as_ref().filter(|i| i.rev == rev && rev.is_some()) {
            return Ok(index.clone());
        }
        let index = Arc::new(SkillIndex::make(c, rev)?);
        *slot = Some(index.clone());
        Ok(index)
    }
}

/// The query as skill search reads it.
struct SkillQuery<'a> {
    terms: &'a [String],
    term_set: HashSet<&'a str>,
    own: HashSet<&'a str>,
    sentence: Option<&'a [f32; DIMS]>,
    filter: &'a [String],
}

impl SkillQuery<'_> {
    /// The query names the skill: every term of the name is a query term.
    fn names(&self, name: &str) -> bool {
        let nt = tokens::query_terms(name);
        !nt.is_empty() && nt.iter().all(|t| self.term_set.contains(t.as_str()))
    }

    /// The skills filter (if any) lets the skill through.
    fn admits(&self, name: &str, qualified: &str) -> bool {
        self.filter.is_empty()
            || self.filter.iter().any(|f| {
                let f = f.trim().trim_start_matches('/').to_lowercase();
                let (fp, fb) = split_skill_name(&f);
                f == name.to_lowercase()
                    || f == qualified.to_lowercase()
                    || (fp.is_none() && fb == name.to_lowercase())
            })
    }

    /// Each term a group of its own: the question's own at full weight, an expansion at
    /// [`EXPANSION_WEIGHT`].
    fn groups(&self) -> Vec<TermGroup> {
        self.terms
            .iter()
            .map(|t| TermGroup {
                terms: vec![t.clone()],
                weight: if self.own.is_empty() || self.own.contains(t.as_str()) {
                    1.0
                } else {
                    EXPANSION_WEIGHT
                },
            })
            .collect()
    }
}

/// A skill's relevance from its BM25 (`bm25`, of the best `best_bm25`) and its cosine's lead
/// over the catalog's mean: its words' share of the best match plus its nearness above the floor.
fn relevance(bm25: f64, best_bm25: f64, lead: Option<f32>) -> f64 {
    let words = if best_bm25 > 0.0 {
        bm25 / best_bm25
    } else {
        0.0
    };
    let near = lead.map_or(0.0, |l| {
        f64::from(((l - SEMANTIC_FLOOR) / (1.0 - SEMANTIC_FLOOR)).max(0.0))
    });
    words + SEMANTIC_WEIGHT * near
}

/// Catalog skills that match (by BM25 or by name; every one when there are no terms) and pass
/// the filter, in catalog order.
fn catalogued(
    c: &Connection,
    index: &SkillIndex,
    q: &SkillQuery<'_>,
) -> rusqlite::Result<Vec<SkillRow>> {
    // The index was made from this store's rows; one it cannot search ranks by name alone.
    let bm = index.bm25(q.groups()).unwrap_or_default();
    let best_bm25 = bm.values().copied().fold(0.0, f64::max);
    let cosines = q.sentence.map(|v| index.cosines(v)).unwrap_or_default();
    let mean = match cosines.len() {
        0 => 0.0,
        n => cosines.values().sum::<f32>() / n as f32,
    };
    let mut out = Vec::new();
    let mut stmt = c.prepare_cached(
        "SELECT id, name, qualified_name, path, description, when_to_use, content_hash,
                plugin, tags FROM ak_skill ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let name: String = r.get(1)?;
        let qualified: String = r.get(2)?;
        let named = q.names(&qualified) || q.names(&name);
        let score = bm.get(&id).copied().unwrap_or(0.0);
        let cosine = cosines.get(&id).copied();
        let lead = cosine.map(|c| c - mean);
        let near = lead.is_some_and(|l| l >= SEMANTIC_FLOOR);
        let wanted =
            (score > 0.0 || near || named || q.terms.is_empty()) && q.admits(&name, &qualified);
        if !wanted {
            continue;
        }
        let tags: String = r.get(8)?;
        out.push(SkillRow {
            name,
            qualified_name: qualified,
            path: r.get(3)?,
            description: r.get(4)?,
            when_to_use: r.get(5)?,
            content_hash: r.get(6)?,
            plugin: r.get(7)?,
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            catalogued: true,
            bm25: score,
            cosine: cosine.filter(|_| near),
            relevance: relevance(score, best_bm25, lead),
            named,
            uses: 0,
            used_by: Vec::new(),
            why: Vec::new(),
        });
    }
    Ok(out)
}

/// Skills used in sessions that the catalog does not have, when the query names them or the
/// filter asks for them.
fn uncatalogued(c: &Connection, q: &SkillQuery<'_>) -> rusqlite::Result<Vec<SkillRow>> {
    let mut stmt = c.prepare_cached(
        "SELECT max(skill_name) FROM ak_skill_use GROUP BY skill_base, skill_plugin
         ORDER BY 1",
    )?;
    let used: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let in_catalog: Vec<(Option<String>, String)> = {
        let mut s = c.prepare_cached("SELECT plugin, name FROM ak_skill")?;
        let v = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        v.collect::<Result<_, _>>()?
    };
    let mut out = Vec::new();
    for name in used {
        let (up, ub) = split_skill_name(&name);
        let catalogued = in_catalog.iter().any(|(p, n)| {
            n.to_lowercase() == ub
                && (p.is_none() || up.is_none() || p.as_deref().map(str::to_lowercase) == up)
        });
        let named = q.names(&name);
        let wanted = !catalogued && (named || !q.filter.is_empty()) && q.admits(&name, &name);
        if !wanted {
            continue;
        }
        out.push(SkillRow {
            name: ub.clone(),
            qualified_name: name.clone(),
            path: String::new(),
            description: String::new(),
            when_to_use: None,
            content_hash: String::new(),
            plugin: up,
            tags: Vec::new(),
            catalogued: false,
            bm25: 0.0,
            cosine: None,
            relevance: 0.0,
            named,
            uses: 0,
            used_by: Vec::new(),
            why: vec!["not in the skill catalog".to_string()],
        });
    }
    Ok(out)
}

/// Use counts of every spelling, read once, then matched per row in memory.
fn count_uses(c: &Connection, out: &mut [SkillRow]) -> rusqlite::Result<()> {
    let mut stmt = c.prepare_cached(
        "SELECT skill_base, skill_plugin, lower(skill_name), count(*) FROM ak_skill_use
         GROUP BY 1, 2, 3",
    )?;
    let counts: Vec<(String, Option<String>, String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    for row in out {
        row.uses = counts
            .iter()
            .filter(|(b, p, n, _)| use_matches(&row.qualified_name, b, p.as_deref(), n))
            .map(|c| c.3.max(0) as u64)
            .sum();
    }
    Ok(())
}

/// Named skills first, by uses; the rest by relevance, then uses; ties by name and path.
fn rank(out: &mut [SkillRow]) {
    out.sort_by(|a, b| {
        let primary = if a.named && b.named {
            b.uses
                .cmp(&a.uses)
                .then(b.relevance.total_cmp(&a.relevance))
        } else {
            b.relevance
                .total_cmp(&a.relevance)
                .then(b.uses.cmp(&a.uses))
        };
        b.named
            .cmp(&a.named)
            .then(primary)
            .then_with(|| a.qualified_name.cmp(&b.qualified_name))
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// Who used each skill most recently, and why it matched (name, BM25, meaning, uses, then any
/// note).
fn explain(c: &Connection, out: &mut [SkillRow]) -> rusqlite::Result<()> {
    for row in out {
        if row.uses > 0 {
            row.used_by = used_by(c, &row.qualified_name)?;
        }
        let mut why = Vec::new();
        if row.named {
            why.push(format!("name: {}", row.qualified_name));
        }
        if row.bm25 > 0.0 {
            why.push(format!("bm25: {:.2}", row.bm25));
        }
        if let Some(c) = row.cosine {
            why.push(format!("meaning: {c:.2}"));
        }
        if row.uses > 0 {
            why.push(format!("uses: {}", row.uses));
        }
        why.append(&mut row.why);
        row.why = why;
    }
    Ok(())
}

/// The in-memory twin of [`use_filter`]: does a recorded use (`base`, `plugin`, lowercased
/// `name`) count for the skill named `q`?
fn use_matches(q: &str, base: &str, plugin: Option<&str>, name: &str) -> bool {
    let (qp, qb) = split_skill_name(q);
    match qp {
        Some(_) => {
            name == q.trim().trim_start_matches('/').to_lowercase()
                || (base == qb && plugin.is_none())
        }
        None => base == qb,
    }
}

/// (actor_id, session_id, seq) of the most recent uses of the skill named `q`.
fn used_by(c: &Connection, q: &str) -> rusqlite::Result<UsedBy> {
    let (cond, args) = use_filter(q);
    let mut stmt = c.prepare_cached(&format!(
        "SELECT actor_id, session_id, seq FROM ak_skill_use WHERE {cond}
         ORDER BY time_ms IS NULL, time_ms DESC, session_id DESC, seq DESC LIMIT {USED_BY_MAX}"
    ))?;
    let rows = stmt.query_map(params![args[0], args[1]], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.max(0) as u64))
    })?;
    rows.collect()
}
