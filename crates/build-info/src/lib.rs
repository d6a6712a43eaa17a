//! The commit this serverbench was built from and whether its sources had uncommitted changes,
//! baked in at build time by build.rs (from `git`; "unknown" for a build outside a checkout).
//! `serverbench --version` prints it and every run records it in `env.json`, so a record names
//! the code that ran, not the repository around the folder it ran in.

/// `serverbench --version`: `0.1.0 (commit 1a2b3c4d5e6f)`, `0.1.0 (commit 1a2b3c4d5e6f,
/// uncommitted changes)` or `0.1.0 (commit unknown)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    env!("SERVERBENCH_VERSION_SUFFIX")
);

/// The full commit hash (40 hex digits), `None` for a build outside git.
pub fn commit() -> Option<&'static str> {
    Some(env!("SERVERBENCH_COMMIT")).filter(|c| c.len() == 40)
}

/// Whether the binary's sources differed from that commit, `None` when unknown.
pub fn dirty() -> Option<bool> {
    match env!("SERVERBENCH_DIRTY") {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_names_the_commit_or_says_it_is_unknown() {
        let v = VERSION;
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        match commit() {
            Some(c) => assert!(v.contains(&c[..12]), "{v}"),
            None => assert!(v.ends_with("(commit unknown)"), "{v}"),
        }
        assert_eq!(v.contains("uncommitted changes"), dirty() == Some(true));
    }
}
