//! The activity view on the indexed demo world: the engine's counts, moving between days and
//! lists, and Enter leading to the matching search.

use super::{engine_for, harness, world, Harness};
use crate::tui::action::Action;
use crate::tui::state::{ActivityPane, ActivityPeriod, Focus, View};
use crate::tui::update::Effect;

fn view(h: &Harness) -> &crate::tui::state::ActivityView {
    match h.app.views.last() {
        Some(View::Activity(v)) => v,
        _ => panic!("the activity view is not open"),
    }
}

/// Move the day selection to the day with the most sessions.
pub fn select_busiest_day(h: &mut Harness) {
    let days = view(h).report.as_ref().expect("a report").days.clone();
    let busiest = (0..days.len())
        .max_by_key(|i| (days[*i].sessions, std::cmp::Reverse(*i)))
        .unwrap_or(0);
    while view(h).day > busiest {
        h.act(Action::Decrease);
    }
}

fn opened() -> Harness {
    let w = world();
    let mut h = harness(engine_for(w), w, 120, 40);
    h.act(Action::Activity);
    h.act(Action::CyclePeriod);
    assert_eq!(view(&h).period, ActivityPeriod::Days(90));
    h
}

#[test]
fn the_view_counts_the_demo_world_through_the_engine() {
    let h = opened();
    let r = view(&h).report.as_ref().expect("a report");
    assert_eq!(r.days.len(), 90);
    assert!(
        r.sessions >= 3 && r.events > r.sessions,
        "{} {}",
        r.sessions,
        r.events
    );
    assert_eq!(r.days.iter().map(|d| d.events).sum::<u64>(), r.events);
    assert!(!r.actors.is_empty() && !r.workspaces.is_empty());
    // Actors come with the titles that say what they did.
    assert!(r.actors.iter().any(|a| a.title.is_some()), "{:?}", r.actors);
    let screen = h.screen();
    assert!(
        screen.contains("Who worked") && screen.contains("Workspaces"),
        "{screen}"
    );
}

#[test]
fn enter_on_an_actor_searches_its_evidence_in_the_period() {
    let mut h = opened();
    h.act(Action::NextPane);
    assert_eq!(view(&h).pane, ActivityPane::Actors);
    let actor = view(&h).report.as_ref().unwrap().actors[0].clone();
    let before = h.seen.searches;
    h.act(Action::Open);
    assert!(h.app.views.is_empty(), "the view closes");
    assert_eq!(h.app.filters.actors, vec![actor.actor_id.clone()]);
    assert_eq!(
        h.app.filters.workspaces,
        actor.workspace.into_iter().collect::<Vec<_>>()
    );
    assert!(!h.app.filters.since.is_empty() && !h.app.filters.until.is_empty());
    // The query box was empty: the actor's title is the question.
    assert_eq!(Some(h.app.query_text()), actor.title);
    assert_eq!(h.seen.searches, before + 1);
    let resp = h.app.response().expect("an answer");
    assert!(
        resp.actors.iter().all(|a| a.actor_id == actor.actor_id),
        "only the chosen actor: {:?}",
        resp.actors.iter().map(|a| &a.actor_id).collect::<Vec<_>>()
    );
}

#[test]
fn enter_on_a_day_sets_its_time_range_and_asks_for_a_question() {
    let mut h = opened();
    select_busiest_day(&mut h);
    let day = {
        let v = view(&h);
        v.report.as_ref().unwrap().days[v.day].clone()
    };
    assert!(day.sessions > 0);
    let fx = h.act_raw(Action::Open);
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::Search(..))),
        "{fx:?}"
    );
    assert!(
        h.app.filters.since.starts_with(&day.day),
        "{}",
        h.app.filters.since
    );
    assert!(
        h.app.filters.until.starts_with(&day.day),
        "{}",
        h.app.filters.until
    );
    assert_eq!(h.app.focus, Focus::Query);
    // With a question typed, the same Enter searches within the day.
    h.type_text("MySQL");
    h.act(Action::SearchNow);
    let resp = h.app.response().expect("an answer");
    for item in &resp.lanes.episodes.items {
        let t = item.time.as_deref().unwrap_or("");
        assert!(t.starts_with(&day.day), "{t} is outside {}", day.day);
    }
}

#[test]
fn the_period_cycles_and_a_late_answer_for_an_old_period_is_dropped() {
    let mut h = opened();
    let old_job = view(&h).job;
    let fx = h.act_raw(Action::CyclePeriod);
    assert_eq!(view(&h).period, ActivityPeriod::Filters);
    assert!(view(&h).loading && view(&h).report.is_none());
    // The answer for the previous period arrives late: ignored.
    let stale = h
        .engine
        .activity(&crate::tui::update::activity_request(&h.app, ActivityPeriod::Days(7)).unwrap());
    h.act(Action::ActivityLoaded(old_job, Ok(Box::new(stale))));
    assert!(view(&h).report.is_none());
    for f in fx {
        if let Some(a) = h.effect(f) {
            h.act(a);
        }
    }
    assert!(view(&h).report.is_some());
    h.act(Action::CyclePeriod);
    assert_eq!(view(&h).period, ActivityPeriod::Days(7));
    h.act(Action::Back);
    assert!(h.app.views.is_empty());
}
