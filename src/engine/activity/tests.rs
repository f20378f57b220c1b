use super::*;
use crate::lanes::{ActivityActor, ActivityBucket, ActivitySkillUse};

const H: i64 = HOUR_MS;
/// 2026-10-21T00:00:00Z.
const DAY0: i64 = 1_792_540_800_000;

fn session(id: &str, cwd: &str, source: &str, outcome: Outcome) -> (String, ActivitySession) {
    (
        id.to_string(),
        ActivitySession {
            session_id: id.to_string(),
            source: source.to_string(),
            cwd: Some(cwd.to_string()),
            outcome,
            parent_session_id: None,
        },
    )
}

fn bucket(session: &str, actor: &str, hour_ms: i64, events: u64) -> ActivityBucket {
    ActivityBucket {
        session_id: session.to_string(),
        actor_id: Some(actor.to_string()),
        hour: hour_ms / H,
        events,
    }
}

fn actor(id: &str, name: &str) -> ActivityActor {
    ActivityActor {
        actor_id: id.to_string(),
        name: name.to_string(),
        kind: ActorKind::RootSession,
        source: "claude".to_string(),
    }
}

fn report(offset_s: i32, sessions: &HashMap<String, ActivitySession>) -> ActivityReport {
    let activity = SkillsActivity {
        buckets: vec![
            bucket("s1", "actor:a", DAY0 + 2 * H, 10),
            bucket("s1", "actor:a", DAY0 + 23 * H, 5),
            bucket("s2", "actor:b", DAY0 + 25 * H, 7),
            bucket("s3", "actor:c", DAY0 + 26 * H, 100),
            // Outside the period: not counted.
            bucket("s1", "actor:a", DAY0 - 30 * H, 1000),
        ],
        actors: vec![actor("actor:a", "main"), actor("actor:b", "main")],
        uses: vec![
            ActivitySkillUse {
                skill: "mysql-access".into(),
                session_id: "s2".into(),
                actor_id: "actor:b".into(),
                outcome: Outcome::Failure,
            },
            ActivitySkillUse {
                skill: "mysql-access".into(),
                session_id: "s1".into(),
                actor_id: "actor:a".into(),
                outcome: Outcome::Success,
            },
        ],
    };
    let mut req = ActivityRequest::last_days(2, DAY0 + 30 * H, offset_s);
    req.top = 10;
    let mut warnings = Vec::new();
    let range = day_range(&req, &mut warnings);
    let off = i64::from(offset_s) * 1000;
    let q = ActivityQuery {
        since_ms: range.0 * DAY_MS - off,
        until_ms: range.1 * DAY_MS - off,
        ..Default::default()
    };
    count(&req, &q, range, sessions, &activity)
}

#[test]
fn days_sessions_actors_workspaces_and_skills_are_counted_from_the_lanes_rows() {
    let sessions: HashMap<_, _> = [
        session("s1", "/srv/billing", "claude", Outcome::Success),
        session("s2", "/srv/billing", "codex", Outcome::Failure),
    ]
    .into_iter()
    .collect();
    let r = report(0, &sessions);
    let days: Vec<(&str, u64, u64, u64)> = r
        .days
        .iter()
        .map(|d| (d.day.as_str(), d.sessions, d.events, d.failed_sessions))
        .collect();
    assert_eq!(days, [("2026-10-21", 1, 15, 0), ("2026-10-22", 1, 7, 1)]);
    // s3 is outside the filters (not among the sessions): its 100 events never count.
    assert_eq!((r.sessions, r.events, r.failed_sessions), (2, 22, 1));
    assert_eq!(r.failed_share, 0.5);
    let actors: Vec<(&str, u64, u64, u64)> = r
        .actors
        .iter()
        .map(|a| (a.actor_id.as_str(), a.events, a.successes, a.failures))
        .collect();
    assert_eq!(actors, [("actor:a", 15, 1, 0), ("actor:b", 7, 0, 1)]);
    assert_eq!(r.workspaces.len(), 1);
    assert_eq!(r.workspaces[0].actors, ["actor:a", "actor:b"]);
    assert_eq!(r.agents[0].source, "claude");
    assert_eq!(r.skills[0].skill, "mysql-access");
    assert_eq!((r.skills[0].uses, r.skills[0].failures), (2, 1));
}

#[test]
fn days_are_local_days() {
    let sessions: HashMap<_, _> = [session("s1", "/w", "claude", Outcome::Success)]
        .into_iter()
        .collect();
    // At UTC+3 the event at 23:00Z is already the next local day.
    let r = report(3 * 3600, &sessions);
    let events: Vec<(&str, u64)> = r.days.iter().map(|d| (d.day.as_str(), d.events)).collect();
    assert_eq!(events, [("2026-10-21", 10), ("2026-10-22", 5)]);
}

#[test]
fn a_long_period_is_cut_and_says_so() {
    let mut req = ActivityRequest::last_days(1, DAY0, 0);
    req.period = Period::Range {
        since_ms: Some(DAY0 - 1000 * DAY_MS),
        until_ms: Some(DAY0),
    };
    let mut warnings = Vec::new();
    let (first, end) = day_range(&req, &mut warnings);
    assert_eq!(end - first, MAX_DAYS);
    assert!(warnings[0].contains("1001 days"), "{warnings:?}");
}
