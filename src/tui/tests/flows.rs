//! Flows driven through `update`, as a person would: type → results → actor → evidence → views,
//! copying, filters, the mouse, the confirmation dialog; and the guarantees around them (the
//! latest search wins, nothing unsanitised reaches the screen, NO_COLOR, keys from the config).

use knowledge::contract::{DispatchRun, Execution, Lane, ReviewStatus};
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;

use super::snapshots::{sample_preview, with_sample_dispatch, QUERY};
use super::{engine_for, harness, steady, world, writable_world, Harness};
use crate::tui::action::{Action, MouseInput, MouseKind};
use crate::tui::state::{Focus, Overlay, View};
use crate::tui::ui;
use crate::tui::update::Effect;

fn fresh() -> Harness {
    harness(engine_for(world()), world(), 120, 40)
}

fn key(c: char) -> Action {
    Action::Input(ratatui_textarea::Input {
        key: ratatui_textarea::Key::Char(c),
        ..Default::default()
    })
}

#[test]
fn typing_debounces_and_the_latest_search_wins() {
    let mut h = fresh();
    let mut gens = Vec::new();
    for c in "MySQL".chars() {
        let fx = h.act_raw(key(c));
        assert!(
            !fx.iter().any(|f| matches!(f, Effect::Search(..))),
            "typing never searches at once"
        );
        match fx.as_slice() {
            [Effect::Debounce(g)] => gens.push(*g),
            other => panic!("expected one debounce, got {other:?}"),
        }
        assert!(h.app.search.pending());
    }
    assert!(gens.windows(2).all(|w| w[0] < w[1]));
    // An old debounce firing does nothing; the newest one searches.
    assert!(h.act_raw(Action::DebounceElapsed(gens[0])).is_empty());
    let fx = h.act_raw(Action::DebounceElapsed(*gens.last().unwrap()));
    let (req, g) = match fx.as_slice() {
        [Effect::Search(req, g)] => (req.clone(), *g),
        other => panic!("expected a search, got {other:?}"),
    };
    assert_eq!(req.query, "MySQL");
    // A stale answer is dropped, the current one shown.
    let resp = steady(h.engine.search(&req));
    h.act(Action::SearchDone(g - 1, Box::new(resp.clone()), 1.0));
    assert!(h.app.response().is_none());
    h.act(Action::SearchDone(g, Box::new(resp), 1.0));
    assert!(h.app.response().is_some());
    assert!(!h.app.search.pending());
}

#[test]
fn enter_searches_at_once_and_a_newer_edit_outdates_the_answer() {
    let mut h = fresh();
    for c in "MySQL".chars() {
        h.act_raw(key(c)); // the debounce never fires
    }
    let fx = h.act_raw(Action::SearchNow);
    let (req, g) = match fx.as_slice() {
        [Effect::Search(req, g)] => (req.clone(), *g),
        other => panic!("expected a search, got {other:?}"),
    };
    let _ = h.act_raw(key('!'));
    let resp = h.engine.search(&req);
    h.act(Action::SearchDone(g, Box::new(resp), 1.0));
    assert!(h.app.response().is_none(), "the query changed since");
    // Enter on the query that is already answered moves into the results.
    let mut h = fresh();
    h.type_text("MySQL"); // the debounce fires and the answer arrives
    assert!(h.app.response().is_some());
    assert_eq!(h.app.focus, Focus::Query);
    assert!(h.act_raw(Action::SearchNow).is_empty());
    assert_eq!(h.app.focus, Focus::Lane(Lane::Episodes));
}

