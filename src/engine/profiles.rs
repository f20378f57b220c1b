//! Actors a person can recognise: every root session is named `main`, so an actor alone says
//! nothing about *which* work it was. This step gives each returned actor a `title` (what the
//! work was about), the `root_title` of the session a subagent served, the `workspace` it ran in
//! and when it was `last_active`, and names the session in its `why`.
//!
//! Titles come from L1 at query time (the agent-knowledge store keeps no transcript text):
//! a root session's summary / custom title when the transcript has one, else the first prompt
//! that says something, the assistant's statement of the task or the files it edited
//! (`titles.rs`); a subagent's task description; a team member's assignment. Every title is
//! redacted again, made one line and clipped to [`TITLE_CHARS`] characters.

use crate::contract::{Actor, ActorKind, Lane};
use crate::lanes::{EpisodesSource, SessionRow, SkillsSource};
use crate::text::snippet::clip_chars;
use crate::text::{redact, sanitize};

/// Longest title shown for an actor, in characters (`…` included).
pub const TITLE_CHARS: usize = 80;

/// What a person needs to recognise an actor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    pub title: Option<String>,
    pub root_title: Option<String>,
    pub workspace: Option<String>,
    pub last_active: Option<String>,
}

/// The root session and kind named by an actor id `actor:<source>:<kind>:<root>:<name>`.
pub fn root_of(actor_id: &str) -> Option<(ActorKind, &str)> {
    let rest = actor_id.strip_prefix("actor:")?;
    let mut parts = rest.splitn(3, ':');
    let _source = parts.next()?;
    let kind = parts.next()?;
    let (root, _name) = parts.next()?.rsplit_once(':')?;
    Some((ActorKind::from_stored(kind), root))
}

/// The profile of one actor. `seen_sessions` are sessions its evidence came from (so actors
/// inferred without the agent-knowledge store still find their own transcript).
pub fn profile(
    actor_id: &str,
    seen_sessions: &[String],
    episodes: &dyn EpisodesSource,
    knowledge: &dyn SkillsSource,
) -> Profile {
    let Some((kind, root)) = root_of(actor_id) else {
        return Profile::default();
    };
    let mut sessions: Vec<String> = knowledge.sessions_of(actor_id).unwrap_or_default();
    for s in seen_sessions {
        if !sessions.contains(s) {
            sessions.push(s.clone());
        }
    }
    let rows: Vec<SessionRow> = sessions
        .iter()
        .filter_map(|s| episodes.session(s).ok().flatten())
        .collect();
    // A root actor's own session is usually among its rows already: read it once.
    let root_row = match rows.iter().find(|r| r.session_id == root) {
        Some(r) => Some(r.clone()),
        None => episodes.session(root).ok().flatten(),
    };
    let root_title = root_row
        .as_ref()
        .and_then(|r| super::titles::session_title(r, episodes));
    let title = match kind {
        ActorKind::RootSession => root_title.clone(),
        ActorKind::Subagent | ActorKind::TeamMember => {
            let children = || rows.iter().filter(|r| r.session_id != root);
            children()
                .find_map(|r| r.agent_description.as_deref().and_then(clean))
                .or_else(|| children().find_map(|r| spawned_as(r, root, episodes)))
        }
        ActorKind::AutoclawAgent | ActorKind::Unknown => None,
    };
    let workspace = root_row
        .as_ref()
        .and_then(|r| r.cwd.clone())
        .or_else(|| rows.iter().find_map(|r| r.cwd.clone()))
        .map(|w| sanitize::one_line(&w));
    let last_active = rows
        .iter()
        .chain(root_row.iter().filter(|_| kind == ActorKind::RootSession))
        .filter_map(|r| r.last_event_at.clone())
        .max();
    Profile {
        title,
        root_title: (kind != ActorKind::RootSession)
            .then_some(root_title)
            .flatten(),
        workspace,
        last_active,
    }
}

