//! One door to code on disk (issue 11): every front end reads a code reference through
//! `Engine::read_code`, so a path a transcript names cannot make any of them read a huge, binary
//! or unrelated file.

mod common;

use knowledge::engine::read_code::{ReadCodeError, MAX_FILE_BYTES};

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
    assert!(err.to_string().contains("larger than"), "{err}");

    let binary = repo.join("logo.bin");
    std::fs::write(&binary, [0x89, b'P', b'N', b'G', 0, 0, 1, 2]).expect("write");
    let err = engine
        .read_code(&binary.display().to_string(), 1, None, None)
        .expect_err("binary");
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
