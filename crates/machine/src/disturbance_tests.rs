use super::*;
use crate::Recorded;
use serverbench_model::disturbance::Cause;
use std::path::PathBuf;

fn recorded(name: &str) -> MachineSample {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    sample(&Recorded { root })
}

fn lap(ours_cpu_s: f64) -> LapWindow {
    LapWindow {
        wall_s: 10.0,
        pinned: vec![0, 1],
        ours_cpu_s,
        ticks_per_s: 100.0,
        ..Default::default()
    }
}

#[test]
fn a_quiet_lap_is_not_disturbed() {
    let d = between(
        &recorded("quiet-start"),
        &recorded("quiet-end"),
        &lap(19.0),
        &Thresholds::default(),
    );
    // 19.1 s of task time on two CPUs over 10 s, 19.0 s of it ours: 0.5% others.
    assert!((d.other_processes_pct - 0.5).abs() < 1e-9, "{d:?}");
    // 5 ticks of steal in 2,000 ticks of CPU time... plus the idle: 5 / 2,100.
    assert!(d.steal_pct < 0.3, "{d:?}");
    assert_eq!(d.memory_pressure_pct, Some(0.0));
    assert_eq!(d.cpu_pressure_pct, Some(80.0));
    assert!(!d.is_disturbed(), "{d:?}");
    assert_eq!(d.summary(), "");
}

#[test]
fn a_busy_loop_steal_memory_stalls_and_throttling_are_each_named() {
    let d = between(
        &recorded("noisy-start"),
        &recorded("noisy-end"),
        &lap(14.0),
        &Thresholds::default(),
    );
    // cpu0 fully busy (1,000 ticks) + cpu1 960 ticks = 19.6 s, ours 14.0 s: 5.6 s of 20 s.
    assert!((d.other_processes_pct - 28.0).abs() < 1e-9, "{d:?}");
    // 295 ticks of steal in 2,275 ticks of both CPUs: 13.0%.
    assert!(d.steal_pct > 10.0, "{d:?}");
    assert!((d.memory_pressure_pct.unwrap() - 8.0).abs() < 1e-9, "{d:?}");
    assert_eq!(d.throttle_events, 2);
    assert_eq!(d.loadavg, Some(3.10));
    let kinds: Vec<&str> = d
        .causes
        .iter()
        .map(|c| match c {
            Cause::Steal { .. } => "steal",
            Cause::OtherProcesses { .. } => "others",
            Cause::MemoryPressure { .. } => "memory",
            Cause::CpuPressure { .. } => "cpu",
            Cause::Throttling { .. } => "throttling",
        })
        .collect();
    // 8.5 s of 10 s waiting for a CPU, with others on the CPUs: CPU pressure too.
    assert_eq!(kinds, ["steal", "others", "memory", "cpu", "throttling"]);
    assert!(
        d.summary().starts_with("steal 13.0%, other processes 28%"),
        "{}",
        d.summary()
    );
}

#[test]
fn cpu_pressure_is_a_cause_only_with_others_on_the_pinned_cpus() {
    // The quiet lap reads 80% CPU pressure, the benchmark's own: not a cause with 0.5% others.
    let quiet = between(
        &recorded("quiet-start"),
        &recorded("quiet-end"),
        &lap(19.0),
        &Thresholds::default(),
    );
    assert!(!quiet.is_disturbed(), "{quiet:?}");
    // A busy loop sharing the server's CPU: 58% CPU pressure with 3% others, under the 5% that
    // would make others a cause of their own.
    let busy = Disturbance {
        cpu_pressure_pct: Some(58.0),
        other_processes_pct: 3.0,
        ..Disturbance::default()
    };
    assert_eq!(
        busy.causes_under(&Thresholds::default()),
        [Cause::CpuPressure { pct: 58.0 }]
    );
    let mut busy = busy;
    busy.causes = busy.causes_under(&Thresholds::default());
    assert_eq!(busy.summary(), "CPU pressure 58%");
    let mild = Disturbance {
        cpu_pressure_pct: Some(20.0),
        other_processes_pct: 3.0,
        ..Disturbance::default()
    };
    assert!(mild.causes_under(&Thresholds::default()).is_empty());
}

#[test]
fn only_the_pinned_cpus_count() {
    let mut one = lap(9.5);
    one.pinned = vec![1];
    let d = between(
        &recorded("noisy-start"),
        &recorded("noisy-end"),
        &one,
        &Thresholds::default(),
    );
    // cpu1 alone: 9.6 s of task time, 9.5 s ours: 1% others, under the threshold.
    assert!((d.other_processes_pct - 1.0).abs() < 1e-9, "{d:?}");
    assert!(!d
        .causes
        .iter()
        .any(|c| matches!(c, Cause::OtherProcesses { .. })));
    assert_eq!(d.throttle_events, 0);
}

#[test]
fn ours_using_more_than_the_cpus_show_never_makes_others_negative() {
    let d = between(
        &recorded("quiet-start"),
        &recorded("quiet-end"),
        &lap(25.0),
        &Thresholds::default(),
    );
    assert_eq!(d.other_processes_pct, 0.0);
}

#[test]
fn a_record_without_disturbance_fields_reads_with_defaults() {
    let d: Disturbance =
        serde_json::from_str(r#"{"steal_pct":0.1,"other_processes_pct":2.0}"#).unwrap();
    assert!(d.causes.is_empty());
    let back: Disturbance = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
    assert_eq!(back, d);
}

#[test]
fn causes_round_trip_through_json_with_their_kind() {
    let c = Cause::OtherProcesses { pct: 28.0 };
    let j = serde_json::to_string(&c).unwrap();
    assert_eq!(j, r#"{"cause":"other_processes","pct":28.0}"#);
}
