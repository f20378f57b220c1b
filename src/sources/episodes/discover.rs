//! Finding transcript files on disk and telling what each one is.
//!
//! Claude Code moved subagent transcripts three times (inline sidechains, flat `agent-*.jsonl`,
//! `<sessionId>/subagents/agent-*.jsonl`, workflow runs one level deeper) and keeps non-transcript
//! JSONL next to them (`journal.jsonl`); Codex shards rollouts by local date. Discovery walks a
//! root with `std::fs` only and asks the registry of agents which reader claims each file (by its
//! name or its first lines); the reader records the layout hints (parent session, agent id,
//! sidecar) that the records themselves do not carry, so parsers never decode directory names.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::model::TranscriptKind;

/// How deep a walk goes below a root (Codex `YYYY/MM/DD`, workflows are 4–5 levels).
const MAX_DEPTH: usize = 12;

/// Where a transcript sits in its agent's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// A session's own transcript (Claude `<sessionId>.jsonl`, any Codex rollout).
    Main,
    /// A Claude subagent transcript (`agent-<id>.jsonl`).
    Subagent {
        /// The `<sessionId>` folder above `subagents/` (era 3/4); `None` for flat era-2 files.
        parent_session_hint: Option<String>,
        /// `<id>` from `agent-<id>.jsonl`.
        agent_id_hint: Option<String>,
        /// `agent-<id>.meta.json` next to the transcript, when present (era 4).
        sidecar: Option<PathBuf>,
    },
}

impl Layout {
    /// The layout with the ids its hints take from folder and file names made safe to key and
    /// show ([`super::bounds::safe_id`]: a name may hold an escape sequence).
    pub fn with_safe_hints(self) -> Layout {
        let safe = |hint: Option<String>| {
            hint.map(|h| match super::bounds::safe_id(&h) {
                std::borrow::Cow::Owned(safe) => safe,
                std::borrow::Cow::Borrowed(_) => h,
            })
        };
        match self {
            Layout::Main => Layout::Main,
            Layout::Subagent {
                parent_session_hint,
                agent_id_hint,
                sidecar,
            } => Layout::Subagent {
                parent_session_hint: safe(parent_session_hint),
                agent_id_hint: safe(agent_id_hint),
                sidecar,
            },
        }
    }
}

/// One transcript found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptFile {
    pub path: PathBuf,
    pub kind: TranscriptKind,
    pub layout: Layout,
}

/// Every transcript under `root`, sorted by path. Entries whose metadata cannot be read are
/// skipped; one that is not a regular file but is named like a store (a FIFO `x.jsonl`) is
/// returned, for the indexer to report as unreadable. Symlinked directories are followed once
/// (a loop is cut by remembering canonical paths).
pub fn discover(root: &Path) -> Vec<TranscriptFile> {
    discover_changed(root, &|_, _| false).changed
}

/// What [`discover_changed`] found under a root.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Stores to read, recognised by their readers, sorted by path.
    pub changed: Vec<TranscriptFile>,
    /// Stores the indexer already holds as they are now, with their size: not recognised again.
    pub unchanged: Vec<(PathBuf, u64)>,
    /// Folders under the root that exist but cannot be listed (no read or search permission),
    /// with why: whatever they hold is not indexed, and the user is told so, as for an
    /// unreadable file.
    pub unreadable_dirs: Vec<(PathBuf, String)>,
}

/// [`discover`] for the indexer: a file that `unchanged` says the index holds as it is now (by
/// path and metadata: size and mtime) is not recognised: telling a file's agent reads and
/// parses its head, which on a re-run where little changed is most of the run's work.
pub fn discover_changed(
    root: &Path,
    unchanged: &dyn Fn(&Path, &fs::Metadata) -> bool,
) -> Discovered {
    let mut found = Discovered::default();
    let mut visited = HashSet::new();
    match fs::metadata(root) {
        // A root that is a store (a database named by `--sessions`, OpenCode's `opencode.db`):
        // a FIFO or device there is claimed by its name and reported unreadable, not called a
        // folder that cannot be listed.
        Ok(meta) if !meta.is_dir() => visit_file(root, &meta, unchanged, &mut found),
        // A root inside a folder this user may not enter (`chmod 000 ~/.local/share/opencode`).
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => found
            .unreadable_dirs
            .push((root.to_path_buf(), format!("cannot be reached: {e}"))),
        _ => {
            let top = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            let w = Walk {
                top: &top,
                unchanged,
            };
            walk(&w, root, 0, &mut visited, &mut found)
        }
    }
    found.changed.sort_by(|a, b| a.path.cmp(&b.path));
    found.unchanged.sort();
    found.unreadable_dirs.sort();
    found
}

