//! The sentence vectors of every message (`sources::episodes::messages`) through the indexer, the
//! embed pass and the store: a Russian question about an English session finds the message that
//! answers it, coverage counts what waits, appended messages are embedded on the next pass, a
//! pass killed after writing but before forgetting its sessions answers nothing twice, a
//! rewritten transcript's vectors follow the store, and a file beside another store is made anew.

use std::collections::HashSet;
use std::path::PathBuf;

use knowledge::sources::episodes::index::{index_episodes, IndexOptions};
use knowledge::sources::episodes::messages::arm::SentenceQuery;
use knowledge::sources::episodes::messages::embed::{embed_pending, EmbedSummary};
use knowledge::sources::episodes::messages::file::Mapped;
use knowledge::sources::episodes::messages::{coverage, stored_id, Coverage};
use knowledge::sources::episodes::search::{EpisodeQuery, EpisodeStore};
use knowledge::text::encoder::Encoder;
use knowledge::text::tokens;

/// A Claude Code transcript of `texts`, user and assistant in turn.
fn transcript(session: &str, texts: &[&str]) -> String {
    let mut out = String::new();
    let mut parent: Option<String> = None;
    for (i, text) in texts.iter().enumerate() {
        let uuid = format!("{session}-{i}");
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let message = if role == "user" {
            serde_json::json!({"role": "user", "content": text})
        } else {
            serde_json::json!({"role": "assistant", "type": "message",
                "content": [{"type": "text", "text": text}]})
        };
        let line = serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": role,
            "message": message, "uuid": uuid,
            "timestamp": format!("2026-05-01T10:{:02}:00.000Z", i),
            "cwd": "/work/app", "sessionId": session, "version": "2.1.172"});
        out.push_str(&line.to_string());
        out.push('\n');
        parent = Some(uuid);
    }
    out
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    db: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("projects");
        std::fs::create_dir_all(root.join("-work-app")).expect("projects");
        let db = tmp.path().join("data").join("episodes.sqlite");
        std::fs::create_dir_all(db.parent().expect("data")).expect("data dir");
        World {
            _tmp: tmp,
            root,
            db,
        }
    }

    fn write(&self, session: &str, texts: &[&str]) {
        let path = self.root.join("-work-app").join(format!("{session}.jsonl"));
        std::fs::write(path, transcript(session, texts)).expect("write transcript");
    }

    fn index(&self) {
        index_episodes(
            &self.db,
            &IndexOptions::new(vec![self.root.clone()]),
            &mut |_| {},
        )
        .expect("index");
    }

    fn embed(&self) -> EmbedSummary {
        embed_pending(&self.db, encoder(), &mut |_, _| {}).expect("embed")
    }

    fn coverage(&self) -> Coverage {
        let conn = knowledge::sources::sqlite::open_ro(&self.db).expect("open");
        coverage(&conn).expect("coverage")
    }

    /// The live records' event ids, each as often as it has a first window.
    fn live_events(&self) -> Vec<i64> {
        let conn = knowledge::sources::sqlite::open_ro(&self.db).expect("open");
        let id = stored_id(&conn).expect("a store id");
        let m = Mapped::open(&self.db, &id).expect("map").expect("the file");
        m.live()
            .iter()
            .filter(|r| r.window == 0)
            .map(|r| r.event)
            .collect()
    }

    fn sessions_for(&self, text: &str) -> Vec<String> {
        let store = EpisodeStore::open(&self.db).expect("store");
        let terms = tokens::query_terms(text);
        let q = EpisodeQuery {
            own_terms: terms.clone(),
            identifiers: tokens::identifier_terms(text),
            terms,
            limit: 10,
            snippet_chars: 80,
            sentence: SentenceQuery::of(text),
            ..EpisodeQuery::default()
        };
        let mut out: Vec<String> = Vec::new();
        for h in store.search(&q).expect("search") {
            if !out.contains(&h.session_id) {
                out.push(h.session_id);
            }
        }
        out
    }
}

/// The logs session's first message in Russian: no word in common, only its vectors find it.
const DISK: &str =
    "на сервере постоянно заканчивается место, лог приложения растёт без ограничений";
/// The login session's first message in Russian.
const SIGN_IN: &str = "пользователи не могут войти после письма со сбросом пароля";

fn encoder() -> &'static Encoder {
    Encoder::shared().expect("the encoder's assets in assets/encoder")
}

fn topics(w: &World) {
    w.write(
        "logs",
        &[
            "the server keeps running out of space, the application log grows without limit",
            "I added log rotation with a size cap of 100 MB and compression of old files",
            "ok",
        ],
    );
    w.write(
        "login",
        &[
            "users cannot sign in after the password reset email",
            "the reset token expired too early; I extended its lifetime to one hour",
        ],
    );
    w.write(
        "charts",
        &[
            "make the sales chart on the dashboard show weekly totals",
            "the chart now groups orders by ISO week and draws a bar per week",
        ],
    );
}

