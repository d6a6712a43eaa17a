//! `--cpus 0-1,3`-style flags: one value that is a list (clap would take `Option<Vec<usize>>`
//! for a flag given several times, so the list gets a type of its own).

use serverbench_harness::process::parse_cpu_list;

/// A list of CPUs given as one flag value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// Parses `0`, `0,2`, `0-3` (clap's value parser for [`CpuList`]).
pub fn parse(s: &str) -> Result<CpuList, String> {
    parse_cpu_list(s).map(CpuList).map_err(|e| e.to_string())
}

/// The CPUs of an optional flag.
pub fn of(flag: &Option<CpuList>) -> Option<Vec<usize>> {
    flag.as_ref().map(|c| c.0.clone())
}
