//! serverbench-machine: the machine the benchmark runs on, and the one home of what serverbench
//! asks its operating system outside the engine's hot loop: one set of `/proc` and `/sys`
//! parsers ([`procfs`]), the live process reads ([`process`]: stat, context switches, sockets,
//! CPU and memory of a process tree's members) and CPU affinity ([`affinity`]). Three uses:
//! - [`disturbance`]: two cheap samples around a lap (per-CPU times, steal, pressure, throttling)
//!   and the arithmetic that says whether something other than the benchmark's own processes
//!   disturbed it, and why;
//! - [`doctor`]: checks of the machine's settings for benchmarking, each with the command that
//!   would fix it, in the spirit of `pyperf system show`;
//! - [`process`] and [`affinity`]: the harness's sampler and process groups, the database's
//!   postmaster checks, and the CPU pinning of the engine's threads and the harness's processes.
//!
//! Reading goes through the [`Source`] trait, so every computation is tested on recorded files
//! (fixtures) rather than on the machine the tests happen to run on. Nothing here prints.

pub mod affinity;
pub mod disturbance;
pub mod doctor;
pub mod process;
pub mod procfs;

use std::path::{Path, PathBuf};

/// Where `/proc` and `/sys` files come from: the live machine, or recorded fixtures in tests.
pub trait Source {
    /// The text of a file such as `/proc/stat`; `None` when it does not exist or cannot be read.
    fn read(&self, path: &str) -> Option<String>;
    /// The entries of a folder such as `/proc` (names only); empty when it cannot be read.
    fn list(&self, path: &str) -> Vec<String>;
}

/// The live machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct Live;

impl Source for Live {
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    fn list(&self, path: &str) -> Vec<String> {
        list_dir(Path::new(path))
    }
}

/// A recorded tree: `/proc/stat` is read from `<root>/proc/stat`.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The folder that stands for `/`.
    pub root: PathBuf,
}

impl Source for Recorded {
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path.trim_start_matches('/'))).ok()
    }

    fn list(&self, path: &str) -> Vec<String> {
        list_dir(&self.root.join(path.trim_start_matches('/')))
    }
}

fn list_dir(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}
