//! Issue 33's spike (run with `cargo bench --bench lexical_spike`): would Tantivy rank the
//! episodes lane's lexical arm better and faster than today's bounded FTS5? Not product code: the
//! product keeps FTS5 until these figures say otherwise (`docs/RANKING.md`, "Lexical engine").
//!
//! Both arms index the same terms: the project's own token stream (`tokens::index_text` of each
//! stored event's text and tool name, exactly what `events_fts` holds), split on what is not a
//! letter or digit as FTS5's `unicode61` does. Both answer the same query terms: the question's
//! own terms plus the cross-lingual English terms of its Russian words (`embed::prepare_query`).
//!
//! - **FTS5**: `EpisodeStore::search` with no vector: today's lexical arm as the product runs it
//!   (bounded matching, `kbm25`, the per-session cap).
//! - **Tantivy** (0.27, MIT; a dev-dependency only): a disjunction of every term, BM25, top 200
//!   by block-max WAND; an expansion term weighs [`EXPANSION_WEIGHT`] of a question's own term.
//!
//! Relevance: R@1, R@5 and MRR of the first accepted session, per question set (tuning and
//! held-out files of `benches/relevance/`) and kind, over the worlds the relevance bench
//! indexes (the bundled demo and `../shared/realdata`, skipped with a note where absent).
//! Speed: index time and size, warm query P50/P95, and a fresh open + query as a one-shot call
//! pays it (process start aside). `LEXICAL_SPIKE_SCALE=10x` adds the 10× world of
//! `search_bench` (2,000 sessions ≈ 1.08M events, generated once under `target/lexical-spike`
//! and kept), asked every question of the sets, for speed only.

#[path = "relevance/model.rs"]
#[allow(dead_code)]
mod model;
#[path = "support/synth.rs"]
#[allow(dead_code)]
mod synth;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use knowledge::demo;
use knowledge::indexing::{index_all, IndexPlan};
use knowledge::sources::episodes::search::{EpisodeQuery, EpisodeStore};
use knowledge::text::{embed, tokens};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST, STORED,
};
use tantivy::tokenizer::{LowerCaser, SimpleTokenizer, TextAnalyzer, TokenStream};
use tantivy::{Index, IndexReader, TantivyDocument, Term};

