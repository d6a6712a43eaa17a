//! Tests of [`crate::check`] over synthetic series: a server that slows down is caught at the
//! run where it did, and noise alone raises no regression.

use crate::check::{check, Baseline, CheckOptions, Status};
use crate::series::Measure;
use crate::synth::{record_series, RunSpec};
use crate::History;

fn history(levels: &[f64], seed: u64) -> (tempfile::TempDir, History) {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let base = RunSpec {
        seed,
        ..RunSpec::default()
    };
    record_series(&mut h, dir.path(), levels, &base).unwrap();
    (dir, h)
}

fn rps_only() -> CheckOptions {
    CheckOptions {
        measure: Some(Measure::Rps),
        ..CheckOptions::default()
    }
}

#[test]
fn a_server_that_slows_down_is_caught_at_the_run_where_it_did() {
    let mut levels = vec![1.0; 24];
    levels.extend([0.85; 6]);
    let (_dir, h) = history(&levels, 5);
    let report = check(&h, &rps_only()).unwrap();
    assert_eq!(report.worst(), Status::Regression);
    let row = &report.rows[0];
    let shift = row.shift().unwrap();
    assert!(shift.regression);
    assert_eq!(shift.at.label, "c000024");
    assert!((shift.magnitude + 0.15).abs() < 0.02, "{shift:?}");
}

#[test]
fn a_slow_newest_run_is_a_regression_against_the_previous_one() {
    let mut levels = vec![1.0; 5];
    levels.push(0.7);
    let (_dir, h) = history(&levels, 6);
    let report = check(&h, &rps_only()).unwrap();
    let row = &report.rows[0];
    assert_eq!(row.status, Status::Regression);
    assert!(row.interval.unwrap().1 < 0.95, "{row:?}");
}

#[test]
fn pure_noise_raises_no_regression() {
    let mut regressions = 0;
    for seed in 0..10 {
        let (_dir, h) = history(&[1.0; 30], 100 + seed);
        let report = check(&h, &CheckOptions::default()).unwrap();
        regressions += report
            .rows
            .iter()
            .filter(|r| r.status == Status::Regression)
            .count();
    }
    assert_eq!(regressions, 0);
}

#[test]
fn the_baseline_can_be_a_given_run() {
    let (_dir, h) = history(&[1.0, 0.8, 0.8, 0.8], 7);
    let opts = CheckOptions {
        baseline: Baseline::Run(1),
        ..rps_only()
    };
    let report = check(&h, &opts).unwrap();
    assert_eq!(report.rows[0].baseline.as_ref().unwrap().run, 1);
    assert_eq!(report.rows[0].status, Status::Regression);
    let prev = check(&h, &rps_only()).unwrap();
    assert_ne!(prev.rows[0].status, Status::Regression);
}

#[test]
fn a_single_run_has_no_baseline() {
    let (_dir, h) = history(&[1.0], 8);
    let report = check(&h, &rps_only()).unwrap();
    assert_eq!(report.rows[0].status, Status::NoBaseline);
    assert_eq!(report.worst(), Status::NoBaseline);
}

#[test]
fn a_server_whose_requests_cost_more_cpu_at_a_fixed_rate_is_a_cost_regression() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let base = RunSpec::at_rate(40.0, 2_000.0, 9);
    let mut levels = vec![1.0; 5];
    levels.push(1.3);
    record_series(&mut h, dir.path(), &levels, &base).unwrap();
    let report = check(&h, &CheckOptions::default()).unwrap();
    let cpu = report
        .rows
        .iter()
        .find(|r| r.measure == Measure::Cpu)
        .expect("a cost row for a fixed-rate series");
    assert_eq!(cpu.status, Status::Regression, "{cpu:?}");
    assert!(cpu.ratio.unwrap() > 1.2, "{cpu:?}");
    let rps = report.rows.iter().find(|r| r.measure == Measure::Rps);
    assert_ne!(rps.map(|r| r.status), Some(Status::Regression));
}

#[test]
fn a_cheaper_request_is_an_improvement_and_closed_loop_series_have_no_cost_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let base = RunSpec::at_rate(40.0, 2_000.0, 10);
    record_series(&mut h, dir.path(), &[1.0, 1.0, 1.0, 0.7], &base).unwrap();
    let report = check(&h, &CheckOptions::default()).unwrap();
    let cpu = report.rows.iter().find(|r| r.measure == Measure::Cpu);
    assert_eq!(cpu.map(|r| r.status), Some(Status::Improved), "{cpu:?}");

    let (_dir, closed) = history(&[1.0, 1.0], 11);
    let report = check(&closed, &CheckOptions::default()).unwrap();
    assert!(
        report.rows.iter().all(|r| r.measure != Measure::Cpu),
        "{:?}",
        report.rows
    );
}
