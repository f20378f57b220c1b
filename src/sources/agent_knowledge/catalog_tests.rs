//! Catalog scanning on disk: plugin-cache skills get their plugin, legacy commands are skills
//! named by stem, reference files are not skills, and broken frontmatter still yields a skill
//! (kept apart from `catalog.rs` to keep that file short).

use std::path::Path;

use super::catalog::scan_skills;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn plugin_skills_commands_and_broken_frontmatter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let claude = dir.path().join(".claude");
    write(
        &claude.join("plugins/cache/elixir/elixir/1.2.0/skills/hex-docs-search/SKILL.md"),
        "---\nname: hex-docs-search\ndescription: Search hex docs.\nwhenToUse: When a hex package is named.\n---\n",
    );
    write(
        &claude.join("commands/deploy.md"),
        "Deploy the app to staging.\n",
    );
    write(
        &claude.join("skills/broken/SKILL.md"),
        "---\nname: [oops\ndescription: \"never closed\n---\n# Broken\n",
    );
    write(
        &claude.join("skills/open/SKILL.md"),
        "---\nname: open\nno fence end\n\n# Open\n\nFirst paragraph here.\n",
    );
    write(
        &claude.join("skills/broken/references/notes.md"),
        "not a skill",
    );
    let skills = scan_skills(&[
        claude.join("plugins/cache"),
        claude.join("commands"),
        claude.join("skills"),
    ]);
    let names: Vec<(String, &str)> = skills
        .iter()
        .map(|s| (s.qualified_name(), s.kind))
        .collect();
    assert_eq!(
        names,
        vec![
            ("deploy".to_string(), "command"),
            ("elixir:hex-docs-search".to_string(), "skill"),
            ("broken".to_string(), "skill"),
            ("open".to_string(), "skill"),
        ]
    );
    assert_eq!(
        skills[1].when_to_use.as_deref(),
        Some("When a hex package is named.")
    );
    assert_eq!(skills[0].description, "Deploy the app to staging.");
    assert_eq!(skills[2].description, "never closed");
    assert_eq!(skills[3].description, "First paragraph here.");
}
