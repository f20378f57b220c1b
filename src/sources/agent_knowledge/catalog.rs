//! The skill and agent-definition catalog: which `SKILL.md` files (and legacy commands) and which
//! subagent definitions exist on this machine, read into small records for L3.
//!
//! Only catalog text is kept (names, descriptions, `when_to_use`, tags, tools); bodies are hashed,
//! never stored. Plugin skills are named by their plugin (`elixir` for
//! `…/plugins/cache/<marketplace>/elixir/<version>/skills/hex-docs-search/`) so a catalog entry
//! meets the `plugin:skill` names that Skill tool calls use.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use super::frontmatter::{self, Frontmatter};
use super::uses::plausible_name;

/// Files larger than this are not catalog entries (a SKILL.md is a few KB).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Directory depth below a root that is searched (the plugin cache needs about 6).
const MAX_DEPTH: usize = 12;
/// Longest description kept (the agentskills.io limit is 1024; agent files run longer).
const MAX_DESCRIPTION_CHARS: usize = 2048;
const MAX_WHEN_CHARS: usize = 600;

/// One skill of the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDoc {
    /// Frontmatter `name`, else the folder name (legacy commands: the file stem).
    pub name: String,
    /// Absolute path of the `SKILL.md` (or command file).
    pub path: PathBuf,
    pub description: String,
    pub when_to_use: Option<String>,
    /// `sha256:<hex>` of the file bytes.
    pub content_hash: String,
    /// Plugin name when the skill lives in the plugin cache.
    pub plugin: Option<String>,
    /// Frontmatter `tags`, `keywords`, `category` (deduplicated, in order).
    pub tags: Vec<String>,
    /// `skill` or `command` (legacy `.claude/commands/*.md`).
    pub kind: &'static str,
}

impl SkillDoc {
    /// The name a Skill tool call uses: `plugin:name` for plugin skills, else `name`.
    pub fn qualified_name(&self) -> String {
        match &self.plugin {
            Some(p) => format!("{p}:{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// One subagent definition (`.claude/agents/*.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDoc {
    /// Frontmatter `name`, else the file stem.
    pub name: String,
    pub path: PathBuf,
    pub description: String,
    pub model: Option<String>,
    pub tools: Vec<String>,
    pub content_hash: String,
}

/// Every `SKILL.md` (any depth) and legacy command file under `roots`, sorted by path, each file
/// once even when roots overlap.
pub fn scan_skills(roots: &[PathBuf]) -> Vec<SkillDoc> {
    let mut out = Vec::new();
    for file in walk_md(roots) {
        let is_skill = file.file_name().is_some_and(|n| n == "SKILL.md");
        let is_command = !is_skill && under_dir_named(&file, "commands") && !is_boilerplate(&file);
        if !(is_skill || is_command) {
            continue;
        }
        let Some((bytes, fm)) = read_doc(&file) else {
            continue;
        };
        let fallback = if is_skill {
            file.parent().and_then(Path::file_name)
        } else {
            file.file_stem()
        };
        let Some(name) = fm
            .get_str(&["name"])
            .filter(|n| plausible_name(n))
            .or_else(|| fallback.map(|n| n.to_string_lossy().to_string()))
            .filter(|n| !n.trim().is_empty())
        else {
            continue;
        };
        let description = description_of(&fm);
        let when_to_use = fm
            .get_str(&["when_to_use", "whenToUse", "when-to-use"])
            .map(|w| cap_chars(&w, MAX_WHEN_CHARS))
            .or_else(|| extract_when_to_use(&description));
        let mut tags = Vec::new();
        for key in ["tags", "keywords", "category"] {
            for t in fm.get_list(&[key]) {
                if !tags.contains(&t) {
                    tags.push(t);
                }
            }
        }
        out.push(SkillDoc {
            name: name.trim().to_string(),
            plugin: plugin_of(&file),
            path: file,
            description,
            when_to_use,
            content_hash: hash_bytes(&bytes),
            tags,
            kind: if is_skill { "skill" } else { "command" },
        });
    }
    keep_newest_plugin_versions(out)
}

/// The plugin cache can keep several versions of a plugin; only the newest version of each
/// skill is a catalog entry (versions compare numerically part by part: `1.10.0` > `1.9.2`).
fn keep_newest_plugin_versions(skills: Vec<SkillDoc>) -> Vec<SkillDoc> {
    // (path without the version component) → index of the newest so far.
    let mut newest: std::collections::HashMap<PathBuf, (Vec<(u64, String)>, usize)> =
        std::collections::HashMap::new();
    let mut drop = BTreeSet::new();
    for (i, s) in skills.iter().enumerate() {
        let Some((unversioned, version)) = split_version(&s.path) else {
            continue;
        };
        let key = version_key(&version);
        match newest.get_mut(&unversioned) {
            Some((best, _)) if *best >= key => {
                drop.insert(i);
            }
            Some((best, at)) => {
                drop.insert(*at);
                *best = key;
                *at = i;
            }
            None => {
                newest.insert(unversioned, (key, i));
            }
        }
    }
    skills
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, s)| s)
        .collect()
}

/// `…/plugins/cache/<m>/<p>/<version>/rest` → (`…/plugins/cache/<m>/<p>/rest`, `<version>`).
fn split_version(path: &Path) -> Option<(PathBuf, String)> {
    let comps: Vec<Component<'_>> = path.components().collect();
    let at = comps
        .windows(2)
        .rposition(|w| w[0].as_os_str() == "plugins" && w[1].as_os_str() == "cache")?;
    let version = comps.get(at + 4)?.as_os_str().to_string_lossy().to_string();
    if comps.len() <= at + 5 {
        return None;
    }
    let mut unversioned = PathBuf::new();
    for (i, c) in comps.iter().enumerate() {
        if i != at + 4 {
            unversioned.push(c.as_os_str());
        }
    }
    Some((unversioned, version))
}

fn version_key(v: &str) -> Vec<(u64, String)> {
    v.split(['.', '-', '+'])
        .map(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            (digits.parse().unwrap_or(0), part.to_string())
        })
        .collect()
}

