//! The HTTP/3 side of a protocol row ([`crate::protocol::ProtocolRow::h3`]): the streams asked
//! for and the server's limit, req/s beside HTTP/2 and HTTP/1.1 over TLS on the same server,
//! paths and profile, 0-RTT accepted of attempted, datagrams per send and receive call, the
//! packets lost, and the closes and resets by code. Counts are summed over the successful laps
//! (the ratios are of the medians); nothing is averaged.

use crate::protocol::StreamLimit;
use serde::Serialize;
use serverbench_model::result::{Http3Result, QuicCounters, ZeroRttResult};
use serverbench_model::Protocol;
use serverbench_results::record::LapRecord;
use std::collections::BTreeMap;

/// HTTP/3 laps of one server x scenario x profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct H3Figures {
    /// Streams per connection asked for.
    pub streams: u32,
    /// The server's `initial_max_streams_bidi` (the smallest any lap saw).
    pub max_streams_bidi: StreamLimit,
    /// Median req/s of HTTP/2 over TLS and of HTTP/1.1 over TLS (keep-alive) on the same
    /// server, paths and profile, and this row's median over each.
    pub h2_rps: Option<f64>,
    pub ratio_to_h2: Option<f64>,
    pub h1_rps: Option<f64>,
    pub ratio_to_h1: Option<f64>,
    /// `--0rtt`: summed over the laps.
    pub zero_rtt: Option<ZeroRttResult>,
    /// Datagrams per send and receive call over every lap (None: no call).
    pub datagrams_per_send: Option<f64>,
    pub datagrams_per_recv: Option<f64>,
    /// Whether every lap sent with GSO and received with GRO.
    pub gso: bool,
    pub gro: bool,
    pub packets_lost: u64,
    /// Connection closes by QUIC transport error, and resets and closes by HTTP/3 error.
    pub transport_errors: BTreeMap<String, u64>,
    pub h3_errors: BTreeMap<String, u64>,
    pub stream_resets: u64,
}

/// The HTTP/3 figures of `laps` (one server x scenario x profile), `None` when no lap kept an
/// HTTP/3 block. `rps` is the row's median; `all` every group of the run (for the partners).
pub fn h3_figures(
    laps: &[&LapRecord],
    rps: Option<f64>,
    all: &[Vec<&LapRecord>],
    median_rps: fn(&[&LapRecord]) -> Option<f64>,
) -> Option<H3Figures> {
    let blocks: Vec<&Http3Result> = laps
        .iter()
        .filter_map(|r| r.load.as_ref()?.http3.as_ref())
        .collect();
    let first = blocks.first()?;
    let merged = Http3Result::merge(&blocks, Vec::new());
    let quic: Vec<&QuicCounters> = blocks.iter().map(|b| &b.quic).collect();
    let q = QuicCounters::merge(&quic);
    let partner = |p: Protocol| {
        let g = all.iter().find(|o| is_partner(o[0], laps[0], p))?;
        median_rps(g)
    };
    let ratio = |of: Option<f64>| match (rps, of) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let (h2_rps, h1_rps) = (partner(Protocol::H2), partner(Protocol::H1));
    Some(H3Figures {
        streams: laps[0].params.transport.streams.unwrap_or(first.streams),
        max_streams_bidi: match merged.max_streams_bidi {
            Some(n) => StreamLimit::Max(n.min(u64::from(u32::MAX)) as u32),
            None => StreamLimit::NotReported,
        },
        h2_rps,
        ratio_to_h2: ratio(h2_rps),
        h1_rps,
        ratio_to_h1: ratio(h1_rps),
        zero_rtt: merged.zero_rtt,
        datagrams_per_send: q.datagrams_per_send(),
        datagrams_per_recv: q.datagrams_per_recv(),
        gso: q.gso,
        gro: q.gro,
        packets_lost: q.packets_lost,
        transport_errors: merged.transport_errors,
        h3_errors: merged.h3_errors,
        stream_resets: merged.stream_resets,
    })
}

