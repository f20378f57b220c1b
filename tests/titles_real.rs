//! Root-session titles on the real transcripts of `shared/realdata/` (every agent read there):
//! the title says what the session was about, never an acknowledgement, a slash command, an
//! `@file` mention or a list of paths, a pasted tool result or a redaction placeholder. Skipped
//! with a note when the data is absent.

use std::path::{Path, PathBuf};

use knowledge::engine::titles::session_title;
use knowledge::indexing::{index_all, IndexPlan};
use knowledge::lanes::builtin::BuiltinEpisodes;
use knowledge::sources::episodes::search::EpisodeStore;

/// `shared/realdata` beside the checkout (or the worktree's checkout), else the shared folder.
fn realdata() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("../shared/realdata"),
        manifest.join("../../shared/realdata"),
        PathBuf::from("/work/shared/realdata"),
    ]
    .into_iter()
    .find(|p| p.join("claude").is_dir() && p.join("codex").is_dir())
}

#[test]
fn real_root_sessions_get_titles_that_say_what_happened() {
    let Some(data) = realdata() else {
        println!("note: shared/realdata is not here; skipped");
        return;
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("data");
    std::fs::create_dir_all(&dir).expect("data dir");
    std::fs::write(dir.join("config.toml"), "[search]\nsemantic = false\n").expect("config");
    let plan = IndexPlan {
        sessions: [
            "claude", "codex", "gemini", "copilot", "cursor", "opencode", "pi", "qwen", "kimi",
            "iflow",
        ]
        .iter()
        .map(|agent| data.join(agent))
        .filter(|root| root.is_dir())
        .collect(),
        ..IndexPlan::default()
    };
    index_all(&dir, &plan, &mut |_| {}).expect("index the real transcripts");
    let store = EpisodeStore::open(&dir.join("episodes.sqlite")).expect("episodes store");
    let lane = BuiltinEpisodes {
        store: std::sync::Arc::new(
            EpisodeStore::open(&dir.join("episodes.sqlite")).expect("episodes store"),
        ),
    };
    let title = |id: &str| {
        let row = store.session(id).expect("read").expect(id);
        session_title(&row, &lane)
    };
    // Sessions by the id their records carry (the files are renamed exports).
    // First prompt `/clear`: the prompt after it (`full-session-four.jsonl`).
    let t = title("2d984148-cddb-4605-aac1-13e720fe613c").expect("a title");
    assert!(t.starts_with("Can you add the first two initials"), "{t}");
    let t = title("06381696-0074-49f8-863e-6ad4fac507f9").expect("a title");
    assert!(t.starts_with("Let's explore scrolling"), "{t}");
    // First prompt `Hey`: what was asked next.
    assert_eq!(
        title("cfa1e878-62b5-4e40-b281-bbf9b250d766").as_deref(),
        Some("Can you audit this codebase?")
    );
    // A session of `Start`, `Step 1`, `Step 2` and acknowledgements has nothing to say, and
    // says nothing rather than «Start» (the label falls back to `main @id`).
    for id in ["ses_stage0_large", "019b2ea4-aaaa-bbbb-cccc-58208e1f0000"] {
        assert_eq!(title(id), None, "{id}");
    }
    // A prompt that is only a redaction placeholder is not a title either.
    assert_eq!(title("06090cb1-3e64-433a-bc7e-a621c0f596d2"), None);
    // A summary record stays the title.
    assert_eq!(
        title("10cd5911-8704-4996-9e33-32010589c357").as_deref(),
        Some("Fixed all tests: simplified v4 response structure")
    );
    // A slash command with arguments: the arguments, not the command.
    let t = title("491e126e-1e71-469c-ade2-fcc8af567c74").expect("a title");
    assert!(
        t.starts_with("websearch to learn how to fastest setup"),
        "{t}"
    );
    // `@claude-code-prompt.md really ULTRATHINK this`: the request is in the file; the next
    // request that says something.
    let t = title("132b2f66-ee5f-46f6-8904-32d9dc4d36c3").expect("a title");
    assert!(!t.contains('@') && !t.contains("ULTRATHINK"), "{t}");
    // Pi: `alright, read @a.ts @b.ts in full. i feel like this is one big mess …`.
    let t = title("ffae836b-9420-4060-ac13-7745215f90ff").expect("a title");
    assert!(t.starts_with("i feel like this is one big mess"), "{t}");
    // Codex, a real task prompt.
    let t = title("01997ea4-a70d-7da3-8c20-c736db82a7c5").expect("a title");
    assert!(t.starts_with("When I load the dashboard"), "{t}");
    // And no root session anywhere is titled by an acknowledgement or a bare command.
    let bad = [
        "continue",
        "yes",
        "ok",
        "hey",
        "start",
        "tool_result",
        "/clear",
    ];
    let roots: Vec<String> = {
        let c = rusqlite::Connection::open(dir.join("episodes.sqlite")).expect("open");
        let mut stmt = c
            .prepare("SELECT session_id FROM sessions WHERE parent_session_id IS NULL")
            .expect("prepare");
        let rows = stmt.query_map([], |r| r.get(0)).expect("query");
        rows.collect::<Result<_, _>>().expect("rows")
    };
    assert!(roots.len() >= 20, "{} root sessions", roots.len());
    let mut titled = 0;
    for id in &roots {
        if let Some(t) = title(id) {
            titled += 1;
            let lower = t.to_lowercase();
            assert!(!bad.contains(&lower.as_str()), "{id}: {t}");
            assert!(
                !t.starts_with(['/', '@']),
                "{id}: a command or a mention {t}"
            );
            let words: Vec<&str> = t.split_whitespace().collect();
            assert!(
                !words.iter().all(|w| w.contains(['/', '.', '@'])),
                "{id}: a list of files {t}"
            );
            assert!(!t.contains("[REDACTED_PROMPT]"), "{id}: {t}");
        }
    }
    println!(
        "note: {titled} of {} real root sessions titled",
        roots.len()
    );
    assert!(titled * 4 >= roots.len() * 3, "{titled} of {}", roots.len());
}