#[test]
fn results_then_an_actor_then_its_evidence_in_the_lane() {
    let mut h = fresh();
    h.search(QUERY);
    assert!(!h.app.episodes().is_empty() && !h.app.actors().is_empty());
    assert!(h.screen().contains("Actors"));
    h.act(Action::FocusActors);
    h.act(Action::Down);
    let (lane, id) = {
        let (l, i) = h
            .app
            .selected_evidence()
            .expect("on the first evidence link");
        (l, i.to_string())
    };
    h.act(Action::Open);
    assert_eq!(h.app.focus, Focus::Lane(lane));
    let sel = h.app.cursors.lane(lane).selected;
    let got = match lane {
        Lane::Episodes => h.app.episodes()[sel].id.clone(),
        Lane::Code => h.app.code()[sel].id.clone(),
        Lane::Skills => h.app.skills()[sel].id.clone(),
    };
    assert_eq!(got, id);
    assert!(h.app.is_evidence(lane, &id));
    let status = h.app.status.message.as_ref().unwrap().text.clone();
    assert!(status.starts_with("evidence 1/"), "{status}");

    // An actor whose evidence is code: Enter on the actor follows its first link.
    let i = h
        .app
        .actors()
        .iter()
        .position(|a| a.evidence.first().is_some_and(|e| e.lane == Lane::Code))
        .expect("an actor with code evidence in the demo world");
    h.app.cursors.actors.actor = i;
    h.app.cursors.actors.evidence = None;
    h.act(Action::FocusActors);
    h.act(Action::Open);
    assert_eq!(h.app.focus, Focus::Lane(Lane::Code));
}

#[test]
fn episode_view_scrolls_matches_and_loads_more_context() {
    let mut h = fresh();
    h.search(QUERY);
    h.act(Action::FocusEpisodes);
    h.act(Action::Open);
    let Some(View::Episode(v)) = h.app.views.last() else {
        panic!("episode view")
    };
    let ep = v.episode.clone().expect("loaded");
    assert!(ep.events.iter().any(|e| e.seq == v.seq));
    h.act(Action::NextMatch);
    let Some(View::Episode(v)) = h.app.views.last() else {
        panic!()
    };
    let first = v.match_row.expect("a match");
    h.act(Action::NextMatch);
    let Some(View::Episode(v)) = h.app.views.last() else {
        panic!()
    };
    assert!(v.match_row.unwrap() > first);
    h.act(Action::MoreContext);
    let Some(View::Episode(v)) = h.app.views.last() else {
        panic!()
    };
    assert_eq!(v.context, 6);
    assert!(v.episode.as_ref().unwrap().events.len() > ep.events.len() - 1);
    h.act(Action::PageDown);
    h.act(Action::Bottom);
    h.act(Action::Top);
    h.act(Action::Back);
    assert!(h.app.views.is_empty());
}

#[test]
fn code_view_reads_the_file_and_opens_the_editor_at_the_line() {
    let mut h = fresh();
    h.search(QUERY);
    h.act(Action::FocusCode);
    let item = h.app.code()[0].clone();
    h.act(Action::Open);
    let Some(View::Code(v)) = h.app.views.last() else {
        panic!("code view")
    };
    let text = v.text.as_ref().expect("read");
    assert_eq!(text.freshness, "fresh");
    let at = (item.start_line - text.first_line) as usize;
    assert!(text.lines.len() > at);
    assert!(h.screen().contains(&format!("{} │", item.start_line)));
    h.act(Action::OpenEditor);
    let (path, line) = h.seen.editor.last().cloned().expect("editor");
    assert!(
        path.ends_with(&item.path) && path.starts_with('/'),
        "{path}"
    );
    assert_eq!(line, item.start_line);
    // `e` straight from the lane goes through the same lookup.
    h.act(Action::Back);
    h.act(Action::OpenEditor);
    assert_eq!(h.seen.editor.len(), 2);
}

#[test]
fn copy_ids_locators_and_the_resume_command() {
    let mut h = fresh();
    h.search(QUERY);
    h.act(Action::FocusEpisodes);
    let it = h.app.episodes()[0].clone();
    h.act(Action::CopyLocator);
    assert_eq!(
        h.seen.copied.last().unwrap(),
        &format!("{}:{}", it.session_id, it.seq)
    );
    h.act(Action::CopyMenu);
    assert!(matches!(h.app.overlay, Some(Overlay::Copy(_))));
    h.act(Action::CopyResume);
    assert!(h.app.overlay.is_none());
    let cmd = h.seen.copied.last().unwrap().clone();
    let root = it.session_id.split('/').next().unwrap();
    let cwd = it.session.cwd.clone().unwrap();
    assert_eq!(cmd, format!("cd {cwd} && claude --resume {root}"));
    h.act(Action::CopyId);
    assert_eq!(h.seen.copied.last().unwrap(), &it.id);
    assert!(h
        .app
        .status
        .message
        .as_ref()
        .unwrap()
        .text
        .starts_with("copied"));
}

