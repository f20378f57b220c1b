//! Skill search ranks the catalog as BM25 should (any word of the question may match, a rare one
//! dominates; issue 33) and by meaning (each skill's sentence vector, so a Russian question or
//! one in other words finds an English skill; issue 34), and comes back empty for a question
//! about nothing in the catalog. The builder carries a skill's vector over to the store that
//! replaces it instead of encoding it again.

use std::path::{Path, PathBuf};

use knowledge::sources::agent_knowledge::{self as ak, AgentKnowledgeStore, SkillSearch};
use knowledge::text::encoder::Encoder;
use knowledge::text::tokens::query_terms;
use rusqlite::Connection;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// Ordinary skills, each about something else, in plain words, and each with [`COMMON`].
const ORDINARY: &[(&str, &str)] = &[
    (
        "code-review",
        "Review the changes of a pull request and leave comments on the code.",
    ),
    (
        "write-tests",
        "Write unit tests for the code you changed before you open a pull request.",
    ),
    (
        "fix-lint",
        "Fix the warnings the linter reports in the changed files.",
    ),
    (
        "update-deps",
        "Update the project's dependencies and check that the build still passes.",
    ),
    (
        "release-notes",
        "Write the release notes from the merged pull requests of the milestone.",
    ),
    (
        "triage-issue",
        "Read a new issue, reproduce it and label it by area and priority.",
    ),
    (
        "refactor-module",
        "Split a large module into smaller files without changing behaviour.",
    ),
    (
        "docs-page",
        "Write or update a documentation page for a feature of the project.",
    ),
    (
        "bench-compare",
        "Run the benchmarks before and after a change and compare the figures.",
    ),
    (
        "ci-failure",
        "Find why the continuous integration run failed and fix the cause.",
    ),
];

/// What every ordinary skill says too, so its words are frequent in the catalog, as ordinary
/// words are in a real one.
const COMMON: &str = "Use it on the code and the files of the project when a change, a fix, an \
                      update or a pull request needs a check or a write-up.";

struct Fx {
    _dir: tempfile::TempDir,
    skills: PathBuf,
    knowledge: PathBuf,
    no_episodes: PathBuf,
}

impl Fx {
    fn build(&self, force: bool) {
        ak::build_with(
            &self.knowledge,
            &self.no_episodes,
            std::slice::from_ref(&self.skills),
            &[],
            force,
        )
        .expect("build");
    }
}

