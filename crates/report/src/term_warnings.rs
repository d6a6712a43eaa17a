//! The terminal's warnings: the first screen after a run. Warnings of a kind that repeats per
//! server (noise, outlier laps, too few laps, ...) become one line naming the servers and what
//! to do; failures, errors and one-off warnings keep their own lines. `report --warnings` and
//! the Markdown keep every sentence; the HTML report groups as here ([`groups`]), each
//! sentence one click away.

use crate::text::bullet;
use serverbench_analysis::stats::{MIN_LAPS_FOR_BOOTSTRAP, NOISY_CV};
use serverbench_analysis::summary::{Warning, WarningKind};

/// How many server names a grouped line lists before `and N more`.
const NAMES_SHOWN: usize = 8;

/// The marker after a noisy server's name in the tables, and its legend.
pub const NOISY_MARK: &str = "?";

/// Warnings as the terminal groups them.
#[derive(Debug)]
pub enum Group<'a> {
    /// Several warnings of a kind that names servers: one line for them all.
    Kind {
        /// Their kind.
        kind: WarningKind,
        /// `30 servers noisy (...): a, b, ... and 22 more; ranks uncertain; run more laps`.
        line: String,
        /// Each warning, with its own sentence.
        warnings: Vec<&'a Warning>,
    },
    /// A warning on a line of its own (a failure, an error, a kind seen once).
    One(&'a Warning),
}

/// The warnings grouped by kind, kinds in order of first appearance: a kind that repeats per
/// server makes one [`Group::Kind`]; failures, errors and one-off warnings stay [`Group::One`].
pub fn groups(warnings: &[Warning]) -> Vec<Group<'_>> {
    let mut kinds: Vec<WarningKind> = Vec::new();
    for w in warnings {
        if !kinds.contains(&w.kind) {
            kinds.push(w.kind);
        }
    }
    let mut out = Vec::new();
    for kind in kinds {
        let of_kind: Vec<&Warning> = warnings.iter().filter(|w| w.kind == kind).collect();
        let servers = servers(&of_kind);
        match phrase(kind) {
            Some((what, advice)) if of_kind.len() > 1 && !servers.is_empty() => {
                let mut line = grouped_line(&servers, &what, advice);
                if servers.len() != of_kind.len() {
                    line = format!("{line} ({} rows)", of_kind.len());
                }
                out.push(Group::Kind {
                    kind,
                    line,
                    warnings: of_kind,
                });
            }
            _ => out.extend(of_kind.into_iter().map(Group::One)),
        }
    }
    out
}

/// The warnings section: grouped by kind unless `detail`, each as a bullet.
pub fn section(warnings: &[Warning], detail: bool) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    let mut out = String::from("Warnings:\n");
    if detail {
        for w in warnings {
            out.push_str(&bullet(&w.message));
        }
        return out;
    }
    let mut grouped = false;
    for g in groups(warnings) {
        match g {
            Group::Kind { line, .. } => {
                out.push_str(&bullet(&line));
                grouped = true;
            }
            Group::One(w) => out.push_str(&bullet(&w.message)),
        }
    }
    if grouped {
        out.push_str("  (each server's figures: `serverbench report DIR --warnings`, or the Markdown/HTML report)\n");
    }
    out
}

/// The servers the warnings name, each once, in order.
fn servers<'a>(warnings: &[&'a Warning]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for s in warnings.iter().filter_map(|w| w.server.as_deref()) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// `30 servers noisy (CV above 5%): a, b, c, ... and 22 more; ranks uncertain, run more laps`.
fn grouped_line(servers: &[&str], what: &str, advice: &str) -> String {
    let n = servers.len();
    let mut names = servers[..n.min(NAMES_SHOWN)].join(", ");
    if n > NAMES_SHOWN {
        names.push_str(&format!(" and {} more", n - NAMES_SHOWN));
    }
    let noun = if n == 1 { "server" } else { "servers" };
    format!("{n} {noun} {what}: {names}; {advice}")
}

/// What a kind says about the servers it names, and what to do; None: kept one per line
/// (failures, errors, and what concerns one run rather than a server).
fn phrase(kind: WarningKind) -> Option<(String, &'static str)> {
    use WarningKind as K;
    Some(match kind {
        K::Noisy => (
            format!(
                "noisy (CV above {:.0}%, marked {NOISY_MARK})",
                NOISY_CV * 100.0
            ),
            "ranks uncertain; run more laps",
        ),
        K::OutlierLap => (
            "with an outlier lap".into(),
            "kept in the statistics; a busy machine?",
        ),
        K::FewLaps => (
            format!("with fewer than {MIN_LAPS_FOR_BOOTSTRAP} successful laps"),
            "intervals are min..max ranges; run more laps",
        ),
        K::ClientSaturated => (
            "limited by a saturated load generator".into(),
            "their figures are lower bounds; give the client more CPUs",
        ),
        K::LongTail => (
            "with a long latency tail (p99.9 far above p50)".into(),
            "see each one's percentiles",
        ),
        K::UnusedCpus => (
            "using clearly fewer cores than they were pinned to".into(),
            "more workers or threads may help them",
        ),
        K::NeitherBusy => (
            "bounded by neither the client nor the server CPU".into(),
            "something else limits them",
        ),
        K::KnownDeviation => (
            "declaring deviations from the contract (marked ~)".into(),
            "`serverbench list --json` gives the reasons",
        ),
        K::Disturbed => (
            "with disturbed laps (marked !)".into(),
            "the line under each table says by what; --drop-disturbed leaves them out",
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(server: &str) -> Warning {
        Warning {
            kind: WarningKind::Noisy,
            scenario: "hello".into(),
            profile: "c64".into(),
            server: Some(server.into()),
            message: format!("{server} (hello, c64): noisy, req/s varies 9.0% between laps"),
        }
    }

    #[test]
    fn many_noisy_servers_make_one_line_and_detail_keeps_each() {
        let ids: Vec<String> = (0..30).map(|i| format!("lang/server-{i}")).collect();
        let ws: Vec<Warning> = ids.iter().map(|s| noisy(s)).collect();
        let short = section(&ws, false);
        assert!(
            short.contains("30 servers noisy (CV above 5%, marked ?): lang/server-0, "),
            "{short}"
        );
        assert!(
            short.contains("and 22 more; ranks uncertain; run more laps"),
            "{short}"
        );
        assert!(short.lines().count() <= 5, "{short}");
        assert_eq!(section(&ws, true).lines().count(), 31);
    }

    #[test]
    fn a_single_warning_of_a_kind_keeps_its_sentence() {
        let text = section(&[noisy("c/nginx")], false);
        assert!(
            text.contains("c/nginx (hello, c64): noisy, req/s varies 9.0%"),
            "{text}"
        );
        assert!(!text.contains("report DIR --warnings"), "{text}");
    }
}
