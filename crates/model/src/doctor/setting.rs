//! The settings `doctor --apply` may change: a fixed list of sysfs and procfs files. The undo
//! record names them by path, and a path outside this list is refused, never written.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// One file `doctor --apply` may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    /// `/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor`.
    Governor { cpu: usize },
    /// `/sys/devices/system/cpu/intel_pstate/no_turbo`.
    IntelNoTurbo,
    /// `/sys/devices/system/cpu/cpufreq/boost`.
    CpufreqBoost,
    /// `net.ipv4.ip_local_port_range`.
    LocalPortRange,
    /// `net.ipv4.tcp_tw_reuse`.
    TcpTwReuse,
    /// `net.core.somaxconn`.
    Somaxconn,
    /// `net.core.rmem_max`: the largest socket receive buffer a process may ask for (QUIC's
    /// UDP sockets).
    RmemMax,
    /// `net.core.wmem_max`: the largest socket send buffer.
    WmemMax,
}

const CPU: &str = "/sys/devices/system/cpu/cpu";
const GOVERNOR: &str = "/cpufreq/scaling_governor";
const FIXED: [(Setting, &str); 7] = [
    (
        Setting::IntelNoTurbo,
        "/sys/devices/system/cpu/intel_pstate/no_turbo",
    ),
    (
        Setting::CpufreqBoost,
        "/sys/devices/system/cpu/cpufreq/boost",
    ),
    (
        Setting::LocalPortRange,
        "/proc/sys/net/ipv4/ip_local_port_range",
    ),
    (Setting::TcpTwReuse, "/proc/sys/net/ipv4/tcp_tw_reuse"),
    (Setting::Somaxconn, "/proc/sys/net/core/somaxconn"),
    (Setting::RmemMax, "/proc/sys/net/core/rmem_max"),
    (Setting::WmemMax, "/proc/sys/net/core/wmem_max"),
];

impl Setting {
    /// The file, as an absolute path on the live machine.
    pub fn path(self) -> String {
        match self {
            Setting::Governor { cpu } => format!("{CPU}{cpu}{GOVERNOR}"),
            other => FIXED
                .iter()
                .find(|(s, _)| *s == other)
                .map(|(_, p)| (*p).to_owned())
                .expect("every other setting has a fixed path"),
        }
    }

    /// The setting whose file is `path` exactly; `None` for any other path.
    pub fn from_path(path: &str) -> Option<Setting> {
        if let Some((s, _)) = FIXED.iter().find(|(_, p)| *p == path) {
            return Some(*s);
        }
        let digits = path.strip_prefix(CPU)?.strip_suffix(GOVERNOR)?;
        let plain = !digits.is_empty()
            && digits.len() <= 5
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        plain.then(|| Setting::Governor {
            cpu: digits.parse().expect("checked digits"),
        })
    }

    /// Whether `value` has the shape this file holds (a governor's name, 0 or 1, two port
    /// numbers, a count): the undo record's values are checked before any is written.
    pub fn accepts(self, value: &str) -> bool {
        let v = value.trim();
        let number = |max: u64| v.parse::<u64>().is_ok_and(|n| n <= max);
        match self {
            Setting::Governor { .. } => {
                !v.is_empty()
                    && v.len() <= 32
                    && v.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            }
            Setting::IntelNoTurbo | Setting::CpufreqBoost => v == "0" || v == "1",
            Setting::TcpTwReuse => v == "0" || v == "1" || v == "2",
            Setting::Somaxconn | Setting::RmemMax | Setting::WmemMax => number(u64::from(u32::MAX)),
            Setting::LocalPortRange => {
                let ports: Vec<Option<u16>> =
                    v.split_ascii_whitespace().map(|p| p.parse().ok()).collect();
                matches!(ports[..], [Some(lo), Some(hi)] if lo <= hi)
            }
        }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path())
    }
}

impl Serialize for Setting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.path())
    }
}

impl<'de> Deserialize<'de> for Setting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let path = String::deserialize(d)?;
        Setting::from_path(&path).ok_or_else(|| {
            serde::de::Error::custom(format!("{path} is not a setting doctor changes"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_is_found_again_from_its_path() {
        let all = [
            Setting::Governor { cpu: 0 },
            Setting::Governor { cpu: 17 },
            Setting::IntelNoTurbo,
            Setting::CpufreqBoost,
            Setting::LocalPortRange,
            Setting::TcpTwReuse,
            Setting::Somaxconn,
            Setting::RmemMax,
            Setting::WmemMax,
        ];
        for s in all {
            assert_eq!(Setting::from_path(&s.path()), Some(s), "{s}");
        }
    }

    #[test]
    fn paths_outside_the_list_are_not_settings() {
        for p in [
            "/etc/shadow",
            "/sys/devices/system/cpu/cpu0/cpufreq/../../../../../etc/shadow",
            "/sys/devices/system/cpu/cpu/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu01/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu1/../cpu0/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu+1/cpufreq/scaling_governor",
            "/proc/sys/net/core/somaxconn/",
            "proc/sys/net/core/somaxconn",
        ] {
            assert_eq!(Setting::from_path(p), None, "{p}");
        }
    }

    #[test]
    fn values_are_checked_against_the_shape_of_their_file() {
        let gov = Setting::Governor { cpu: 0 };
        assert!(gov.accepts("powersave\n"));
        assert!(!gov.accepts("performance; rm -rf /"));
        assert!(Setting::LocalPortRange.accepts("32768\t60999"));
        assert!(!Setting::LocalPortRange.accepts("60999 32768"));
        assert!(!Setting::LocalPortRange.accepts("1 2 3"));
        assert!(Setting::Somaxconn.accepts("4096"));
        assert!(!Setting::Somaxconn.accepts("-1"));
        assert!(Setting::TcpTwReuse.accepts("2"));
        assert!(Setting::RmemMax.accepts("7500000") && !Setting::WmemMax.accepts("7.5M"));
        assert!(!Setting::CpufreqBoost.accepts("2"));
    }
}
