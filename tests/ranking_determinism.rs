//! The same question over the same data gets the same answer: one demo world indexed twice, into
//! two data dirs, answers a set of questions (English, Russian, in other words, about nothing
//! there) with the same items in the same order in every lane, and so does the same engine asked
//! twice.
//!
//! Why: the relevance benchmark compares two builds by their ranks; when ranks move between two
//! runs of one binary (a hash map's random order, threads, a time-dependent key), a change's
//! before/after figures are noise. (The benchmark's own run-to-run drift came from materialising
//! the demo world at a random temp path, which its transcripts then hold; `benches/relevance.rs`
//! now uses a fixed one.)

mod common;

use knowledge::contract::{SearchRequest, SearchResponse};
use knowledge::demo;
use knowledge::engine::{Engine, EngineConfig};

/// Questions of every kind the lanes rank differently: all words present, a few words present,
/// Russian (translated terms and the vector arm), other words (gists), nothing there.
const QUESTIONS: [&str; 10] = [
    "healthcheck exits 0",
    "who fixed the failing tests",
    "stripe webhook signature",
    "кто чинил вебхуки",
    "откатил релиз после сломанного деплоя",
    "the check said everything was fine while the server was down",
    "migration for the billing tables",
    "which agent reviews SQL",
    "dark theme for the settings page",
    "kubernetes pod restarts",
];

/// Every lane's item ids, in order, and the lanes' reasons for being empty: what a person sees.
fn answer(engine: &Engine, q: &str) -> Vec<String> {
    let resp: SearchResponse = engine.search(&SearchRequest::new(q));
    let mut out: Vec<String> = Vec::new();
    let lanes = &resp.lanes;
    out.push(format!(
        "episodes {:?} {:?}",
        lanes
            .episodes
            .items
            .iter()
            .map(|i| &i.id)
            .collect::<Vec<_>>(),
        lanes.episodes.header.degradation_reason
    ));
    out.push(format!(
        "code {:?}",
        lanes.code.items.iter().map(|i| &i.id).collect::<Vec<_>>()
    ));
    if let Some(s) = &lanes.skills {
        out.push(format!(
            "skills {:?}",
            s.items.iter().map(|i| &i.id).collect::<Vec<_>>()
        ));
    }
    out.push(format!(
        "actors {:?}",
        resp.actors.iter().map(|a| &a.actor_id).collect::<Vec<_>>()
    ));
    out
}

fn indexed(world: &demo::DemoWorld, data: &std::path::Path) -> Engine {
    std::fs::create_dir_all(data).expect("data dir");
    std::fs::write(
        data.join("config.toml"),
        format!(
            "{}[search]\nsemantic = true\n",
            common::world::GENEROUS_LANES
        ),
    )
    .expect("config");
    common::world::index_world(world, data);
    Engine::open(EngineConfig::load(data).expect("config"))
}

#[test]
fn the_same_world_indexed_twice_answers_every_question_alike() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let world = demo::materialize(&demo::bundled_world(), &tmp.path().join("world"))
        .expect("materialise the demo world");
    let first = indexed(&world, &tmp.path().join("a"));
    let second = indexed(&world, &tmp.path().join("b"));
    let mut answered = 0;
    for q in QUESTIONS {
        let a = answer(&first, q);
        assert_eq!(
            a,
            answer(&second, q),
            "two identical indexes disagree on {q:?}"
        );
        assert_eq!(
            a,
            answer(&first, q),
            "one engine asked twice disagrees on {q:?}"
        );
        answered += usize::from(!a[0].starts_with("episodes []"));
    }
    // The comparison means something only if the lanes answered.
    assert!(answered >= 5, "only {answered} questions found episodes");
}
