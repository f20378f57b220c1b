//! Human-readable text for the terminal: every string from a session or a file goes through
//! the sanitiser first, so escape sequences in transcripts never reach the terminal.

use std::fmt::Write;

use knowledge::contract::{Actor, CodeItem, EpisodeItem, LaneHeader, SearchResponse, SkillItem};
use knowledge::engine::{profiles, Episode};
use knowledge::text::sanitize;

/// Print a JSON document on stdout, with characters a terminal could act on escaped.
pub fn print_json<T: serde::Serialize>(value: &T, pretty: bool) -> anyhow::Result<()> {
    let text = if pretty {
        serde_json::to_string_pretty(value)?
    } else {
        serde_json::to_string(value)?
    };
    write_out(&format!("{}\n", sanitize::json_for_terminal(&text)))
}

/// Write to stdout and flush, returning the error: `println!` panics when the reader closed
/// the pipe or the disk is full.
pub fn write_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| anyhow::Error::new(e).context("cannot write the output to stdout"))
}

/// True when `e` says the reader of stdout is gone (a closed pipe).
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// One line of untrusted text, safe to print.
pub fn clean(s: &str) -> String {
    sanitize::one_line(s)
}

/// A search response for a person: routing, each lane with its items, the actors, then the
/// warnings and errors.
pub fn response(r: &SearchResponse) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "query: {}", clean(&r.query));
    let _ = writeln!(
        o,
        "routing: {} (confidence {:.2}) lanes {} — {}",
        r.routing.intent.as_str(),
        r.routing.confidence,
        r.routing
            .lanes
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        clean(&r.routing.reason)
    );
    let (episodes, code) = (&r.lanes.episodes, &r.lanes.code);
    lane(
        &mut o,
        "episodes",
        &episodes.header,
        "",
        &episodes.items,
        episode_line,
    );
    let capability = format!(" ({})", code.capability);
    lane(
        &mut o,
        "code",
        &code.header,
        &capability,
        &code.items,
        code_line,
    );
    if let Some(sk) = &r.lanes.skills {
        lane(&mut o, "skills", &sk.header, "", &sk.items, skill_line);
    }
    actors(&mut o, &r.actors);
    for w in r.warnings.iter().chain(r.errors.iter()) {
        let _ = writeln!(o, "! {} {}", w.code, clean(&w.message));
    }
    o
}

/// A lane: its heading (name, index revision, item count, `extra` such as the code lane's
/// capability, whether it is degraded), then one entry per item.
fn lane<T>(
    o: &mut String,
    name: &str,
    header: &LaneHeader,
    extra: &str,
    items: &[T],
    entry: impl Fn(&T) -> String,
) {
    let _ = writeln!(
        o,
        "\n{name} [{}] {}{extra}{}",
        clean(header.index_rev.as_deref().unwrap_or("no index")),
        items.len(),
        lane_note(header.degraded, header.degradation_reason.as_deref())
    );
    for it in items {
        o.push_str(&entry(it));
    }
}

/// An item's snippet, or why it has none.
fn snippet(s: Option<&str>) -> String {
    clean(s.unwrap_or("(no snippet: dropped by the token budget)"))
}

fn episode_line(it: &EpisodeItem) -> String {
    format!(
        "  {:.4} {} {} {}\n         {}\n",
        it.score,
        clean(it.time.as_deref().unwrap_or("-")),
        clean(&it.id),
        clean(it.event_type.as_str()),
        snippet(it.snippet.as_deref())
    )
}

fn code_line(it: &CodeItem) -> String {
    format!(
        "  {:.4} {}:{}-{} {} {}\n         {}\n",
        it.score,
        clean(&it.path),
        it.start_line,
        it.end_line,
        clean(&it.source_kind),
        clean(it.symbol.as_deref().unwrap_or("")),
        snippet(it.snippet.as_deref())
    )
}

fn skill_line(it: &SkillItem) -> String {
    format!(
        "  {:.4} {} ({} uses) — {}\n",
        it.score,
        clean(&it.name),
        it.uses,
        clean(&it.description)
    )
}

fn actors(o: &mut String, actors: &[Actor]) {
    let _ = writeln!(o, "\nactors {}", actors.len());
    for a in actors {
        let _ = writeln!(
            o,
            "  {:.4} {} [{}] confidence {:.2} dispatch {}{} — {}",
            a.score,
            clean(&profiles::label(a, profiles::TITLE_CHARS)),
            a.kind,
            a.confidence,
            a.dispatch.mode,
            if a.dispatch.available {
                ""
            } else {
                " (not available here)"
            },
            clean(&a.why.join("; "))
        );
        let _ = writeln!(o, "         {}", clean(&a.actor_id));
    }
}

fn lane_note(degraded: bool, reason: Option<&str>) -> String {
    match (degraded, reason) {
        (true, Some(r)) => format!(" — DEGRADED: {}", clean(r)),
        (false, Some(r)) => format!(" — {}", clean(r)),
        _ => String::new(),
    }
}

pub fn episode(ep: &Episode) -> String {
    let mut o = String::new();
    let s = &ep.session;
    let _ = writeln!(
        o,
        "session {} ({}) cwd {} outcome {}{}",
        clean(&s.session_id),
        clean(&s.source),
        clean(s.cwd.as_deref().unwrap_or("-")),
        s.outcome,
        s.title
            .as_deref()
            .map(|t| format!(" — {}", clean(t)))
            .unwrap_or_default()
    );
    for ev in &ep.events {
        let marker = if ev.seq == ep.seq { ">>" } else { "  " };
        let _ = writeln!(
            o,
            "{marker} #{} {} {}{}",
            ev.seq,
            clean(ev.time.as_deref().unwrap_or("-")),
            clean(ev.event_type.as_str()),
            ev.tool_name
                .as_deref()
                .map(|t| format!(" [{}]", clean(t)))
                .unwrap_or_default()
        );
        for line in sanitize::for_terminal(&ev.text).lines() {
            let _ = writeln!(o, "   {line}");
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use knowledge::contract::SearchRequest;

    use crate::tui::tests::{engine_for, world};

    /// What an external source says (an event's type, a chunk's kind, an index revision) reaches
    /// the terminal without its control characters, like every other text it sends.
    #[test]
    fn an_external_sources_words_reach_the_terminal_sanitised() {
        let mut r = engine_for(world()).search(&SearchRequest::new("mysql access config"));
        let evil = "x\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J";
        r.lanes.episodes.header.index_rev = Some(evil.to_string());
        r.lanes.code.header.index_rev = Some(evil.to_string());
        for it in &mut r.lanes.episodes.items {
            it.event_type = evil.into();
        }
        for it in &mut r.lanes.code.items {
            it.source_kind = evil.to_string();
        }
        assert!(!r.lanes.episodes.items.is_empty() && !r.lanes.code.items.is_empty());
        let shown = super::response(&r);
        assert!(shown.contains("episodes [x] "), "{shown}");
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\n'),
            "{shown:?}"
        );
    }
}