#[test]
fn filters_apply_to_the_next_search_and_bad_dates_are_refused() {
    let mut h = fresh();
    h.search(QUERY);
    let billing = format!("{}/repos/billing", world().root.display());
    h.act(Action::OpenFilters);
    h.type_text(&billing);
    h.act(Action::NextField);
    h.type_text("someday");
    h.act(Action::Apply);
    match &h.app.overlay {
        Some(Overlay::Filters(f)) => assert!(f.error.as_deref().unwrap().contains("since")),
        _ => panic!("the popup stays open on an error"),
    }
    for _ in 0.."someday".len() {
        h.act(Action::Input(ratatui_textarea::Input {
            key: ratatui_textarea::Key::Backspace,
            ..Default::default()
        }));
    }
    h.type_text("2026-10-20");
    let before = h.seen.searches;
    h.act(Action::Apply);
    assert!(h.app.overlay.is_none());
    assert_eq!(h.seen.searches, before + 1);
    assert_eq!(h.app.filters.workspaces, vec![billing.clone()]);
    assert_eq!(h.app.filters.since, "2026-10-20");
    assert!(!h.app.episodes().is_empty());
    for e in h.app.episodes() {
        assert!(e.session.cwd.as_deref().unwrap().starts_with(&billing));
        assert!(e.time.as_deref().unwrap() >= "2026-10-20");
    }
    assert!(h.screen().contains("workspace /demo/repos/billing"));
}

#[test]
fn the_mouse_selects_and_scrolls() {
    let mut h = fresh();
    h.search(QUERY);
    let l = ui::layout::main_layout(ratatui::layout::Rect::new(0, 0, 120, 40), &h.app);
    let (_, r) = l.lanes[0];
    let per = ui::layout::item_rows(r, h.app.episodes().len()) as u16;
    h.act(Action::Mouse(MouseInput {
        kind: MouseKind::Click,
        column: r.x + 3,
        row: r.y + 1 + per,
    }));
    assert_eq!(h.app.focus, Focus::Lane(Lane::Episodes));
    assert_eq!(h.app.cursors.episodes.selected, 1);
    h.act(Action::Mouse(MouseInput {
        kind: MouseKind::ScrollDown,
        column: r.x + 3,
        row: r.y + 2,
    }));
    assert_eq!(h.app.cursors.episodes.selected, 2);
    h.act(Action::Mouse(MouseInput {
        kind: MouseKind::DoubleClick,
        column: r.x + 3,
        row: r.y + 1,
    }));
    assert!(matches!(h.app.views.last(), Some(View::Episode(_))));
    h.act(Action::Mouse(MouseInput {
        kind: MouseKind::Click,
        column: 5,
        row: 1,
    }));
    assert!(!h.app.views.is_empty(), "clicks do not close a view");
}

#[test]
fn nothing_unsanitised_reaches_the_screen() {
    let mut h = fresh();
    h.search(QUERY);
    let mut resp = h.app.response().unwrap().clone();
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{9b}1mX\u{202e}txt.exe\r\u{8}";
    resp.lanes.episodes.items[0].snippet = Some(evil.to_string());
    resp.lanes.episodes.items[0].event_type = evil.into();
    resp.lanes.code.items[0].path = evil.to_string();
    resp.actors[0].name = evil.to_string();
    resp.routing.reason = evil.to_string();
    let g = h.app.search.generation;
    h.act(Action::SearchDone(g, Box::new(resp), 0.0));
    h.act(Action::FocusActors);
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    term.draw(|f| ui::draw(f, &h.app)).unwrap();
    for cell in term.backend().buffer().content() {
        for c in cell.symbol().chars() {
            assert!(
                !c.is_control() && !('\u{80}'..='\u{9f}').contains(&c) && c != '\u{202e}',
                "{c:?} reached the screen"
            );
        }
    }
    assert!(h.screen().contains("red"));
}

