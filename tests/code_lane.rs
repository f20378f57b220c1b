//! End-to-end tests of the built-in code lane (L2): index a temporary repository with the real
//! walker, chunkers and store, then search and read it through the read-only `CodeStore`.
//! They pin the promises the engine relies on: symbol names, stable ids and `index_rev`,
//! incremental updates, skips, secret redaction, literal queries, workspace and path filters,
//! freshness and `read_code`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use knowledge::sources::code::{
    index_code, CodeIndexOptions, CodeIndexSummary, CodeQuery, CodeSearch, CodeStore,
    CodeStoreError,
};
use knowledge::text::tokens::query_terms;

const SECRET: &str = "sup3r-s3cret-Value-42";

fn write(root: &Path, rel: &str, body: &[u8]) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
}

const RUST: &str = r#"use std::net::TcpStream;

/// Database settings.
pub struct Config {
    pub host: String,
    pub port: u16,
}

impl Config {
    /// Open a MySQL connection to the configured host.
    pub fn connect(&self) -> std::io::Result<TcpStream> {
        TcpStream::connect((self.host.as_str(), self.port))
    }

    pub fn describe(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}
"#;

const TS: &str = r#"import { Api } from "./api";

export class CartService {
  constructor(private api: Api) {}

  getUserName(id: string): string {
    return this.api.user(id).name;
  }
}

export function renderCart(cart: CartService) {
  const a = cart.getUserName("a");
  const b = cart.getUserName("b");
  return `${a} ${b} getUserName getUserName`;
}
"#;

const PY: &str = r#"import os

class Service:
    """Billing service."""