/// A keep-alive lap over TLS with protocol `p` on the same server, profile and paths as `h3`;
/// over h2, with as many streams per connection (h3 at 16 streams beside h2 at 16, not at 1).
fn is_partner(o: &LapRecord, h3: &LapRecord, p: Protocol) -> bool {
    let (a, b) = (&o.params, &h3.params);
    let streams = |t: &serverbench_model::Transport| t.streams.unwrap_or(1);
    let same_streams = p != Protocol::H2 || streams(&a.transport) == streams(&b.transport);
    same_streams
        && o.server == h3.server
        && o.profile == h3.profile
        && a.work.paths == b.work.paths
        && a.work.mode == b.work.mode
        && a.transport.protocol == p
        && a.transport.tls
        && !a.transport.new_conn
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::result::QuicSocket;
    use serverbench_model::Transport;
    use serverbench_results::record::Measurement;

    fn lap(server: &str, protocol: Protocol, rps: f64, h3: Option<Http3Result>) -> LapRecord {
        let mut r = crate::fixture::lap();
        (r.server, r.profile) = (server.into(), "c16".into());
        r.params.work.paths = vec!["/hello".into()];
        r.params.transport = Transport {
            protocol,
            tls: true,
            ..Transport::default()
        };
        r.load = Some(Measurement {
            rps: Some(rps),
            http3: h3,
            ..Measurement::default()
        });
        r
    }

    fn block(sent: u64, lost: u64, limit: Option<u64>) -> Http3Result {
        Http3Result {
            streams: 16,
            max_streams_bidi: limit,
            zero_rtt: Some(ZeroRttResult {
                attempted: 10,
                accepted: 9,
            }),
            quic: QuicCounters {
                datagrams_sent: sent,
                send_calls: sent / 4,
                packets_lost: lost,
                gso: true,
                socket: QuicSocket::PerConnection,
                ..QuicCounters::default()
            },
            h3_errors: [("H3_REQUEST_REJECTED".to_string(), 1)].into(),
            stream_resets: 1,
            ..Http3Result::default()
        }
    }

    fn median(laps: &[&LapRecord]) -> Option<f64> {
        let v: Vec<f64> = laps.iter().filter_map(|r| r.load.as_ref()?.rps).collect();
        crate::stats::Stats::of(&v).map(|s| s.median)
    }

    #[test]
    fn http3_laps_sum_their_counts_and_stand_beside_h2_and_h1_over_tls() {
        let (a, b) = (
            lap(
                "rust/quinn-h3",
                Protocol::H3,
                30_000.0,
                Some(block(400, 2, Some(100))),
            ),
            lap(
                "rust/quinn-h3",
                Protocol::H3,
                30_000.0,
                Some(block(800, 1, Some(50))),
            ),
        );
        let h2 = lap("rust/quinn-h3", Protocol::H2, 60_000.0, None);
        let h1 = lap("rust/quinn-h3", Protocol::H1, 40_000.0, None);
        let other = lap("go/quic-go-http3", Protocol::H2, 1.0, None);
        let all = vec![vec![&a, &b], vec![&h2], vec![&h1], vec![&other]];
        let f = h3_figures(&[&a, &b], Some(30_000.0), &all, median).unwrap();
        assert_eq!((f.streams, f.packets_lost, f.stream_resets), (16, 3, 2));
        assert_eq!(f.max_streams_bidi, StreamLimit::Max(50));
        assert_eq!((f.h2_rps, f.ratio_to_h2), (Some(60_000.0), Some(0.5)));
        assert_eq!((f.h1_rps, f.ratio_to_h1), (Some(40_000.0), Some(0.75)));
        assert_eq!(
            f.zero_rtt.map(|z| (z.attempted, z.accepted)),
            Some((20, 18))
        );
        assert_eq!(f.datagrams_per_send, Some(4.0));
        assert_eq!(f.datagrams_per_recv, None);
        assert!(f.gso && !f.gro);
        assert_eq!(f.h3_errors["H3_REQUEST_REJECTED"], 2);
        assert_eq!(h3_figures(&[&h2], None, &all, median), None);
    }

    #[test]
    fn http3_at_16_streams_stands_beside_h2_at_16_streams_not_at_one() {
        let with = |mut r: LapRecord, streams: u32| {
            r.params.transport.streams = Some(streams);
            r
        };
        let h3 = with(
            lap("s", Protocol::H3, 30_000.0, Some(block(4, 0, None))),
            16,
        );
        let h2_one = lap("s", Protocol::H2, 10_000.0, None);
        let h2_16 = with(lap("s", Protocol::H2, 60_000.0, None), 16);
        let all = vec![vec![&h3], vec![&h2_one], vec![&h2_16]];
        let f = h3_figures(&[&h3], Some(30_000.0), &all, median).unwrap();
        assert_eq!((f.h2_rps, f.ratio_to_h2), (Some(60_000.0), Some(0.5)));
        let only_one = vec![vec![&h3], vec![&h2_one]];
        let f = h3_figures(&[&h3], Some(30_000.0), &only_one, median).unwrap();
        assert_eq!(f.h2_rps, None);
    }

    #[test]
    fn a_server_that_accepts_no_0rtt_is_warned_about_naming_the_flag() {
        let mut none = block(400, 0, None);
        none.zero_rtt = Some(ZeroRttResult {
            attempted: 10,
            accepted: 0,
        });
        let mut a = lap("rust/quinn-h3", Protocol::H3, 1000.0, Some(none));
        a.params.transport.new_conn = true;
        let some = lap(
            "go/quic-go-http3",
            Protocol::H3,
            1000.0,
            Some(block(400, 0, None)),
        );
        let rows = crate::protocol::protocol_rows(&[a.clone(), some.clone()]);
        let warnings = crate::protocol::diagnose(&rows, &[a, some]);
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        let w = &warnings[0];
        assert_eq!(w.server.as_deref(), Some("rust/quinn-h3"));
        assert!(
            w.message.contains("accepted none of the 10 sent so") && w.message.contains("--0rtt"),
            "{}",
            w.message
        );
    }
}
