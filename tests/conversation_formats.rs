//! Sessions whose conversation is not their lines in order: Pi's tree of entries (only the
//! branch ending at the last entry is the conversation) and Gemini CLI's rewinds and
//! re-appended messages. What left the conversation stays searchable, marked `abandoned`, and
//! stops counting for the outcome; an event keeps its seq whether the file was read at once
//! or as it grew (docs/EVENTS.md, "The conversation" and "Event identity"). Synthetic
//! fixtures in `fixtures/formats/`, real samples in `../shared/realdata` (skipped when absent).

mod common;

use std::path::{Path, PathBuf};

use knowledge::sources::episodes::agent::read_whole;
use knowledge::sources::episodes::agents;
use knowledge::sources::episodes::discover::discover;
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};
use knowledge::sources::episodes::model::Fact;

const PI: &str = "0199f3b2-1c4d-7e5f-8a9b-0c1d2e3f4a5b";
const PI_FILE: &str = "pi/sessions/--home-dev-exporter--/2026-07-01T09-00-00-000Z_0199f3b2-1c4d-7e5f-8a9b-0c1d2e3f4a5b.jsonl";
const GEMINI: &str = "6b1e0c7a-2f3d-4a5b-9c8d-7e6f5a4b3c2d";
const GEMINI_FILE: &str = "gemini/tmp/webhooks/chats/session-2026-07-02T10-00-6b1e0c7a.jsonl";

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/formats")
        .join(rel)
}

fn index(db: &Path, roots: Vec<PathBuf>) -> IndexSummary {
    index_episodes(db, &IndexOptions::new(roots), &mut |_| {}).expect("index")
}

/// One stored event: seq, type, text, and whether it is marked off the conversation.
#[derive(Debug, PartialEq)]
struct Row {
    seq: i64,
    event_type: String,
    text: String,
    abandoned: Option<String>,
}

fn rows(db: &Path, session: &str) -> Vec<Row> {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    let mut stmt = c
        .prepare("SELECT seq, event_type, text, facts FROM events WHERE session_id=?1 ORDER BY seq")
        .expect("q");
    let rows = stmt
        .query_map([session], |r| {
            let facts: Option<String> = r.get(3)?;
            let abandoned = facts
                .and_then(|f| serde_json::from_str::<Vec<Fact>>(&f).ok())
                .into_iter()
                .flatten()
                .find_map(|f| match f {
                    Fact::Abandoned { reason } => Some(reason),
                    _ => None,
                });
            Ok(Row {
                seq: r.get(0)?,
                event_type: r.get(1)?,
                text: r.get(2)?,
                abandoned,
            })
        })
        .expect("rows");
    rows.flatten().collect()
}

fn outcome(db: &Path, session: &str) -> (String, Option<String>) {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    c.query_row(
        "SELECT outcome, title FROM sessions WHERE session_id=?1",
        [session],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .expect("session")
}

fn abandoned<'a>(rows: &'a [Row], reason: &str) -> Vec<&'a str> {
    rows.iter()
        .filter(|r| r.abandoned.as_deref() == Some(reason))
        .map(|r| r.text.as_str())
        .collect()
}

/// `src`'s lines written to `dst` one append at a time, indexing after each (as watch mode
/// would); returns the last run's summary.
fn index_as_it_grows(db: &Path, src: &Path, dst: &Path, root: &Path) -> IndexSummary {
    let text = std::fs::read_to_string(src).expect("read");
    std::fs::create_dir_all(dst.parent().expect("dir")).expect("mkdir");
    let mut written = String::new();
    let mut last = IndexSummary::default();
    for line in text.lines() {
        written.push_str(line);
        written.push('\n');
        std::fs::write(dst, &written).expect("write");
        last = index(db, vec![root.to_path_buf()]);
    }
    last
}

#[test]
fn pi_abandoned_branch_is_kept_marked_and_the_outcome_follows_the_conversation() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![fixture("pi")]);
    assert_eq!((s.files_new, s.lines.skipped()), (1, 0), "{s:?}");
    let got = rows(&db, PI);
    // The branch the person tried and left (transliterating names) is kept, marked.
    let left = abandoned(&got, "branch");
    assert_eq!(left.len(), 4, "{got:#?}");
    assert!(
        left[0].starts_with("Tried opening the CSV as UTF-8"),
        "its branch summary"
    );
    assert!(left[1].contains("Try transliterating"));
    assert!(left[3].contains("ModuleNotFoundError"));
    // Its secret is redacted like any other event's.
    assert!(left[2].contains("EXPORT_DB_PASSWORD") && !left[2].contains("s3cr3t-exporter"));
    // The conversation: the UTF-8 fix, its edit, the export that ran.
    assert!(got
        .iter()
        .any(|r| r.abandoned.is_none() && r.text.contains("encoding='utf-8'")));
    assert!(got
        .iter()
        .any(|r| r.abandoned.is_none() && r.text.contains("exported 1204 rows")));
    // The left branch ended on a failing call; the conversation recovered from its own failure.
    let (out, title) = outcome(&db, PI);
    assert_eq!(out, "success");
    assert_eq!(title.as_deref(), Some("CSV export keeps accented names"));
    let file = discover(&fixture("pi")).remove(0);
    let (sink, _) = read_whole(&file).expect("read");
    assert_eq!(sink.sessions[0].events.len(), got.len());
    assert_eq!(
        agents::resume_command("pi", PI, Some("/home/dev/exporter")).as_deref(),
        Some("cd /home/dev/exporter && pi --resume")
    );
}