    def charge(self, amount):
        return amount * 2

def main():
    Service().charge(1)
"#;

const GO: &str = "package main\n\ntype Repo struct {\n\tdb string\n}\n\nfunc (r *Repo) Find(id int) string {\n\treturn r.db\n}\n";

const PHP: &str = "<?php\nnamespace App;\n\nclass Config {\n    private $dsn = 'mysql:host=db';\n\n    public function connect() {\n        return new \\PDO($this->dsn);\n    }\n}\n";

const MD: &str = "# Billing\n\nIntro text.\n\n## Deployment\n\nRun the deploy script.\n";

const YAML: &str = "database:\n  host: db.internal\n  port: 3306\n\ncache:\n  ttl: 60\n";

/// A repository with one file per chunker, plus files that must be skipped.
fn make_repo(root: &Path) {
    write(root, ".gitignore", b"ignored/\n*.log\n");
    write(root, "src/config.rs", RUST.as_bytes());
    write(root, "web/cart.ts", TS.as_bytes());
    write(root, "app/service.py", PY.as_bytes());
    write(root, "cmd/repo.go", GO.as_bytes());
    write(root, "src/Config.php", PHP.as_bytes());
    write(root, "README.md", MD.as_bytes());
    write(root, "deploy.yaml", YAML.as_bytes());
    let env = format!("DB_HOST=db.internal\nDB_PASSWORD={SECRET}\n");
    write(root, ".env", env.as_bytes());
    write(root, "ignored/hidden.rs", b"fn hidden_secret_fn() {}\n");
    write(root, "debug.log", b"log line\n");
    write(root, "data.txt", b"abc\0\x01\x02binary");
    write(root, "latin1.txt", b"caf\xe9 menu\n");
}

struct World {
    _dirs: Vec<tempfile::TempDir>,
    root: PathBuf,
    db: PathBuf,
}

fn world() -> World {
    let repo = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = repo.path().canonicalize().unwrap();
    make_repo(&root);
    let db = data.path().join("code.sqlite");
    World {
        _dirs: vec![repo, data],
        root,
        db,
    }
}

fn index(db: &Path, roots: &[PathBuf]) -> CodeIndexSummary {
    index_code(db, roots, &CodeIndexOptions::default(), &mut |_| {}).unwrap()
}

fn query(text: &str) -> CodeQuery {
    CodeQuery {
        terms: query_terms(text),
        limit: 10,
        snippet_chars: 240,
        ..CodeQuery::default()
    }
}

fn search(store: &CodeStore, text: &str) -> CodeSearch {
    store.search(&query(text)).unwrap()
}

/// chunk_id → (path, symbol) of every chunk of the given files.
fn chunk_map(store: &CodeStore, paths: &[&str]) -> BTreeMap<String, (String, Option<String>)> {
    let mut out = BTreeMap::new();
    for p in paths {
        let lines = store.read_code(p, 1, None).unwrap();
        for c in lines.chunks {
            out.insert(c.chunk_id, (p.to_string(), c.symbol));
        }
    }
    out
}

const ALL: &[&str] = &[
    "src/config.rs",
    "web/cart.ts",
    "app/service.py",
    "cmd/repo.go",
    "src/Config.php",
    "README.md",
    "deploy.yaml",
    ".env",
];

fn symbols_of(store: &CodeStore, path: &str) -> Vec<String> {
    let lines = store.read_code(path, 1, None).unwrap();
    lines.chunks.into_iter().filter_map(|c| c.symbol).collect()
}

#[test]
fn indexes_symbols_and_counts_skips() {
    let w = world();
    let s = index(&w.db, std::slice::from_ref(&w.root));
    assert_eq!(s.roots, vec![w.root.display().to_string()]);
    assert_eq!(s.files_new, s.files_seen - 1, "{s:?}"); // data.txt is binary
    assert_eq!(s.skipped.get("ignored"), Some(&2), "{s:?}"); // ignored/ and debug.log
    assert_eq!(s.skipped.get("binary"), Some(&1), "{s:?}");
    assert_eq!(s.lossy_utf8, 1);
    assert!(s.secrets_redacted >= 1);
    assert!(s.chunks > 10 && s.lines > 50 && s.bytes > 500, "{s:?}");
    assert!(s.index_rev.starts_with("code:"));

    let store = CodeStore::open(&w.db).unwrap();
    for (path, want) in [
        ("src/config.rs", "Config"),
        ("src/config.rs", "Config::connect"),
        ("src/config.rs", "Config::describe"),
        ("web/cart.ts", "CartService.getUserName"),
        ("web/cart.ts", "renderCart"),
        ("app/service.py", "Service.charge"),
        ("cmd/repo.go", "Repo.Find"),
        ("src/Config.php", "Config::connect"),
    ] {
        let got = symbols_of(&store, path);
        assert!(got.iter().any(|s| s == want), "{want} in {path}: {got:?}");
    }
    let md = symbols_of(&store, "README.md");
    assert_eq!(md, vec!["Billing", "Deployment"]);
    assert_eq!(symbols_of(&store, "deploy.yaml"), vec!["database", "cache"]);

    let rs = store.read_code("src/config.rs", 1, None).unwrap();
    let connect = rs
        .chunks
        .iter()
        .find(|c| c.symbol.as_deref() == Some("Config::connect"))
        .unwrap();
    assert_eq!((connect.start_line, connect.end_line), (10, 13));
    assert_eq!(connect.source_kind, "symbol");
    assert_eq!(connect.symbol_kind.as_deref(), Some("method"));
    let import = rs.chunks.iter().find(|c| c.start_line == 1).unwrap();
    assert_eq!(import.source_kind, "window", "imports go to a window");

    // Skipped files are not in the index.
    for p in ["ignored/hidden.rs", "debug.log", "data.txt"] {
        assert!(matches!(
            store.read_code(p, 1, None),
            Err(CodeStoreError::NotIndexed(_))
        ));
    }
    let hidden = search(&store, "hidden_secret_fn");
    assert!(hidden.hits.iter().all(|h| !h.path.starts_with("ignored/")));
    let stats = store.stats().unwrap();
    assert_eq!(stats.index_rev.as_deref(), Some(s.index_rev.as_str()));
    assert_eq!(stats.chunks, s.chunks);
    assert_eq!(store.roots().unwrap(), vec![w.root.display().to_string()]);
}

#[test]
fn reindex_is_incremental_and_ids_are_stable() {
    let w = world();
    let roots = std::slice::from_ref(&w.root);
    let first = index(&w.db, roots);
    let ids_before = chunk_map(&CodeStore::open(&w.db).unwrap(), ALL);

    // No-op: nothing read, nothing changes.
    let again = index(&w.db, roots);
    assert_eq!(again.files_unchanged, again.files_seen - 1);
    assert_eq!(
        again.files_new + again.files_changed + again.files_deleted,
        0
    );
    assert_eq!(again.index_rev, first.index_rev);

    // A new mtime with the same content: still unchanged, same revision.
    let rs = w.root.join("src/config.rs");
    let later = SystemTime::now() + Duration::from_secs(5);
    fs::File::options()
        .write(true)
        .open(&rs)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let touched = index(&w.db, roots);
    assert_eq!(touched.files_changed, 0);
    assert_eq!(touched.index_rev, first.index_rev);
    assert_eq!(chunk_map(&CodeStore::open(&w.db).unwrap(), ALL), ids_before);

    // Changing one function re-chunks the file; untouched chunks keep their ids.
    let changed = RUST.replace("format!(\"{}:{}\"", "format!(\"{}/{}\"");
    fs::write(&rs, changed).unwrap();
    let after = index(&w.db, roots);
    assert_eq!(after.files_changed, 1);
    assert_ne!(after.index_rev, first.index_rev);
    let store = CodeStore::open(&w.db).unwrap();
    let ids_after = chunk_map(&store, ALL);
    let sym_of = |m: &BTreeMap<String, (String, Option<String>)>, s: &str| {
        m.iter()
            .find(|(_, v)| v.1.as_deref() == Some(s))
            .map(|(k, _)| k.clone())
    };
    assert_eq!(
        sym_of(&ids_after, "Config::connect"),
        sym_of(&ids_before, "Config::connect")
    );
    assert_ne!(
        sym_of(&ids_after, "Config::describe"),
        sym_of(&ids_before, "Config::describe")
    );
    assert_eq!(
        ids_after
            .iter()
            .filter(|(_, v)| v.0 != "src/config.rs")
            .count(),
        ids_before
            .iter()
            .filter(|(_, v)| v.0 != "src/config.rs")
            .count()
    );

    // A deleted file disappears from the index and from search.
    fs::remove_file(w.root.join("cmd/repo.go")).unwrap();
    let gone = index(&w.db, roots);
    assert_eq!(gone.files_deleted, 1);
    assert_ne!(gone.index_rev, after.index_rev);
    let store = CodeStore::open(&w.db).unwrap();
    assert!(matches!(
        store.read_code("cmd/repo.go", 1, None),
        Err(CodeStoreError::NotIndexed(_))
    ));
    assert!(search(&store, "Repo Find")
        .hits
        .iter()
        .all(|h| h.path != "cmd/repo.go"));

    // Indexing another root leaves this one as it is.
    let other = tempfile::tempdir().unwrap();
    write(other.path(), "x.txt", b"unrelated words\n");
    let more = index(&w.db, &[other.path().to_path_buf()]);
    assert_eq!(more.files_deleted, 0);
    let store = CodeStore::open(&w.db).unwrap();
    assert!(store.read_code("src/config.rs", 1, Some(3)).is_ok());
    assert_eq!(store.roots().unwrap().len(), 2);
}

#[test]
fn secrets_never_leave_the_index() {
    let w = world();
    index(&w.db, std::slice::from_ref(&w.root));
    let store = CodeStore::open(&w.db).unwrap();

    let found = search(&store, "DB_PASSWORD");
    let env = found
        .hits
        .iter()
        .find(|h| h.path == ".env")
        .expect("key finds the .env chunk");
    assert_eq!(env.source_kind, "config");
    assert!(env.snippet.contains("DB_PASSWORD"), "{}", env.snippet);
    assert!(!search(&store, "password").hits.is_empty());
    for q in ["DB_PASSWORD", "password", SECRET, "s3cret Value"] {
        for h in search(&store, q).hits {
            assert!(!h.snippet.contains(SECRET), "{q}: {}", h.snippet);
        }
    }
    let lines = store.read_code(".env", 1, None).unwrap();
    assert_eq!(lines.lines[1], "DB_PASSWORD=[REDACTED]");
    assert_eq!(lines.redacted, 1);
    for p in ALL {
        let l = store.read_code(p, 1, None).unwrap();
        assert!(!l.lines.join("\n").contains(SECRET));
    }
    drop(store);
    for suffix in ["", "-wal"] {
        let file = PathBuf::from(format!("{}{suffix}", w.db.display()));
        if let Ok(bytes) = fs::read(&file) {
            let hay = String::from_utf8_lossy(&bytes).to_lowercase();
            assert!(!hay.contains(&SECRET.to_lowercase()), "{suffix}");
            assert!(!hay.contains("s3cret"), "no secret terms in {suffix}");
        }
    }
}

#[test]
fn getusername_ranks_its_definition_first() {
    let w = world();
    index(&w.db, std::slice::from_ref(&w.root));
    let store = CodeStore::open(&w.db).unwrap();
    for q in ["getUserName", "get_user_name", "get user name"] {
        let r = search(&store, q);
        let top = &r.hits[0];
        let sym = top.symbol.as_deref();
        assert_eq!(sym, Some("CartService.getUserName"), "{q}: {:?}", r.hits);
        let why = top.why.join(" | ");
        for want in ["symbol: CartService.getUserName", "lex: user", "bm25: "] {
            assert!(why.contains(want), "{want} in {why}");
        }
        assert!(top.score > 0.0 && top.mtime_ms > 0 && top.mtime.ends_with('Z'));
        assert_eq!(r.capability, knowledge::contract::Capability::Lexical);
        assert!(!r.stale);
        assert!(r.index_rev.is_some());
    }
    let r = search(&store, "mysql connection");
    assert!(
        r.hits
            .iter()
            .take(3)
            .any(|h| h.symbol.as_deref() == Some("Config::connect")),
        "{:?}",
        r.hits
    );
}

#[test]
fn queries_are_literal() {
    let w = world();
    index(&w.db, std::slice::from_ref(&w.root));
    let store = CodeStore::open(&w.db).unwrap();
    let nasty = r#""connect|connect*|NEAR(connect config)|connect OR|OR|-connect|config:connect|""|*|:|AND NOT|{col}: x ^ y"#;
    for q in nasty.split('|') {
        let r = store.search(&query(q));
        assert!(r.is_ok(), "{q}: {r:?}");
    }
    // Raw terms with FTS syntax, bypassing the tokenizer, are made literal too.
    let raw = CodeQuery {
        terms: vec![
            "NEAR(".into(),
            "\"connect\"*".into(),
            "-".into(),
            "a:b".into(),
        ],
        limit: 5,
        ..CodeQuery::default()
    };
    let r = store.search(&raw).unwrap();
    assert!(r
        .hits
        .iter()
        .any(|h| h.symbol.as_deref() == Some("Config::connect")));
    assert!(search(&store, "").hits.is_empty());
}

#[test]
fn workspaces_and_paths_filter_at_boundaries() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let billing = base.join("billing");
    let archive = base.join("billing-archive");
    write(
        &billing,
        "src/invoice.rs",
        b"fn invoice_total() -> u32 { 1 }\n",
    );
    write(
        &billing,
        "docs/invoice.md",
        b"# Invoice\n\nHow an invoice is made.\n",
    );
    write(
        &archive,
        "src/invoice.rs",
        b"fn invoice_old() -> u32 { 2 }\n",
    );
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("code.sqlite");
    index(&db, &[billing.clone(), archive.clone()]);
    let store = CodeStore::open(&db).unwrap();
    let run = |workspaces: Vec<String>, paths: Vec<String>| {
        let mut q = query("invoice");
        q.workspaces = workspaces;
        q.paths = paths;
        let mut got: Vec<String> = store
            .search(&q)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| format!("{}|{}", h.root, h.path))
            .collect();
        got.sort();
        got.dedup();
        got
    };
    let b = billing.display().to_string();
    let a = archive.display().to_string();
    assert_eq!(run(vec![], vec![]).len(), 3);
    assert_eq!(
        run(vec![b.clone()], vec![]),
        vec![
            format!("{b}|docs/invoice.md"),
            format!("{b}|src/invoice.rs")
        ]
    );
    assert_eq!(
        run(vec![format!("{b}/")], vec![]).len(),
        2,
        "trailing slash"
    );
    assert_eq!(
        run(vec![a.clone()], vec![]),
        vec![format!("{a}|src/invoice.rs")]
    );
    assert_eq!(
        run(vec![base.display().to_string()], vec![]).len(),
        3,
        "parent folder"
    );
    assert!(run(vec![format!("{b}-arch")], vec![]).is_empty());
    // A folder inside a root keeps only the files under it.
    assert_eq!(
        run(vec![format!("{b}/src")], vec![]),
        vec![format!("{b}|src/invoice.rs")]
    );
    assert!(run(vec![format!("{b}/sr")], vec![]).is_empty());
    // Paths: relative prefixes at a `/` boundary, or absolute prefixes.
    assert_eq!(run(vec![], vec!["src".into()]).len(), 2);
    assert_eq!(run(vec![], vec!["src/".into()]).len(), 2);
    assert_eq!(
        run(vec![b.clone()], vec!["docs".into()]),
        vec![format!("{b}|docs/invoice.md")]
    );
    assert!(run(vec![], vec!["sr".into()]).is_empty());
    assert_eq!(
        run(vec![], vec![format!("{a}/src")]),
        vec![format!("{a}|src/invoice.rs")]
    );
    // Time filters bound the file mtime.
    let mut q = query("invoice");
    q.since_ms = Some(i64::MAX / 2_000_000);
    assert!(store.search(&q).unwrap().hits.is_empty());
    q.since_ms = None;
    q.until_ms = Some(0);
    assert!(store.search(&q).unwrap().hits.is_empty());
}

