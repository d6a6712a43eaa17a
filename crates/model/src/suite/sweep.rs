//! Core sweeps: a profile with `server_cpus = [1, 2, 4, "all"]` runs every server at each of
//! those CPU counts, `WORKERS` following. Before a run, [`Suite::expand_sweeps`] turns such a
//! profile into one profile per count that fits (`c100/10s/2cpu`, ...), so a count is a value of
//! the profile like its connections, and laps stay interleaved as for any profile. A count that
//! does not fit the server's CPUs (or would overlap the client's) is left out with the reason.

use super::{Profile, Suite};
use serde::{Deserialize, Serialize};

/// One entry of a sweep: a number of CPUs, or all the server's CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CpuCount {
    /// Exactly this many CPUs.
    N(u32),
    /// `"all"`: every CPU the server may use.
    All(AllCpus),
}

/// The literal `"all"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AllCpus {
    /// Every CPU.
    All,
}

/// A `--server-cpus-sweep` entry that is neither a positive count nor `all`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a CPU count (1, 2, ... or all)")]
pub struct NotACpuCount(pub String);

impl CpuCount {
    /// Parses `2` or `all` (the spelling of `--server-cpus-sweep`).
    pub fn parse(s: &str) -> Result<CpuCount, NotACpuCount> {
        match s.trim() {
            "all" => Ok(CpuCount::All(AllCpus::All)),
            n => match n.parse::<u32>() {
                Ok(n) if n > 0 => Ok(CpuCount::N(n)),
                _ => Err(NotACpuCount(s.to_string())),
            },
        }
    }

    /// The count on a server that may use `available` CPUs.
    pub fn resolve(self, available: usize) -> u32 {
        match self {
            CpuCount::N(n) => n,
            CpuCount::All(_) => available as u32,
        }
    }
}

impl std::fmt::Display for CpuCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuCount::N(n) => write!(f, "{n}"),
            CpuCount::All(_) => f.write_str("all"),
        }
    }
}

impl Suite {
    /// Replaces every profile that has a sweep by one profile per CPU count that fits
    /// `available` server CPUs (the client keeps its own); returns why each left-out count was
    /// left out. Idempotent: an expanded profile has its `cores` set and no sweep.
    pub fn expand_sweeps(&mut self, available: usize, client_cpus: usize) -> Vec<String> {
        let mut notes = Vec::new();
        let mut out = Vec::new();
        for p in std::mem::take(&mut self.profiles) {
            if p.server_cpus.is_empty() {
                out.push(p);
                continue;
            }
            let mut seen = Vec::new();
            for c in &p.server_cpus {
                let n = c.resolve(available);
                if n as usize > available || n == 0 {
                    notes.push(too_many(&p, *c, n, available, client_cpus));
                } else if seen.contains(&n) {
                    notes.push(format!(
                        "{}: {c} CPU(s) is {n}, already in the sweep",
                        p.name
                    ));
                } else {
                    seen.push(n);
                    out.push(Profile {
                        name: format!("{}/{n}cpu", p.name),
                        server_cpus: Vec::new(),
                        cores: Some(n),
                        ..p.clone()
                    });
                }
            }
        }
        self.profiles = out;
        notes
    }
}

fn too_many(p: &Profile, c: CpuCount, n: u32, available: usize, client: usize) -> String {
    let client = match client {
        0 => String::new(),
        k => format!("; the client keeps its own {k}"),
    };
    format!(
        "{}: skipped {c} server CPU(s) ({n}): the server may use {available} here{client} \
         (more with --server-cpus, or with the server on its own host)",
        p.name
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(sweep: &str) -> Suite {
        let text = format!(
            "name = \"s\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = \"all\"\n\
             [[scenario]]\nname = \"hello\"\npaths = [\"/hello\"]\n\
             [[profile]]\nconnections = 10\nduration = \"2s\"\nserver_cpus = {sweep}\n"
        );
        Suite::parse(&text, std::path::Path::new("s.toml")).unwrap()
    }

    #[test]
    fn counts_beyond_the_server_cpus_are_skipped_with_the_reason() {
        let mut s = suite("[1, 2, 4, \"all\"]");
        let notes = s.expand_sweeps(1, 1);
        let names: Vec<&str> = s.profiles.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["10conn/2s/1cpu"]);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("skipped 2 server CPU(s)"), "{notes:?}");
        assert!(notes[0].contains("the client keeps its own 1"), "{notes:?}");
        assert!(
            notes[2].contains("all CPU(s) is 1, already in the sweep"),
            "{notes:?}"
        );
    }

    #[test]
    fn all_counts_fit_on_a_big_server_host_and_expansion_is_idempotent() {
        let mut s = suite("[1, 2, \"all\"]");
        assert!(s.expand_sweeps(8, 0).is_empty());
        let cores: Vec<Option<u32>> = s.profiles.iter().map(|p| p.cores).collect();
        assert_eq!(cores, [Some(1), Some(2), Some(8)]);
        let again = s.clone();
        s.expand_sweeps(8, 0);
        assert_eq!(s, again);
    }

    #[test]
    fn a_sweep_entry_is_a_count_or_all() {
        assert_eq!(CpuCount::parse("all"), Ok(CpuCount::All(AllCpus::All)));
        assert_eq!(CpuCount::parse("4"), Ok(CpuCount::N(4)));
        assert!(CpuCount::parse("0").is_err() && CpuCount::parse("many").is_err());
    }
}