fn visit_file(
    path: &Path,
    meta: &fs::Metadata,
    unchanged: &dyn Fn(&Path, &fs::Metadata) -> bool,
    found: &mut Discovered,
) {
    if unchanged(path, meta) {
        found.unchanged.push((path.to_path_buf(), meta.len()));
    } else if let Some(f) = classify(path) {
        // Not only regular files: a FIFO or device named like a transcript is claimed by its
        // name (readers sniff through `regular_file`, which refuses it without blocking), so
        // the indexer reports it unreadable and doctor counts it, instead of it being silently
        // left out.
        found.changed.push(f);
    }
}

/// One walk of a root (its canonical path: what a link inside it must not lead back to).
struct Walk<'a> {
    top: &'a Path,
    unchanged: &'a dyn Fn(&Path, &fs::Metadata) -> bool,
}

/// Folders a link inside a root is never followed into: the kernel's (their entries are processes,
/// devices and the whole machine again through `/proc/<pid>/cwd`).
const NEVER_FOLLOWED: [&str; 3] = ["/proc", "/sys", "/dev"];

fn walk(
    w: &Walk<'_>,
    dir: &Path,
    depth: usize,
    visited: &mut HashSet<PathBuf>,
    found: &mut Discovered,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(canonical) = fs::canonicalize(dir) else {
        return;
    };
    // A link inside the root to a folder that holds the root (`events -> /`, `x -> ../..`) would
    // walk the root again and everything beside it, the whole machine for `/`; one into the
    // kernel's folders reaches everything through them. Neither holds an agent's sessions.
    if depth > 0
        && (w.top.starts_with(&canonical)
            || NEVER_FOLLOWED.iter().any(|k| canonical.starts_with(k)))
    {
        return;
    }
    if !visited.insert(canonical) {
        return;
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        // Gone between the listing and the walk, or a root that does not exist: nothing there.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            found
                .unreadable_dirs
                .push((dir.to_path_buf(), format!("cannot list this folder: {e}")));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mut denied = false;
    for path in paths {
        // `metadata` follows symlinks; the visited set stops loops.
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            // A folder that may be listed but not entered (`chmod 444`): its entries are
            // names only. Said once for the folder.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                if !denied {
                    denied = true;
                    found
                        .unreadable_dirs
                        .push((dir.to_path_buf(), format!("cannot open its entries: {e}")));
                }
                continue;
            }
            Err(_) => continue,
        };
        if meta.is_dir() {
            walk(w, &path, depth + 1, visited, found);
        } else {
            visit_file(&path, &meta, w.unchanged, found);
        }
    }
}

/// A store's agent and layout, or `None` when no agent's reader claims the file (see
/// [`super::agents::recognise`]).
pub fn classify(path: &Path) -> Option<TranscriptFile> {
    super::agents::recognise(path)
}

/// The `<sessionId>` folder owning a `subagents/` folder above `path`, if any:
/// `<sid>/subagents/agent-x.jsonl` and `<sid>/subagents/workflows/wf_*/agent-x.jsonl`.
pub(crate) fn parent_session_of(path: &Path) -> Option<String> {
    let mut dirs = path.ancestors().skip(1);
    let mut subagents = None;
    for _ in 0..3 {
        let dir = dirs.next()?;
        if dir.file_name().and_then(|n| n.to_str()) == Some("subagents") {
            subagents = Some(dir);
            break;
        }
    }
    let session_dir = subagents?.parent()?;
    session_dir
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
}