/// The weight of a cross-lingual expansion term against a question's own term.
const EXPANSION_WEIGHT: f32 = 0.5;
/// Events asked of each arm (both then keep the first event of each session, in order).
const DEPTH: usize = 200;
const TOKENIZER: &str = "knowledge";

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let work = manifest.join("target/lexical-spike");
    std::fs::create_dir_all(&work).expect("work dir");
    let mut questions = Vec::new();
    for (file, set) in model::SETS {
        let path = manifest.join("benches/relevance").join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            println!("lexical_spike: {file} is absent, skipped");
            continue;
        };
        questions.extend(model::parse(&text, set).unwrap_or_else(|e| panic!("{file}: {e}")));
    }
    println!("load average {}", load());

    let demo_data = work.join("demo-data");
    let world = demo::materialize(&demo::bundled_world(), &work.join("demo-world"))
        .expect("materialise the demo world");
    index(&demo_data, &world.plan());
    let mut worlds: Vec<(&str, World)> = vec![("demo", World::open("demo", &demo_data))];
    match realdata(&manifest) {
        Some(root) => {
            let data = work.join("real-data");
            let existing = |p: PathBuf| p.exists().then_some(p);
            index(
                &data,
                &IndexPlan {
                    sessions: vec![root.join("claude"), root.join("codex")],
                    code: Vec::new(),
                    skills: existing(root.join("skills")).into_iter().collect(),
                    agents: existing(root.join("agents")).into_iter().collect(),
                    rebuild: false,
                },
            );
            worlds.push(("real", World::open("real", &data)));
        }
        None => println!("lexical_spike: ../shared/realdata is absent: its questions are skipped"),
    }

    let mut tally: BTreeMap<(String, &str), Tally> = BTreeMap::new();
    let mut times: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for q in questions.iter().filter(|q| !q.episodes.is_empty()) {
        let Some((_, w)) = worlds.iter().find(|(name, _)| *name == q.world) else {
            continue;
        };
        let terms = Terms::of(&q.query);
        for arm in ARMS {
            let started = Instant::now();
            let sessions = w.sessions(arm, &terms);
            times.entry(arm).or_default().push(ms(started));
            let rank = sessions
                .iter()
                .position(|s| q.episodes.iter().any(|l| s.starts_with(l.as_str())))
                .map(|i| i + 1);
            for group in [
                format!("{} all", q.set),
                format!("{} kind {}", q.set, q.kind),
                format!("{} lang {}", q.set, q.lang),
            ] {
                tally.entry((group, arm)).or_default().add(rank);
            }
            if std::env::var_os("LEXICAL_SPIKE_VERBOSE").is_some() {
                println!("  {arm:8} {:<40} {rank:?}", q.id);
            }
        }
    }
    println!("\nlexical arm alone, first accepted session (R@1 / R@5 / MRR, n questions)");
    println!("{:<34} {:>24} {:>24}", "group", "fts5", "tantivy");
    let groups: Vec<String> = tally.keys().map(|(g, _)| g.clone()).collect();
    let mut seen = Vec::new();
    for g in groups {
        if seen.contains(&g) {
            continue;
        }
        seen.push(g.clone());
        let cell = |arm: &str| tally.get(&(g.clone(), arm)).map_or("-".into(), Tally::show);
        println!("{g:<34} {:>24} {:>24}", cell("fts5"), cell("tantivy"));
    }
    for (arm, t) in &times {
        println!(
            "{arm}: warm query over the relevance worlds {}",
            percentiles(t.clone())
        );
    }
    for (name, w) in &worlds {
        w.report(name);
    }
    if std::env::var("LEXICAL_SPIKE_SCALE").as_deref() == Ok("10x") {
        ten_x(&work.join("10x"), &questions);
    }
    println!("load average {}", load());
}

const ARMS: [&str; 2] = ["fts5", "tantivy"];

/// A question's terms as the episodes lane receives them.
struct Terms {
    all: Vec<String>,
    own: Vec<String>,
}

impl Terms {
    fn of(query: &str) -> Terms {
        let own = tokens::query_terms(query);
        let mut all = own.clone();
        let _ = embed::prepare_query(query, &mut all);
        Terms { all, own }
    }
}

/// One indexed world with both arms over its episodes store.
struct World {
    fts: EpisodeStore,
    tantivy: Tantivy,
    index_s: f64,
    tantivy_dir: PathBuf,
    events: u64,
}

impl World {
    fn open(name: &str, data: &Path) -> World {
        let episodes = data.join("episodes.sqlite");
        let dir = data.join("tantivy");
        let (events, index_s) = Tantivy::build(&episodes, &dir);
        println!("{name}: {events} events into Tantivy in {index_s:.2} s");
        World {
            fts: EpisodeStore::open(&episodes).expect("episodes store"),
            tantivy: Tantivy::open(&dir),
            index_s,
            tantivy_dir: dir,
            events,
        }
    }

    /// Sessions in the order the arm ranks their first event.
    fn sessions(&self, arm: &str, terms: &Terms) -> Vec<String> {
        match arm {
            "fts5" => {
                let q = EpisodeQuery {
                    terms: terms.all.clone(),
                    workspaces: Vec::new(),
                    session_ids: Vec::new(),
                    since_ms: None,
                    until_ms: None,
                    outcome: None,
                    limit: DEPTH,
                    snippet_chars: 80,
                    vector: None,
                    own_terms: terms.own.clone(),
                    identifiers: Vec::new(),
                };
                let hits = self.fts.search(&q).expect("fts5 search");
                dedupe(hits.into_iter().map(|h| h.session_id))
            }
            _ => self.tantivy.sessions(terms),
        }
    }

    fn report(&self, name: &str) {
        let size = dir_size(&self.tantivy_dir);
        let fts = fts_size(self.fts.path());
        println!(
            "{name}: {} events; Tantivy index {:.2} s, {:.1} MB; events_fts {:.1} MB",
            self.events,
            self.index_s,
            size as f64 / 1e6,
            fts as f64 / 1e6
        );
    }
}

