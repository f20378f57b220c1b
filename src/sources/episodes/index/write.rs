//! The writer's side of an index run: one prepared store stored in one transaction (its
//! sessions upserted, its events appended or replaced, the reader's cursor saved redacted), kept
//! apart from the run's orchestration in `index.rs`.

use super::*;
use crate::sources::episodes::{lexical_sync, messages};
use crate::sources::lexical::{LexicalDoc, LexicalError, LexicalWriter};
use rusqlite::OptionalExtension;

/// Where stored events go besides the store: the vector builder (semantic search on) and the
/// full-text index.
pub(in crate::sources::episodes) struct Sinks<'a> {
    pub vectors: Option<&'a mut Builder>,
    pub lexical: &'a LexicalWriter,
}

/// A write that failed: in the store, or in its full-text index.
#[derive(Debug, thiserror::Error)]
pub(in crate::sources::episodes) enum WriteError {
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Lexical(#[from] LexicalError),
}

/// Store one prepared store in one transaction.
pub(super) fn write_file(
    conn: &mut Connection,
    file: &TranscriptFile,
    old: Option<&TranscriptRow>,
    work: Work,
    summary: &mut IndexSummary,
    sinks: &mut Sinks<'_>,
) -> Result<(), WriteError> {
    let path_str = file.path.to_string_lossy().to_string();
    summary.bytes_read += work.end.saturating_sub(work.start);
    summary.lines.add(&work.lines);
    let tx = conn.transaction()?;
    let (session_id, state) = if work.many_sessions() {
        write_sessions(&tx, file, old, &work, summary, sinks)?
    } else {
        write_file_session(&tx, file, old, &work, summary, sinks)?
    };
    let stats = work.total;
    tx.execute(
        "INSERT INTO files(path, kind, session_id, size, mtime_ns, head_hash, resume_hash, offset,
                           parser_state, lines, skipped)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?11, ?7, ?8, ?9, ?10)
         ON CONFLICT(path) DO UPDATE SET kind=excluded.kind, session_id=excluded.session_id,
           size=excluded.size, mtime_ns=excluded.mtime_ns, head_hash=excluded.head_hash,
           resume_hash=excluded.resume_hash, offset=excluded.offset,
           parser_state=excluded.parser_state, lines=excluded.lines, skipped=excluded.skipped",
        params![
            path_str,
            file.kind.as_str(),
            session_id,
            work.size as i64,
            work.mtime_ns,
            work.head_hash,
            work.end as i64,
            packed::pack(&state),
            stats.lines as i64,
            stats.skipped() as i64,
            work.resume_hash,
        ],
    )?;
    tx.commit()?;
    Ok(())
}

/// The one session of a one-session file: appended to, or claimed (see `identity`) and stored
/// anew. Returns the session id and the cursor to save.
fn write_file_session(
    tx: &Transaction<'_>,
    file: &TranscriptFile,
    old: Option<&TranscriptRow>,
    work: &Work,
    summary: &mut IndexSummary,
    sinks: &mut Sinks<'_>,
) -> Result<(String, String), WriteError> {
    let path_str = file.path.to_string_lossy().to_string();
    let (meta, outcome) = work.file_session();
    let moved_before = summary.files_moved;
    let claim = match (old, work.appended) {
        (Some(o), true) => {
            summary.files_appended += 1;
            Claim::Own(o.session_id.clone())
        }
        _ => {
            let key = session_key(file, &meta);
            claim_session(tx, &key, file, work, summary)?
        }
    };
    Ok(match claim {
        Claim::Copy(session_id) => {
            summary.files_copies += 1;
            match old {
                Some(_) => summary.files_rewritten += 1,
                None => summary.files_new += 1,
            }
            // No cursor: if the copy ever changes, it is re-read and claimed again.
            (session_id, String::new())
        }
        Claim::Own(session_id) => {
            let events = work.sessions.iter().flat_map(|s| &s.events);
            let added = if work.appended {
                append_events(tx, &session_id, events, sinks)?
            } else {
                // A re-read keeps every stored event's seq; only what is new is added.
                merge_events(tx, &session_id, events, sinks)?
            };
            if !work.appended {
                match old {
                    // Touched, same bytes: nothing was rewritten.
                    Some(o) if added == 0 && o.size == work.size => summary.files_unchanged += 1,
                    Some(_) => summary.files_rewritten += 1,
                    None if summary.files_moved > moved_before => {}
                    None => summary.files_new += 1,
                }
            }
            summary.events_added += added;
            summary.secrets_redacted += work.secrets;
            upsert_session(tx, &session_id, file, &meta, outcome, &path_str, work.live)?;
            (session_id, saved_cursor(&work.cursor))
        }
    })
}

