//! One door to code and episodes (issue 11): every front end reads a code reference through
//! `Engine::read_code` and an event through `Engine::get_episode`, both through the lanes, so a
//! path a transcript names cannot make any of them read a huge, binary or unrelated file, and an
//! event is read where the episodes lane says it lives.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::Arc;

use knowledge::engine::read_code::{NotText, ReadCodeError, MAX_FILE_BYTES};
use knowledge::lanes::{
    Episode, EpisodeError, EpisodeSession, EpisodesAnswer, EpisodesSource, LaneRequest, LaneStats,
    SessionRow, SourceFailure,
};
use knowledge::sources::code::read::TextFileError;
use serde_json::{json, Value};

#[test]
fn an_indexed_file_is_read_from_the_index_with_its_freshness() {
    let world = common::world::demo();
    let engine = world.engine();
    let lines = engine
        .read_code("src/Config.php", 1, Some(5), None)
        .expect("indexed file");
    assert!(lines.root.ends_with("repos/billing"), "{}", lines.root);
    assert!(lines.index_rev.is_some());
    assert_eq!(lines.lines.len(), 5);
}

#[test]
fn a_file_outside_every_indexed_repository_is_refused() {
    let world = common::world::demo();
    let engine = world.engine();
    let outside = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(outside.path(), "password=hunter2\n").expect("write");
    let err = engine
        .read_code(&outside.path().display().to_string(), 1, None, None)
        .expect_err("outside the roots");
    assert!(matches!(err, ReadCodeError::NotReadable(_)));
    assert!(
        err.to_string().contains("outside every indexed repository"),
        "{err}"
    );
    // The skill folder and the transcripts are not code roots either.
    let skill = world.world.root.join("skills/mysql-access/SKILL.md");
    assert!(engine
        .read_code(&skill.display().to_string(), 1, None, None)
        .is_err());
}

/// Why a read refused a file under an indexed root, when it is that kind of refusal.
fn not_text(err: &ReadCodeError) -> Option<&TextFileError> {
    match err {
        ReadCodeError::NotReadable(why) => why.cause()?.downcast_ref::<NotText>().map(|n| &n.why),
        _ => None,
    }
}

#[test]
fn a_new_file_under_an_indexed_root_is_read_redacted_but_not_a_huge_or_binary_one() {
    let fresh = common::world::fresh_demo();
    let engine = fresh.engine();
    let repo = std::path::PathBuf::from(fresh.world.repo("billing"));

    let new = repo.join("notes.txt");
    std::fs::write(&new, "db: billing\npassword=Sup3rSecretValue9\n").expect("write");
    let lines = engine
        .read_code(&new.display().to_string(), 1, None, None)
        .expect("a text file under the root");
    assert_eq!(lines.read_from, "disk");
    assert_eq!(lines.path, "notes.txt");
    assert!(lines.lines.iter().all(|l| !l.contains("Sup3rSecretValue9")));

    let huge = repo.join("dump.sql");
    let f = std::fs::File::create(&huge).expect("create");
    f.set_len(MAX_FILE_BYTES + 1).expect("size");
    let err = engine
        .read_code(&huge.display().to_string(), 1, None, None)
        .expect_err("too large");
    assert!(
        matches!(not_text(&err), Some(TextFileError::TooLarge(_))),
        "{err}"
    );
    assert!(err.to_string().contains("larger than"), "{err}");

    let binary = repo.join("logo.bin");
    std::fs::write(&binary, [0x89, b'P', b'N', b'G', 0, 0, 1, 2]).expect("write");
    let err = engine
        .read_code(&binary.display().to_string(), 1, None, None)
        .expect_err("binary");
    assert!(
        matches!(not_text(&err), Some(TextFileError::Binary)),
        "{err}"
    );
    assert!(err.to_string().contains("binary"), "{err}");

    // A symlink under the root that leads outside it is outside.
    let target = tempfile::NamedTempFile::new().expect("temp");
    std::fs::write(target.path(), "outside\n").expect("write");
    #[cfg(unix)]
    {
        let link = repo.join("link.txt");
        std::os::unix::fs::symlink(target.path(), &link).expect("symlink");
        assert!(engine
            .read_code(&link.display().to_string(), 1, None, None)
            .is_err());
    }
}

#[test]
fn an_indexed_file_that_became_huge_or_binary_is_served_from_the_index() {
    let fresh = common::world::fresh_demo();
    let engine = fresh.engine();
    let config = Path::new(&fresh.world.repo("billing")).join("src/Config.php");
    let before = engine
        .read_code("src/Config.php", 1, Some(3), None)
        .expect("indexed");
    assert_eq!(before.read_from, "disk");
    std::fs::File::create(&config)
        .and_then(|f| f.set_len(MAX_FILE_BYTES + 1))
        .expect("grow the file");
    let after = engine
        .read_code("src/Config.php", 1, Some(3), None)
        .expect("the indexed lines");
    assert_eq!(after.read_from, "index");
    assert!(after.freshness.stale);
    assert_eq!(after.lines, before.lines);
}