/// The Tantivy arm: one document per stored event (its terms, not stored; its session).
struct Tantivy {
    reader: IndexReader,
    index: Index,
    terms: Field,
    session: Field,
    sessions: Vec<String>,
}

fn schema() -> (Schema, Field, Field) {
    let mut b = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    let terms = b.add_text_field(
        "terms",
        TextOptions::default().set_indexing_options(indexing),
    );
    let session = b.add_u64_field("session", FAST | STORED);
    (b.build(), terms, session)
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(LowerCaser)
        .build()
}

impl Tantivy {
    /// Indexes every stored event of `episodes` into `dir` (anew); returns (events, seconds).
    fn build(episodes: &Path, dir: &Path) -> (u64, f64) {
        let started = Instant::now();
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).expect("tantivy dir");
        let (schema, terms, session) = schema();
        let index = Index::create_in_dir(dir, schema).expect("create");
        index.tokenizers().register(TOKENIZER, analyzer());
        let mut writer = index
            .writer_with_num_threads::<TantivyDocument>(2, 200_000_000)
            .expect("writer");
        let conn = knowledge::sources::sqlite::open_ro(episodes).expect("open episodes");
        let mut stmt = conn
            .prepare("SELECT session_id, text, tool_name FROM events ORDER BY session_id, seq")
            .expect("events");
        let mut rows = stmt.query([]).expect("query");
        let mut ids: Vec<String> = Vec::new();
        let mut n = 0u64;
        while let Some(r) = rows.next().expect("row") {
            let sid: String = r.get(0).expect("sid");
            if ids.last() != Some(&sid) {
                ids.push(sid);
            }
            let text: String = r.get(1).expect("text");
            let tool: Option<String> = r.get(2).expect("tool");
            let mut t = tokens::index_text(&text);
            if let Some(tool) = tool {
                t.push(' ');
                t.push_str(&tokens::index_text(&tool));
            }
            let mut doc = TantivyDocument::default();
            doc.add_text(terms, &t);
            doc.add_u64(session, (ids.len() - 1) as u64);
            writer.add_document(doc).expect("add");
            n += 1;
        }
        writer.commit().expect("commit");
        writer.wait_merging_threads().expect("merge");
        std::fs::write(dir.join("sessions.txt"), ids.join("\n")).expect("sessions");
        (n, started.elapsed().as_secs_f64())
    }

    fn open(dir: &Path) -> Tantivy {
        let index = Index::open_in_dir(dir).expect("open");
        index.tokenizers().register(TOKENIZER, analyzer());
        let schema = index.schema();
        let terms = schema.get_field("terms").expect("terms");
        let session = schema.get_field("session").expect("session");
        let reader = index.reader().expect("reader");
        let sessions = std::fs::read_to_string(dir.join("sessions.txt"))
            .expect("sessions")
            .lines()
            .map(str::to_string)
            .collect();
        Tantivy {
            reader,
            index,
            terms,
            session,
            sessions,
        }
    }

    fn query(&self, terms: &Terms) -> BooleanQuery {
        let mut analyzer = self
            .index
            .tokenizer_for_field(self.terms)
            .expect("tokenizer");
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for t in &terms.all {
            let weight = if terms.own.contains(t) {
                1.0
            } else {
                EXPANSION_WEIGHT
            };
            let mut stream = analyzer.token_stream(t);
            while let Some(tok) = stream.next() {
                if seen.contains(&tok.text) {
                    continue;
                }
                seen.push(tok.text.clone());
                let term = Term::from_field_text(self.terms, &tok.text);
                let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(q), weight)),
                ));
            }
        }
        BooleanQuery::new(clauses)
    }

    fn sessions(&self, terms: &Terms) -> Vec<String> {
        let searcher = self.reader.searcher();
        let top = searcher
            .search(
                &self.query(terms),
                &TopDocs::with_limit(DEPTH).order_by_score(),
            )
            .expect("search");
        let ids = top.into_iter().filter_map(|(_, addr)| {
            let doc: TantivyDocument = searcher.doc(addr).ok()?;
            let i = doc.get_first(self.session)?.as_u64()? as usize;
            self.sessions.get(i).cloned()
        });
        dedupe(ids)
    }
}