/// The sessions of a many-session store, each under the id its reader gave: replaced when the
/// reader pushed it whole, appended to otherwise. The store's own row names no session.
fn write_sessions(
    tx: &Transaction<'_>,
    file: &TranscriptFile,
    old: Option<&TranscriptRow>,
    work: &Work,
    summary: &mut IndexSummary,
    sinks: &mut Sinks<'_>,
) -> Result<(String, String), WriteError> {
    let path_str = file.path.to_string_lossy().to_string();
    // A database pushes a changed session whole, as it is now; a file holding many sessions
    // (Aider) is re-read whole only when it is not an append, and then merges like any file.
    let database = file.kind.reader().store_kind(&file.path) == StoreKind::Database;
    let mut added = 0;
    for s in &work.sessions {
        let Some(start) = &s.start else { continue };
        added += match (start.replace, database) {
            (true, true) => {
                delete_session(tx, &start.session_id, sinks)?;
                append_events(tx, &start.session_id, s.events.iter(), sinks)?
            }
            (true, false) => merge_events(tx, &start.session_id, s.events.iter(), sinks)?,
            (false, _) => append_events(tx, &start.session_id, s.events.iter(), sinks)?,
        };
        upsert_session(
            tx,
            &start.session_id,
            file,
            &s.meta,
            s.outcome,
            &path_str,
            work.live,
        )?;
    }
    match old {
        Some(_) if work.appended => summary.files_appended += 1,
        Some(o) if added == 0 && o.size == work.size => summary.files_unchanged += 1,
        Some(_) => summary.files_rewritten += 1,
        None => summary.files_new += 1,
    }
    summary.events_added += added;
    summary.secrets_redacted += work.secrets;
    Ok((String::new(), saved_cursor(&work.cursor)))
}