/// Every agent definition (`*.md`, any depth) under `roots`, sorted by path. Files without
/// frontmatter are prompt files named by their stem.
pub fn scan_agents(roots: &[PathBuf]) -> Vec<AgentDoc> {
    let mut out = Vec::new();
    for file in walk_md(roots) {
        if is_boilerplate(&file) || file.file_name().is_some_and(|n| n == "SKILL.md") {
            continue;
        }
        let Some((bytes, fm)) = read_doc(&file) else {
            continue;
        };
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let name = fm
            .get_str(&["name"])
            .filter(|n| plausible_name(n))
            .unwrap_or(stem);
        if name.trim().is_empty() {
            continue;
        }
        out.push(AgentDoc {
            name: name.trim().to_string(),
            description: description_of(&fm),
            model: fm.get_str(&["model"]),
            tools: fm.get_list(&["tools"]),
            content_hash: hash_bytes(&bytes),
            path: file,
        });
    }
    out
}

/// The skill roots of this machine that exist: `~/.claude/skills`, `~/.claude/plugins/cache`,
/// `~/.claude/commands`, `~/.agents/skills`, `~/.codex/skills`, and for each repo
/// `<repo>/.claude/skills`, `<repo>/.claude/commands`, `<repo>/.agents/skills`.
/// `CLAUDE_CONFIG_DIR` and `CODEX_HOME` move their roots as they do for the agents.
pub fn default_skill_roots(repos: &[PathBuf]) -> Vec<PathBuf> {
    let env = HomeDirs::from_env();
    existing(skill_roots_in(&env, repos))
}

/// The agent-definition roots that exist: `~/.claude/agents`, every plugin's `agents/` in the
/// plugin cache, and `<repo>/.claude/agents`.
pub fn default_agent_roots(repos: &[PathBuf]) -> Vec<PathBuf> {
    let env = HomeDirs::from_env();
    let mut roots = Vec::new();
    if let Some(claude) = &env.claude {
        roots.push(claude.join("agents"));
        // cache/<marketplace>/<plugin>/<version>/agents
        let cache = claude.join("plugins").join("cache");
        for m in subdirs(&cache) {
            for p in subdirs(&m) {
                for v in subdirs(&p) {
                    roots.push(v.join("agents"));
                }
            }
        }
    }
    for r in repos {
        roots.push(r.join(".claude").join("agents"));
    }
    existing(roots)
}

struct HomeDirs {
    claude: Option<PathBuf>,
    agents: Option<PathBuf>,
    codex: Option<PathBuf>,
}

impl HomeDirs {
    fn from_env() -> HomeDirs {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME").or_else(|| var("USERPROFILE"));
        HomeDirs {
            claude: var("CLAUDE_CONFIG_DIR").or_else(|| home.as_ref().map(|h| h.join(".claude"))),
            agents: home.as_ref().map(|h| h.join(".agents")),
            codex: var("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex"))),
        }
    }
}