fn dedupe(ids: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

#[derive(Default)]
struct Tally {
    n: usize,
    at1: usize,
    at5: usize,
    rr: f64,
}

impl Tally {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.at1 += usize::from(r == 1);
            self.at5 += usize::from(r <= 5);
            self.rr += 1.0 / r as f64;
        }
    }
    fn show(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{:.2} / {:.2} / {:.2} ({})",
            self.at1 as f64 / n,
            self.at5 as f64 / n,
            self.rr / n,
            self.n
        )
    }
}

/// The 10× world: indexed once (kept under `dir`), then both arms timed warm and as a fresh
/// open + query, over every question of the sets (the answers are not scored: no labels there).
fn ten_x(dir: &Path, questions: &[model::Question]) {
    let data = dir.join("data");
    if !data.join("episodes.sqlite").exists() {
        let world = dir.join("world");
        let _ = std::fs::remove_dir_all(dir);
        let started = Instant::now();
        synth::generate(&world, 2_000, 540).expect("generate");
        println!("10x: generated in {:.1} s", started.elapsed().as_secs_f64());
        index(
            &data,
            &IndexPlan {
                sessions: vec![world],
                ..IndexPlan::default()
            },
        );
    }
    let w = World::open("10x", &data);
    w.report("10x");
    let queries: Vec<Terms> = questions.iter().map(|q| Terms::of(&q.query)).collect();
    for arm in ARMS {
        let mut warm = Vec::new();
        for _ in 0..3 {
            for t in &queries {
                let started = Instant::now();
                let _ = w.sessions(arm, t);
                warm.push(ms(started));
            }
        }
        let mut cold = Vec::new();
        for t in queries.iter().take(40) {
            let started = Instant::now();
            match arm {
                "fts5" => {
                    let fresh = World {
                        fts: EpisodeStore::open(&data.join("episodes.sqlite")).expect("open"),
                        tantivy: Tantivy::open(&data.join("tantivy")),
                        index_s: 0.0,
                        tantivy_dir: PathBuf::new(),
                        events: 0,
                    };
                    let _ = fresh.sessions("fts5", t);
                }
                _ => {
                    let _ = Tantivy::open(&data.join("tantivy")).sessions(t);
                }
            }
            cold.push(ms(started));
        }
        println!("10x {arm}: warm {}", percentiles(warm));
        println!("10x {arm}: fresh open + query {}", percentiles(cold));
    }
}

fn index(data: &Path, plan: &IndexPlan) {
    std::fs::create_dir_all(data).expect("data dir");
    std::fs::write(data.join("config.toml"), "[search]\nsemantic = false\n").expect("config");
    let started = Instant::now();
    index_all(data, plan, &mut |_| {}).expect("index");
    println!(
        "indexed {} in {:.1} s (FTS5 and the rest of the stores)",
        data.display(),
        started.elapsed().as_secs_f64()
    );
}

fn realdata(manifest: &Path) -> Option<PathBuf> {
    [
        manifest.join("../shared/realdata"),
        PathBuf::from("/work/shared/realdata"),
    ]
    .into_iter()
    .find(|p| p.join("SOURCES.md").is_file())
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e3
}

fn percentiles(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    format!(
        "P50 {:.1} ms, P95 {:.1} ms, max {:.1} ms ({} calls)",
        at(0.5),
        at(0.95),
        at(1.0),
        v.len()
    )
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Bytes of the FTS5 tables of the episodes store (its pages), for the size comparison.
fn fts_size(episodes: &Path) -> u64 {
    let conn = knowledge::sources::sqlite::open_ro(episodes).expect("open");
    let page: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .expect("page size");
    let pages: i64 = conn
        .query_row(
            "SELECT count(*) FROM dbstat WHERE name LIKE 'events_fts%'",
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    (page * pages) as u64
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
