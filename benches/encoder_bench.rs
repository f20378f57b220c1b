//! What the sentence encoder costs on one core (`cargo bench --bench encoder_bench`): opening
//! its mapped assets, one query (issue 34's target: ≤ 5 ms), and one 256-piece message (the
//! unit of indexing time), with the load average the figures were taken under.

use std::time::{Duration, Instant};

use knowledge::text::encoder::Encoder;

const QUERIES: &[&str] = &[
    "where did we stop the logs from filling the disk?",
    "who fixed the flaky test in the payment service",
    "how did we speed up the cold start of the CLI",
    "the migration that renamed the users table",
    "why does the build fail on ARM runners",
    "which commit broke the release pipeline last week",
    "где мы остановили переполнение диска логами?",
    "кто починил нестабильный тест в платёжном сервисе",
    "как мы ускорили холодный старт утилиты",
    "почему сборка падает на ARM",
    "какой коммит сломал релиз на прошлой неделе",
    "error[E0502]: cannot borrow `self.items` as mutable",
];

const SENTENCES: &[&str] = &[
    "I found the cause: the watcher registers the same directory twice after a rename.",
    "Every event is delivered twice and the indexer writes each row again.",
    "Нашёл причину: после переименования наблюдатель регистрирует тот же каталог дважды.",
    "The build failed because the lockfile pinned an old version of the TLS crate.",
    "Сборка падала из-за старой версии библиотеки в lock-файле.",
    "I replaced the hand-written retry loop with exponential backoff and jitter.",
    "`cargo test --lib encoder` passes; clippy is clean with warnings denied.",
    "The slow query came from an N+1 pattern in the order listing.",
];

const MESSAGE_PIECES: usize = 256;

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

/// Messages of exactly MESSAGE_PIECES pieces (with `<s>` and `</s>`), from varied sentences.
fn messages(enc: &Encoder, count: usize) -> Vec<Vec<u32>> {
    (0..count)
        .map(|i| {
            let mut text = String::new();
            let mut k = i;
            while enc.pieces(&text).len() < MESSAGE_PIECES {
                text.push_str(SENTENCES[k % SENTENCES.len()]);
                text.push(' ');
                k += 3;
            }
            let mut ids = enc.pieces(&text);
            let eos = *ids.last().expect("eos");
            ids.truncate(MESSAGE_PIECES - 1);
            ids.push(eos);
            ids
        })
        .collect()
}

fn main() {
    println!("load average before: {}", loadavg());
    let t = Instant::now();
    let dir = knowledge::text::encoder::locate().expect("assets/encoder");
    let enc = Encoder::open(&dir).expect("open the encoder");
    println!(
        "open (map two files, read headers): {:.3} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    let _ = enc.encode(QUERIES[0]);
    println!(
        "first query (pages in what it touches): {:.3} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    // Queries: every query encoded many times, each call timed.
    let rounds = 40;
    let mut times = Vec::with_capacity(rounds * QUERIES.len());
    let mut pieces = 0;
    for _ in 0..rounds {
        for q in QUERIES {
            let t = Instant::now();
            let v = enc.encode(q);
            times.push(t.elapsed());
            std::hint::black_box(v);
            pieces += enc.pieces(q).len();
        }
    }
    times.sort();
    println!(
        "query ({:.1} pieces on average, {} calls): P50 {:.3} ms, P95 {:.3} ms, max {:.3} ms",
        pieces as f64 / times.len() as f64,
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        percentile(&times, 1.0)
    );

    // Messages of 256 pieces: the network alone, and with segmentation of a text that long.
    let msgs = messages(&enc, 24);
    let mut times = Vec::new();
    let t_all = Instant::now();
    for _ in 0..3 {
        for ids in &msgs {
            let t = Instant::now();
            std::hint::black_box(enc.encode_pieces(ids));
            times.push(t.elapsed());
        }
    }
    let total = t_all.elapsed().as_secs_f64();
    times.sort();
    println!(
        "{MESSAGE_PIECES}-piece message, network: P50 {:.2} ms, P95 {:.2} ms; {:.1} messages/s, \
         {:.0} pieces/s on one core",
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        times.len() as f64 / total,
        (times.len() * MESSAGE_PIECES) as f64 / total
    );
    let text = SENTENCES.join(" ").repeat(4);
    let n = enc.pieces(&text).len();
    let t = Instant::now();
    let reps = 20;
    for _ in 0..reps {
        std::hint::black_box(enc.pieces(&text));
    }
    let seg = t.elapsed().as_secs_f64() / reps as f64;
    println!(
        "segmentation: {:.3} ms for a text of {} bytes ({n} pieces)",
        seg * 1e3,
        text.len()
    );
    println!("load average after: {}", loadavg());
}
