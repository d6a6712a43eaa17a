//! The disturbance record of a lap: two cheap samples of the machine ([`sample`]) right before
//! and after the measured load, turned into a [`Disturbance`] with the lap's own figures (the
//! CPU seconds of our role trees and of the client, their involuntary context switches).
//!
//! Local placement only: over hosts (`run --hosts`) the load runs on other machines whose
//! `/proc` this one cannot read, so those laps record none.

use crate::results::record::LapRecord;
use serverbench_machine::disturbance::{between, sample, LapWindow, MachineSample};
use serverbench_machine::{procfs, Live};
use serverbench_model::disturbance::{Disturbance, Thresholds};
use serverbench_results::Role;
use std::time::Instant;

/// The machine at the start of a measured load.
pub(super) struct Before {
    sample: MachineSample,
    at: Instant,
}

/// Samples the machine now (the start of the measured load).
pub(super) fn before() -> Before {
    Before {
        sample: sample(&Live),
        at: Instant::now(),
    }
}

/// The lap's disturbance: samples the machine again and compares with `before`, `pinned` being
/// the CPUs of the server, the client and the database (empty: every CPU).
pub(super) fn after(before: Before, record: &LapRecord, pinned: Vec<usize>) -> Disturbance {
    let end = sample(&Live);
    let window = window(record, pinned, before.at.elapsed().as_secs_f64());
    between(&before.sample, &end, &window, &Thresholds::default())
}

/// What the lap knows of itself: our CPU seconds (every role tree sampled plus the client's own
/// CPU, when the client role was not sampled) and the involuntary context switches.
pub(super) fn window(record: &LapRecord, mut pinned: Vec<usize>, wall_s: f64) -> LapWindow {
    pinned.sort_unstable();
    pinned.dedup();
    let roles_cpu: f64 = Role::ALL
        .iter()
        .filter_map(|&r| record.stats(r))
        .map(|s| s.cpu_s)
        .sum();
    let client_cpu = match record.stats(Role::Client) {
        Some(_) => 0.0,
        None => record
            .load
            .as_ref()
            .and_then(|m| m.client_cpu_s)
            .unwrap_or(0.0),
    };
    LapWindow {
        wall_s,
        pinned,
        ours_cpu_s: roles_cpu + client_cpu,
        server_involuntary: record
            .stats(Role::Server)
            .map(|s| s.ctx_switches_involuntary),
        client_involuntary: record
            .stats(Role::Client)
            .map(|s| s.ctx_switches_involuntary),
        ticks_per_s: procfs::ticks_per_second(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::record::{Measurement, ServerStats};

    fn record() -> LapRecord {
        serde_json::from_str(
            r#"{"suite":"s","server":"a","scenario":"hello","profile":"c1","lap":1,"status":"ok",
            "failure":null,"tool":"serverbench","started_at":"t","wall_s":1.0,"params":{"mode":"http",
            "paths":["/hello"],"connections":1,"threads":1,"duration_s":1.0,"requests":null,
            "pipeline":1,"rate":null,"warmup_s":0.0,"message":null,"size":null},"load":null,
            "server_stats":null}"#,
        )
        .unwrap()
    }

    #[test]
    fn the_window_counts_every_role_tree_and_the_clients_own_cpu() {
        let mut r = record();
        r.set_stats(
            Role::Server,
            ServerStats {
                cpu_s: 1.5,
                ctx_switches_involuntary: 40,
                ..Default::default()
            },
        );
        r.set_stats(
            Role::Database,
            ServerStats {
                cpu_s: 0.5,
                ..Default::default()
            },
        );
        r.load = Some(Measurement {
            client_cpu_s: Some(1.0),
            ..Default::default()
        });
        let w = window(&r, vec![1, 0, 1], 2.0);
        assert_eq!(w.pinned, vec![0, 1]);
        assert!((w.ours_cpu_s - 3.0).abs() < 1e-9, "{w:?}");
        assert_eq!(w.server_involuntary, Some(40));
        assert_eq!(w.client_involuntary, None);
    }

    #[test]
    fn a_lap_sampled_around_a_sleep_on_this_machine_gives_a_record() {
        let b = before();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let r = record();
        let d = after(b, &r, Vec::new());
        assert!((0.0..=100.0).contains(&d.other_processes_pct), "{d:?}");
    }
}
