//! The vectors file's own checks: records round-trip, a tombstone kills only what was written
//! before it, a torn tail is cut off, a file of another store is made anew, and the int8 scan
//! ranks as the float cosine does.

use super::file::{quantize, Appender, Mapped, VectorRecord, HEADER, RECORD};
use super::scan::{dot_i8, nearest, ScanQuery};
use crate::text::encoder::DIMS;

fn unit(seed: u32) -> [f32; DIMS] {
    let mut v = [0f32; DIMS];
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    for o in v.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *o = (x % 2001) as f32 / 1000.0 - 1.0;
    }
    let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.iter_mut().for_each(|a| *a /= n);
    v
}

fn record(event: i64, key: i64, seq: u32, v: &[f32; DIMS]) -> VectorRecord {
    let (values, scale) = quantize(v);
    VectorRecord {
        event,
        key,
        seq,
        window: 0,
        scale,
        hub_en: 0.0,
        hub_ru: 0.0,
        values,
    }
}

#[test]
fn int8_dot_is_the_cosine_within_a_hundredth() {
    for seed in 1..20 {
        let (a, b) = (unit(seed), unit(seed + 100));
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let ((qa, sa), (qb, sb)) = (quantize(&a), quantize(&b));
        let approx = dot_i8(&qa, &qb) as f32 * sa * sb;
        assert!((exact - approx).abs() < 0.01, "{exact} vs {approx}");
    }
    let a = unit(3);
    let (q, s) = quantize(&a);
    assert!((dot_i8(&q, &q) as f32 * s * s - 1.0).abs() < 0.01);
}

#[test]
fn records_round_trip_and_tombstones_kill_only_earlier_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("episodes.sqlite");
    let (mut out, fresh) = Appender::open(&db, "store-a").unwrap();
    assert!(fresh);
    let r1 = record(1, 7, 1, &unit(1));
    let r2 = record(2, 7, 2, &unit(2));
    let r3 = record(3, 8, 1, &unit(3));
    out.append(Some((7, 0)), &[r1.clone(), r2.clone()]).unwrap();
    out.append(Some((8, 0)), std::slice::from_ref(&r3)).unwrap();
    // Session 7 re-embedded from seq 2: its old seq 2 dies, seq 1 stays, the new one lives.
    let r2b = record(9, 7, 2, &unit(4));
    out.append(Some((7, 2)), std::slice::from_ref(&r2b))
        .unwrap();
    out.sync().unwrap();
    let m = Mapped::open(&db, "store-a").unwrap().expect("mapped");
    assert_eq!(m.len(), 7);
    assert_eq!(m.live(), vec![r1, r3, r2b]);
    assert!(Mapped::open(&db, "store-b").unwrap().is_none());
}

#[test]
fn a_torn_tail_is_cut_and_another_stores_file_is_made_anew() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("episodes.sqlite");
    let path = super::file::path_for(&db);
    let (mut out, _) = Appender::open(&db, "s").unwrap();
    out.append(None, &[record(1, 1, 1, &unit(1))]).unwrap();
    drop(out);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[1u8; 100]);
    std::fs::write(&path, &bytes).unwrap();
    let (out, fresh) = Appender::open(&db, "s").unwrap();
    assert!(!fresh);
    assert_eq!(out.records(), 1);
    assert_eq!(
        std::fs::metadata(&path).unwrap().len() as usize,
        HEADER + RECORD
    );
    drop(out);
    let (out, fresh) = Appender::open(&db, "another").unwrap();
    assert!(fresh);
    assert_eq!(out.records(), 0);
    // A folder where the file goes is replaced.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let (out, fresh) = Appender::open(&db, "s").unwrap();
    assert!(fresh && out.records() == 0);
}

#[test]
fn the_scan_ranks_by_cosine_minus_hub_and_skips_dead_and_filtered_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("episodes.sqlite");
    let (mut out, _) = Appender::open(&db, "s").unwrap();
    let q = unit(10);
    let mut near = q;
    near[0] += 0.3;
    let mut hubby = record(2, 2, 1, &q);
    hubby.hub_en = 0.9;
    out.append(
        None,
        &[record(1, 1, 1, &near), hubby, record(3, 3, 1, &unit(11))],
    )
    .unwrap();
    let m = Mapped::open(&db, "s").unwrap().unwrap();
    let scan = |keys| {
        nearest(
            &m,
            &ScanQuery {
                vector: &q,
                russian: false,
                keys,
                depth: 3,
            },
        )
    };
    let ids: Vec<i64> = scan(None).iter().map(|n| n.event).collect();
    assert_eq!(
        ids[0], 1,
        "the exact match carries a hub term of 0.9: {ids:?}"
    );
    let only: std::collections::HashSet<u64> = [3u64].into();
    assert_eq!(
        scan(Some(&only))
            .iter()
            .map(|n| n.event)
            .collect::<Vec<_>>(),
        vec![3]
    );
    drop(m);
    out.append(Some((1, 0)), &[]).unwrap();
    let m = Mapped::open(&db, "s").unwrap().unwrap();
    let found = nearest(
        &m,
        &ScanQuery {
            vector: &q,
            russian: false,
            keys: None,
            depth: 3,
        },
    );
    assert!(found.iter().all(|n| n.event != 1), "tombstoned: {found:?}");
}

#[test]
fn compaction_keeps_exactly_the_live_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("episodes.sqlite");
    let (mut out, _) = Appender::open(&db, "s").unwrap();
    for round in 0..3 {
        let recs: Vec<VectorRecord> = (0..4)
            .map(|i| record(round * 10 + i, 5, i as u32, &unit(i as u32 + 1)))
            .collect();
        out.append(Some((5, 0)), &recs).unwrap();
    }
    let before = Mapped::open(&db, "s").unwrap().unwrap().live();
    assert!(out.compact(&db, "s").unwrap());
    let m = Mapped::open(&db, "s").unwrap().unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(m.live(), before);
    assert!(!out.compact(&db, "s").unwrap(), "nothing dead left");
}
