//! The WebSocket block of a result: upgrades, messages sent, closes by code, failures by
//! cause, and why a load whose upgrades all failed measured nothing.

use super::{Latency, LoadResult, Throughput};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The WebSocket side of a run (mode `ws`): `requests` counts echoed messages (or pongs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WsResult {
    /// `text`, `binary` or `ping` (ping frames answered by pongs).
    pub message_kind: String,
    /// Bytes of each message's payload.
    pub message_size: u64,
    /// `--reconnect-every`: messages per connection before it is closed (1000) and reopened.
    pub reconnect_every: Option<u64>,
    /// Messages sent during measurement (a message in flight at the end is sent, not echoed).
    pub messages_sent: u64,
    /// Upgrades (HTTP 101, accept key checked) completed during measurement, per second, and
    /// how long each took (from the connection being up to the 101 read).
    pub upgrades: u64,
    pub upgrades_per_s: f64,
    pub upgrade_latency_us: Latency,
    /// Failed upgrades by cause (`status`, `missing accept`, `wrong accept`, `timeout`: no
    /// answer within `--timeout`, `closed before answering`...).
    pub upgrade_failures: BTreeMap<String, u64>,
    /// Closes by code: each close frame the server sent (`1000`, `1011`...; `1005` for one
    /// without a code) and `1006` for a connection that ended without one, by EOF or a read or
    /// write error (RFC 6455, 7.4.1).
    /// Results written before 1005 and 1006 were counted say `none` for a close without a code.
    pub close_codes: BTreeMap<String, u64>,
    /// Protocol errors by cause (`masked frame`, `bad opcode`, `wrong echo`, `unexpected
    /// close`: a close the client did not ask for, `close timeout`...): each fails its
    /// connection.
    pub protocol_errors: BTreeMap<String, u64>,
    /// Upgrades sent and not answered when the run ended. Absent from older results.
    #[serde(default)]
    pub upgrades_unanswered: u64,
    /// Megabits per second each way and bytes per connection (beside the block before
    /// schema version 2; 0 in lap records written before).
    #[serde(flatten)]
    pub throughput: Throughput,
}

impl WsResult {
    /// Why no message was echoed when no upgrade succeeded (each failed, timed out or was
    /// still unanswered at the end), naming the causes; `None` otherwise.
    pub fn no_success(&self, r: &LoadResult) -> Option<String> {
        if r.requests > 0 || self.upgrades > 0 {
            return None;
        }
        let mut causes: Vec<String> = self
            .upgrade_failures
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        if self.upgrades_unanswered > 0 {
            causes.push(format!(
                "{} unanswered when the run ended",
                self.upgrades_unanswered
            ));
        }
        (!causes.is_empty())
            .then(|| format!("no WebSocket upgrade succeeded ({})", causes.join(", ")))
    }
}

#[cfg(test)]
mod ws_tests {
    use super::*;
    use crate::result::ProtocolResult;

    fn ws_load(ws: WsResult, requests: u64) -> LoadResult {
        LoadResult {
            requests,
            protocol: ProtocolResult::WebSocket(ws),
            ..Default::default()
        }
    }

    #[test]
    fn a_ws_load_whose_upgrades_all_went_unanswered_succeeded_at_nothing() {
        let ws = WsResult {
            upgrade_failures: [("timeout".to_string(), 4)].into(),
            upgrades_unanswered: 2,
            ..Default::default()
        };
        let why = ws_load(ws, 0).no_success().unwrap();
        assert_eq!(
            why,
            "no WebSocket upgrade succeeded (timeout 4, 2 unanswered when the run ended)"
        );
    }

    #[test]
    fn a_ws_load_with_an_upgrade_or_an_echo_is_not_judged_by_its_upgrades() {
        let unanswered = WsResult {
            upgrades_unanswered: 1,
            ..Default::default()
        };
        assert_eq!(ws_load(unanswered.clone(), 5).no_success(), None);
        let upgraded = WsResult {
            upgrades: 1,
            ..unanswered
        };
        assert_eq!(ws_load(upgraded, 0).no_success(), None);
    }

    #[test]
    fn a_ws_block_written_before_unanswered_upgrades_were_counted_still_reads() {
        let old = r#"{"message_kind":"text","message_size":11,"reconnect_every":null,
            "messages_sent":3,"upgrades":1,"upgrades_per_s":1.0,"upgrade_latency_us":
            {"mean":1.0,"stdev":0.0,"max":1.0,"p50":1.0,"p75":1.0,"p90":1.0,"p99":1.0,
            "p999":1.0,"p9999":1.0},"upgrade_failures":{},"close_codes":{"none":1},
            "protocol_errors":{}}"#;
        let w: WsResult = serde_json::from_str(old).unwrap();
        assert_eq!((w.upgrades_unanswered, w.close_codes["none"]), (0, 1));
    }
}
