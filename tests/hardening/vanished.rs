//! A store deleted or renamed between `knowledge index` listing it and reading it (issue 35, the
//! hostile review of the nine new agents): counted as gone while indexing, never a failure of
//! the run (it was an unreadable file, and the run's exit status 1).

/// A store deleted or renamed after `knowledge index` listed it and before it read it (an agent
/// rotating its files mid-run) is skipped and counted, and the run succeeds: it used to be an
/// unreadable file, and the run's exit status 1.
#[test]
fn a_store_gone_between_listing_and_reading_is_counted_not_a_failure() {
    use knowledge::sources::episodes::index::{index_episodes, IndexOptions};
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let sessions = home.join(".continue/sessions");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    let name = |i: usize| format!("5d1e2f3a-0000-4000-8000-{i:012}");
    for i in 0..60 {
        let doc = serde_json::json!({"sessionId": name(i), "title": "Rotation",
            "workspaceDirectory": "/home/dev/rotation", "history": [{"message": {"role": "user",
            "content": format!("rotation check number {i}")}, "contextItems": []}]});
        std::fs::write(sessions.join(format!("{}.json", name(i))), doc.to_string()).expect("write");
    }
    // Three OpenHands conversations (stores that are folders), listed after the sessions.
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/formats/openhands/conversations/7d3e9f102a4b4c5d8e6f0a1b2c3d4e5f");
    let conversations = home.join(".openhands/conversations");
    for hex in [
        "7d3e9f102a4b4c5d8e6f0a1b2c3d4e51",
        "7d3e9f102a4b4c5d8e6f0a1b2c3d4e52",
    ] {
        crate::common::agent_home::copy_tree(&fixture, &conversations.join(hex));
    }
    let roots = vec![sessions.clone(), conversations.clone()];
    let db = tmp.path().join("episodes.sqlite");
    let mut pulled = false;
    // The indexer reads at most 16 stores ahead of the one it writes: once the first is
    // written, the stores listed from the 40th on have not been opened.
    let summary = index_episodes(&db, &IndexOptions::new(roots.clone()), &mut |p| {
        if pulled || p.done == 0 {
            return;
        }
        pulled = true;
        for i in 40..50 {
            std::fs::remove_file(sessions.join(format!("{}.json", name(i)))).expect("delete");
        }
        for i in 50..55 {
            let from = sessions.join(format!("{}.json", name(i)));
            std::fs::rename(&from, sessions.join(format!("{}-moved.json", name(i))))
                .expect("rename");
        }
        std::fs::remove_dir_all(conversations.join("7d3e9f102a4b4c5d8e6f0a1b2c3d4e52"))
            .expect("delete a conversation");
    })
    .expect("the run succeeds");
    assert!(pulled, "the progress callback ran");
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    assert_eq!(summary.files_vanished, 16, "{summary:?}");
    // 45 Continue sessions and the conversation left.
    assert_eq!(summary.sessions, 45 + 1, "{summary:?}");
    // The next run finds the renamed ones under their new names.
    let again = index_episodes(&db, &IndexOptions::new(roots), &mut |_| {}).expect("rerun");
    assert!(
        again.failed.is_empty() && again.files_vanished == 0,
        "{again:?}"
    );
    assert_eq!(again.sessions, 50 + 1, "{again:?}");
}
