//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;

#[test]
fn torn_line_then_full_record_on_the_same_line() {
    let line = br#"{"type":"user","message":{"role":"us{"type":"user","uuid":"u2"}"#;
    let (recs, broken) = split_records(line);
    assert_eq!(broken, 1);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs.first().and_then(|r| str_of(r, "uuid")), Some("u2"));
}

#[test]
fn nul_runs_and_concatenated_records() {
    let (recs, broken) = split_records(b"\0\0\0\0");
    assert!(recs.is_empty());
    assert_eq!(broken, 1);
    let (recs, broken) = split_records(b"{\"a\":1}\0\0{\"b\":2}{\"c\":3} ");
    assert_eq!((recs.len(), broken), (3, 0));
    let (recs, broken) = split_records(b"{\"a\":1}{\"type\":\"tr");
    assert_eq!((recs.len(), broken), (1, 1));
    let (recs, broken) = split_records(b"not json at all");
    assert_eq!((recs.len(), broken), (0, 1));
    let (recs, broken) = split_records(b"[1,2]");
    assert_eq!((recs.len(), broken), (0, 1));
}

#[test]
fn program_of_a_shell_script() {
    let p = |s: &str| command_program(s);
    assert_eq!(
        p("cd /x && FOO=1 sudo cargo test -q").as_deref(),
        Some("cargo")
    );
    assert_eq!(p("/usr/bin/git status").as_deref(), Some("git"));
    assert_eq!(
        p("apply_patch <<'PATCH'\n*** Begin Patch").as_deref(),
        Some("apply_patch")
    );
    assert_eq!(p("   "), None);
}

#[test]
fn caps_cut_at_char_boundaries() {
    let mut s = "aжb".to_string();
    cap_in_place(&mut s, 2);
    assert_eq!(s, "a");
    let files = patch_files("*** Begin Patch\n*** Update File: a/b.rs\n@@\n*** Add File: c.rs\n");
    assert_eq!(files, vec!["a/b.rs".to_string(), "c.rs".to_string()]);
    assert!(
        render_tool_input("Bash", &serde_json::json!({"command": "ls", "x": {"y": 1}}))
            .starts_with("Bash\ncommand: ls")
    );
}

#[test]
fn pair_dedupe_pairs_sources_once() {
    let mut d = PairDedupe::default();
    let h = text_hash("u", "continue");
    assert!(!d.is_duplicate(h, 1));
    assert!(d.is_duplicate(h, 2));
    assert!(!d.is_duplicate(h, 1));
    assert!(d.is_duplicate(h, 2));
    assert!(!d.is_duplicate(h, 2));
}
