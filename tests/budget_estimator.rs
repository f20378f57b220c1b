//! The budget's token estimator is conservative: on real responses and real event texts it never
//! counts fewer tokens than the o200k BPE tokenizer does (DECISIONS §9).

mod common;

use knowledge::contract::SearchRequest;
use knowledge::engine::budget::estimate_tokens;
use knowledge::engine::{Engine, EngineConfig};

const QUERIES: &[&str] = &[
    "кто чинил доступ к MySQL на 176.99.5.35",
    "who fixed getUserName",
    "hex docs search skill",
    "error exit code",
    "subagent task",
    "BOM CRLF",
    "stripe webhook signature",
    "почему падал деплой",
    "test coverage",
    "rust port",
];

fn check(texts: &[String]) -> (f64, usize) {
    let bpe = tiktoken_rs::o200k_base().expect("o200k ships in the crate");
    let mut worst = f64::MAX;
    for t in texts {
        let real = bpe.encode_with_special_tokens(t).len();
        let est = estimate_tokens(t);
        assert!(
            est >= real,
            "estimate {est} < o200k {real} for text of {} bytes: {:.200}",
            t.len(),
            t
        );
        if real > 50 {
            worst = worst.min(est as f64 / real as f64);
        }
    }
    (worst, texts.len())
}

fn responses(engine: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for q in QUERIES {
        for limit in [3, 10, 50] {
            let mut req = SearchRequest::new(*q);
            req.limit = limit;
            req.max_tokens = 20_000;
            req.snippet_chars = 1000;
            out.push(serde_json::to_string(&engine.search(&req)).expect("json"));
        }
    }
    out
}

#[test]
fn estimator_never_undercounts_o200k_on_real_responses() {
    let Some((_tmp, data)) = common::world::real() else {
        return;
    };
    let engine = Engine::open(EngineConfig::new(data));
    let (ratio, n) = check(&responses(&engine));
    eprintln!("real transcripts: {n} responses, smallest estimate/o200k ratio {ratio:.2}");
}

#[test]
fn estimator_never_undercounts_o200k_on_the_demo_world() {
    let engine = common::world::demo().engine();
    let (ratio, n) = check(&responses(&engine));
    eprintln!("demo world: {n} responses, smallest estimate/o200k ratio {ratio:.2}");
}

#[test]
fn estimator_never_undercounts_o200k_on_hard_texts() {
    let texts: Vec<String> = [
        "a05d358b0666d872d 0123456789abcdef 9f8e7d6c5b4a",
        "доступ к MySQL восстановлен, пароль лежит в [REDACTED]",
        "{\"a\":1,\"b\":[1,2,3],\"c\":{\"d\":null}}",
        "🙂🙂🙂 日本語のテキスト 中文文本",
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "        indented    code\n\n\n\t\tfn main() { println!(\"{}\", x); }",
        "1234567890123456789012345678901234567890",
        "!!!???...,,,;;;:::---___+++===***&&&%%%$$$###@@@",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    check(&texts);
}
