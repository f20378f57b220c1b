//! Where the real agent transcripts, skills and agent definitions are: `../shared/realdata`
//! beside the checkout (every developer and CI has it), else `/work/shared/realdata`. They are
//! third-party data and stay out of the repository; where they are absent (a stranger's clone),
//! the tests that need them say so and pass as skipped.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The realdata root, or `None` (with a note on stdout) when it is absent.
pub fn root() -> Option<PathBuf> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = ROOT.get_or_init(|| {
        let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realdata");
        [beside, PathBuf::from("/work/shared/realdata")]
            .into_iter()
            .find(|p| p.join("SOURCES.md").is_file())
            .map(|p| p.canonicalize().unwrap_or(p))
    });
    if found.is_none() {
        println!("skipped: ../shared/realdata is absent (real-data tests need it)");
    }
    found.clone()
}

/// `rel` under the realdata root, or `None` (with a note) when it is absent.
pub fn path(rel: &str) -> Option<PathBuf> {
    let p = root()?.join(rel);
    if !p.exists() {
        println!("skipped: {} is absent", p.display());
        return None;
    }
    Some(p)
}