#[test]
fn stale_files_are_flagged_but_still_returned() {
    let w = world();
    index(&w.db, std::slice::from_ref(&w.root));
    let store = CodeStore::open(&w.db).unwrap();
    assert!(!search(&store, "Service charge").stale);

    let py = w.root.join("app/service.py");
    fs::write(&py, format!("{PY}\n# edited after indexing\n")).unwrap();
    let r = search(&store, "Service charge");
    assert!(r.stale);
    assert_eq!(
        r.stale_paths,
        vec![format!("{}/app/service.py", w.root.display())]
    );
    assert!(r
        .hits
        .iter()
        .any(|h| h.symbol.as_deref() == Some("Service.charge")));
    let lines = store.read_code("app/service.py", 6, Some(7)).unwrap();
    assert!(lines.freshness.stale);
    assert_eq!(lines.freshness.verified_by, "fingerprint");

    fs::remove_file(w.root.join("cmd/repo.go")).unwrap();
    let r = search(&store, "Repo Find");
    assert!(r.stale && r.hits.iter().any(|h| h.path == "cmd/repo.go"));
    let gone = store.read_code("cmd/repo.go", 1, None).unwrap();
    assert_eq!(gone.read_from, "index");
    assert!(gone.freshness.stale);
    assert!(gone.lines.iter().any(|l| l.contains("func (r *Repo) Find")));
}