fn skill_roots_in(env: &HomeDirs, repos: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(c) = &env.claude {
        roots.push(c.join("skills"));
        roots.push(c.join("plugins").join("cache"));
        roots.push(c.join("commands"));
    }
    if let Some(a) = &env.agents {
        roots.push(a.join("skills"));
    }
    if let Some(c) = &env.codex {
        roots.push(c.join("skills"));
    }
    for r in repos {
        roots.push(r.join(".claude").join("skills"));
        roots.push(r.join(".claude").join("commands"));
        roots.push(r.join(".agents").join("skills"));
    }
    roots
}

fn existing(roots: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = BTreeSet::new();
    roots
        .into_iter()
        .filter(|r| r.is_dir() && seen.insert(r.clone()))
        .collect()
}

/// The directories directly under `dir`, sorted; none when it cannot be read.
pub(crate) fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// All `*.md` files under the roots (following symlinks, without loops), absolute, sorted,
/// deduplicated.
fn walk_md(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = BTreeSet::new();
    let mut visited = BTreeSet::new();
    for root in roots {
        let root = absolute(root);
        if root.is_file() {
            if root.extension().is_some_and(|e| e == "md") {
                files.insert(root);
            }
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            let canon = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
            if !visited.insert(canon) {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in rd.filter_map(Result::ok) {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().to_string();
                // `metadata` follows symlinks; a dangling link is skipped.
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                if meta.is_dir() {
                    let skip = matches!(
                        name.as_str(),
                        ".git" | "node_modules" | "target" | "__pycache__" | ".venv" | "venv"
                    );
                    if !skip && depth < MAX_DEPTH {
                        stack.push((path, depth + 1));
                    }
                } else if meta.is_file() && name.ends_with(".md") && meta.len() <= MAX_FILE_BYTES {
                    files.insert(path);
                }
            }
        }
    }
    files.into_iter().collect()
}

fn read_doc(path: &Path) -> Option<(Vec<u8>, Frontmatter)> {
    let bytes = crate::sources::regular_file::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let fm = frontmatter::parse(&text);
    Some((bytes, fm))
}

fn is_boilerplate(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_uppercase())
        .unwrap_or_default();
    [
        "README",
        "CHANGELOG",
        "LICENSE",
        "CONTRIBUTING",
        "CLAUDE.MD",
        "AGENTS.MD",
    ]
    .iter()
    .any(|b| name.starts_with(b))
}

fn under_dir_named(path: &Path, dir: &str) -> bool {
    path.parent().is_some_and(|p| {
        p.ancestors()
            .any(|a| a.file_name().is_some_and(|n| n == dir))
    })
}

/// `…/plugins/cache/<marketplace>/<plugin>/<version>/…` → `<plugin>`.
pub fn plugin_of(path: &Path) -> Option<String> {
    let comps: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_string()),
            _ => None,
        })
        .collect();
    let at = comps
        .windows(2)
        .rposition(|w| w[0] == "plugins" && w[1] == "cache")?;
    // marketplace, plugin, and at least one more component before the file itself.
    let plugin = comps.get(at + 3)?;
    (comps.len() > at + 4).then(|| plugin.clone())
}

fn description_of(fm: &Frontmatter) -> String {
    let d = fm.get_str(&["description"]).unwrap_or_else(|| {
        // An unclosed `---` block is not prose: skip it up to the first blank line.
        let body = if !fm.present && fm.body.trim_start().starts_with("---") {
            fm.body.split_once("\n\n").map_or("", |(_, rest)| rest)
        } else {
            fm.body.as_str()
        };
        first_paragraph(body)
    });
    cap_chars(d.trim(), MAX_DESCRIPTION_CHARS)
}

/// The first prose paragraph of a markdown body (headings and code fences skipped), as Claude
/// Code does for a skill without a description.
fn first_paragraph(body: &str) -> String {
    let mut para: Vec<&str> = Vec::new();
    let mut in_fence = false;
    for line in body.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            if !para.is_empty() {
                break;
            }
            continue;
        }
        if in_fence {
            continue;
        }
        if t.is_empty() || t.starts_with('#') || t.starts_with("---") {
            if !para.is_empty() {
                break;
            }
            continue;
        }
        para.push(t);
    }
    para.join(" ")
}

