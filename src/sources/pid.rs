//! Whether a process still runs: what tells a file a killed run (`kill -9`) left behind from one
//! a running process is still writing, wherever such a file lies beside a store (the L3 build's
//! temporary store, a team mirror's half-made copy, an agent database's private copy).

/// Whether process `pid` exists (under any user: `EPERM` means it does). Off Unix, always true:
/// nothing is removed that might be in use.
#[cfg(unix)]
pub fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: kill with signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
pub fn alive(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_one_past_the_pid_range_does_not() {
        assert!(alive(std::process::id()));
        assert!(!alive(i32::MAX as u32 - 1));
    }
}