#[test]
fn read_code_returns_current_redacted_lines() {
    let w = world();
    index(&w.db, std::slice::from_ref(&w.root));
    let store = CodeStore::open(&w.db).unwrap();
    let r = store.read_code("src/config.rs", 10, Some(13)).unwrap();
    assert_eq!((r.start_line, r.end_line, r.total_lines), (10, 13, 18));
    assert_eq!(r.lines.len(), 4);
    assert!(r.lines[1].contains("pub fn connect"));
    assert!(!r.freshness.stale);
    assert_eq!(r.read_from, "disk");
    assert!(r
        .chunks
        .iter()
        .any(|c| c.symbol.as_deref() == Some("Config::connect")));
    assert!(r
        .chunks
        .iter()
        .all(|c| c.start_line <= 13 && c.end_line >= 10));

    let abs = w.root.join(".env").display().to_string();
    let env = store.read_code(&abs, 1, None).unwrap();
    assert_eq!(
        env.lines,
        vec!["DB_HOST=db.internal", "DB_PASSWORD=[REDACTED]"]
    );
    assert_eq!(env.path, ".env");

    let past = store.read_code("src/config.rs", 500, None).unwrap();
    assert!(past.lines.is_empty() && past.chunks.is_empty());
    assert!(matches!(
        store.read_code("nope.rs", 1, None),
        Err(CodeStoreError::NotIndexed(_))
    ));
}