/// The default roots of this machine that exist, from every agent in the registry.
pub fn default_roots() -> Vec<PathBuf> {
    super::agents::default_roots()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path, body: &str) {
        if let Some(dir) = path.parent() {
            let _ = fs::create_dir_all(dir);
        }
        let _ = fs::write(path, body);
    }

    #[test]
    fn finds_every_era_and_skips_non_transcripts() {
        let tmp = tempfile::tempdir().ok();
        let Some(tmp) = tmp else { return };
        let root = tmp.path();
        let claude_line = "{\"type\":\"user\",\"sessionId\":\"s\"}\n";
        let proj = root.join("-home-me-proj");
        touch(&proj.join("s1.jsonl"), claude_line);
        touch(&proj.join("agent-1a2b3c4.jsonl"), claude_line);
        touch(
            &proj.join("0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/subagents/agent-aac57f5.jsonl"),
            claude_line,
        );
        touch(
            &proj.join(
                "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/subagents/agent-a05d358b0666d872d.jsonl",
            ),
            claude_line,
        );
        touch(
            &proj.join(
                "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/subagents/agent-a05d358b0666d872d.meta.json",
            ),
            "{}",
        );
        touch(
            &proj.join(
                "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/subagents/workflows/wf_9/agent-b1.jsonl",
            ),
            claude_line,
        );
        touch(
            &proj.join(
                "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/subagents/workflows/wf_9/journal.jsonl",
            ),
            claude_line,
        );
        touch(
            &proj.join("0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/workflows/wf_9.json"),
            "{}",
        );
        touch(&proj.join("notes.txt"), "x");
        touch(
            &root.join("codex/2025/09/24/rollout-2025-09-24T19-22-20-x.jsonl"),
            "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n",
        );
        touch(
            &root.join("codex/legacy.jsonl"),
            "{\"id\":\"x\",\"timestamp\":\"t\",\"instructions\":null}\n",
        );
        let found = discover(root);
        let names: Vec<String> = found
            .iter()
            .filter_map(|f| f.path.strip_prefix(root).ok())
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(names.len(), 7, "{names:?}");
        let get = |suffix: &str| found.iter().find(|f| f.path.ends_with(suffix));
        assert_eq!(get("s1.jsonl").map(|f| &f.layout), Some(&Layout::Main));
        let flat = get("agent-1a2b3c4.jsonl").map(|f| f.layout.clone());
        assert_eq!(
            flat,
            Some(Layout::Subagent {
                parent_session_hint: None,
                agent_id_hint: Some("1a2b3c4".into()),
                sidecar: None
            })
        );
        match get("agent-a05d358b0666d872d.jsonl").map(|f| &f.layout) {
            Some(Layout::Subagent {
                parent_session_hint,
                sidecar,
                ..
            }) => {
                assert_eq!(
                    parent_session_hint.as_deref(),
                    Some("0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b")
                );
                assert!(sidecar.is_some());
            }
            other => panic!("unexpected {other:?}"),
        }
        match get("wf_9/agent-b1.jsonl").map(|f| &f.layout) {
            Some(Layout::Subagent {
                parent_session_hint,
                ..
            }) => assert_eq!(
                parent_session_hint.as_deref(),
                Some("0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b")
            ),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            get("legacy.jsonl").map(|f| f.kind),
            Some(TranscriptKind::Codex)
        );
        assert!(get("journal.jsonl").is_none());
        let mut sorted = found.clone();
        sorted.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(sorted, found);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_named_like_a_transcript_is_found_without_blocking() {
        let Some(tmp) = tempfile::tempdir().ok() else {
            return;
        };
        let root = tmp.path();
        touch(&root.join("p/s.jsonl"), "{\"sessionId\":\"s\"}\n");
        let fifo = root.join("p/pipe.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let other = root.join("p/pipe.txt");
        let made = std::process::Command::new("mkfifo").arg(&other).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let found: Vec<PathBuf> = discover(root).into_iter().map(|f| f.path).collect();
        assert_eq!(found, vec![fifo, root.join("p/s.jsonl")]);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_cut() {
        let Some(tmp) = tempfile::tempdir().ok() else {
            return;
        };
        let root = tmp.path();
        touch(&root.join("a/s.jsonl"), "{\"sessionId\":\"s\"}\n");
        let _ = std::os::unix::fs::symlink(root, root.join("a/loop"));
        let found = discover(root);
        assert_eq!(found.len(), 1);
    }
}

#[cfg(test)]
mod link_tests {
    use super::*;

    /// A link inside a root to a folder that holds the root, or into the kernel's folders, is not
    /// followed: `events -> /` walked the whole machine (through `/proc/<pid>/cwd` too).
    #[cfg(unix)]
    #[test]
    fn a_link_back_up_or_into_the_kernel_is_not_followed() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("root");
        let proj = root.join("-home-me-proj");
        std::fs::create_dir_all(&proj).expect("mkdir");
        std::fs::write(
            proj.join("s1.jsonl"),
            "{\"type\":\"user\",\"sessionId\":\"s1\"}\n",
        )
        .expect("write");
        // A session beside the root, reachable only through a link back up.
        let beside = tmp.path().join("-home-me-other");
        std::fs::create_dir_all(&beside).expect("mkdir");
        std::fs::write(
            beside.join("s2.jsonl"),
            "{\"type\":\"user\",\"sessionId\":\"s2\"}\n",
        )
        .expect("write");
        std::os::unix::fs::symlink("/", proj.join("to-root")).expect("link");
        std::os::unix::fs::symlink("../..", proj.join("up")).expect("link");
        std::os::unix::fs::symlink("/proc/self", proj.join("proc")).expect("link");
        // A link to a folder outside that does not hold the root is still followed.
        let shared = tmp.path().join("shared/-home-me-shared");
        std::fs::create_dir_all(&shared).expect("mkdir");
        std::fs::write(
            shared.join("s3.jsonl"),
            "{\"type\":\"user\",\"sessionId\":\"s3\"}\n",
        )
        .expect("write");
        std::os::unix::fs::symlink(&shared, root.join("-home-me-shared")).expect("link");
        let found = discover_changed(&root, &|_, _| false);
        let names: Vec<String> = found
            .changed
            .iter()
            .map(|f| {
                f.path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, vec!["s1.jsonl", "s3.jsonl"], "{:?}", found.changed);
    }
}