fn when_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(?:use\s+(?:this\s+skill\s+|this\s+agent\s+|this\s+|it\s+)?(?:when|whenever|for|if|before|after)\b|when\s+to\s+use\b|invoke\s+(?:this\s+\w+\s+|this\s+|it\s+)?when\b|trigger(?:s|ed)?\b\s*(?:on\b|when\b|—|-|:))",
        )
        .ok()
    })
    .as_ref()
}

/// The "Use when …" sentence of a description: from the cue to the end of its sentence.
pub fn extract_when_to_use(description: &str) -> Option<String> {
    let m = when_re()?.find(description)?;
    let rest = &description[m.start()..];
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        if c == '\n' {
            end = i;
            break;
        }
        if matches!(c, '.' | '!' | '?') {
            let next = rest[i + c.len_utf8()..].chars().next();
            if next.is_none_or(char::is_whitespace) {
                end = i + c.len_utf8();
                break;
            }
        }
    }
    let s = rest[..end].trim();
    (!s.is_empty()).then(|| cap_chars(s, MAX_WHEN_CHARS))
}

pub fn hash_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn cap_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => s[..at].to_string(),
        None => s.to_string(),
    }
}

/// `path` made absolute against the current directory (not resolved: symlinks are kept).
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_from_cache_path() {
        let p = Path::new("/h/.claude/plugins/cache/elixir/elixir/1.2.0/skills/hex/SKILL.md");
        assert_eq!(plugin_of(p).as_deref(), Some("elixir"));
        assert_eq!(plugin_of(Path::new("/h/.claude/skills/x/SKILL.md")), None);
        assert_eq!(plugin_of(Path::new("/plugins/cache/m/SKILL.md")), None);
    }

    #[test]
    fn only_the_newest_plugin_version_is_kept() {
        let doc = |p: &str| SkillDoc {
            name: "s".into(),
            path: PathBuf::from(p),
            description: String::new(),
            when_to_use: None,
            content_hash: String::new(),
            plugin: plugin_of(Path::new(p)),
            tags: Vec::new(),
            kind: "skill",
        };
        let kept = keep_newest_plugin_versions(vec![
            doc("/c/plugins/cache/m/p/1.9.2/skills/s/SKILL.md"),
            doc("/c/plugins/cache/m/p/1.10.0/skills/s/SKILL.md"),
            doc("/c/plugins/cache/m/p/1.2.0/skills/s/SKILL.md"),
            doc("/c/plugins/cache/m/q/1.0.0/skills/s/SKILL.md"),
            doc("/h/skills/s/SKILL.md"),
        ]);
        let paths: Vec<String> = kept.iter().map(|d| d.path.display().to_string()).collect();
        assert_eq!(
            paths,
            vec![
                "/c/plugins/cache/m/p/1.10.0/skills/s/SKILL.md",
                "/c/plugins/cache/m/q/1.0.0/skills/s/SKILL.md",
                "/h/skills/s/SKILL.md"
            ]
        );
    }

    #[test]
    fn when_to_use_sentences() {
        let w = |d: &str| extract_when_to_use(d);
        assert_eq!(
            w("Creates art. Use this when users ask for art, e.g. flow fields. Other.").as_deref(),
            Some("Use this when users ask for art, e.g.")
        );
        assert_eq!(
            w("Use when encountering any bug").as_deref(),
            Some("Use when encountering any bug")
        );
        assert_eq!(
            w("X.\nTRIGGER — read first; more\nSKIP").as_deref(),
            Some("TRIGGER — read first; more")
        );
        assert_eq!(w("Guidance for design."), None);
    }

    #[test]
    fn roots_are_listed_per_home_and_repo() {
        let env = HomeDirs {
            claude: Some(PathBuf::from("/h/.claude")),
            agents: Some(PathBuf::from("/h/.agents")),
            codex: None,
        };
        let roots = skill_roots_in(&env, &[PathBuf::from("/r")]);
        assert!(roots.contains(&PathBuf::from("/h/.claude/plugins/cache")));
        assert!(roots.contains(&PathBuf::from("/h/.agents/skills")));
        assert!(roots.contains(&PathBuf::from("/r/.claude/skills")));
        assert!(roots.contains(&PathBuf::from("/r/.agents/skills")));
        assert!(existing(roots).is_empty());
    }

    #[test]
    fn first_paragraph_skips_headings() {
        assert_eq!(
            first_paragraph("# Grader\n\nEvaluate things\nwell.\n\n## Role"),
            "Evaluate things well."
        );
    }
}
