//! A program some tests need and a machine may lack (PostgreSQL for the team tests, tmux for the
//! explorer's terminal tests). A stranger's `cargo test` skips those tests with a note saying
//! how to install it; where the program's environment variable is set (`.ci/run` sets
//! `KNOWLEDGE_REQUIRE_POSTGRES=1` and `KNOWLEDGE_REQUIRE_TMUX=1`), a missing program fails the
//! test instead, so CI cannot pass by skipping. Each program's presence is decided in one place
//! (`pg::installed`, `Tmux::installed`), which asks [`Need::met`].
#![allow(dead_code)]

/// A program that tests need.
pub struct Need {
    /// The environment variable that makes its absence a failure.
    pub var: &'static str,
    /// What is missing, as the note says it.
    pub missing: &'static str,
    /// How to install it.
    pub install: &'static str,
    /// The tests that need it.
    pub tests: &'static str,
}

pub const POSTGRES: Need = Need {
    var: "KNOWLEDGE_REQUIRE_POSTGRES",
    missing: "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb and pg_ctl)",
    install: "install the server binaries (Debian/Ubuntu: `apt-get install postgresql-15`; any \
              version under /usr/lib/postgresql/N/bin will do)",
    tests: "the team tests",
};

pub const TMUX: Need = Need {
    var: "KNOWLEDGE_REQUIRE_TMUX",
    missing: "tmux is not installed (no `tmux` on PATH)",
    install: "install it (Debian/Ubuntu: `apt-get install tmux`)",
    tests: "the explorer's terminal tests",
};

impl Need {
    /// Whether the test goes on: `true` when the program is `present`; else `false` after a
    /// note that the test is skipped, or a panic where [`Need::var`] requires the program.
    pub fn met(&self, present: bool) -> bool {
        self.met_with(present, std::env::var(self.var).ok().as_deref())
    }

    /// [`Need::met`] with the variable's value given (`None`: unset).
    pub fn met_with(&self, present: bool, var_value: Option<&str>) -> bool {
        if present {
            return true;
        }
        match self.absent(required(var_value)) {
            Ok(note) => {
                eprintln!("{note}");
                false
            }
            Err(failure) => panic!("{failure}"),
        }
    }

    /// What happens when the program is absent: `Ok(note)` to skip, `Err(message)` to fail.
    pub fn absent(&self, required: bool) -> Result<String, String> {
        let Need {
            var,
            missing,
            install,
            tests,
        } = self;
        if required {
            Err(format!(
                "{missing}, and {var} is set, so {tests} must run: {install}, \
                 or unset {var} to let them skip"
            ))
        } else {
            Ok(format!(
                "SKIPPED: {missing}: {install} to run {tests} \
                 ({var}=1, as `.ci/run` sets it, makes this a failure)"
            ))
        }
    }
}

/// Whether an environment variable's value requires the program: set, and neither empty nor `0`.
pub fn required(value: Option<&str>) -> bool {
    matches!(value.map(str::trim), Some(v) if !v.is_empty() && v != "0")
}
