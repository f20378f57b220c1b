//! Human-readable text for the terminal: every string from a session or a file goes through
//! the sanitiser first, so escape sequences in transcripts never reach the terminal.

use std::fmt::Write;

use knowledge::contract::SearchResponse;
use knowledge::engine::Episode;
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

pub fn response(r: &SearchResponse) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "query: {}", clean(&r.query));
    let _ = writeln!(
        o,
        "routing: {} (confidence {:.2}) lanes {} — {}",
        r.routing.intent,
        r.routing.confidence,
        r.routing.lanes.join(", "),
        clean(&r.routing.reason)
    );
    let ep = &r.lanes.episodes;
    let _ = writeln!(
        o,
        "\nepisodes [{}] {}{}",
        ep.header.index_rev.as_deref().unwrap_or("no index"),
        ep.items.len(),
        lane_note(ep.header.degraded, ep.header.degradation_reason.as_deref())
    );
    for it in &ep.items {
        let _ = writeln!(
            o,
            "  {:.4} {} {} {}\n         {}",
            it.score,
            clean(it.time.as_deref().unwrap_or("-")),
            clean(&it.id),
            it.event_type,
            clean(
                it.snippet
                    .as_deref()
                    .unwrap_or("(no snippet: dropped by the token budget)")
            )
        );
    }
    let code = &r.lanes.code;
    let _ = writeln!(
        o,
        "\ncode [{}] {} ({}){}",
        code.header.index_rev.as_deref().unwrap_or("no index"),
        code.items.len(),
        code.capability,
        lane_note(
            code.header.degraded,
            code.header.degradation_reason.as_deref()
        )
    );
    for it in &code.items {
        let _ = writeln!(
            o,
            "  {:.4} {}:{}-{} {} {}\n         {}",
            it.score,
            clean(&it.path),
            it.start_line,
            it.end_line,
            it.source_kind,
            clean(it.symbol.as_deref().unwrap_or("")),
            clean(
                it.snippet
                    .as_deref()
                    .unwrap_or("(no snippet: dropped by the token budget)")
            )
        );
    }
    if let Some(sk) = &r.lanes.skills {
        let _ = writeln!(
            o,
            "\nskills [{}] {}{}",
            sk.header.index_rev.as_deref().unwrap_or("no index"),
            sk.items.len(),
            lane_note(sk.header.degraded, sk.header.degradation_reason.as_deref())
        );
        for it in &sk.items {
            let _ = writeln!(
                o,
                "  {:.4} {} ({} uses) — {}",
                it.score,
                clean(&it.name),
                it.uses,
                clean(&it.description)
            );
        }
    }
    let _ = writeln!(o, "\nactors {}", r.actors.len());
    for a in &r.actors {
        let _ = writeln!(
            o,
            "  {:.4} {} [{}] confidence {:.2} dispatch {}{} — {}",
            a.score,
            clean(&knowledge::engine::profiles::label(
                a,
                knowledge::engine::profiles::TITLE_CHARS
            )),
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
    for w in r.warnings.iter().chain(r.errors.iter()) {
        let _ = writeln!(o, "! {} {}", w.code, clean(&w.message));
    }
    o
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
        s.source,
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
            clean(&ev.event_type),
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
