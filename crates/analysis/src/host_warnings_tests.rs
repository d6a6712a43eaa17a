//! Tests of the client-host warnings, through the one pass of [`crate::analyze`].

use crate::warnings::WarningKind;
use serverbench_results::record::{ClientLap, HostsLap, LapRecord, Measurement};

/// A client host's share: `rps` req/s over 2 s with `connections`, not saturated.
fn client(host: &str, connections: u32, rps: f64, offset_ms: f64) -> ClientLap {
    ClientLap {
        host: host.into(),
        connections: Some(connections),
        start_offset_ms: Some(offset_ms),
        load: Measurement {
            rps: Some(rps),
            requests: Some((rps * 2.0) as u64),
            client_saturated: Some(false),
            ..Measurement::default()
        },
    }
}

/// Three healthy laps of `a/x` from two client hosts with 4 connections each: 500 req/s each,
/// started 0.2 ms apart.
fn laps(edit: impl Fn(&mut HostsLap)) -> Vec<LapRecord> {
    (1..=3)
        .map(|n| {
            let mut r = crate::fixture::lap();
            r.server = "a/x".into();
            r.lap = n;
            r.params.connections = 8;
            r.load = Some(Measurement {
                rps: Some(1000.0),
                requests: Some(2000),
                client_saturated: Some(false),
                ..Measurement::default()
            });
            let mut h = HostsLap {
                server_host: "sb-server".into(),
                start_skew_ms: Some(0.2),
                controller_cpu_s: 0.015,
                clients: vec![
                    client("sb-client1", 4, 500.0, 0.0),
                    client("sb-client2", 4, 500.0, 0.2),
                ],
            };
            edit(&mut h);
            if h.clients
                .iter()
                .any(|c| c.load.client_saturated == Some(true))
            {
                r.load.as_mut().unwrap().client_saturated = Some(true);
            }
            r.hosts = Some(h);
            r
        })
        .collect()
}

fn warnings(records: &[LapRecord]) -> Vec<(WarningKind, String)> {
    crate::analyze(records, None, None)
        .warnings
        .into_iter()
        .map(|w| (w.kind, w.message))
        .collect()
}

#[test]
fn healthy_client_hosts_raise_no_warning() {
    assert_eq!(warnings(&laps(|_| {})), []);
}

#[test]
fn a_saturated_client_host_is_named_with_its_laps_instead_of_the_generic_warning() {
    let w = warnings(&laps(|h| h.clients[1].load.client_saturated = Some(true)));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, WarningKind::HostSaturated);
    assert!(
        w[0].1
            .starts_with("a/x (hello, c1): client host sb-client2 saturated")
            && w[0].1.contains("lap 1, lap 2, lap 3")
            && w[0].1.contains("1000 req/s is a lower bound"),
        "{}",
        w[0].1
    );
}

#[test]
fn a_start_skew_above_one_millisecond_is_warned_about_with_its_laps() {
    let records: Vec<LapRecord> = laps(|_| {})
        .into_iter()
        .map(|mut r| {
            if r.lap == 2 {
                r.hosts.as_mut().unwrap().start_skew_ms = Some(1.75);
            }
            r
        })
        .collect();
    let w = warnings(&records);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, WarningKind::StartSkew);
    assert!(w[0].1.contains("(lap 2 1.75 ms)"), "{}", w[0].1);
    let at_one: Vec<LapRecord> = laps(|h| h.start_skew_ms = Some(1.0));
    assert_eq!(warnings(&at_one), [], "1 ms itself is within the goal");
}

#[test]
fn a_host_whose_request_share_is_off_its_connection_share_by_more_than_20_percent_is_named() {
    // Half the connections each; sb-client2 makes 39% of the requests (0.39 < 0.5 x 0.8).
    let w = warnings(&laps(|h| {
        h.clients[0].load.rps = Some(610.0);
        h.clients[1].load.rps = Some(390.0);
    }));
    let kinds: Vec<WarningKind> = w.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, [WarningKind::HostShare; 3], "one per lap");
    assert!(
        w[0].1.contains(
            "in lap 1, sb-client1 made 61% of the requests with 50% of the connections, \
             sb-client2 made 39% of the requests with 50% of the connections (more than 20% off)"
        ),
        "{}",
        w[0].1
    );
    let within = warnings(&laps(|h| {
        h.clients[0].load.rps = Some(590.0);
        h.clients[1].load.rps = Some(410.0);
    }));
    assert_eq!(within, [], "18% off is within the bound");
}

#[test]
fn unequal_connection_shares_are_the_expectation_not_equal_ones() {
    // 3 and 1 connections: 75% and 25% of the requests is as expected.
    let w = warnings(&laps(|h| {
        h.clients[0].connections = Some(3);
        h.clients[1].connections = Some(1);
        h.clients[0].load.rps = Some(750.0);
        h.clients[1].load.rps = Some(250.0);
    }));
    assert_eq!(w, []);
}
