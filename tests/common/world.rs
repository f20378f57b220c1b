//! Indexed worlds for the integration tests: the bundled demo world (materialised into a temp
//! dir with its `@DEMO@` placeholder replaced) and the real public transcripts, each indexed once
//! per test binary and shared read-only by its tests.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use knowledge::demo::{self, DemoWorld};
use knowledge::engine::{Engine, EngineConfig};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions};

pub struct Indexed {
    pub world: DemoWorld,
    pub data_dir: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Indexed {
    /// An engine with the data dir's `config.toml` applied (the shared worlds' generous lane
    /// timeout, see [`GENEROUS_LANES`]).
    pub fn engine(&self) -> Engine {
        Engine::open(EngineConfig::load(&self.data_dir).expect("config.toml"))
    }
}

/// Index the demo world into `data_dir` (episodes and, where built, the other stores).
pub fn index_world(world: &DemoWorld, data_dir: &Path) {
    knowledge::indexing::index_all(data_dir, &world.plan(), &mut |_| {})
        .expect("index the demo world");
}

/// The config of the shared worlds: a generous lane timeout, so that a debug build on a busy
/// machine answers every lane (the semantic arm's first query embeds and scans in each lane).
pub const GENEROUS_LANES: &str = "[lanes]\ntimeout_ms = 10000\n";

/// A fresh copy of the demo world, indexed into its own data dir (for tests that write).
pub fn fresh_demo() -> Indexed {
    fresh_demo_with_config(GENEROUS_LANES)
}

/// A fresh copy of the demo world with `config.toml` written into its data dir before indexing.
pub fn fresh_demo_with_config(config: &str) -> Indexed {
    let tmp = plain_temp_dir();
    let world = demo::materialize(&demo::bundled_world(), &tmp.path().join("world"))
        .expect("materialise the demo world");
    let data_dir = tmp.path().join("data");
    std::fs::create_dir_all(&data_dir).expect("data dir");
    std::fs::write(data_dir.join("config.toml"), config).expect("config");
    index_world(&world, &data_dir);
    Indexed {
        world,
        data_dir,
        _tmp: tmp,
    }
}

/// A temp dir named by this process and a counter (`kn<pid>x<n>`), not by random letters: the
/// demo transcripts hold the path they are materialised at, and a lane's warning names its data
/// dir, so a random name would put a different string into answers and move token counts and
/// ranks from run to run.
fn plain_temp_dir() -> tempfile::TempDir {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    loop {
        let name = format!(
            "kn{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        match tempfile::Builder::new()
            .prefix(&name)
            .rand_bytes(0)
            .tempdir()
        {
            Ok(dir) => return dir,
            // A dir left by a killed run whose pid this one reuses: take the next number.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => panic!("temp dir: {e}"),
        }
    }
}

/// The demo world, indexed once per test binary.
pub fn demo() -> &'static Indexed {
    static DEMO: OnceLock<Indexed> = OnceLock::new();
    DEMO.get_or_init(fresh_demo)
}

/// The real public Claude Code and Codex transcripts in `../shared/realdata`, indexed once per
/// test binary; `None` (with a note) where realdata is absent.
pub fn real() -> Option<&'static (tempfile::TempDir, PathBuf)> {
    static REAL: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let root = super::realdata::root()?;
    Some(REAL.get_or_init(|| {
        let tmp = plain_temp_dir();
        let data = tmp.path().join("data");
        std::fs::create_dir_all(&data).expect("data dir");
        index_episodes(
            &EngineConfig::new(&data).episodes_db(),
            &IndexOptions::new(vec![root.join("claude"), root.join("codex")]),
            &mut |_| {},
        )
        .expect("index real transcripts");
        (tmp, data)
    }))
}
