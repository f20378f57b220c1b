//! What the episodes lane's message arm costs a one-shot call (`cargo bench --bench
//! message_scan_bench`): mapping the vectors file beside the store and scanning every record by
//! int8 dot product, at 10k, 100k and 600k records (`KNOWLEDGE_SCAN_SIZES=10000,100000` to
//! choose), with the load average the figures were taken under. The records are synthetic unit
//! vectors: the scan's cost does not depend on what they say.

use std::time::{Duration, Instant};

use knowledge::sources::episodes::messages::file::{quantize, Appender, Mapped, VectorRecord};
use knowledge::sources::episodes::messages::scan::{nearest, ScanQuery};
use knowledge::text::encoder::DIMS;

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// A pseudo-random unit vector.
fn unit(seed: u64) -> [f32; DIMS] {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v = [0f32; DIMS];
    for o in v.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *o = (x % 20_001) as f32 / 10_000.0 - 1.0;
    }
    let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.iter_mut().for_each(|a| *a /= n);
    v
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e3
}

fn main() {
    let sizes: Vec<usize> = std::env::var("KNOWLEDGE_SCAN_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000, 600_000]);
    println!("message_scan_bench: load {}", loadavg());
    for n in sizes {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("episodes.sqlite");
        let (mut out, _) = Appender::open(&db, "bench").expect("open");
        let mut batch = Vec::with_capacity(4096);
        for i in 0..n {
            let (values, scale) = quantize(&unit(i as u64 + 1));
            batch.push(VectorRecord {
                event: i as i64 + 1,
                key: (i / 40) as i64 + 1,
                seq: (i % 40) as u32 + 1,
                window: 0,
                scale,
                hub_en: 0.1,
                hub_ru: 0.1,
                values,
            });
            if batch.len() == 4096 {
                out.append(None, &batch).expect("append");
                batch.clear();
            }
        }
        out.append(None, &batch).expect("append");
        out.sync().expect("sync");
        let bytes = std::fs::metadata(dir.path().join("episodes.vectors"))
            .map(|m| m.len())
            .unwrap_or(0);
        let mut times = Vec::new();
        for q in 0..30u64 {
            let query = unit(1_000_000 + q);
            let t = Instant::now();
            let m = Mapped::open(&db, "bench").expect("map").expect("file");
            let found = nearest(
                &m,
                &ScanQuery {
                    vector: &query,
                    russian: false,
                    keys: None,
                    depth: 40,
                },
            );
            times.push(t.elapsed());
            assert!(!found.is_empty());
        }
        times.sort();
        println!(
            "{n:>7} records ({:.1} MB): map + scan P50 {:.1} ms, P95 {:.1} ms, max {:.1} ms",
            bytes as f64 / 1e6,
            pct(&times, 50.0),
            pct(&times, 95.0),
            pct(&times, 100.0)
        );
    }
}