#[test]
fn pi_a_branch_seen_on_append_re_marks_the_stored_events_and_keeps_their_seqs() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("sessions");
    let dst = root.join(PI_FILE.trim_start_matches("pi/sessions/"));
    let grown = dir.path().join("grown.sqlite");
    index_as_it_grows(&grown, &fixture(PI_FILE), &dst, &root);
    let once = dir.path().join("once.sqlite");
    index(&once, vec![root.clone()]);
    // Read as it grew (the branch was first the conversation, then left, and the UTF-8 fix
    // first left, then taken again) or at once: the same events, seqs and marks.
    let grown_rows = rows(&grown, PI);
    assert_eq!(grown_rows, rows(&once, PI));
    assert_eq!(abandoned(&grown_rows, "branch").len(), 4);
    assert_eq!(outcome(&grown, PI), outcome(&once, PI));
    // A plain append (a child of the last entry) is read on from where the last run stopped.
    let mut text = std::fs::read_to_string(&dst).expect("read");
    text.push_str(r#"{"type":"message","id":"e0000016","parentId":"e0000015","timestamp":"2026-07-01T09:03:00.000Z","message":{"role":"user","content":[{"type":"text","text":"thanks"}],"timestamp":1782896580000}}"#);
    text.push('\n');
    std::fs::write(&dst, text).expect("append");
    let s = index(&grown, vec![root]);
    assert_eq!((s.files_appended, s.events_added), (1, 1), "{s:?}");
}

#[test]
fn pi_real_sessions_are_linear_and_keep_their_compaction_summaries() {
    let Some(root) = common::realdata::path("pi") else {
        return;
    };
    for file in discover(&root) {
        let (sink, end) = read_whole(&file).expect("read");
        let events = &sink.sessions[0].events;
        let marked = events
            .iter()
            .filter(|e| e.facts.iter().any(|f| matches!(f, Fact::Abandoned { .. })))
            .count();
        assert_eq!(
            marked,
            0,
            "{}: a real sample has no branch",
            file.path.display()
        );
        if file.path.ends_with("before-compaction.jsonl") {
            let summaries = events
                .iter()
                .filter(|e| e.event_type == "system/summary")
                .count();
            assert_eq!(summaries, 2);
            assert_eq!(end.total.skipped(), 0);
        }
    }
}

#[test]
fn gemini_rewound_and_replaced_messages_are_marked_and_the_last_copy_is_the_conversation() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![fixture("gemini")]);
    assert_eq!((s.files_new, s.lines.skipped()), (1, 0), "{s:?}");
    let got = rows(&db, GEMINI);
    let rewound = abandoned(&got, "rewound");
    assert_eq!(rewound.len(), 4, "{got:#?}");
    assert!(rewound[0].contains("fixed 5 seconds"));
    assert!(rewound[3].contains("1 failed"));
    assert_eq!(
        abandoned(&got, "replaced"),
        vec!["Using backoff with jitter."]
    );
    let kept: Vec<&str> = got
        .iter()
        .filter(|r| r.abandoned.is_none())
        .map(|r| r.text.as_str())
        .collect();
    assert!(kept.contains(&"Using exponential backoff with full jitter, capped at 30 s."));
    assert!(kept.iter().any(|t| t.contains("4 passed")));
    assert!(!kept.iter().any(|t| t.contains("whsec-9b8a7c6d5e4f3a2b")));
    let (_, title) = outcome(&db, GEMINI);
    assert_eq!(
        title.as_deref(),
        Some("Webhook sender retries with exponential backoff")
    );
    // Read as it grew, line by line, the rewind re-reads the file and re-marks what was stored.
    let root = dir.path().join("tmp");
    let dst = root.join(GEMINI_FILE.trim_start_matches("gemini/tmp/"));
    std::fs::create_dir_all(dst.parent().expect("dir")).expect("mkdir");
    std::fs::copy(
        fixture("gemini/tmp/webhooks/.project_root"),
        root.join("webhooks/.project_root"),
    )
    .expect("copy");
    let grown = dir.path().join("grown.sqlite");
    index_as_it_grows(&grown, &fixture(GEMINI_FILE), &dst, &root);
    assert_eq!(rows(&grown, GEMINI), got);
}

#[test]
fn gemini_real_capture_re_appends_without_replacing_anything() {
    let Some(path) =
        common::realdata::path("gemini/empathic-toolpath/test-fixtures/gemini/convo.jsonl")
    else {
        return;
    };
    let file = knowledge::sources::episodes::agents::recognise(&path).expect("recognised");
    let (sink, end) = read_whole(&file).expect("read");
    let events = &sink.sessions[0].events;
    assert!(events.len() > 20);
    assert!(events
        .iter()
        .all(|e| !e.facts.iter().any(|f| matches!(f, Fact::Abandoned { .. }))));
    assert_eq!(end.total.skipped(), 0);
}