/// A subagent's task description from its parent's `Task`/`Agent` call (older transcripts
/// have no sidecar that says it).
fn spawned_as(row: &SessionRow, root: &str, episodes: &dyn EpisodesSource) -> Option<String> {
    let agent = row.agent_id.as_deref()?;
    let parent = row.parent_session_id.as_deref().unwrap_or(root);
    let description = episodes.spawn_description(parent, agent).ok().flatten()?;
    clean(&description)
}

/// Redacted (again), one line, at most [`TITLE_CHARS`] characters; `None` when empty.
pub fn clean(text: &str) -> Option<String> {
    let line = sanitize::one_line(&redact::redact(text).text);
    (!line.is_empty()).then(|| clip_chars(&line, TITLE_CHARS))
}

/// How a person reads an actor, one line: a root session by its title (`main @5af11f95` when it
/// has none), a subagent or team member by its name and whose it was, then the workspace's last
/// path component and the day it was last active:
/// `db-fixer · subagent of «Доступ к MySQL 176.99.5.35» · billing · 2026-10-21`.
/// Titles are clipped to `title_chars` characters so a narrow screen keeps every part.
pub fn label(a: &Actor, title_chars: usize) -> String {
    label_with(a, title_chars, true, true)
}

/// [`label`] with the workspace and the day optional, for a narrow column.
pub fn label_with(a: &Actor, title_chars: usize, workspace: bool, day: bool) -> String {
    let p = Profile {
        title: a.title.clone(),
        root_title: a.root_title.clone(),
        workspace: a.workspace.clone(),
        last_active: a.last_active.clone(),
    };
    label_of(
        &a.actor_id,
        a.kind,
        &a.name,
        &p,
        title_chars,
        workspace,
        day,
    )
}

/// [`label_with`] for an actor known by its id, kind, name and profile (the activity view).
pub fn label_of(
    actor_id: &str,
    kind: ActorKind,
    name: &str,
    p: &Profile,
    title_chars: usize,
    workspace: bool,
    day: bool,
) -> String {
    let clip = |t: &str| clip_chars(t, title_chars);
    let mut parts = Vec::new();
    let root = root_of(actor_id).map(|(_, r)| r).unwrap_or_default();
    let short_root: String = root.chars().take(8).collect();
    match (kind, p.title.as_deref()) {
        (ActorKind::RootSession, Some(t)) => parts.push(clip(t)),
        (ActorKind::RootSession, None) if !short_root.is_empty() => {
            parts.push(format!("{name} @{short_root}"))
        }
        _ => parts.push(name.to_string()),
    }
    if kind != ActorKind::RootSession {
        let whose = if kind == ActorKind::TeamMember {
            "team member"
        } else {
            "subagent"
        };
        match (p.root_title.as_deref(), p.title.as_deref()) {
            (Some(rt), _) => parts.push(format!("{whose} of «{}»", clip(rt))),
            (None, Some(t)) => parts.push(format!("{whose}: «{}»", clip(t))),
            (None, None) if !short_root.is_empty() => {
                parts.push(format!("{whose} of @{short_root}"))
            }
            _ => {}
        }
    }
    if let Some(w) = p.workspace.as_deref().filter(|_| workspace) {
        let last = w
            .trim_end_matches(['/', '\\'])
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(w);
        if !last.is_empty() {
            parts.push(last.to_string());
        }
    }
    if let Some(t) = p.last_active.as_deref().filter(|_| day) {
        parts.push(t.chars().take(10).collect());
    }
    sanitize::one_line(&parts.join(" · "))
}

/// Fill the profile of every actor and name its session in `why`.
pub fn fill(actors: &mut [Actor], episodes: &dyn EpisodesSource, knowledge: &dyn SkillsSource) {
    for actor in actors.iter_mut() {
        let seen: Vec<String> = actor
            .evidence
            .iter()
            .filter(|e| e.lane == Lane::Episodes)
            .filter_map(|e| crate::lanes::parse_episode_id(&e.id).map(|(s, _)| s))
            .collect();
        let p = profile(&actor.actor_id, &seen, episodes, knowledge);
        name_session_in_why(&mut actor.why, p.root_title.as_ref().or(p.title.as_ref()));
        actor.title = p.title;
        actor.root_title = p.root_title;
        actor.workspace = p.workspace;
        actor.last_active = p.last_active;
    }
}