#[test]
fn no_color_means_no_colour() {
    let mut h = fresh();
    h.search(QUERY);
    h.act(Action::FocusActors);
    let colours = |app: &crate::tui::state::App| {
        let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
        term.draw(|f| ui::draw(f, app)).unwrap();
        term.backend()
            .buffer()
            .content()
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count()
    };
    assert_eq!(colours(&h.app), 0);
    h.app.no_color = false;
    assert!(colours(&h.app) > 0);
}

#[test]
fn keys_come_from_the_config() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("config.toml"),
        "[keys]\nquit = [\"ctrl-q\"]\nnonsense = [\"x\"]\n",
    )
    .unwrap();
    let mut config = knowledge::engine::EngineConfig::load(tmp.path()).unwrap();
    config.log = false;
    config.semantic = false;
    let engine = knowledge::engine::Engine::open(config);
    let h = harness(engine, world(), 120, 40);
    use crate::tui::keymap::{Context, KeyChord};
    let ctx = [Context::Results, Context::Global];
    assert!(matches!(
        h.app
            .keymap
            .lookup(&ctx, KeyChord::parse("ctrl-q").unwrap()),
        Some(Action::Quit)
    ));
    assert!(h
        .app
        .keymap
        .lookup(&ctx, KeyChord::parse("q").unwrap())
        .is_none());
    let msg = h.app.status.message.as_ref().unwrap();
    assert!(msg.text.contains("nonsense"), "{}", msg.text);
    let help = ui::popups::help_lines(&h.app, ui::theme::Theme::new(true));
    let text: String = help.iter().map(|l| format!("{l}\n")).collect();
    assert!(text.contains("ctrl-q") && text.contains("quit the explorer"));
    for (name, desc) in Action::BINDABLE {
        let bound = crate::tui::keymap::DEFAULTS
            .iter()
            .any(|(_, n, _)| n == name);
        if bound && *name != "quit" {
            assert!(text.contains(desc), "help lists {name}");
        }
    }
}

#[test]
fn dispatch_confirm_then_the_package_is_in_the_outbox_and_can_be_approved() {
    let w = writable_world();
    let mut h = harness(engine_for(&w), &w, 120, 40);
    h.search(QUERY);
    h.act(Action::FocusActors);
    let actor = h.app.selected_actor().unwrap().actor_id.clone();
    h.act(Action::Dispatch);
    let preview = match h.app.views.last() {
        Some(View::Dispatch(d)) => d.preview.clone().expect("the dry run answered"),
        _ => panic!("the dispatch pane"),
    };
    assert_eq!(preview.mode, DispatchRun::DryRun);
    assert_eq!(preview.target.as_ref().unwrap().actor_id, actor);
    assert_eq!(
        preview.handoff.as_ref().unwrap().execution,
        Execution::NotExecuted
    );
    let outbox = w.data_dir.join("outbox");
    let files = |d: &std::path::Path| std::fs::read_dir(d).map(|r| r.count()).unwrap_or(0);
    assert_eq!(files(&outbox), 0, "a dry run writes nothing");

    // Acceptance criteria typed into their editor reach the package.
    h.act(Action::NextField);
    h.type_text("the app connects over TLS");
    h.act(Action::Commit); // edited: a fresh dry run first, then the dialog
    let Some(Overlay::Confirm(d)) = &h.app.overlay else {
        panic!("the confirmation dialog")
    };
    assert!(d.body.contains("the app connects over TLS"));
    assert!(d.summary.iter().any(|(_, v)| v.contains("/data/outbox/")));
    assert_eq!(files(&outbox), 0, "nothing before the yes");
    h.act(Action::Confirm);
    assert_eq!(files(&outbox), 1, "the package is written on yes");
    let msg = h.app.status.message.clone().unwrap().text;
    assert!(msg.starts_with("recorded assign:"), "{msg}");
    // The same commit again is recognised.
    h.act(Action::Commit);
    h.act(Action::Confirm);
    let msg = h.app.status.message.clone().unwrap().text;
    assert!(msg.starts_with("already recorded"), "{msg}");
    assert_eq!(files(&outbox), 1);

    // The outbox lists it; approve it behind the same dialog.
    h.act(Action::Outbox);
    let Some(View::Outbox(o)) = h.app.views.last() else {
        panic!("the outbox")
    };
    assert_eq!(o.entries.len(), 1);
    assert_eq!(o.entries[0].status, "recorded_plan");
    h.act(Action::Open);
    assert!(h.screen().contains("not_executed"));
    h.act(Action::Approve);
    assert!(matches!(h.app.overlay, Some(Overlay::Confirm(_))));
    h.act(Action::Confirm);
    let Some(View::Outbox(o)) = h.app.views.last() else {
        panic!("the outbox")
    };
    assert_eq!(o.entries[0].status, "approved");
    let doc = o.detail.as_ref().and_then(|d| d.doc.clone()).unwrap();
    assert_eq!(doc.handoff.review.status, ReviewStatus::Approved);
    assert_eq!(doc.handoff.execution, Execution::NotExecuted);
    // A decision is final: rejecting now is refused, with the reason asked first.
    h.act(Action::Reject);
    assert!(matches!(h.app.overlay, Some(Overlay::Prompt(_))));
    h.type_text("changed my mind");
    h.act(Action::Apply);
    h.act(Action::Confirm);
    let msg = h.app.status.message.clone().unwrap();
    assert!(msg.text.contains("already approved"), "{}", msg.text);
}

