//! The warnings about the client hosts of a row's laps over several machines (`run --hosts`),
//! part of the one warnings pass of [`crate::diagnostics::diagnose`]:
//! - a client host whose load generator saturated (named, with its laps): the row's figure is
//!   a lower bound (it replaces the generic saturated-client warning of the row);
//! - client hosts that started measuring more than [`START_SKEW_WARN_MS`] apart;
//! - a host whose share of the requests is off its share of the connections by more than
//!   [`SHARE_DEVIATION`] (relative): its connections were faster or slower than the others'.

use crate::hosts::HostsLapSummary;
use crate::summary::{ServerSummary, Table};
use crate::warnings::{Warning, WarningKind};
use serverbench_results::record::LapStatus;

/// A start skew above this (ms) means the hosts' windows did not coincide closely: the goal of
/// the barrier is under 1 ms.
pub const START_SKEW_WARN_MS: f64 = 1.0;
/// A host's req/s share more than this fraction away from its connection share (0.2: a host
/// given half the connections making under 40% or over 60% of the requests).
pub const SHARE_DEVIATION: f64 = 0.20;

/// The host warnings of row `s` of `table`; `laps` are every lap over several machines.
pub fn host_warnings(table: &Table, s: &ServerSummary, laps: &[HostsLapSummary]) -> Vec<Warning> {
    let laps: Vec<&HostsLapSummary> = laps
        .iter()
        .filter(|l| l.status == LapStatus::Ok && l.server == s.server)
        .filter(|l| l.scenario == table.scenario && l.profile == table.profile)
        .collect();
    let at = format!("{} ({}, {})", s.server, table.scenario, table.profile);
    let mut out: Vec<(WarningKind, String)> = Vec::new();
    out.extend(saturated(&at, table, s, &laps));
    out.extend(skew(&at, &laps));
    out.extend(shares(&at, &laps));
    out.into_iter()
        .map(|(kind, message)| Warning {
            kind,
            scenario: table.scenario.clone(),
            profile: table.profile.clone(),
            server: Some(s.server.clone()),
            message,
        })
        .collect()
}

/// `lap 1, lap 3`.
fn lap_list(laps: &[u32]) -> String {
    let v: Vec<String> = laps.iter().map(|n| format!("lap {n}")).collect();
    v.join(", ")
}

/// The hosts, in first-seen order, with the laps where they saturated.
fn saturated(
    at: &str,
    table: &Table,
    s: &ServerSummary,
    laps: &[&HostsLapSummary],
) -> Vec<(WarningKind, String)> {
    let mut hosts: Vec<(&str, Vec<u32>)> = Vec::new();
    for l in laps {
        for c in l.clients.iter().filter(|c| c.client_saturated) {
            match hosts.iter_mut().find(|(h, _)| *h == c.host) {
                Some((_, v)) => v.push(l.lap),
                None => hosts.push((&c.host, vec![l.lap])),
            }
        }
    }
    let figure = match (s.mbps_down, s.rps) {
        (Some(mbps), _) if table.mode.is_stream() => format!("{mbps:.0} Mbps down"),
        (_, Some(r)) => format!("{:.0} req/s", r.median),
        _ => "the figure".to_owned(),
    };
    hosts
        .into_iter()
        .map(|(host, v)| {
            let message = format!(
                "{at}: client host {host} saturated (its load generator used at least 90% of its \
                 CPUs; {}), so {figure} is a lower bound for this server: add client hosts or \
                 move connections off {host}.",
                lap_list(&v)
            );
            (WarningKind::HostSaturated, message)
        })
        .collect()
}

fn skew(at: &str, laps: &[&HostsLapSummary]) -> Option<(WarningKind, String)> {
    let over: Vec<String> = laps
        .iter()
        .filter_map(|l| {
            let ms = l.start_skew_ms.filter(|ms| *ms > START_SKEW_WARN_MS)?;
            Some(format!("lap {} {ms:.2} ms", l.lap))
        })
        .collect();
    if over.is_empty() {
        return None;
    }
    let message = format!(
        "{at}: the client hosts started measuring more than {START_SKEW_WARN_MS:.0} ms apart \
         ({}), so their windows did not coincide: look for busy client hosts or, across \
         machines, unsynchronised clocks (serverbench hosts check).",
        over.join(", ")
    );
    Some((WarningKind::StartSkew, message))
}

/// One warning per lap whose hosts' request shares are off their connection shares.
fn shares(at: &str, laps: &[&HostsLapSummary]) -> Vec<(WarningKind, String)> {
    let mut out = Vec::new();
    for l in laps {
        let rps: f64 = l.clients.iter().filter_map(|c| c.rps).sum();
        let conns: u32 = l.clients.iter().filter_map(|c| c.connections).sum();
        if rps <= 0.0 || conns == 0 {
            continue;
        }
        let off: Vec<String> = l
            .clients
            .iter()
            .filter_map(|c| {
                let (r, n) = (c.rps?, c.connections.filter(|n| *n > 0)?);
                let (share, expected) = (r / rps, f64::from(n) / f64::from(conns));
                ((share - expected).abs() > SHARE_DEVIATION * expected).then(|| {
                    format!(
                        "{} made {:.0}% of the requests with {:.0}% of the connections",
                        c.host,
                        share * 100.0,
                        expected * 100.0
                    )
                })
            })
            .collect();
        if off.is_empty() {
            continue;
        }
        let message = format!(
            "{at}: in lap {}, {} (more than {:.0}% off): some hosts' connections were slower than \
             the others' — a busier host or a different path to the server.",
            l.lap,
            off.join(", "),
            SHARE_DEVIATION * 100.0
        );
        out.push((WarningKind::HostShare, message));
    }
    out
}

#[cfg(test)]
#[path = "host_warnings_tests.rs"]
mod tests;
