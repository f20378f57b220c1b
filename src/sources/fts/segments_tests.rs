use super::*;

/// A file-backed table shaped like the stores' (contentless, deletable); small pages make an
/// index of many pages from a few thousand rows.
fn store(page_bytes: u32) -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().expect("dir");
    let c = Connection::open(dir.path().join("s.sqlite")).expect("db");
    c.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE VIRTUAL TABLE e USING fts5(x, content='', contentless_delete=1,
             tokenize='unicode61 remove_diacritics 0');",
    )
    .expect("fts");
    c.execute("INSERT INTO e(e, rank) VALUES('pgsz', ?1)", [page_bytes])
        .expect("page size");
    (dir, c)
}

/// Rows `from..to`, each in a transaction of its own (as the episodes indexer commits per file).
fn add_each(c: &Connection, from: i64, to: i64) {
    for id in from..to {
        c.execute(
            "INSERT INTO e(rowid, x) VALUES(?1, ?2)",
            rusqlite::params![id, text(id)],
        )
        .expect("insert");
    }
}

/// Rows `from..to` in one transaction.
fn add_all(c: &mut Connection, from: i64, to: i64) {
    let tx = c.transaction().expect("tx");
    for id in from..to {
        tx.execute(
            "INSERT INTO e(rowid, x) VALUES(?1, ?2)",
            rusqlite::params![id, text(id)],
        )
        .expect("insert");
    }
    tx.commit().expect("commit");
}

fn text(id: i64) -> String {
    let mut words: Vec<String> = (0..12)
        .map(|k| format!("w{}", (id * 7 + k * 13) % 997))
        .collect();
    if id % 3 == 0 {
        words.push("mysql timeout".into());
    }
    if id % 5 == 0 {
        words.push("deploy".into());
    }
    words.join(" ")
}

/// Every row each question matches, with its `bm25` score's bits: what a search sees.
fn answers(c: &Connection) -> Vec<Vec<(i64, u64)>> {
    [
        "mysql",
        "mysql AND timeout",
        "deploy OR w5",
        "deploy AND timeout",
        "absent",
    ]
    .iter()
    .map(|q| {
        let mut st = c
            .prepare("SELECT rowid, bm25(e) FROM e WHERE e MATCH ?1 ORDER BY rowid")
            .expect("prepare");
        let rows = st
            .query_map([q], |r| Ok((r.get(0)?, r.get::<_, f64>(1)?.to_bits())))
            .expect("query");
        rows.collect::<Result<_, _>>().expect("rows")
    })
    .collect()
}

#[test]
fn commits_one_by_one_leave_many_segments_and_tidy_leaves_one_with_the_same_answers() {
    let (_dir, c) = store(4050);
    add_each(&c, 1, 40);
    c.execute("DELETE FROM e WHERE rowid IN (3, 9, 30)", [])
        .expect("delete");
    let before = structure(&c, "e").expect("structure");
    assert!(before.count() > 4, "{before:?}");
    let want = answers(&c);
    assert!(want[0].len() > 5 && !want[3].is_empty(), "{want:?}");

    assert_eq!(
        tidy(&c, "e").expect("tidy"),
        Tidied::Optimized {
            before: before.count()
        }
    );
    assert_eq!(structure(&c, "e").expect("structure").count(), 1);
    assert_eq!(answers(&c), want, "every match and score as before");
    assert_eq!(tidy(&c, "e").expect("again"), Tidied::Nothing);
    let check: rusqlite::Result<usize> =
        c.execute("INSERT INTO e(e, rank) VALUES('integrity-check', 0)", []);
    check.expect("the index is consistent");
}

#[test]
fn small_runs_merge_what_they_added_and_rewrite_the_whole_index_rarely() {
    let (_dir, mut c) = store(128);
    // A full index: batches of files, a transaction each.
    for batch in 0..10 {
        add_all(&mut c, 1 + batch * 1_000, 1 + (batch + 1) * 1_000);
    }
    assert!(matches!(
        tidy(&c, "e").expect("first tidy"),
        Tidied::Optimized { .. }
    ));
    let mut big = structure(&c, "e")
        .expect("structure")
        .largest()
        .expect("one");
    assert!(big.pages > 3_000, "{big:?}");

    let (mut id, mut merged, mut rewrites) = (10_001, 0, Vec::new());
    for run in 0..300 {
        // A watch run: one live session's few new events, one transaction.
        add_all(&mut c, id, id + 2);
        id += 2;
        let before = structure(&c, "e").expect("structure");
        let rest = before.pages() - before.largest().expect("segment").pages;
        assert!(
            rest * OPTIMIZE_SHARE < big.pages,
            "the eighth is not reached here"
        );
        let did = tidy(&c, "e").expect("tidy");
        let after = structure(&c, "e").expect("structure");
        assert!(after.count() <= SEGMENTS_LEFT, "{did:?} {after:?}");
        match did {
            Tidied::Optimized { .. } => {
                rewrites.push(run);
                assert_eq!(after.count(), 1);
                big = after.largest().expect("one");
            }
            Tidied::Merged { .. } | Tidied::Left { .. } => {
                merged += usize::from(matches!(did, Tidied::Merged { .. }));
                assert_eq!(after.largest(), Some(big), "a small run leaves the largest");
            }
            Tidied::Nothing => {}
        }
    }
    assert!(merged > 20, "small runs merged their segments ({merged})");
    assert!(
        !rewrites.is_empty() && rewrites.len() <= 3,
        "a whole rewrite only every hundred runs or so: at runs {rewrites:?}"
    );
    let mut fresh = store(128);
    add_all(&mut fresh.1, 1, id);
    assert_eq!(answers(&c), answers(&fresh.1), "as if indexed in one go");
}

#[test]
fn an_empty_or_unreadable_index_is_left_alone() {
    let (_dir, c) = store(4050);
    assert_eq!(tidy(&c, "e").expect("tidy"), Tidied::Nothing);
    assert_eq!(decode(&[0, 0, 0, 1, 0xff]), None);
    assert_eq!(decode(&[]), None);
    // Two levels claimed, one segment claimed, none described.
    assert_eq!(decode(&[0, 0, 0, 1, 2, 1, 0, 0, 0]), None);
}

#[test]
fn varints_are_sqlites() {
    assert_eq!(varint(&[0x05]), Some((5, 1)));
    assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
    assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
    assert_eq!(varint(&[0x81]), None);
}
