//! The packed vector storage: index-time codes equal upgrade codes, an index of the first layout
//! is rebuilt from stored text, changed rows lose their stale codes, and both scans agree.

use rusqlite::Connection;

use super::write::BLOCK_SHIFT;
use super::{backfill, Builder, VectorIndex, EVENTS};
use crate::text::embed::{self, Embedder};

const TEXTS: [&str; 4] = [
    "rolled back the release after the deploy failed",
    "database migration adds an index to the users table",
    "the payment webhook signature check rejects stale events",
    "fixed the flaky login test by waiting for the page",
];

fn emb() -> &'static Embedder {
    embed::shared().expect("the shipped table parses")
}

/// A minimal events store: `meta` and `event_rows(id, text)`, its texts packed as the indexer
/// packs them.
fn store() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    crate::sources::packed::register(&conn).unwrap();
    conn.execute_batch(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
         CREATE TABLE event_rows(id INTEGER PRIMARY KEY, text NOT NULL);",
    )
    .unwrap();
    conn
}

fn insert(conn: &Connection, id: i64, text: &str) {
    conn.execute(
        "INSERT INTO event_rows(id, text) VALUES(?1, ?2)",
        (id, crate::sources::packed::pack(text)),
    )
    .unwrap();
}

/// Rows spread over several blocks: `TEXTS` cycled at ids 1, 301, 601, …
fn rows() -> Vec<(i64, String)> {
    (0..12)
        .map(|i| (1 + 300 * i, TEXTS[i as usize % TEXTS.len()].to_string()))
        .collect()
}

fn blocks(conn: &Connection) -> Vec<(i64, Vec<u8>)> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT block, codes FROM {} ORDER BY block",
            EVENTS.name
        ))
        .unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

/// The parent row of the nearest vector to `text`'s vector.
fn nearest_row(conn: &Connection, index: &VectorIndex, text: &str) -> i64 {
    let q = emb().embed(text).unwrap();
    let ids = index.nearest(conn, &q, 0, 1).unwrap();
    super::split_id(ids[0]).0
}

#[test]
fn index_time_codes_equal_the_codes_an_upgrade_makes_from_stored_text() {
    let (indexed, upgraded) = (store(), store());
    let mut indexed = indexed;
    let mut upgraded = upgraded;
    let mut builder = Builder::start(&indexed, EVENTS, emb()).unwrap();
    for (id, text) in rows() {
        insert(&indexed, id, &text);
        builder.add(id, text);
        insert(&upgraded, id, TEXTS[0]);
    }
    assert_eq!(builder.finish(&mut indexed).unwrap(), 12);
    assert_eq!(
        backfill(&mut indexed, &EVENTS, emb()).unwrap(),
        0,
        "nothing left"
    );
    upgraded.execute("DELETE FROM event_rows", []).unwrap();
    for (id, text) in rows() {
        insert(&upgraded, id, &text);
    }
    assert_eq!(backfill(&mut upgraded, &EVENTS, emb()).unwrap(), 12);
    let made = blocks(&indexed);
    assert!(
        made.len() >= 3,
        "rows 1…3301 span blocks of {}",
        1 << BLOCK_SHIFT
    );
    assert_eq!(made, blocks(&upgraded));
}

#[test]
fn rows_the_builder_did_not_see_are_embedded_by_the_upgrade() {
    let mut conn = store();
    let mut builder = Builder::start(&conn, EVENTS, emb()).unwrap();
    insert(&conn, 1, TEXTS[0]);
    builder.add(1, TEXTS[0].to_string());
    insert(&conn, 2, TEXTS[1]); // written by someone else
    assert_eq!(builder.finish(&mut conn).unwrap(), 0, "fast path skipped");
    assert_eq!(backfill(&mut conn, &EVENTS, emb()).unwrap(), 2);
    let index = VectorIndex::new(EVENTS);
    assert_eq!(nearest_row(&conn, &index, TEXTS[1]), 2);
}

#[test]
fn an_index_of_the_first_layout_is_rebuilt_from_stored_text() {
    let mut conn = store();
    for (i, text) in TEXTS.iter().enumerate() {
        insert(&conn, i as i64 + 1, text);
    }
    // The first layout: one row per window, with codes that point at the wrong rows.
    conn.execute_batch(
        "CREATE TABLE event_vecs(id INTEGER PRIMARY KEY, code BLOB NOT NULL);
         INSERT INTO event_vecs VALUES(8, x'00000000000000000000000000000000');
         CREATE TRIGGER event_vecs_del AFTER DELETE ON event_rows BEGIN SELECT 1; END;
         INSERT INTO meta VALUES('event_vecs_schema', '1'), ('event_vecs_rev', '1:4');",
    )
    .unwrap();
    assert_eq!(backfill(&mut conn, &EVENTS, emb()).unwrap(), 4);
    let legacy: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'event_vecs%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(legacy, 0, "the old table and trigger are gone");
    let index = VectorIndex::new(EVENTS);
    assert!(index.present(&conn).unwrap());
    for (i, text) in TEXTS.iter().enumerate() {
        assert_eq!(nearest_row(&conn, &index, text), i as i64 + 1, "{text}");
    }
}

#[test]
fn a_deleted_or_rewritten_row_loses_its_old_code() {
    let mut conn = store();
    for (i, text) in TEXTS.iter().enumerate() {
        insert(&conn, i as i64 + 1, text);
    }
    backfill(&mut conn, &EVENTS, emb()).unwrap();
    conn.execute("DELETE FROM event_rows WHERE id = 1", [])
        .unwrap();
    conn.execute(
        "UPDATE event_rows SET text = ?1 WHERE id = 2",
        [TEXTS[0]], // row 2 now says what row 1 said
    )
    .unwrap();
    // The block is re-embedded from what is stored now: rows 2, 3, 4.
    assert_eq!(backfill(&mut conn, &EVENTS, emb()).unwrap(), 3);
    let index = VectorIndex::new(EVENTS);
    assert_eq!(nearest_row(&conn, &index, TEXTS[0]), 2);
    assert_eq!(index.len(&conn).unwrap(), 3);
}

#[test]
fn the_streamed_scan_and_the_resident_scan_rank_alike() {
    let mut conn = store();
    for (id, text) in rows() {
        insert(&conn, id, &text);
    }
    backfill(&mut conn, &EVENTS, emb()).unwrap();
    let (streamed, resident) = (VectorIndex::new(EVENTS), VectorIndex::new(EVENTS));
    resident.warm(&conn).unwrap();
    assert_eq!(streamed.len(&conn).unwrap(), resident.len(&conn).unwrap());
    for text in TEXTS {
        let q = emb().embed(text).unwrap();
        for (skip, k) in [(0, 3), (2, 5), (0, 100)] {
            assert_eq!(
                streamed.nearest(&conn, &q, skip, k).unwrap(),
                resident.nearest(&conn, &q, skip, k).unwrap(),
                "{text} skip {skip} k {k}"
            );
        }
    }
}