/// `knowledge code PATH:1-3` and the MCP `knowledge_code` tool on each path: what each said.
fn cli_and_mcp_answers(data: &Path, paths: &[String]) -> Vec<(String, String)> {
    let cli: Vec<String> = paths
        .iter()
        .map(|p| {
            let out = common::cli::bin()
                .arg("--data-dir")
                .arg(data)
                .args(["code", &format!("{p}:1-3")])
                .output()
                .expect("run knowledge code");
            assert_eq!(out.status.code(), Some(2), "{out:?}");
            String::from_utf8_lossy(&out.stderr).into_owned()
        })
        .collect();
    let mut child = common::cli::raw_mcp_server(data);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut messages = common::cli::mcp_handshake(0).to_vec();
    for (i, p) in paths.iter().enumerate() {
        messages.push(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {
            "name": "knowledge_code", "arguments": {"path": p, "start_line": 1, "end_line": 3}}}),
        );
    }
    for m in messages {
        writeln!(stdin, "{m}").expect("write");
    }
    stdin.flush().expect("flush");
    let mut mcp = vec![String::new(); paths.len()];
    let mut left = paths.len();
    for line in BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let Ok(v) = serde_json::from_str::<Value>(&line.expect("read")) else {
            continue;
        };
        if let Some(i) = v["id"]
            .as_u64()
            .filter(|i| (1..=paths.len() as u64).contains(i))
        {
            mcp[i as usize - 1] = v["result"].to_string();
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    cli.into_iter().zip(mcp).collect()
}

#[test]
fn the_cli_and_the_mcp_server_refuse_the_same_files_for_the_same_reason() {
    let fresh = common::world::fresh_demo();
    let repo = Path::new(&fresh.world.repo("billing")).to_path_buf();
    let huge = repo.join("dump.sql");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(MAX_FILE_BYTES + 1))
        .expect("huge file");
    let binary = repo.join("logo.bin");
    std::fs::write(&binary, [0x89, b'P', b'N', b'G', 0, 0, 1, 2]).expect("binary file");
    let outside = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(outside.path(), "password=hunter2\n").expect("write");
    let paths: Vec<String> = [huge.as_path(), binary.as_path(), outside.path()]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let answers = cli_and_mcp_answers(&fresh.data_dir, &paths);
    for ((cli, mcp), why) in answers.iter().zip([
        "larger than",
        "a binary file",
        "outside every indexed repository",
    ]) {
        assert!(cli.contains(why), "the CLI: {cli}");
        assert!(mcp.contains(why), "the MCP server: {mcp}");
        assert!(!mcp.contains("hunter2"), "{mcp}");
    }
}

/// An episodes source that reads events itself (as an external one with a read tool would).
struct Reader;

impl EpisodesSource for Reader {
    fn name(&self) -> String {
        "reader".into()
    }
    fn search(&self, _: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        Err(SourceFailure::new(
            knowledge::contract::Code::SourceUnavailable,
            "search is not what this test asks",
        ))
    }
    fn episode(&self, session_id: &str, seq: u64, _: u64) -> Result<Episode, EpisodeError> {
        Ok(Episode {
            id: format!("ep:{session_id}:{seq}"),
            session_id: session_id.into(),
            seq,
            session: EpisodeSession {
                session_id: session_id.into(),
                source: "reader".into(),
                path: String::new(),
                cwd: None,
                created_at: None,
                title: None,
                parent_session_id: None,
                agent_name: None,
                agent_preset: None,
                outcome: knowledge::contract::Outcome::Unknown,
                live: false,
                events: 0,
            },
            events: Vec::new(),
        })
    }
    fn stats(&self) -> Result<LaneStats, SourceFailure> {
        Ok(LaneStats::default())
    }
    fn session(&self, _: &str) -> Result<Option<SessionRow>, SourceFailure> {
        Ok(None)
    }
    fn first_human_text(&self, _: &str) -> Result<Option<String>, SourceFailure> {
        Ok(None)
    }
    fn event_time(&self, _: &str, _: u64) -> Result<Option<String>, SourceFailure> {
        Ok(None)
    }
}

#[test]
fn get_episode_reads_through_the_episodes_lane() {
    let mut engine = common::world::demo().engine();
    engine.attach(Some(Arc::new(Reader)), None, None);
    let ep = engine
        .get_episode("elsewhere", 4, 2)
        .expect("the lane reads it");
    assert_eq!((ep.session.source.as_str(), ep.seq), ("reader", 4));
}