#[test]
fn an_outbox_file_that_is_not_a_package_says_why_instead_of_showing_empty_fields() {
    let w = writable_world();
    let outbox = w.data_dir.join("outbox");
    std::fs::create_dir_all(&outbox).unwrap();
    let good = sample_preview().handoff.expect("the sample has a package");
    let mut broken = serde_json::to_value(&good).unwrap();
    broken.as_object_mut().unwrap().remove("review");
    broken["assignment_id"] = "assign:0badf11e".into();
    std::fs::write(
        outbox.join("assign-4f1c2a9e0b7d.json"),
        serde_json::to_vec_pretty(&good).unwrap(),
    )
    .unwrap();
    let broken_file = outbox.join("assign-0badf11e.json");
    let broken_bytes = serde_json::to_vec_pretty(&broken).unwrap();
    std::fs::write(&broken_file, &broken_bytes).unwrap();

    let mut h = harness(engine_for(&w), &w, 120, 40);
    h.act(Action::Outbox);
    let screen = h.screen();
    assert!(screen.contains("1 package · 1 unreadable"), "{screen}");
    assert!(
        screen.contains("recorded_plan"),
        "the good package is listed: {screen}"
    );
    let Some(View::Outbox(o)) = h.app.views.last() else {
        panic!("the outbox")
    };
    assert_eq!(o.entries.len(), 2);
    assert_eq!(o.entries[1].status, "unreadable");
    let why = o.entries[1].unreadable.clone().expect("says why");
    assert!(
        why.contains("assign-0badf11e.json") && why.contains("missing field `review`"),
        "{why}"
    );
    let row = screen
        .lines()
        .find(|l| l.contains("unreadable ") && !l.contains("Outbox"))
        .expect("a row for the broken file");
    assert!(row.contains("is not a handoff package"), "{row}");

    // Opening it shows the error, not a package with empty fields.
    h.act(Action::Down);
    h.act(Action::Open);
    let screen = h.screen();
    assert!(
        screen.contains(
            "✗ /data/outbox/assign-0badf11e.json is not a handoff package: missing field `review`"
        ),
        "{screen}"
    );
    assert!(!screen.contains("REVIEW"), "{screen}");
    // It cannot be approved, and the file is left as it was.
    let fx = h.act_raw(Action::Approve);
    assert!(fx.is_empty() && h.app.overlay.is_none(), "{fx:?}");
    let msg = h.app.status.message.clone().unwrap().text;
    assert!(msg.contains("not a readable handoff package"), "{msg}");
    assert_eq!(std::fs::read(&broken_file).unwrap(), broken_bytes);
    // The good package still opens in full.
    h.act(Action::Back);
    h.act(Action::Up);
    h.act(Action::Open);
    let screen = h.screen();
    assert!(
        screen.contains("REVIEW") && screen.contains("spawn_teammate"),
        "{screen}"
    );
}

