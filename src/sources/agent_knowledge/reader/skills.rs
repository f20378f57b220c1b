//! Skill search over the agent-knowledge store: BM25 over the catalog, skills the query names,
//! skills used in sessions but missing from the catalog, then use counts, ranking and the
//! reasons each skill matched.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, Connection};

use super::{use_filter, AgentKnowledgeError, AgentKnowledgeStore, SkillRow, USED_BY_MAX};
use crate::sources::agent_knowledge::uses::split_skill_name;
use crate::text::tokens;

type UsedBy = Vec<(String, String, u64)>;

impl AgentKnowledgeStore {
    /// Skills for stemmed query `terms` (BM25 over name, description, when_to_use and tags),
    /// plus skills the query names. A skill the query names ranks first, by uses; the rest by
    /// BM25, then uses. A non-empty `skills_filter` keeps only those skills (and with no terms,
    /// lists them).
    pub fn search_skills(
        &self,
        terms: &[String],
        skills_filter: &[String],
        limit: usize,
    ) -> Result<Vec<SkillRow>, AgentKnowledgeError> {
        let terms: Vec<String> = terms
            .iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
        if limit == 0 || (terms.is_empty() && skills_filter.is_empty()) {
            return Ok(Vec::new());
        }
        let q = SkillQuery {
            terms: &terms,
            term_set: terms.iter().map(String::as_str).collect(),
            filter: skills_filter,
        };
        self.with_conn(|c| {
            let mut out = catalogued(c, &q)?;
            out.extend(uncatalogued(c, &q)?);
            count_uses(c, &mut out)?;
            rank(&mut out);
            out.truncate(limit);
            explain(c, &mut out)?;
            Ok(out)
        })
    }
}

/// The query as skill search reads it.
struct SkillQuery<'a> {
    terms: &'a [String],
    term_set: HashSet<&'a str>,
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
}

/// BM25 of the catalog entries the terms match, by row id (higher is better).
fn bm25_scores(c: &Connection, terms: &[String]) -> rusqlite::Result<HashMap<i64, f64>> {
    let mut bm = HashMap::new();
    if let Some(expr) = tokens::fts_match_expr(terms) {
        let mut stmt = c.prepare_cached(
            "SELECT rowid, -bm25(ak_skill_fts, 4.0, 1.0, 2.0, 1.0) FROM ak_skill_fts
             WHERE ak_skill_fts MATCH ?1 ORDER BY bm25(ak_skill_fts, 4.0, 1.0, 2.0, 1.0)
             LIMIT 500",
        )?;
        let rows = stmt.query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))?;
        for row in rows {
            let (id, score) = row?;
            bm.insert(id, score);
        }
    }
    Ok(bm)
}

/// Catalog skills that match (by BM25 or by name; every one when there are no terms) and pass
/// the filter, in catalog order.
fn catalogued(c: &Connection, q: &SkillQuery<'_>) -> rusqlite::Result<Vec<SkillRow>> {
    let bm = bm25_scores(c, q.terms)?;
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
        let wanted = (score > 0.0 || named || q.terms.is_empty()) && q.admits(&name, &qualified);
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

/// Named skills first, by uses; the rest by BM25, then uses; ties by name and path.
fn rank(out: &mut [SkillRow]) {
    out.sort_by(|a, b| {
        let primary = if a.named && b.named {
            b.uses.cmp(&a.uses).then(b.bm25.total_cmp(&a.bm25))
        } else {
            b.bm25.total_cmp(&a.bm25).then(b.uses.cmp(&a.uses))
        };
        b.named
            .cmp(&a.named)
            .then(primary)
            .then_with(|| a.qualified_name.cmp(&b.qualified_name))
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// Who used each skill most recently, and why it matched (name, BM25, uses, then any note).
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
