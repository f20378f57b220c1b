//! How many common Russian words of developer talk reach their English translation through the
//! embedding table (`cargo bench --bench vocabulary`). Issue 19: a Russian question must never
//! lose a content word, so each word of `benches/vocabulary/ru_dev_words.txt` (2,000 forms,
//! written by hand, not from the fixtures, the relevance questions or a frequency list) is
//! looked up as an indexed text or a query would be, and its nearest English rows are compared
//! with the translations a person would accept.
//!
//! Printed per source of the word's vector (own row, Russian stem row, pieces only): the share
//! whose 3 nearest English rows hold an accepted translation (compared as search terms, so
//! `errors` accepts `error`), and the share the cross-lingual expansion would actually add (the
//! same at its cosine threshold).

use std::collections::{BTreeMap, HashSet};

use knowledge::text::embed::{self, WordSource, EXPAND_MIN_COSINE, EXPAND_PER_WORD};
use knowledge::text::tokens::query_terms;

const WORDS: usize = 2000;

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/vocabulary/ru_dev_words.txt"
    );
    let text = std::fs::read_to_string(path).expect("read ru_dev_words.txt");
    let mut seen = HashSet::new();
    let mut words: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((ru, en)) = line.split_once('=') else {
            continue;
        };
        let accepted: Vec<String> = en.split_whitespace().flat_map(query_terms).collect();
        for w in ru.split_whitespace() {
            if words.len() < WORDS && seen.insert(w.to_string()) {
                words.push((w.to_string(), accepted.clone()));
            }
        }
    }
    assert_eq!(words.len(), WORDS, "the list holds {WORDS} distinct forms");
    let e = embed::shared().expect("the compiled-in table parses");
    let verbose = std::env::var_os("KNOWLEDGE_VOCABULARY_VERBOSE").is_some();
    // source -> (words, nearest-3 hits, expansion hits)
    let mut by: BTreeMap<WordSource, (usize, usize, usize)> = BTreeMap::new();
    for (w, accepted) in &words {
        let source = e.word_source(w);
        let hit = |near: &[(&str, f32)]| {
            near.iter()
                .any(|(en, _)| query_terms(en).iter().any(|t| accepted.contains(t)))
        };
        let (near, expanded) = match e.word_vector(w) {
            Some(v) => (
                e.english_neighbours(&v, 3, -1.0),
                e.english_neighbours(&v, EXPAND_PER_WORD, EXPAND_MIN_COSINE),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let t = by.entry(source).or_default();
        t.0 += 1;
        t.1 += usize::from(hit(&near));
        t.2 += usize::from(hit(&expanded));
        if verbose && !hit(&near) {
            println!("miss {w:<20} {source:?} {near:?}");
        }
    }
    println!("vocabulary: {WORDS} Russian words of developer talk");
    println!(
        "{:<8} {:>6} {:>7} {:>10}",
        "source", "words", "top-3", "expansion"
    );
    let mut all = (0, 0, 0);
    for (source, (n, near, expanded)) in &by {
        println!(
            "{:<8} {:>6} {:>7.3} {:>10.3}",
            format!("{source:?}"),
            n,
            *near as f64 / *n as f64,
            *expanded as f64 / *n as f64
        );
        all = (all.0 + n, all.1 + near, all.2 + expanded);
    }
    println!(
        "{:<8} {:>6} {:>7.3} {:>10.3}",
        "all",
        all.0,
        all.1 as f64 / all.0 as f64,
        all.2 as f64 / all.0 as f64
    );
}
