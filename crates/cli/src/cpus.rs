//! `--cpus 0-1,3`-style flags: one value that is a list (the model's [`CpuList`]; clap would
//! take `Option<Vec<usize>>` for a flag given several times, so the list has a type of its own).

use serverbench_model::CpuList;

/// Parses `0`, `0,2`, `0-3` (clap's value parser for [`CpuList`]).
pub fn parse(s: &str) -> Result<CpuList, String> {
    s.parse::<CpuList>().map_err(|e| e.to_string())
}

/// The CPUs of an optional flag.
pub fn of(flag: &Option<CpuList>) -> Option<Vec<usize>> {
    flag.as_ref().map(|c| c.0.clone())
}