/// The demo world, when present: its billing repository answers "mysql connection" with the
/// Config/Connection code, its planted `.env` canary never reaches the index, and the sibling
/// `billing-archive` stays out of a `billing` workspace.
#[test]
fn demo_billing_repo_finds_mysql_connection() {
    let repos = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/repos");
    let billing = repos.join("billing").canonicalize();
    let Ok(billing) = billing else {
        eprintln!("fixtures/demo/repos/billing not present; skipped");
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("code.sqlite");
    let mut roots = vec![billing.clone()];
    roots.extend(
        ["billing-archive", "webshop"]
            .map(|r| repos.join(r))
            .into_iter()
            .filter(|p| p.is_dir()),
    );
    let s = index(&db, &roots);
    assert!(s.chunks > 0 && s.failed.is_empty(), "{s:?}");
    let store = CodeStore::open(&db).unwrap();
    let mut q = query("mysql connection");
    q.workspaces = vec![billing.display().to_string()];
    let r = store.search(&q).unwrap();
    let top: Vec<String> = r
        .hits
        .iter()
        .take(3)
        .map(|h| h.symbol.clone().unwrap_or_default())
        .collect();
    assert!(
        top.iter()
            .any(|t| t.contains("Config") || t.contains("Connection")),
        "{top:?}"
    );
    assert!(r
        .hits
        .iter()
        .all(|h| h.root == billing.display().to_string()));
    assert!(!r.stale, "{:?}", r.stale_paths);

    let env = search(&store, "DB_PASSWORD");
    assert!(env.hits.iter().any(|h| h.path == ".env"), "{:?}", env.hits);
    let lines = store
        .read_code(&billing.join(".env").display().to_string(), 1, None)
        .unwrap();
    assert!(
        lines.lines.contains(&"DB_PASSWORD=[REDACTED]".to_string()),
        "{:?}",
        lines.lines
    );
    drop(store);
    for suffix in ["", "-wal"] {
        if let Ok(bytes) = fs::read(format!("{}{suffix}", db.display())) {
            assert!(!String::from_utf8_lossy(&bytes).contains("canary-env-5521"));
        }
    }
}
