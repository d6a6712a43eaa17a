//! WebSocket laps whose server closed connections unasked or left upgrades unanswered: one
//! warning per server x scenario x profile, with the close codes and the causes summed over
//! its successful laps. Each such close costs the client a new connection and upgrade, which
//! the msg/s figure does not separate.

use crate::warnings::{Warning, WarningKind};
use serverbench_model::result::WsResult;
use serverbench_results::record::{LapRecord, LapStatus};
use std::collections::BTreeMap;

/// One warning per server x scenario x profile whose WebSocket laps saw an unexpected close,
/// a failed upgrade or an upgrade unanswered at the end.
pub(crate) fn diagnose(records: &[LapRecord]) -> Vec<Warning> {
    let mut groups: Vec<(&LapRecord, Vec<&WsResult>)> = Vec::new();
    for r in records.iter().filter(|r| r.status == LapStatus::Ok) {
        let Some(ws) = r.load.as_ref().and_then(|m| m.ws.as_ref()) else {
            continue;
        };
        let key = |x: &LapRecord| (x.server.clone(), x.scenario.clone(), x.profile.clone());
        match groups.iter_mut().find(|(first, _)| key(first) == key(r)) {
            Some((_, laps)) => laps.push(ws),
            None => groups.push((r, vec![ws])),
        }
    }
    groups
        .into_iter()
        .filter_map(|(first, laps)| warning(first, &laps))
        .collect()
}

fn add(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, n) in from {
        *into.entry(k.clone()).or_insert(0) += n;
    }
}

fn listed(m: &BTreeMap<String, u64>, sep: &str) -> String {
    let parts: Vec<String> = m.iter().map(|(k, n)| format!("{k}{sep}{n}")).collect();
    parts.join(", ")
}

fn warning(first: &LapRecord, laps: &[&WsResult]) -> Option<Warning> {
    let (mut codes, mut failures) = (BTreeMap::new(), BTreeMap::new());
    let (mut unexpected, mut unanswered) = (0, 0);
    for w in laps {
        add(&mut codes, &w.close_codes);
        add(&mut failures, &w.upgrade_failures);
        unexpected += w
            .protocol_errors
            .get("unexpected close")
            .copied()
            .unwrap_or(0);
        unanswered += w.upgrades_unanswered;
    }
    let failed: u64 = failures.values().sum();
    if unexpected + failed + unanswered == 0 {
        return None;
    }
    let mut said = Vec::new();
    if unexpected > 0 {
        said.push(format!(
            "the server closed {unexpected} WebSocket connections unasked (closes {})",
            listed(&codes, " ×")
        ));
    }
    if failed > 0 {
        said.push(format!(
            "{failed} upgrades failed ({})",
            listed(&failures, " ")
        ));
    }
    if unanswered > 0 {
        said.push(format!(
            "{unanswered} upgrades were unanswered at a lap's end"
        ));
    }
    let message = format!(
        "{} ({}, {}): over {} laps {}. Each costs the client a new connection and upgrade, \
         which msg/s does not separate; see the server's log.",
        first.server,
        first.scenario,
        first.profile,
        laps.len(),
        said.join(", and ")
    );
    Some(Warning {
        kind: WarningKind::WsCloses,
        scenario: first.scenario.clone(),
        profile: first.profile.clone(),
        server: Some(first.server.clone()),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_results::record::Measurement;

    fn lap(server: &str, ws: WsResult) -> LapRecord {
        let mut r = crate::fixture::lap();
        (r.server, r.scenario) = (server.to_string(), "websocket".to_string());
        r.load = Some(Measurement {
            ws: Some(ws),
            ..Measurement::default()
        });
        r
    }

    #[test]
    fn unexpected_closes_are_summed_over_the_laps_with_their_codes() {
        let closing = WsResult {
            close_codes: [("1011".to_string(), 3)].into(),
            protocol_errors: [("unexpected close".to_string(), 3)].into(),
            ..WsResult::default()
        };
        let fine = WsResult {
            close_codes: [("1000".to_string(), 5)].into(),
            ..WsResult::default()
        };
        let records = [
            lap("node/ws", closing.clone()),
            lap("node/ws", closing),
            lap("go/net-http", fine),
        ];
        let w = diagnose(&records);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].server.as_deref(), Some("node/ws"));
        assert!(
            w[0].message.contains(
                "over 2 laps the server closed 6 WebSocket connections \
                                   unasked (closes 1011 ×6)"
            ),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn failed_and_unanswered_upgrades_are_named() {
        let ws = WsResult {
            upgrade_failures: [("timeout".to_string(), 4)].into(),
            upgrades_unanswered: 2,
            ..WsResult::default()
        };
        let w = diagnose(&[lap("node/ws", ws)]);
        assert!(
            w[0].message
                .contains("4 upgrades failed (timeout 4), and 2 upgrades were"),
            "{}",
            w[0].message
        );
    }
}
