//! A small labelled relevance set for the semantic arm on the demo world (run with
//! `cargo bench --bench semantic_relevance`): Russian questions about English sessions,
//! paraphrases sharing no word with their session, and questions lexical search already answers.
//! Each is run with the vector arm off and on; recall@5 and MRR are over the episodes lane, at
//! session level (a subagent's events count for its parent session). `docs/RELEVANCE.md`
//! ("Semantic arm") records the figures.

use knowledge::contract::SearchRequest;
use knowledge::engine::{Engine, EngineConfig};

/// (group, question, relevant session ids).
const QUESTIONS: &[(&str, &str, &[&str])] = &[
    ("ru→en", "где считается итоговая сумма корзины", &[C13, C6]),
    (
        "ru→en",
        "кто исправил getUserName, который возвращал undefined",
        &[C3],
    ),
    (
        "ru→en",
        "почему не проходила проверка подписи вебхука",
        &[C5, C4],
    ),
    (
        "ru→en",
        "ночной бэкап в хранилище падал из-за неверной подписи",
        &[C10],
    ),
    ("ru→en", "ключи идемпотентности для платежей", &[X2]),
    ("ru→en", "ошибка 401 из-за просроченного токена", &[X6]),
    ("ru→en", "тест для строки подключения к базе данных", &[X8]),
    ("ru→en", "исправили проверку кодировки в CI", &[C11]),
    ("ru→en", "добавили раздел про вебхуки в документацию", &[X7]),
    ("ru→en", "рефакторинг сервиса корзины", &[C6]),
    (
        "paraphrase",
        "which function calculates the basket sum",
        &[C13],
    ),
    (
        "paraphrase",
        "stale login credentials produced unauthorized replies",
        &[X6],
    ),
    (
        "paraphrase",
        "avoid double charging customers on retries",
        &[X2],
    ),
    (
        "paraphrase",
        "carriage returns broke the shell script",
        &[C2],
    ),
    (
        "paraphrase",
        "documentation for payment notifications",
        &[X7, C7],
    ),
    ("lexical", "who fixed getUserName", &[C3]),
    ("lexical", "stripe webhook signature", &[C5, C4]),
    ("lexical", "nightly backup S3 SignatureDoesNotMatch", &[C10]),
    (
        "lexical",
        "кто чинил доступ к MySQL на 176.99.5.35",
        &[C1, X1],
    ),
    ("lexical", "почему падал деплой", &[C2]),
    ("lexical", "release 1.4.0 staging deploy", &[C12]),
    ("lexical", "PHPUnit test Config::mysqlDsn", &[X8]),
    ("lexical", "Stripe idempotency keys", &[X2]),
];

const C1: &str = "5af11f95-d95e-4618-ac0d-6a61a912f47f";
const C2: &str = "40b2334f-8cd8-49dd-8b81-2fd55e3b6a92";
const C3: &str = "72f73b62-6702-4310-8954-f664eb5b1c87";
const C4: &str = "b30a4db6-24f6-43df-bf0a-510dfeb0604e";
const C5: &str = "f1839d08-66df-4e86-a1d2-bd884e898811";
const C6: &str = "5cd51c3a-8847-4771-9116-364a613597e5";
const C7: &str = "ccccaa43-1f82-4afc-a9e6-99e5815b3928";
const C10: &str = "ad0800c7-3396-48cc-a926-471e061a1833";
const C11: &str = "675a5687-1ece-49b5-a5c4-48828d902588";
const C12: &str = "e495e3cf-987f-4f70-a2c7-2013f6ed4888";
const C13: &str = "dc09f1b5-9a6c-4c45-8403-03d7d76ffe06";
const X1: &str = "01a139c0-47a8-74e1-87f9-91f91af1bacc";
const X2: &str = "01a18cf0-e540-7a8a-bab5-dbaa21394216";
const X6: &str = "01a1aaae-19b8-76cf-8edc-93626fd0d6c3";
const X7: &str = "01a1e941-9218-794f-90a0-edae60faa5a5";
const X8: &str = "01a1f5f7-9958-7da2-9328-542b088395e9";

/// 1-based rank of the first item from a relevant session, if any.
fn first_relevant(engine: &Engine, q: &str, relevant: &[&str]) -> Option<usize> {
    let mut req = SearchRequest::new(q);
    req.limit = 20;
    req.max_tokens = 50_000;
    let resp = engine.search(&req);
    let mut sessions: Vec<&str> = Vec::new();
    for it in &resp.lanes.episodes.items {
        let root = it.session_id.split('/').next().unwrap_or("");
        if !sessions.contains(&root) {
            sessions.push(root);
        }
    }
    sessions
        .iter()
        .position(|s| relevant.contains(s))
        .map(|i| i + 1)
}

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let world =
        knowledge::demo::materialize(&knowledge::demo::bundled_world(), &tmp.path().join("world"))
            .expect("demo world");
    let data = tmp.path().join("data");
    knowledge::indexing::index_all(&data, &world.plan(), &mut |_| {}).expect("index");
    let engine = |semantic: bool| {
        Engine::open(EngineConfig {
            log: false,
            semantic,
            // Relevance, not speed: a slow build must not turn a lane into a timeout here.
            lane_timeout: std::time::Duration::from_secs(30),
            ..EngineConfig::new(&data)
        })
    };
    let (lexical, hybrid) = (engine(false), engine(true));
    println!(
        "{:<11} {:<58} {:>7} {:>7}",
        "group", "question", "lexical", "hybrid"
    );
    let mut sums: Vec<(&str, usize, [f64; 4])> = Vec::new();
    for (group, q, relevant) in QUESTIONS {
        let before = first_relevant(&lexical, q, relevant);
        let after = first_relevant(&hybrid, q, relevant);
        let show = |r: Option<usize>| r.map_or("—".to_string(), |r| r.to_string());
        println!("{group:<11} {q:<58} {:>7} {:>7}", show(before), show(after));
        let at = match sums.iter().position(|s| s.0 == *group) {
            Some(i) => i,
            None => {
                sums.push((group, 0, [0.0; 4]));
                sums.len() - 1
            }
        };
        let s = &mut sums[at];
        s.1 += 1;
        for (k, r) in [before, after].into_iter().enumerate() {
            s.2[2 * k] += f64::from(u8::from(r.is_some_and(|r| r <= 5)));
            s.2[2 * k + 1] += r.map_or(0.0, |r| 1.0 / r as f64);
        }
    }
    println!(
        "\n{:<11} {:>3}  {:>14} {:>14}",
        "group", "n", "lexical R@5/MRR", "hybrid R@5/MRR"
    );
    for (group, n, s) in sums {
        let n_f = n as f64;
        println!(
            "{group:<11} {n:>3}  {:>6.2} / {:<6.2} {:>6.2} / {:<6.2}",
            s[0] / n_f,
            s[1] / n_f,
            s[2] / n_f,
            s[3] / n_f
        );
    }
}