#[test]
fn a_question_in_other_words_finds_its_session() {
    let w = World::new();
    topics(&w);
    w.index();
    assert_eq!(
        w.coverage(),
        Coverage {
            embedded: 0,
            messages: 7
        }
    );
    let s = w.embed();
    assert_eq!((s.sessions, s.messages), (3, 7));
    assert!(w.coverage().complete());
    let disk = w.sessions_for(DISK);
    assert_eq!(disk.first().map(String::as_str), Some("logs"), "{disk:?}");
    let sign_in = w.sessions_for(SIGN_IN);
    assert_eq!(
        sign_in.first().map(String::as_str),
        Some("login"),
        "{sign_in:?}"
    );
}

/// A session of four messages appended after the first embed pass.
fn charts(w: &World) {
    w.write(
        "charts",
        &[
            "make the sales chart on the dashboard show weekly totals",
            "the chart now groups orders by ISO week and draws a bar per week",
            "also export the weekly totals as a CSV file",
            "done: a download button writes the CSV",
        ],
    );
}

#[test]
fn appended_messages_wait_then_are_embedded_once() {
    let w = World::new();
    topics(&w);
    w.index();
    w.embed();
    charts(&w);
    w.index();
    assert_eq!(
        w.coverage(),
        Coverage {
            embedded: 7,
            messages: 9
        }
    );
    let s = w.embed();
    assert_eq!((s.sessions, s.messages), (1, 2), "only the new messages");
    let events = w.live_events();
    assert_eq!(events.len(), 9);
    assert_eq!(events.iter().collect::<HashSet<_>>().len(), 9);
    assert!(w.embed() == EmbedSummary::default(), "nothing left to do");
}

#[test]
fn a_pass_killed_before_it_forgot_its_sessions_answers_nothing_twice() {
    let w = World::new();
    topics(&w);
    w.index();
    w.embed();
    // As a pass killed after its fsync but before its DELETE leaves the store: every session
    // still named, its records already in the file.
    let conn = rusqlite::Connection::open(&w.db).expect("open");
    conn.execute_batch("INSERT INTO vector_pending(key, from_seq) SELECT key, 0 FROM session_keys")
        .expect("mark");
    drop(conn);
    let s = w.embed();
    assert_eq!(s.messages, 7);
    let events = w.live_events();
    assert_eq!(events.len(), 7);
    assert_eq!(events.iter().collect::<HashSet<_>>().len(), 7);
    let found = w.sessions_for(DISK);
    assert_eq!(found.iter().filter(|s| *s == "logs").count(), 1);
}

#[test]
fn a_rewritten_transcript_is_embedded_as_the_store_keeps_it() {
    let w = World::new();
    topics(&w);
    w.index();
    w.embed();
    // The same session id, other words from the start: a rewrite, not an append. The store
    // merges it (what it held stays searchable); the vectors follow the store exactly.
    w.write(
        "logs",
        &[
            "translate the onboarding screens into German",
            "all onboarding strings now come from the de locale file",
            "ok",
        ],
    );
    w.index();
    w.embed();
    let cov = w.coverage();
    assert!(cov.complete() && cov.messages > 7, "{cov:?}");
    let events = w.live_events();
    assert_eq!(events.len() as u64, cov.messages);
    assert_eq!(events.iter().collect::<HashSet<_>>().len(), events.len());
    let found = w.sessions_for("which language did we add to the first-run screens?");
    assert_eq!(found.first().map(String::as_str), Some("logs"), "{found:?}");
}

#[test]
fn a_file_beside_another_store_is_made_anew() {
    let w = World::new();
    topics(&w);
    w.index();
    w.embed();
    let conn = rusqlite::Connection::open(&w.db).expect("open");
    conn.execute(
        "UPDATE meta SET value = 'another' WHERE key = 'vectors_store_id'",
        [],
    )
    .expect("id");
    drop(conn);
    let m = Mapped::open(&w.db, "another").expect("map");
    assert!(m.is_none(), "never read as this store's");
    let s = w.embed();
    assert_eq!(s.messages, 7, "made anew from the store");
    assert_eq!(w.live_events().len(), 7);
}

#[test]
fn a_lane_answered_while_messages_wait_says_so() {
    use knowledge::contract::SearchRequest;
    use knowledge::engine::{Engine, EngineConfig};
    let w = World::new();
    topics(&w);
    w.index();
    w.embed();
    let data = w.db.parent().expect("data dir").to_path_buf();
    let engine = |dir: &std::path::Path| {
        Engine::open(EngineConfig {
            semantic: true,
            lane_timeout: std::time::Duration::from_secs(20),
            ..EngineConfig::new(dir)
        })
    };
    let warned = |e: &Engine| {
        let resp = e.search(&SearchRequest::new("log rotation size cap"));
        resp.warnings
            .iter()
            .map(|w| w.message.clone())
            .find(|m| m.contains("vectors:"))
    };
    assert_eq!(warned(&engine(&data)), None, "every message has its vector");
    charts(&w);
    w.index();
    let said = warned(&engine(&data)).expect("a warning");
    assert!(said.contains("vectors: 7 of 9 messages"), "{said}");
    w.embed();
    assert_eq!(warned(&engine(&data)), None);
}
