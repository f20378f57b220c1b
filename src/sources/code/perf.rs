//! A latency check of the code lane at the contract's scale (10k chunks, P95 ≤ 15 ms per
//! search). Ignored by default because it builds a 500-file repository; run it with
//! `cargo test --lib sources::code::perf -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use super::{index_code, CodeIndexOptions, CodeQuery, CodeStore};
use crate::text::tokens::query_terms;

const WORDS: [&str; 16] = [
    "invoice",
    "customer",
    "mysql",
    "connection",
    "payment",
    "refund",
    "cart",
    "session",
    "token",
    "cache",
    "deploy",
    "backup",
    "report",
    "ledger",
    "tax",
    "currency",
];

#[test]
#[ignore]
fn search_p95_at_10k_chunks() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("src")).unwrap();
    for f in 0..500 {
        let mut body = String::new();
        for k in 0..20 {
            let a = WORDS[(f + k) % WORDS.len()];
            let b = WORDS[(f * 7 + k * 3) % WORDS.len()];
            body.push_str(&format!(
                "/// {a} {b} helper number {k}.\npub fn {a}_{b}_{f}_{k}(x: u32) -> u32 {{\n    let {b} = x + {k};\n    {b} * 2\n}}\n\n"
            ));
        }
        std::fs::write(repo.path().join(format!("src/m{f}.rs")), body).unwrap();
    }
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("code.sqlite");
    let t = Instant::now();
    let opts = CodeIndexOptions::default();
    let s = index_code(&db, &[repo.path().to_path_buf()], &opts, &mut |_| {}).unwrap();
    eprintln!("indexed {} chunks in {:?}", s.chunks, t.elapsed());
    assert!(s.chunks >= 10_000);
    let store = CodeStore::open(&db).unwrap();
    let mut times = Vec::new();
    for i in 0..200 {
        let q = CodeQuery {
            terms: query_terms(&format!("{} {}", WORDS[i % 16], WORDS[(i * 5 + 1) % 16])),
            limit: 10,
            snippet_chars: 240,
            ..CodeQuery::default()
        };
        let t = Instant::now();
        let r = store.search(&q).unwrap();
        times.push(t.elapsed());
        assert!(!r.hits.is_empty());
    }
    times.sort();
    let p95 = times[times.len() * 95 / 100];
    eprintln!("p50 {:?} p95 {:?}", times[times.len() / 2], p95);
    assert!(p95 < Duration::from_millis(15), "p95 {p95:?}");
}
