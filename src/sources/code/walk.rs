//! Finding the files of a repository root worth indexing.
//!
//! `.gitignore`, `.ignore` and git excludes are honoured (even outside a git checkout); hidden
//! files are kept (`.env`, `.github/`), version-control folders are not. Vendored and build trees,
//! lock files, minified bundles, binaries by extension and files over the size cap are skipped
//! and counted by reason. Ignored entries are counted with a second, cheap pass that lists
//! directories without reading files: an ignored folder counts once, not per file inside it.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use ignore::WalkBuilder;

use super::lang;

/// A candidate file: on disk, not skipped by name or size.
#[derive(Debug, Clone)]
pub struct WalkedFile {
    pub abs: PathBuf,
    /// Root-relative, `/`-separated.
    pub rel: String,
    pub size: u64,
    pub mtime_ns: i64,
}

/// The files of one root and what was skipped on the way.
#[derive(Debug, Default)]
pub struct Walked {
    pub files: Vec<WalkedFile>,
    pub skipped: BTreeMap<String, u64>,
}

fn bump(map: &mut BTreeMap<String, u64>, reason: &str, n: u64) {
    if n > 0 {
        *map.entry(reason.to_string()).or_default() += n;
    }
}

/// Nanoseconds since the epoch of a file's modification time (0 when unknown).
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    let Ok(t) = meta.modified() else {
        return 0;
    };
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// The root-relative `/`-separated form of `abs`, if it is under `root` and valid UTF-8.
pub fn rel_path(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let mut parts = Vec::new();
    for c in rel.components() {
        parts.push(c.as_os_str().to_str()?);
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn is_dir(entry: &ignore::DirEntry) -> bool {
    entry.file_type().is_some_and(|t| t.is_dir())
}

fn entry_name(entry: &ignore::DirEntry) -> String {
    entry.file_name().to_string_lossy().into_owned()
}

/// Walk `root` (canonical) and list the files to index.
/// Directories in `exclude` (canonical paths) are not entered.
pub fn walk_root(
    root: &Path,
    max_file_bytes: u64,
    extra_skip_dirs: &[String],
    exclude: &[PathBuf],
) -> Walked {
    let mut out = Walked::default();
    let vendored = Arc::new(AtomicU64::new(0));
    let skip_dirs: Arc<Vec<String>> = Arc::new(
        lang::VENDORED_DIRS
            .iter()
            .map(|s| s.to_string())
            .chain(extra_skip_dirs.iter().cloned())
            .collect(),
    );

    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false);
    {
        let vendored = Arc::clone(&vendored);
        let skip_dirs = Arc::clone(&skip_dirs);
        let exclude = exclude.to_vec();
        builder.filter_entry(move |e| {
            if e.depth() == 0 || !is_dir(e) {
                return true;
            }
            if exclude.iter().any(|x| x == e.path()) {
                return false;
            }
            let name = entry_name(e);
            if lang::VCS_DIRS.contains(&name.as_str()) {
                return false;
            }
            if skip_dirs.iter().any(|d| d == &name) {
                vendored.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            true
        });
    }

    let mut kept: HashSet<PathBuf> = HashSet::new();
    let mut dirs: HashSet<PathBuf> = HashSet::new();
    for entry in builder.build() {
        let Ok(entry) = entry else {
            bump(&mut out.skipped, "unreadable", 1);
            continue;
        };
        if is_dir(&entry) {
            dirs.insert(entry.path().to_path_buf());
            continue;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue; // symlinks, sockets, devices
        }
        let abs = entry.path().to_path_buf();
        kept.insert(abs.clone());
        let name = entry_name(&entry);
        if lang::is_generated(&name) {
            bump(&mut out.skipped, "generated", 1);
            continue;
        }
        if lang::is_binary_name(&name) {
            bump(&mut out.skipped, "binary", 1);
            continue;
        }
        let Some(rel) = rel_path(root, &abs) else {
            bump(&mut out.skipped, "non_utf8_path", 1);
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            bump(&mut out.skipped, "unreadable", 1);
            continue;
        };
        if meta.len() > max_file_bytes {
            bump(&mut out.skipped, "too_large", 1);
            continue;
        }
        out.files.push(WalkedFile {
            abs,
            rel,
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
        });
    }
    bump(
        &mut out.skipped,
        "vendored",
        vendored.load(Ordering::Relaxed),
    );
    let ignored = count_ignored(root, kept, dirs, &skip_dirs);
    bump(&mut out.skipped, "ignored", ignored);
    out.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// Entries an unfiltered walk sees that the filtered walk did not: ignored files, and ignored
/// directories counted once each (they are not descended into).
fn count_ignored(
    root: &Path,
    kept: HashSet<PathBuf>,
    dirs: HashSet<PathBuf>,
    skip_dirs: &Arc<Vec<String>>,
) -> u64 {
    let ignored = Arc::new(AtomicU64::new(0));
    let dirs = Arc::new(dirs);
    let mut builder = WalkBuilder::new(root);
    builder.standard_filters(false).follow_links(false);
    {
        let ignored = Arc::clone(&ignored);
        let skip_dirs = Arc::clone(skip_dirs);
        builder.filter_entry(move |e| {
            if e.depth() == 0 || !is_dir(e) {
                return true;
            }
            let name = entry_name(e);
            if lang::VCS_DIRS.contains(&name.as_str()) || skip_dirs.iter().any(|d| d == &name) {
                return false;
            }
            if !dirs.contains(e.path()) {
                ignored.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            true
        });
    }
    for entry in builder.build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) && !kept.contains(entry.path()) {
            ignored.fetch_add(1, Ordering::Relaxed);
        }
    }
    ignored.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let w = |p: &str, body: &[u8]| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        };
        w(".gitignore", b"secret_dir/\n*.log\n");
        w("src/main.rs", b"fn main() {}\n");
        w("app.log", b"log line\n");
        w("secret_dir/a.txt", b"a\n");
        w("secret_dir/b.txt", b"b\n");
        w("node_modules/x/index.js", b"x\n");
        w("Cargo.lock", b"lock\n");
        w("img.png", b"\x89PNG");
        w("big.txt", &vec![b'a'; 2048]);
        w(".git/HEAD", b"ref\n");
        w(".env", b"A=1\n");
        let walked = walk_root(&root, 1024, &[], &[]);
        let rels: Vec<&str> = walked.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, vec![".env", ".gitignore", "src/main.rs"]);
        let s = &walked.skipped;
        assert_eq!(s.get("ignored"), Some(&2), "{s:?}"); // app.log + secret_dir/
        assert_eq!(s.get("vendored"), Some(&1));
        assert_eq!(s.get("generated"), Some(&1));
        assert_eq!(s.get("binary"), Some(&1));
        assert_eq!(s.get("too_large"), Some(&1));
    }
}
