//! Skill-use records and edit paths, cleaned before they reach L3: which names are plausible,
//! how `plugin:skill` splits, when two records are one use of a skill, and how a written path
//! becomes absolute and cwd-relative. Kept apart from actor derivation so each rule is tested on
//! its own.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// A later skill-use record of the same skill within this many events of a kept use (the tool
/// result and the injected body that follow a Skill call) is the same use.
pub const SAME_USE_WINDOW: i64 = 10;

/// One raw skill-use record of a session, before de-duplication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawUse {
    pub seq: i64,
    pub name: String,
    pub via: String,
    pub tool_use_id: Option<String>,
    pub sidechain: Option<String>,
    pub time_ms: Option<i64>,
}

/// A name that can be a skill or teammate id: non-empty, at most 128 chars, no whitespace,
/// control characters, brackets or quotes (placeholders such as `[trimmed]` are not names).
pub fn plausible_name(name: &str) -> bool {
    let n = name.trim();
    !n.is_empty()
        && n.chars().count() <= 128
        && !n.chars().any(|c| {
            c.is_whitespace() || c.is_control() || matches!(c, '[' | ']' | '<' | '>' | '"' | '`')
        })
}

/// `elixir:hex-docs-search` → (`Some("elixir")`, `hex-docs-search`), lowercased; a leading `/`
/// (slash command) is dropped.
pub fn split_skill_name(name: &str) -> (Option<String>, String) {
    let n = name.trim().trim_start_matches('/').to_lowercase();
    match (n.find(':'), n.rfind(':')) {
        (Some(first), Some(last)) => {
            let plugin = n[..first].trim().to_string();
            let base = n[last + 1..].trim().to_string();
            ((!plugin.is_empty()).then_some(plugin), base)
        }
        _ => (None, n),
    }
}

/// De-duplicates the skill-use records of one session (sorted by seq on return).
///
/// * A Skill tool call counts once per `tool_use_id`.
/// * Any other record (injected `Base directory for this skill` body, slash-command body) of the
///   same skill by the same agent within [`SAME_USE_WINDOW`] events after a kept use is that
///   use; a `plugin:skill` spelling it carries replaces a bare kept name.
/// * An `invoked_skills` attachment restates skills already invoked in the session (after a
///   compaction), so it counts only when the session has no earlier use of that skill.
pub fn dedupe_uses(mut uses: Vec<RawUse>) -> Vec<RawUse> {
    uses.sort_by(|a, b| a.seq.cmp(&b.seq).then(a.name.cmp(&b.name)));
    let mut kept: Vec<RawUse> = Vec::new();
    let mut tool_ids: BTreeSet<String> = BTreeSet::new();
    for u in uses {
        let (plugin, base) = split_skill_name(&u.name);
        if base.is_empty() || !plausible_name(&u.name) {
            continue;
        }
        if u.via == "tool" {
            if let Some(id) = &u.tool_use_id {
                if !tool_ids.insert(id.clone()) {
                    continue;
                }
            }
            kept.push(u);
            continue;
        }
        let same = |k: &RawUse| k.sidechain == u.sidechain && split_skill_name(&k.name).1 == base;
        let recent = kept
            .iter_mut()
            .rev()
            .find(|k| same(k) && u.seq - k.seq <= SAME_USE_WINDOW);
        if let Some(k) = recent {
            if plugin.is_some() && split_skill_name(&k.name).0.is_none() {
                k.name = u.name.trim().trim_start_matches('/').to_string();
            }
            continue;
        }
        if u.via == "attachment" && kept.iter().any(same) {
            continue;
        }
        kept.push(u);
    }
    kept
}

/// A written path → (absolute normalised path, path relative to the session's cwd).
pub fn normalise(path: &str, cwd: Option<&str>) -> (Option<String>, Option<String>) {
    let p = path.trim();
    let windows_abs =
        p.len() > 2 && p.as_bytes()[1] == b':' && matches!(p.as_bytes()[2], b'\\' | b'/');
    if windows_abs {
        return (Some(p.to_string()), None);
    }
    let joined = if Path::new(p).is_absolute() {
        PathBuf::from(p)
    } else {
        match cwd.filter(|c| Path::new(c).is_absolute()) {
            Some(c) => Path::new(c).join(p),
            None => return (None, None),
        }
    };
    let abs = lexical(&joined);
    let rel = cwd
        .filter(|c| Path::new(c).is_absolute())
        .and_then(|c| abs.strip_prefix(lexical(Path::new(c))).ok())
        .map(|r| r.to_string_lossy().to_string())
        .filter(|r| !r.is_empty());
    (Some(abs.to_string_lossy().to_string()), rel)
}

fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(seq: i64, name: &str, via: &str, tool: Option<&str>) -> RawUse {
        RawUse {
            seq,
            name: name.into(),
            via: via.into(),
            tool_use_id: tool.map(str::to_string),
            sidechain: None,
            time_ms: None,
        }
    }

    #[test]
    fn a_skill_call_and_its_body_are_one_use() {
        let kept = dedupe_uses(vec![
            raw(5, "hex-docs-search", "injected", None),
            raw(3, "elixir:hex-docs-search", "tool", Some("t1")),
            raw(3, "elixir:hex-docs-search", "tool", Some("t1")),
            raw(40, "elixir:hex-docs-search", "tool", Some("t2")),
            raw(90, "hex-docs-search", "attachment", None),
            raw(95, "other", "attachment", None),
            raw(96, "[trimmed for fixture]", "attachment", None),
        ]);
        let names: Vec<(i64, &str)> = kept.iter().map(|u| (u.seq, u.name.as_str())).collect();
        assert_eq!(
            names,
            vec![
                (3, "elixir:hex-docs-search"),
                (40, "elixir:hex-docs-search"),
                (95, "other")
            ]
        );
    }

    #[test]
    fn injected_name_upgrades_bare_name() {
        let kept = dedupe_uses(vec![
            raw(1, "/commit", "slash_command", None),
            raw(2, "tools:commit", "injected", None),
            raw(30, "commit", "injected", None),
        ]);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].name, "tools:commit");
    }

    #[test]
    fn names_split_and_paths_normalise() {
        assert_eq!(
            split_skill_name("/Elixir:hex-docs-search"),
            (Some("elixir".into()), "hex-docs-search".into())
        );
        assert_eq!(split_skill_name("commit"), (None, "commit".into()));
        assert_eq!(
            normalise("src/../lib/a.rs", Some("/w/app")),
            (Some("/w/app/lib/a.rs".into()), Some("lib/a.rs".into()))
        );
        assert_eq!(normalise("/x/./y", None), (Some("/x/y".into()), None));
        assert_eq!(normalise("rel", None), (None, None));
        assert_eq!(normalise("C:\\a\\b", None).0.as_deref(), Some("C:\\a\\b"));
    }
}
