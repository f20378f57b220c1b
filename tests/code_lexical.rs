//! The code lane's full-text index (Tantivy, `code.lexical/` beside `code.sqlite`): a rare
//! term wins the disjunction, a symbol weighs above a mention, filters narrow it inside the
//! index, a changed or removed file leaves nothing stale, and an index lost or damaged is made
//! anew from the stored chunks alone (no repository is read again).

use std::path::Path;

use knowledge::sources::code::{index_code, CodeIndexOptions, CodeQuery, CodeStore};

fn index(repo: &Path, db: &Path) {
    let opts = CodeIndexOptions {
        semantic: false,
        ..CodeIndexOptions::default()
    };
    index_code(db, &[repo.to_path_buf()], &opts, &mut |_| {}).expect("index");
}

fn paths(db: &Path, terms: &[&str], paths: &[&str]) -> Vec<String> {
    let store = CodeStore::open(db).expect("open");
    let q = CodeQuery {
        terms: knowledge::text::tokens::query_terms(&terms.join(" ")),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        limit: 10,
        snippet_chars: 80,
        ..CodeQuery::default()
    };
    store
        .search(&q)
        .expect("search")
        .hits
        .into_iter()
        .map(|h| h.path)
        .collect()
}

fn repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let w = |rel: &str, body: &str| {
        let p = repo.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    };
    for i in 0..12 {
        w(
            &format!("src/common{i}.py"),
            &format!("def handler{i}(request):\n    return render(request, 'page')\n"),
        );
    }
    w(
        "src/billing.py",
        "def render_invoice(request):\n    return render(request, 'zqxwidget')\n",
    );
    w(
        "lib/mentions.py",
        "def caller():\n    # calls frobnicate on the way\n    return 1\n",
    );
    w("lib/frob.py", "def frobnicate():\n    return 2\n");
    repo
}

#[test]
fn a_rare_term_wins_and_a_symbol_weighs_above_a_mention() {
    let repo = repo();
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("code.sqlite");
    index(repo.path(), &db);
    assert!(data.path().join("code.lexical").join("meta.json").is_file());
    // Every file holds `render` and `request`; one holds `zqxwidget`.
    let found = paths(&db, &["render", "request", "zqxwidget"], &[]);
    assert_eq!(found.first().map(String::as_str), Some("src/billing.py"));
    let found = paths(&db, &["frobnicate"], &[]);
    assert_eq!(
        found.first().map(String::as_str),
        Some("lib/frob.py"),
        "{found:?}"
    );
    // The path filter is applied inside the index.
    let found = paths(&db, &["render", "frobnicate"], &["lib"]);
    assert!(
        !found.is_empty() && found.iter().all(|p| p.starts_with("lib/")),
        "{found:?}"
    );
}

#[test]
fn changed_and_removed_files_leave_nothing_stale() {
    let repo = repo();
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("code.sqlite");
    index(repo.path(), &db);
    std::fs::write(
        repo.path().join("src/billing.py"),
        "def render_receipt(request):\n    return 'plumbusword'\n",
    )
    .unwrap();
    std::fs::remove_file(repo.path().join("lib/frob.py")).unwrap();
    index(repo.path(), &db);
    assert!(paths(&db, &["zqxwidget"], &[]).is_empty());
    assert_eq!(paths(&db, &["plumbusword"], &[]), ["src/billing.py"]);
    assert!(!paths(&db, &["frobnicate"], &[]).contains(&"lib/frob.py".to_string()));
}

#[test]
fn a_lost_or_damaged_index_is_made_anew_from_the_store_alone() {
    let repo = repo();
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("code.sqlite");
    index(repo.path(), &db);
    let lexical = data.path().join("code.lexical");
    std::fs::remove_dir_all(&lexical).unwrap();
    // Without its index the lane says how to fix it.
    let store = CodeStore::open(&db).unwrap();
    let err = store.check_lexical().expect_err("no index");
    assert!(err.to_string().contains("knowledge index"), "{err}");
    // The repository is gone: a rebuilt index can only come from the stored chunks.
    let moved = tempfile::tempdir().unwrap();
    index(moved.path(), &db);
    assert_eq!(paths(&db, &["zqxwidget"], &[]), ["src/billing.py"]);
    // A file in the index's place is replaced too.
    std::fs::remove_dir_all(&lexical).unwrap();
    std::fs::write(&lexical, b"not an index").unwrap();
    index(moved.path(), &db);
    assert_eq!(paths(&db, &["zqxwidget"], &[]), ["src/billing.py"]);
}

#[test]
fn a_store_of_schema_1_is_upgraded_in_place_and_searchable() {
    let repo = repo();
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("code.sqlite");
    index(repo.path(), &db);
    // What schema 1 had: the FTS5 table, no pending table, no index beside it.
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "DROP TABLE lexical_pending;
             CREATE VIRTUAL TABLE chunks_fts USING fts5(body, sym, path);
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    std::fs::remove_dir_all(data.path().join("code.lexical")).unwrap();
    index(repo.path(), &db);
    let c = rusqlite::Connection::open(&db).unwrap();
    let fts: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'chunks_fts'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(fts, 0);
    assert_eq!(paths(&db, &["zqxwidget"], &[]), ["src/billing.py"]);
}
