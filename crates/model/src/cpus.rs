//! CPU lists as `taskset -c` and `Cpus_allowed_list` write them: `0`, `0,2`, `0-3,6`.

use std::fmt;
use std::str::FromStr;

/// A CPU list that is not one, e.g. `--cpus 3-1`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadCpuList {
    #[error("bad CPU {cpu:?} in the list {list:?} (use e.g. 0,2 or 0-3)")]
    Cpu { cpu: String, list: String },
    #[error("bad CPU range {range:?} in {list:?}")]
    Range { range: String, list: String },
    #[error("empty CPU list {list:?}")]
    Empty { list: String },
}

/// Parses a CPU list like `0`, `0,2` or `0-3,6` (as in `taskset -c` and `Cpus_allowed_list`):
/// sorted, without duplicates.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, BadCpuList> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |x: &str| {
            x.trim().parse::<usize>().map_err(|_| BadCpuList::Cpu {
                cpu: x.to_string(),
                list: s.to_string(),
            })
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(BadCpuList::Range {
                        range: part.to_string(),
                        list: s.to_string(),
                    });
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(num(part)?),
        }
    }
    if cpus.is_empty() {
        return Err(BadCpuList::Empty {
            list: s.to_string(),
        });
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// A list of CPUs given as one value (`--cpus 0-3,5`, an inventory's `cpus`): sorted, without
/// duplicates, never empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CpuList(pub Vec<usize>);

impl FromStr for CpuList {
    type Err = BadCpuList;
    fn from_str(s: &str) -> Result<CpuList, BadCpuList> {
        parse_cpu_list(s).map(CpuList)
    }
}

impl fmt::Display for CpuList {
    /// The shortest spelling: runs of three or more as ranges (`0-3,5`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            match j - i {
                0 => parts.push(self.0[i].to_string()),
                1 => parts.push(format!("{},{}", self.0[i], self.0[j])),
                _ => parts.push(format!("{}-{}", self.0[i], self.0[j])),
            }
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_list_takes_ranges_and_single_cpus_sorted_without_duplicates() {
        assert_eq!(parse_cpu_list("3,0-2,2"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(parse_cpu_list(" 5 "), Ok(vec![5]));
        assert!(matches!(
            parse_cpu_list("3-1"),
            Err(BadCpuList::Range { .. })
        ));
        assert!(matches!(parse_cpu_list("a"), Err(BadCpuList::Cpu { .. })));
        assert!(matches!(parse_cpu_list(","), Err(BadCpuList::Empty { .. })));
    }

    #[test]
    fn a_cpu_list_is_written_back_in_its_shortest_spelling() {
        for text in ["0-3,5", "0,1", "7", "0-2,4-6,9"] {
            assert_eq!(text.parse::<CpuList>().unwrap().to_string(), text);
        }
    }
}