fn catalog(extra: &[(&str, &str)]) -> Fx {
    let dir = tempfile::tempdir().expect("tempdir");
    let skills = dir.path().join("skills");
    let ordinary = ORDINARY
        .iter()
        .map(|(name, description)| (*name, format!("{description} {COMMON}")));
    let extra = extra.iter().map(|(name, d)| (*name, d.to_string()));
    for (name, description) in ordinary.chain(extra) {
        write(
            &skills.join(name).join("SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
        );
    }
    std::fs::create_dir_all(dir.path().join("data")).expect("mkdir");
    let fx = Fx {
        knowledge: dir.path().join("data/knowledge.sqlite"),
        no_episodes: dir.path().join("data/episodes.sqlite"),
        skills,
        _dir: dir,
    };
    fx.build(false);
    fx
}

/// The skills the question finds, best first, by the words of `query` and (when `by_meaning`)
/// its sentence vector.
fn find(store: &AgentKnowledgeStore, query: &str, by_meaning: bool) -> Vec<(String, Vec<String>)> {
    let terms = query_terms(query);
    let vector = by_meaning.then(|| {
        Encoder::shared()
            .expect("the encoder's assets")
            .encode(query)
    });
    store
        .search_skills(&SkillSearch {
            terms: &terms,
            own_terms: &terms,
            sentence: vector.as_ref(),
            limit: 10,
            ..SkillSearch::default()
        })
        .expect("search")
        .into_iter()
        .map(|r| (r.qualified_name, r.why))
        .collect()
}

#[test]
fn a_rare_word_among_ordinary_ones_finds_its_skill_first() {
    let fx = catalog(&[(
        "zstd-frames",
        "Decode a broken zstd frame found in a cache file.",
    )]);
    let store = AgentKnowledgeStore::open(&fx.knowledge).expect("open");
    // A dozen words most skills hold, and one only this skill holds: any word may match, and
    // the rare one outweighs them all.
    let q = "change the code of the project, write and update the files, check and fix the \
             changes and the pull request for zstd";
    let found = find(&store, q, false);
    assert_eq!(
        found.first().map(|f| f.0.as_str()),
        Some("zstd-frames"),
        "{found:?}"
    );
    assert!(
        found.len() > 3,
        "other skills match ordinary words too: {found:?}"
    );
    // The rare word alone finds it, and nothing else.
    let alone = find(&store, "zstd", false);
    assert_eq!(alone.len(), 1, "{alone:?}");
}

#[test]
fn a_russian_question_finds_an_english_skill_by_meaning() {
    let fx = catalog(&[(
        "rotate-logs",
        "Stop application logs from filling the disk by rotating and compressing old log files.",
    )]);
    let store = AgentKnowledgeStore::open(&fx.knowledge).expect("open");
    let q = "как сделать, чтобы журналы приложения не забивали весь диск";
    let found = find(&store, q, true);
    let top = found.first().expect("a skill found by meaning");
    assert_eq!(top.0, "rotate-logs", "{found:?}");
    assert!(top.1.iter().any(|w| w.starts_with("meaning: ")), "{top:?}");
    // Without the sentence vector, no word of the question is in the skill.
    assert!(
        find(&store, q, false).iter().all(|f| f.0 != "rotate-logs"),
        "found by words"
    );
}

#[test]
fn a_question_about_nothing_in_the_catalog_finds_no_skill() {
    let fx = catalog(&[]);
    let store = AgentKnowledgeStore::open(&fx.knowledge).expect("open");
    for q in [
        "рецепт борща со сметаной и чесноком",
        "what is the best time of year to plant tulips",
    ] {
        let found = find(&store, q, true);
        assert!(found.is_empty(), "{q}: {found:?}");
    }
}

#[test]
fn a_rebuilt_store_carries_each_unchanged_skills_vector_over() {
    let fx = catalog(&[]);
    let vector_of = |name: &str| -> Vec<u8> {
        Connection::open(&fx.knowledge)
            .expect("open")
            .query_row("SELECT vector FROM ak_skill WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .expect("vector")
    };
    let encoded = vector_of("code-review");
    assert_eq!(encoded.len(), 512 * 4, "a vector per skill");
    // A vector the encoder would never make: a rebuild that kept it did not encode again.
    let marker: Vec<u8> = (0..512 * 4).map(|i| (i % 251) as u8).collect();
    Connection::open(&fx.knowledge)
        .expect("open")
        .execute(
            "UPDATE ak_skill SET vector = ?1 WHERE name = 'code-review'",
            [&marker],
        )
        .expect("mark");
    fx.build(true);
    assert_eq!(vector_of("code-review"), marker, "carried over");
    // A changed skill is encoded again.
    write(
        &fx.skills.join("code-review/SKILL.md"),
        "---\nname: code-review\ndescription: Review a change for security problems.\n---\n",
    );
    fx.build(false);
    let again = vector_of("code-review");
    assert!(again != marker && again.len() == 512 * 4);
}

#[test]
fn a_store_built_before_skills_had_vectors_is_searched_by_its_words() {
    let fx = catalog(&[]);
    Connection::open(&fx.knowledge)
        .expect("open")
        .execute_batch("ALTER TABLE ak_skill DROP COLUMN vector")
        .expect("the layout of schema 2");
    let store = AgentKnowledgeStore::open(&fx.knowledge).expect("open");
    let found = find(&store, "benchmarks figures", true);
    assert_eq!(
        found.first().map(|f| f.0.as_str()),
        Some("bench-compare"),
        "{found:?}"
    );
    assert!(found
        .iter()
        .all(|f| !f.1.iter().any(|w| w.starts_with("meaning"))));
}
