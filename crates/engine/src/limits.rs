//! The open-file limit: every connection is a file descriptor, so `-c 20000` under the common
//! default soft limit of 1024 would fail most connects with EMFILE. The soft limit is raised to
//! what the run needs (never above the hard limit), and a run that still cannot fit is refused
//! before it starts, with the numbers.

/// Descriptors needed besides the connections: stdio, epoll and timer fds per thread, a margin.
pub const SPARE_FDS: u64 = 64;

/// The soft and hard `RLIMIT_NOFILE`.
pub fn nofile() -> std::io::Result<(u64, u64)> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((r.rlim_cur, r.rlim_max))
}

/// Raises the soft limit to at least `needed` descriptors (up to the hard limit) and returns the
/// soft limit in force afterwards.
pub fn raise_nofile(needed: u64) -> std::io::Result<u64> {
    let (soft, hard) = nofile()?;
    if soft >= needed {
        return Ok(soft);
    }
    let r = libc::rlimit {
        rlim_cur: needed.min(hard),
        rlim_max: hard,
    };
    // SAFETY: `r` is a valid rlimit; lowering nothing, raising the soft limit within the hard.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(nofile()?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_is_raised_within_the_hard_limit() {
        let (soft, hard) = nofile().unwrap();
        let after = raise_nofile(soft + 1).unwrap();
        assert!(
            after > soft || soft == hard,
            "{soft} -> {after} (hard {hard})"
        );
        assert!(after <= hard);
    }
}
