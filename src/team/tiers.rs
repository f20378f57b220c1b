//! Bounded matching for the team index: the `tsquery` tiers of a query's terms, shaped so that
//! PostgreSQL never ranks an unbounded number of rows.
//!
//! `ts_rank` scores every row a `tsquery` matches and cannot prune, so a plain `a | b | c` over
//! words that each occur in a tenth of a million events would score hundreds of thousands of
//! rows. When the terms' document frequencies (PostgreSQL's statistics) add up to more than a
//! cap, a tier keeps every rare term as an alternative and requires the common ones together:
//! all of them, or all but one. Rows that match only one common word are the ones the ranking
//! would put last anyway. (The local indexes left this for Tantivy, which ranks a disjunction
//! with per-term statistics and block-max WAND: docs/RANKING.md, "Lexical engine".)

/// Rows the ranking may score for one query before the match is narrowed.
pub const DEFAULT_CAP: u64 = 15_000;

/// One tier of a bounded match: any of `any`, or all the terms of one of `together`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tier {
    pub any: Vec<String>,
    pub together: Vec<Vec<String>>,
}

impl Tier {
    /// The tier in a query language: each term through `quote`, alternatives joined by `or`,
    /// terms required together by `and` (inside parentheses).
    pub fn render(&self, quote: &dyn Fn(&str) -> String, or: &str, and: &str) -> String {
        let mut parts: Vec<String> = self.any.iter().map(|t| quote(t)).collect();
        for group in &self.together {
            let inner: Vec<String> = group.iter().map(|t| quote(t)).collect();
            parts.push(format!("({})", inner.join(and)));
        }
        parts.join(or)
    }

    /// The tier's terms in the order [`Tier::render`] writes them.
    pub fn phrases(&self) -> impl Iterator<Item = &str> {
        self.any
            .iter()
            .chain(self.together.iter().flatten())
            .map(String::as_str)
    }
}

/// The tiers for `terms` whose document frequencies are `dfs` (0: the term matches nothing),
/// bounded by `cap`, narrowest first; none when no term matches.
pub fn bounded_tiers(terms: &[String], dfs: &[u64], cap: u64) -> Vec<Tier> {
    let mut known: Vec<(&String, u64)> = terms
        .iter()
        .zip(dfs.iter().copied())
        .filter(|(_, df)| *df > 0)
        .collect();
    if known.is_empty() {
        return Vec::new();
    }
    let total: u64 = known.iter().map(|(_, df)| df).sum();
    let tier = |any: Vec<String>, together: Vec<Vec<String>>| Tier { any, together };
    if total <= cap || known.len() == 1 {
        return vec![tier(
            known.iter().map(|(t, _)| t.to_string()).collect(),
            vec![],
        )];
    }
    known.sort_by_key(|(_, df)| *df);
    let mut rare: Vec<String> = Vec::new();
    let mut budget = cap / 2;
    let mut common: Vec<String> = Vec::new();
    for (t, df) in &known {
        if *df <= budget {
            budget -= df;
            rare.push(t.to_string());
        } else {
            common.push(t.to_string());
        }
    }
    let all_but = |skip: Option<usize>| -> Vec<String> {
        common
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != skip)
            .map(|(_, t)| t.clone())
            .collect()
    };
    match common.len() {
        0 => vec![tier(rare, vec![])],
        1 if rare.is_empty() => vec![tier(common, vec![])],
        1 => vec![tier(rare, vec![])],
        n => {
            let first = tier(rare.clone(), vec![all_but(None)]);
            let mut tiers = vec![first.clone()];
            if n >= 3 {
                let mut wider = first;
                for i in 0..n.min(8) {
                    wider.together.push(all_but(Some(i)));
                }
                tiers.push(wider);
            }
            tiers
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(ts: &[&str]) -> Vec<String> {
        ts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn under_the_cap_every_known_term_is_an_alternative() {
        let tiers = bounded_tiers(&terms(&["a", "d", "zz"]), &[2, 1, 0], 100);
        assert_eq!(tiers.len(), 1);
        let quote = |t: &str| format!("'{t}'");
        assert_eq!(tiers[0].render(&quote, " | ", " & "), "'a' | 'd'");
        assert!(bounded_tiers(&terms(&["zz"]), &[0], 100).is_empty());
    }

    #[test]
    fn common_terms_are_required_together_and_rare_ones_stay() {
        let t = terms(&["common", "other", "third", "rare"]);
        let tiers = bounded_tiers(&t, &[46, 46, 5, 1], 10);
        let quote = |t: &str| t.to_string();
        let first = tiers[0].render(&quote, " | ", " & ");
        assert!(first.starts_with("rare | ("), "{first}");
        assert!(first.contains("common & other"), "{first}");
        // With three common terms a wider tier allows all but one of them.
        assert_eq!(tiers.len(), 2, "{tiers:?}");
        assert!(tiers[1].together.len() > tiers[0].together.len());
        assert_eq!(
            tiers[1].phrases().filter(|p| *p == "rare").count(),
            1,
            "a rare term stays an alternative"
        );
    }
}