#[test]
fn only_an_explicit_yes_commits() {
    let mut h = with_sample_dispatch(120, 40);
    assert!(h.screen().contains("HANDOFF PACKAGE"));
    h.act(Action::NextField);
    h.act(Action::NextField);
    h.act(Action::NextField);
    let fx = h.act_raw(Action::Commit);
    assert!(fx.is_empty(), "{fx:?}");
    assert!(matches!(h.app.overlay, Some(Overlay::Confirm(_))));
    for a in [
        Action::Open,
        Action::Apply,
        Action::SearchNow,
        Action::Down,
        Action::Commit,
    ] {
        assert!(h.act_raw(a).is_empty());
        assert!(matches!(h.app.overlay, Some(Overlay::Confirm(_))));
    }
    assert!(h.act_raw(Action::Cancel).is_empty());
    assert!(h.app.overlay.is_none());
    h.act_raw(Action::Commit);
    let fx = h.act_raw(Action::Confirm);
    assert!(
        matches!(fx.as_slice(), [Effect::Dispatch { commit: true, .. }]),
        "{fx:?}"
    );
}

#[test]
fn editing_the_task_asks_for_a_fresh_preview_before_the_commit() {
    let mut h = with_sample_dispatch(120, 40);
    h.type_text(" now");
    let fx = h.act_raw(Action::Commit);
    let job = match fx.as_slice() {
        [Effect::Dispatch {
            job,
            commit: false,
            draft,
        }] => {
            assert!(draft.text.ends_with(" now"));
            *job
        }
        other => panic!("expected a dry run first, got {other:?}"),
    };
    assert!(h.app.overlay.is_none());
    h.act(Action::DispatchDone(job, false, Ok(sample_preview())));
    assert!(matches!(h.app.overlay, Some(Overlay::Confirm(_))));
}

#[test]
fn the_outbox_opens_empty_and_says_so() {
    let mut h = fresh();
    h.search(QUERY);
    h.act(Action::FocusEpisodes);
    h.act(Action::Outbox);
    assert!(h.screen().contains("the outbox is empty"));
    h.act(Action::Back);
    assert!(h.app.views.is_empty());
}

#[test]
fn q_and_esc_close_the_current_view_then_leave() {
    let mut h = fresh();
    h.search(QUERY);
    h.act(Action::FocusEpisodes);
    h.act(Action::Open);
    h.act(Action::Help);
    h.act(Action::Back);
    assert!(h.app.overlay.is_none() && h.app.views.len() == 1);
    h.act(Action::Back);
    assert!(h.app.views.is_empty());
    h.act(Action::Back);
    assert_eq!(h.app.focus, Focus::Query);
    assert!(!h.app.quit);
    h.act(Action::Quit);
    assert!(h.app.quit);
}

#[test]
fn a_failed_search_is_a_message_not_a_hang() {
    let mut h = fresh();
    for c in "MySQL".chars() {
        h.act_raw(key(c));
    }
    let g = match h.act_raw(Action::SearchNow).as_slice() {
        [Effect::Search(_, g)] => *g,
        other => panic!("{other:?}"),
    };
    assert!(h.app.search.pending());
    h.act(Action::SearchFailed(g, "internal error: boom".into()));
    assert!(!h.app.search.pending());
    assert!(h.screen().contains("internal error: boom"));
}

#[test]
fn lane_titles_carry_timeouts_staleness_and_why_a_lane_is_empty() {
    let mut h = fresh();
    h.search(QUERY);
    let mut resp = h.app.response().unwrap().clone();
    resp.lanes.code.header.degraded = true;
    resp.lanes.code.header.degradation_reason = Some("timed out after 250 ms".into());
    resp.lanes.code.freshness.stale = true;
    let skills = resp.lanes.skills.as_mut().unwrap();
    skills.items.clear();
    skills.header.degradation_reason = Some("no match for the query within the filters".into());
    let g = h.app.search.generation;
    h.act(Action::SearchDone(g, Box::new(resp), 0.0));
    let screen = h.screen();
    assert!(screen.contains("⏱ timed out"), "{screen}");
    assert!(screen.contains("stale"), "{screen}");
    assert!(screen.contains("Skills 0"), "{screen}");
    assert!(screen.contains("no match for the query within"), "{screen}");
}