/// "successful outcome" → "in «title» (success)": the session in words, with its outcome.
fn name_session_in_why(why: &mut Vec<String>, title: Option<&String>) {
    let Some(title) = title else {
        return;
    };
    let outcome = why
        .iter()
        .position(|w| w == "successful outcome" || w == "failed outcome");
    match outcome {
        Some(i) => {
            let word = if why[i] == "successful outcome" {
                "success"
            } else {
                "failure"
            };
            why[i] = format!("in «{title}» ({word})");
        }
        None => why.push(format!("in «{title}»")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_of_reads_kind_and_root_session() {
        assert_eq!(
            root_of("actor:claude:subagent:5af11f95-d95e:db-fixer"),
            Some((ActorKind::Subagent, "5af11f95-d95e"))
        );
        assert_eq!(
            root_of("actor:codex:root_session:01a1:main"),
            Some((ActorKind::RootSession, "01a1"))
        );
        assert_eq!(root_of("nonsense"), None);
    }

    #[test]
    fn clean_titles_are_one_redacted_line_of_at_most_80_chars() {
        let long = "x ".repeat(100);
        let t = clean(&long).unwrap();
        assert_eq!(t.chars().count(), TITLE_CHARS);
        assert!(t.ends_with('…'));
        assert_eq!(clean("a\nb\u{1b}[31m c").unwrap().lines().count(), 1);
        let secret = clean("connect with password=Hunter2Secret please").unwrap();
        assert!(!secret.contains("Hunter2Secret"), "{secret}");
        assert_eq!(clean("   \n  "), None);
    }

    fn actor(kind: ActorKind, name: &str) -> Actor {
        Actor {
            actor_id: format!("actor:claude:{kind}:5af11f95-d95e-4618:{name}"),
            name: name.into(),
            kind,
            source: "claude".into(),
            confidence: 0.9,
            score: 0.1,
            why: vec![],
            evidence: vec![],
            skills: vec![],
            dispatch: crate::contract::DispatchInfo {
                mode: crate::contract::DispatchMode::SpawnReplica,
                available: false,
            },
            title: None,
            root_title: None,
            workspace: None,
            last_active: None,
        }
    }

    #[test]
    fn a_root_session_reads_as_its_title_and_a_subagent_as_whose_it_was() {
        let mut root = actor(ActorKind::RootSession, "main");
        assert_eq!(label(&root, 80), "main @5af11f95");
        root.title = Some("Доступ к MySQL 176.99.5.35".into());
        root.workspace = Some("/srv/repos/billing".into());
        root.last_active = Some("2026-10-21T05:55:19.810Z".into());
        assert_eq!(
            label(&root, 80),
            "Доступ к MySQL 176.99.5.35 · billing · 2026-10-21"
        );
        let mut sub = actor(ActorKind::Subagent, "db-fixer");
        sub.title = Some("Восстановить доступ к MySQL".into());
        sub.root_title = root.title.clone();
        sub.workspace = root.workspace.clone();
        assert_eq!(
            label(&sub, 80),
            "db-fixer · subagent of «Доступ к MySQL 176.99.5.35» · billing"
        );
        assert_eq!(label(&sub, 6), "db-fixer · subagent of «Досту…» · billing");
        let mut member = actor(ActorKind::TeamMember, "alice");
        member.title = Some("Fix webhook handler".into());
        assert_eq!(
            label(&member, 80),
            "alice · team member: «Fix webhook handler»"
        );
    }

    #[test]
    fn why_names_the_session_and_keeps_the_outcome() {
        let mut why = vec![
            "3 matching episode(s)".to_string(),
            "successful outcome".to_string(),
        ];
        name_session_in_why(&mut why, Some(&"Доступ к MySQL".to_string()));
        assert_eq!(why[1], "in «Доступ к MySQL» (success)");
        let mut why = vec!["1 matching episode(s)".to_string()];
        name_session_in_why(&mut why, Some(&"t".to_string()));
        assert_eq!(why[1], "in «t»");
    }
}
