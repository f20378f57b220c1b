//! The privacy audit of L3: does any text column of `knowledge.sqlite` repeat session text?
//!
//! L3 may hold ids, locators, names, tags, outcomes, counts and catalog text, never what was said
//! in a session (contract §5.3). This scans every text column of every table (FTS shadow tables
//! included) for any run of [`WINDOW`] bytes that also occurs in an event text, a session title or
//! an agent description of `episodes.sqlite`. Locators (paths and ids) may legitimately repeat
//! what a transcript says (`Edit /w/app/src/db.rs`), so hits in those columns are reported as
//! such. Event texts are streamed, so the scan runs on stores of any size.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::{schema, AgentKnowledgeError};

/// Length of the shared run that counts as repeated text (bytes, so at most 40 chars).
pub const WINDOW: usize = 40;

/// Columns that hold locators (paths and ids), which may repeat transcript text.
pub const LOCATOR_COLUMNS: &[&str] = &[
    "path",
    "abs_path",
    "rel_path",
    "session_id",
    "root_session",
    "actor_id",
];

/// One L3 value that shares a [`WINDOW`]-byte run with session text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedText {
    /// `table.column`.
    pub column: String,
    /// The shared run (lossy UTF-8).
    pub shared: String,
    /// The column is a locator column.
    pub locator: bool,
}

const BASE: u64 = 1_000_003;

fn hash(w: &[u8]) -> u64 {
    w.iter()
        .fold(0u64, |h, &b| h.wrapping_mul(BASE).wrapping_add(b as u64))
}

/// Finds, for each of `values`, the first run of `window` bytes that also occurs in a text fed
/// to [`Scanner::feed`] (Rabin–Karp over the texts, exact comparison on a hash hit).
pub struct Scanner<'a> {
    values: &'a [(String, String)],
    window: usize,
    pow: u64,
    by_hash: HashMap<u64, Vec<(usize, usize)>>,
    found: HashSet<usize>,
    hits: Vec<(usize, usize)>,
}

impl<'a> Scanner<'a> {
    pub fn new(values: &'a [(String, String)], window: usize) -> Self {
        let window = window.max(1);
        let mut by_hash: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
        for (i, (_, v)) in values.iter().enumerate() {
            let b = v.as_bytes();
            for at in 0..b.len().saturating_sub(window - 1) {
                by_hash
                    .entry(hash(&b[at..at + window]))
                    .or_default()
                    .push((i, at));
            }
        }
        Scanner {
            values,
            window,
            pow: (1..window).fold(1u64, |p, _| p.wrapping_mul(BASE)),
            by_hash,
            found: HashSet::new(),
            hits: Vec::new(),
        }
    }

    pub fn feed(&mut self, text: &[u8]) {
        let w = self.window;
        if text.len() < w || self.by_hash.is_empty() {
            return;
        }
        let mut h = hash(&text[..w]);
        for at in 0..=text.len() - w {
            if at > 0 {
                h = h
                    .wrapping_sub((text[at - 1] as u64).wrapping_mul(self.pow))
                    .wrapping_mul(BASE)
                    .wrapping_add(text[at + w - 1] as u64);
            }
            let Some(cands) = self.by_hash.get(&h) else {
                continue;
            };
            for &(i, off) in cands {
                if self.found.contains(&i) {
                    continue;
                }
                if self.values[i].1.as_bytes().get(off..off + w) == text.get(at..at + w) {
                    self.found.insert(i);
                    self.hits.push((i, off));
                }
            }
        }
    }

    /// (value index, byte offset of the shared run), in the order found.
    pub fn hits(&self) -> &[(usize, usize)] {
        &self.hits
    }
}

/// Every text value of every table, as (`table.column`, value).
pub fn text_values(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")?;
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for t in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{}\"", t.replace('"', "\"\"")))?;
        let cols: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            for (i, col) in cols.iter().enumerate() {
                if let ValueRef::Text(b) = r.get_ref(i)? {
                    out.push((format!("{t}.{col}"), String::from_utf8_lossy(b).to_string()));
                }
            }
        }
    }
    Ok(out)
}

/// L3 values that repeat session text (see the module docs).
pub fn shared_session_text(
    knowledge_db: &Path,
    episodes_db: &Path,
) -> Result<Vec<SharedText>, AgentKnowledgeError> {
    let k = schema::open_ro(knowledge_db).map_err(|source| AgentKnowledgeError::Sql {
        path: knowledge_db.to_path_buf(),
        source,
    })?;
    let values = text_values(&k).map_err(|source| AgentKnowledgeError::Sql {
        path: knowledge_db.to_path_buf(),
        source,
    })?;
    let mut scanner = Scanner::new(&values, WINDOW);
    let ep_err = |source| AgentKnowledgeError::Episodes {
        path: episodes_db.to_path_buf(),
        source,
    };
    let e = schema::open_ro(episodes_db).map_err(ep_err)?;
    for sql in [
        "SELECT text FROM events",
        "SELECT title FROM sessions WHERE title IS NOT NULL",
        "SELECT agent_description FROM sessions WHERE agent_description IS NOT NULL",
    ] {
        let mut stmt = e.prepare(sql).map_err(ep_err)?;
        let mut rows = stmt.query([]).map_err(ep_err)?;
        while let Some(r) = rows.next().map_err(ep_err)? {
            if let ValueRef::Text(b) = r.get_ref(0).map_err(ep_err)? {
                scanner.feed(b);
            }
        }
    }
    Ok(scanner
        .hits()
        .iter()
        .map(|&(i, off)| {
            let (column, value) = &values[i];
            let col = column.rsplit('.').next().unwrap_or("");
            SharedText {
                column: column.clone(),
                shared: String::from_utf8_lossy(
                    value.as_bytes().get(off..off + WINDOW).unwrap_or(b""),
                )
                .to_string(),
                locator: LOCATOR_COLUMNS.contains(&col),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_shared_run_and_only_that() {
        let values = vec![
            ("t.a".to_string(), "xx0123456789abcdefghij".to_string()),
            ("t.b".to_string(), "nothing shared here at all".to_string()),
            ("t.c".to_string(), "short".to_string()),
        ];
        let mut s = Scanner::new(&values, 10);
        s.feed(b"prefix 0123456789abc suffix");
        s.feed(b"0123456789");
        assert_eq!(s.hits(), &[(0, 2)]);
        let mut none = Scanner::new(&values, 10);
        none.feed(b"0123456 789abcdef");
        assert!(none.hits().is_empty());
    }
}
