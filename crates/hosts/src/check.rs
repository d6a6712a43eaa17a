//! `serverbench hosts check`: per host, whether ssh works, which serverbench is there, its
//! CPUs and its clock offset.
//!
//! Everything is asked over one session. The offset compares the host's `date +%s.%N` with the
//! local wall clock at the midpoint of the round trip; of five round trips the shortest is kept,
//! and half of it bounds the error. A checkout missing there fails the session itself.

use crate::inventory::Host;
use crate::ssh::{Session, SessionLine, Transport};
use crate::HostError;
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long one probe command may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(15);
/// Clock offsets beyond this many milliseconds deserve a warning: start skews and timelines
/// compare host clocks.
pub const CLOCK_WARN_MS: f64 = 10.0;
const CLOCK_SAMPLES: usize = 5;

/// What a host said.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// `serverbench --version` there, or None when the binary is missing.
    pub version: Option<String>,
    /// CPUs available there (`nproc`).
    pub cpus: usize,
    /// Host clock minus local clock, in milliseconds.
    pub clock_offset_ms: f64,
    /// The shortest round trip of a command, in milliseconds (half of it bounds the offset's
    /// error).
    pub rtt_ms: f64,
}

impl Probe {
    /// The host is usable: this very serverbench version is there.
    pub fn usable(&self, host: &Host) -> Result<(), HostError> {
        match &self.version {
            None => Err(HostError::Missing {
                host: host.name.clone(),
                message: format!("no serverbench at {}", host.binary.display()),
            }),
            Some(v) if release(v) != expected_version() => Err(HostError::Version {
                host: host.name.clone(),
                found: v.clone(),
                expected: expected_version(),
            }),
            Some(_) => Ok(()),
        }
    }
}

/// What `serverbench --version` prints for this build, up to the commit it names.
pub fn expected_version() -> String {
    format!("serverbench {}", env!("CARGO_PKG_VERSION"))
}

/// `serverbench --version` without the commit it was built from (`serverbench 0.1.0 (commit
/// 1a2b3c4d5e6f)` → `serverbench 0.1.0`): hosts must run the same release, and a build of it
/// with other local changes is still that release.
fn release(version: &str) -> &str {
    version.split(" (").next().unwrap_or(version).trim()
}

/// The probe, run by `sh` in the checkout with the binary as `$1`: facts first, then one
/// `date` per line read, so that clock round trips do not pay for the login shell's start.
const PROBE_SCRIPT: &str = r#"printf 'cpus %s\n' "$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)"
if [ -x "$1" ]; then printf 'version %s\n' "$("$1" --version 2>/dev/null | head -n1)"; else echo version; fi
echo end
while read -r x; do date +%s.%N; done"#;

/// Probes one host over one session.
pub fn probe(transport: &Transport, host: &Host) -> Result<Probe, HostError> {
    let (tx, rx) = mpsc::channel();
    let argv = [
        "sh".to_string(),
        "-c".into(),
        PROBE_SCRIPT.into(),
        "probe".into(),
        host.binary.to_string_lossy().into_owned(),
    ];
    let mut session = transport.spawn(host, 0, &argv, tx)?;
    let mut facts = Vec::new();
    loop {
        let line = next_line(&mut session, &rx, "its facts")?;
        if line == "end" {
            break;
        }
        facts.push(line);
    }
    let field = |name: &str| {
        facts
            .iter()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ').or(Some("")))
            .map(str::trim)
    };
    let cpus = field("cpus")
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| HostError::Protocol {
            host: host.name.clone(),
            message: format!("the probe printed no CPU count: {facts:?}"),
        })?;
    let version = field("version")
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let mut best: Option<(f64, f64)> = None;
    for _ in 0..CLOCK_SAMPLES {
        let t0 = unix_s();
        session.send_line("t")?;
        let text = next_line(&mut session, &rx, "the time")?;
        let t1 = unix_s();
        let remote: f64 = text.trim().parse().map_err(|_| HostError::Protocol {
            host: host.name.clone(),
            message: format!("`date +%s.%N` printed `{}`", text.trim()),
        })?;
        let rtt = (t1 - t0) * 1e3;
        let offset = (remote - (t0 + t1) / 2.0) * 1e3;
        if !best.is_some_and(|(_, r)| r <= rtt) {
            best = Some((offset, rtt));
        }
    }
    session.stop(PROBE_TIMEOUT);
    let (clock_offset_ms, rtt_ms) = best.expect("at least one sample");
    Ok(Probe {
        version,
        cpus,
        clock_offset_ms,
        rtt_ms,
    })
}

/// The probe's next line of output.
fn next_line(
    session: &mut Session,
    rx: &mpsc::Receiver<(usize, SessionLine)>,
    what: &str,
) -> Result<String, HostError> {
    match rx.recv_timeout(PROBE_TIMEOUT) {
        Ok((_, SessionLine::Text(l))) => Ok(l),
        Ok((_, SessionLine::Closed)) => {
            let status = session.wait_for(PROBE_TIMEOUT);
            Err(session.failure(status, &format!("while probing ({what})")))
        }
        Err(_) => Err(HostError::Timeout {
            host: session.host.clone(),
            what: format!("the probe ({what})"),
            after: PROBE_TIMEOUT,
        }),
    }
}

/// Probes every host at once; results in the order of `hosts`.
/// The warning about `host`'s clock when it is more than [`CLOCK_WARN_MS`] away from this
/// machine's (start skews and timelines compare host clocks).
pub fn clock_warning(host: &Host, p: &Probe) -> Option<String> {
    (p.clock_offset_ms.abs() > CLOCK_WARN_MS).then(|| {
        format!(
            "{}: clock {:+.1} ms away from this machine's (start skews and timelines compare \
             host clocks: sync them with NTP/PTP)",
            host.name, p.clock_offset_ms
        )
    })
}

pub fn probe_all(transport: &Transport, hosts: &[Host]) -> Vec<Result<Probe, HostError>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = hosts
            .iter()
            .map(|h| s.spawn(move || probe(transport, h)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("probe thread"))
            .collect()
    })
}

/// Seconds since the epoch, local wall clock.
pub fn unix_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_with_the_same_release_built_from_another_commit_is_usable() {
        let v = format!(
            "{} (commit 1a2b3c4d5e6f, uncommitted changes)",
            expected_version()
        );
        assert_eq!(release(&v), expected_version());
        assert_eq!(release("serverbench 0.0.9"), "serverbench 0.0.9");
    }
}
