//! The warnings about one row of a table, each a plain sentence naming the server, the table
//! and the figure: failed laps, noise, too few laps, outlier laps, a saturated client, errors
//! and non-2xx responses above [`ERROR_RATE_WARN`]. Part of the one warnings pass of
//! [`crate::diagnostics::diagnose`].

use crate::stats;
use crate::summary::{ServerSummary, Table, ERROR_RATE_WARN};
use crate::warnings::{Warning, WarningKind};
use serverbench_model::Mode;

/// The warnings about one row: each a plain sentence naming the server, table and figure.
pub fn row_warnings(t: &Table, s: &ServerSummary) -> Vec<Warning> {
    let at = format!("{} ({}, {})", s.server, t.scenario, t.profile);
    // Stream, ping-pong and WebSocket laps count echoed messages, gRPC laps calls.
    let unit = t.mode.rate_unit();
    let mut out: Vec<(WarningKind, String)> = Vec::new();
    if s.failed_laps > 0 {
        let why = s
            .first_failure
            .as_ref()
            .map_or("no reason recorded", |f| f.detail.as_str());
        out.push((
            WarningKind::FailedLaps,
            format!(
                "{at}: {} of {} laps failed; the first: {why}",
                s.failed_laps, s.laps
            ),
        ));
    }
    if let Some(r) = s.rps {
        let laps = s
            .lap_rps
            .iter()
            .map(|l| format!("lap {} {:.0}", l.lap, l.rps))
            .collect::<Vec<_>>();
        if s.noisy {
            out.push((WarningKind::Noisy, format!(
                "{at}: noisy, {unit} varies {:.1}% between laps (CV above {:.0}%): {}; its rank is uncertain.",
                r.cv * 100.0, stats::NOISY_CV * 100.0, laps.join(", ")
            )));
        }
        if r.n < stats::MIN_LAPS_FOR_BOOTSTRAP {
            out.push((WarningKind::FewLaps, format!(
                "{at}: only {} successful lap(s), so the {unit} interval is the min..max range, not a bootstrap interval.",
                r.n
            )));
        }
        let values: Vec<f64> = s.lap_rps.iter().map(|l| l.rps).collect();
        for i in stats::tukey_outliers(&values) {
            out.push((WarningKind::OutlierLap, format!(
                "{at}: lap {} ({:.0} {unit}) is an outlier (outside Tukey's 1.5 IQR fences); it is kept in the statistics.",
                s.lap_rps[i].lap, s.lap_rps[i].rps
            )));
        }
        if s.client_saturated {
            let figure = match s.mbps_down {
                Some(mbps) if t.mode.is_stream() => format!("{mbps:.0} Mbps down"),
                _ => format!("{:.0} req/s", r.median),
            };
            out.push((WarningKind::ClientSaturated, format!(
                "{at}: the load generator's CPU was saturated, so {figure} is a lower bound for this server."
            )));
        }
    }
    out.extend(error_warnings(&at, s, t.mode));
    out.into_iter()
        .map(|(kind, message)| Warning {
            kind,
            scenario: t.scenario.clone(),
            profile: t.profile.clone(),
            server: Some(s.server.clone()),
            message,
        })
        .collect()
}

/// Errors and non-2xx responses above [`ERROR_RATE_WARN`].
fn error_warnings(at: &str, s: &ServerSummary, mode: Mode) -> Vec<(WarningKind, String)> {
    let mut out = Vec::new();
    let (what, by) = match mode {
        Mode::Grpc => (
            "calls",
            "; the gRPC table names their status codes and causes",
        ),
        _ => ("requests", ""),
    };
    if s.error_rate.is_some_and(|e| e > ERROR_RATE_WARN) {
        out.push((
            WarningKind::Errors,
            format!(
                "{at}: {:.2}% of {what} failed ({} errors), above the {:.1}% threshold{by}.",
                s.error_rate.unwrap_or(0.0) * 100.0,
                s.errors,
                ERROR_RATE_WARN * 100.0
            ),
        ));
    }
    if s.requests > 0 && s.non_2xx as f64 / s.requests as f64 > ERROR_RATE_WARN {
        out.push((
            WarningKind::Non2xx,
            format!(
            "{at}: {:.2}% of responses were not 2xx ({} responses), above the {:.1}% threshold.",
            s.non_2xx as f64 * 100.0 / s.requests as f64, s.non_2xx, ERROR_RATE_WARN * 100.0
        ),
        ));
    }
    out
}