/// The cursor as saved: it holds titles, descriptions, paths and the session's metadata as the
/// records wrote them, so every string in it is redacted, each on its own (redacting the JSON
/// text as one string let a value run on into the next field: a secret kept, the cursor broken
/// and the metadata after it lost on the next append). A cursor that is not JSON is redacted as
/// text (one that no longer parses just means a full re-read).
fn saved_cursor(cursor: &str) -> String {
    fn each_string(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => {
                crate::sources::episodes::meta_redact::field(s);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(each_string),
            serde_json::Value::Object(map) => map.values_mut().for_each(each_string),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(cursor) {
        Ok(mut v) => {
            each_string(&mut v);
            v.to_string()
        }
        Err(_) => redact::redact(cursor).text,
    }
}

/// Appends events after the session's last `seq`.
pub(in crate::sources::episodes) fn append_events<'a>(
    tx: &Transaction<'_>,
    session_id: &str,
    events: impl Iterator<Item = &'a PreparedEvent>,
    sinks: &mut Sinks<'_>,
) -> Result<u64, WriteError> {
    let next_seq: i64 = tx
        .query_row(
            "SELECT coalesce(max(seq), 0) FROM events WHERE session_id=?1",
            [session_id],
            |r| r.get(0),
        )
        .unwrap_or(0);
    insert_events(tx, session_id, next_seq, events, sinks)
}

/// The session id a file's events are stored under.
///
/// The file's reader names the session of a main file (Claude: the `<sessionId>.jsonl` stem,
/// which is what `claude --resume` takes; Codex: its first `session_meta` id); a subagent
/// transcript gets `<parent>/agent-<id>` so its `seq` never collides with its parent's.
fn session_key(file: &TranscriptFile, meta: &SessionMeta) -> String {
    let stem = file
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    match &file.layout {
        Layout::Subagent {
            parent_session_hint,
            agent_id_hint,
            ..
        } => {
            let parent = parent_session_hint
                .clone()
                .or_else(|| meta.parent_session_id.clone())
                .or_else(|| meta.session_id.clone())
                .unwrap_or_else(|| "unknown".to_string());
            let agent = agent_id_hint
                .clone()
                .or_else(|| meta.agent_id.clone())
                .unwrap_or_else(|| stem.trim_start_matches("agent-").to_string());
            format!("{parent}/agent-{agent}")
        }
        Layout::Main => file
            .kind
            .reader()
            .file_session_id(file, meta)
            .unwrap_or(stem),
    }
}

pub(in crate::sources::episodes) fn delete_session(
    tx: &Transaction<'_>,
    session_id: &str,
    sinks: &mut Sinks<'_>,
) -> Result<(), WriteError> {
    let key: Option<i64> = tx
        .query_row(
            "SELECT key FROM session_keys WHERE session_id=?1",
            [session_id],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(key) = key {
        sinks.lexical.delete_key(key as u64)?;
        lexical_sync::mark(tx, key)?;
        messages::mark(tx, key, 0)?;
    }
    tx.execute(
        "DELETE FROM event_rows
         WHERE session_key = (SELECT key FROM session_keys WHERE session_id=?1)",
        [session_id],
    )?;
    tx.execute("DELETE FROM sessions WHERE session_id=?1", [session_id])?;
    Ok(())
}

fn insert_events<'a>(
    tx: &Transaction<'_>,
    session_id: &str,
    last_seq: i64,
    events: impl Iterator<Item = &'a PreparedEvent>,
    sinks: &mut Sinks<'_>,
) -> Result<u64, WriteError> {
    let session = store::session_key(tx, session_id)?;
    lexical_sync::mark(tx, session)?;
    messages::mark(tx, session, last_seq + 1)?;
    let mut types = store::EventTypes::default();
    let mut tool_ids = store::ToolIds::after(tx, session, last_seq)?;
    let mut ins = tx.prepare_cached(&format!(
        "INSERT INTO event_rows(session_key, seq, type_key, time, time_ms, text, human, tool_name,
                                tool_use_id, is_error, sidechain_agent, facts)
         VALUES(?1, ?2, ?3, {}, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        store::stored_time_sql("?4", "?5")
    ))?;
    let mut n = 0u64;
    for (i, p) in events.enumerate() {
        n += 1;
        let ev = &p.event;
        ins.execute(params![
            session,
            last_seq + 1 + i as i64,
            types.key(tx, ev.event_type.as_str())?,
            ev.time,
            p.time_ms,
            match &p.packed {
                Some(bytes) => ToSqlOutput::Borrowed(ValueRef::Blob(bytes)),
                None => ToSqlOutput::Borrowed(ValueRef::Text(ev.text.as_bytes())),
            },
            ev.human,
            ev.tool_name,
            match ev.tool_use_id.as_deref() {
                _ if tool_ids.same(ev.tool_use_id.as_deref()) => {
                    ToSqlOutput::Borrowed(ValueRef::Blob(store::SAME_TOOL_ID))
                }
                Some(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
                None => ToSqlOutput::Borrowed(ValueRef::Null),
            },
            ev.is_error,
            ev.sidechain_agent,
            p.facts,
        ])?;
        let id = tx.last_insert_rowid();
        sinks.lexical.add(LexicalDoc {
            id,
            key: session as u64,
            time_ms: p.time_ms,
            terms: &p.terms,
        })?;
        if let Some(v) = sinks.vectors.as_deref_mut() {
            v.add(id, ev.text.clone());
        }
    }
    Ok(n)
}

/// The session's row, with a fresh change mark (`random()`): every write that can change what
/// the L3 builder reads of a session (its events are only ever written beside this call) gives it
/// a new mark, so that builder derives again only the sessions whose mark moved.
fn upsert_session(
    tx: &Transaction<'_>,
    session_id: &str,
    file: &TranscriptFile,
    m: &SessionMeta,
    outcome: Outcome,
    path: &str,
    live: bool,
) -> rusqlite::Result<()> {
    let events: i64 = tx.query_row(
        "SELECT count(*) FROM events WHERE session_id=?1",
        [session_id],
        |r| r.get(0),
    )?;
    let parent = match &file.layout {
        Layout::Subagent {
            parent_session_hint,
            ..
        } => parent_session_hint
            .clone()
            .or_else(|| m.parent_session_id.clone())
            .or_else(|| m.session_id.clone()),
        Layout::Main => m.parent_session_id.clone(),
    };
    let agent_id = match &file.layout {
        Layout::Subagent { agent_id_hint, .. } => {
            agent_id_hint.clone().or_else(|| m.agent_id.clone())
        }
        Layout::Main => m.agent_id.clone(),
    };
    tx.execute(
        "INSERT INTO sessions(session_id, source, path, cwd, created_at, last_event_at,
            agent_preset, title, parent_session_id, agent_id, agent_name, agent_description,
            spawn_tool_use_id, team_name, git_branch, version, outcome, live, events, mark)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                ?19, random())
         ON CONFLICT(session_id) DO UPDATE SET source=excluded.source, path=excluded.path,
            cwd=excluded.cwd, created_at=excluded.created_at, last_event_at=excluded.last_event_at,
            agent_preset=excluded.agent_preset, title=excluded.title,
            parent_session_id=excluded.parent_session_id, agent_id=excluded.agent_id,
            agent_name=excluded.agent_name, agent_description=excluded.agent_description,
            spawn_tool_use_id=excluded.spawn_tool_use_id, team_name=excluded.team_name,
            git_branch=excluded.git_branch, version=excluded.version, outcome=excluded.outcome,
            live=excluded.live, events=excluded.events, mark=excluded.mark",
        params![
            session_id,
            file.kind.as_str(),
            path,
            m.cwd,
            m.created_at,
            m.last_event_at,
            m.agent_preset,
            m.title.as_deref().map(|t| redact::redact(t).text),
            parent,
            agent_id,
            m.agent_name,
            m.agent_description
                .as_deref()
                .map(|t| redact::redact(t).text),
            m.spawn_tool_use_id,
            m.team_name,
            m.git_branch,
            m.version,
            outcome.as_str(),
            live,
            events,
        ],
    )?;
    Ok(())
}
