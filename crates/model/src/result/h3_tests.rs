use super::*;
use crate::result::{Histograms, LoadResult, ProtocolPart, ProtocolResult};

fn part(n: u64, limit: Option<u64>, gso: bool) -> Http3Result {
    Http3Result {
        streams: 16,
        max_streams_bidi: limit,
        qpack_max_table_capacity: limit.map(|l| l * 10),
        goaways: n,
        zero_rtt: Some(ZeroRttResult {
            attempted: 2 * n,
            accepted: n,
        }),
        quic: QuicCounters {
            datagrams_sent: 10 * n,
            datagrams_received: 20 * n,
            send_calls: n,
            recv_calls: 2 * n,
            bytes_sent: 1000 * n,
            bytes_received: 3000 * n,
            packets_lost: n,
            bytes_lost: 100 * n,
            congestion_events: n,
            gso,
            gro: true,
            socket: QuicSocket::Shared,
        },
        transport_errors: [("PROTOCOL_VIOLATION".to_string(), n)].into(),
        h3_errors: [("H3_MESSAGE_ERROR".to_string(), n)].into(),
        stream_resets: 3 * n,
        ..Default::default()
    }
}

#[test]
fn http3_parts_add_their_counters_and_maps_and_keep_the_smallest_limit_seen() {
    let (a, b) = (part(1, None, true), part(2, Some(100), true));
    let c = part(4, Some(50), true);
    let m = Http3Result::merge(&[&a, &b, &c], Vec::new());
    assert_eq!((m.goaways, m.stream_resets), (7, 21));
    assert_eq!(
        m.zero_rtt,
        Some(ZeroRttResult {
            attempted: 14,
            accepted: 7
        })
    );
    let q = &m.quic;
    assert_eq!((q.datagrams_sent, q.datagrams_received), (70, 140));
    assert_eq!((q.send_calls, q.recv_calls, q.bytes_lost), (7, 14, 700));
    assert_eq!((q.packets_lost, q.congestion_events), (7, 7));
    assert_eq!(q.datagrams_per_send(), Some(10.0));
    assert_eq!((q.socket, q.gso, q.gro), (QuicSocket::Shared, true, true));
    assert_eq!(m.transport_errors["PROTOCOL_VIOLATION"], 7);
    assert_eq!(m.h3_errors["H3_MESSAGE_ERROR"], 7);
    assert_eq!(
        m.max_streams_bidi,
        Some(50),
        "the smallest of the limits seen"
    );
    assert_eq!(m.qpack_max_table_capacity, Some(500));
    assert_eq!(m.streams, 16);
}

#[test]
fn gso_and_gro_hold_in_a_merge_only_when_every_part_had_them() {
    let (a, b) = (part(1, None, true), part(1, None, false));
    assert!(!Http3Result::merge(&[&a, &b], Vec::new()).quic.gso);
    assert!(Http3Result::merge(&[&a, &a], Vec::new()).quic.gso);
    let none = part(1, None, true);
    let without = Http3Result {
        zero_rtt: None,
        ..none
    };
    assert_eq!(Http3Result::merge(&[&without], Vec::new()).zero_rtt, None);
    assert_eq!(QuicCounters::default().datagrams_per_recv(), None);
}

#[test]
fn a_merge_of_merges_is_the_merge_of_all_the_parts() {
    let ps = [
        part(1, Some(80), true),
        part(2, None, false),
        part(3, Some(40), true),
        part(5, Some(60), true),
    ];
    let all: Vec<&Http3Result> = ps.iter().collect();
    let whole = Http3Result::merge(&all, Vec::new());
    let left = Http3Result::merge(&all[..2], Vec::new());
    let right = Http3Result::merge(&all[2..], Vec::new());
    assert_eq!(Http3Result::merge(&[&left, &right], Vec::new()), whole);
}

#[test]
fn the_protocol_merge_of_http3_parts_is_the_blocks_merge_and_refuses_another_workload() {
    let (a, b) = (part(1, Some(9), true), part(2, Some(7), true));
    let rs = [
        ProtocolResult::Http3(a.clone()),
        ProtocolResult::Http3(b.clone()),
    ];
    let h = Histograms::default();
    let parts: Vec<ProtocolPart<'_>> = rs
        .iter()
        .map(|p| ProtocolPart {
            protocol: p,
            histograms: Some(&h),
        })
        .collect();
    let merged = LoadResult::default();
    let m = ProtocolResult::merge(&parts, &merged, &mut Histograms::default()).unwrap();
    assert_eq!(
        m,
        ProtocolResult::Http3(Http3Result::merge(&[&a, &b], Vec::new()))
    );
    assert_eq!(m.workload(), crate::Workload::Http3);
    let h2 = ProtocolResult::Http2(Default::default());
    let mixed = [
        parts[0],
        ProtocolPart {
            protocol: &h2,
            histograms: None,
        },
    ];
    let e = ProtocolResult::merge(&mixed, &merged, &mut Histograms::default()).unwrap_err();
    assert_eq!(e.part(), 1);
}

#[test]
fn an_http3_block_round_trips_through_json_with_its_socket_spelled_in_kebab_case() {
    let p = ProtocolResult::Http3(part(1, Some(100), true));
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains(r#""workload":"http3""#), "{json}");
    assert!(json.contains(r#""socket":"shared""#), "{json}");
    assert!(!json.contains(r#""mix""#), "{json}");
    assert_eq!(serde_json::from_str::<ProtocolResult>(&json).unwrap(), p);
    assert_eq!(QuicSocket::PerConnection.to_string(), "per-connection");
}

#[test]
fn an_http3_load_without_a_handshake_says_whether_any_datagram_came_back_or_what_closed_it() {
    let silent = Http3Result {
        quic: QuicCounters {
            datagrams_sent: 12,
            ..Default::default()
        },
        ..Default::default()
    };
    let r = |h: &Http3Result, requests| LoadResult {
        requests,
        protocol: ProtocolResult::Http3(h.clone()),
        ..Default::default()
    };
    let why = r(&silent, 0).no_success().unwrap();
    assert!(why.starts_with("no QUIC handshake completed: 12 datagrams sent, none answered"));
    let refused = Http3Result {
        quic: QuicCounters {
            datagrams_sent: 2,
            datagrams_received: 1,
            ..Default::default()
        },
        transport_errors: [("CRYPTO_ERROR 0x178".to_string(), 4)].into(),
        ..Default::default()
    };
    let why = r(&refused, 0).no_success().unwrap();
    assert_eq!(
        why,
        "no QUIC handshake completed: connections closed by CRYPTO_ERROR 0x178 4"
    );
    assert_eq!(silent.no_success(&r(&silent, 5)), None);
}
