//! Disturbed laps: the laps whose record says something other than the benchmark used the
//! pinned CPUs (steal, other processes, memory pressure, throttling), listed with their causes,
//! counted per row, and with `--drop-disturbed` left out of the statistics (the summary is made
//! from the remaining laps and says how many it dropped per cell, and why).

use crate::summary::{DisturbedLap, Summary};
use crate::warnings::{Warning, WarningKind};
use serverbench_model::disturbance::Cause;
use serverbench_results::record::LapRecord;

/// Every disturbed lap of `records`, in record order.
pub fn disturbed_laps(records: &[LapRecord], dropped: bool) -> Vec<DisturbedLap> {
    records
        .iter()
        .filter_map(|r| {
            let d = r.disturbance.as_ref().filter(|d| d.is_disturbed())?;
            Some(DisturbedLap {
                server: r.server.clone(),
                scenario: r.scenario.clone(),
                profile: r.profile.clone(),
                lap: r.lap,
                causes: d.causes.clone(),
                dropped,
            })
        })
        .collect()
}

/// The records without the disturbed laps (`--drop-disturbed`).
pub fn without_disturbed(records: &[LapRecord]) -> Vec<LapRecord> {
    records
        .iter()
        .filter(|r| !r.is_disturbed())
        .cloned()
        .collect()
}

/// One warning per row with disturbed laps: `go/net-http: 2 disturbed laps: other processes
/// 40% of the CPUs` (and `(left out)` under `--drop-disturbed`).
pub fn warnings(summary: &Summary) -> Vec<Warning> {
    let mut rows: Vec<(&str, &str, &str)> = Vec::new();
    for l in &summary.disturbed {
        let key = (l.scenario.as_str(), l.profile.as_str(), l.server.as_str());
        if !rows.contains(&key) {
            rows.push(key);
        }
    }
    rows.into_iter()
        .filter_map(|(scenario, profile, server)| {
            let laps = of_row(summary, scenario, profile, server);
            let line = summary_line(&laps)?;
            let left_out = if laps.iter().all(|l| l.dropped) {
                " (left out of the figures: --drop-disturbed)"
            } else {
                ""
            };
            Some(Warning {
                kind: WarningKind::Disturbed,
                scenario: scenario.to_owned(),
                profile: profile.to_owned(),
                server: Some(server.to_owned()),
                message: format!("{server} ({scenario}, {profile}): {line}{left_out}"),
            })
        })
        .collect()
}

/// The disturbed laps of one row.
pub fn of_row<'a>(
    summary: &'a Summary,
    scenario: &str,
    profile: &str,
    server: &str,
) -> Vec<&'a DisturbedLap> {
    summary
        .disturbed
        .iter()
        .filter(|l| l.scenario == scenario && l.profile == profile && l.server == server)
        .collect()
}

/// One line for a set of disturbed laps, each cause at its worst:
/// `2 disturbed laps: steal 4.0%, other processes 30% of the CPUs`; `None` without any.
pub fn summary_line(laps: &[&DisturbedLap]) -> Option<String> {
    if laps.is_empty() {
        return None;
    }
    let mut worst: Vec<Cause> = Vec::new();
    for c in laps.iter().flat_map(|l| &l.causes) {
        match worst
            .iter_mut()
            .find(|w| std::mem::discriminant(*w) == std::mem::discriminant(c))
        {
            Some(w) if magnitude(c) > magnitude(w) => *w = c.clone(),
            Some(_) => {}
            None => worst.push(c.clone()),
        }
    }
    let causes: Vec<String> = worst.iter().map(Cause::to_string).collect();
    let n = laps.len();
    let noun = if n == 1 { "lap" } else { "laps" };
    Some(format!("{n} disturbed {noun}: {}", causes.join(", ")))
}

fn magnitude(c: &Cause) -> f64 {
    match c {
        Cause::Steal { pct }
        | Cause::OtherProcesses { pct }
        | Cause::MemoryPressure { pct }
        | Cause::CpuPressure { pct } => *pct,
        Cause::Throttling { events } => *events as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::disturbance::Disturbance;

    fn lap(server: &str, n: u32, causes: Vec<Cause>) -> LapRecord {
        let mut r = crate::fixture::lap();
        r.server = server.into();
        r.lap = n;
        r.disturbance = Some(Disturbance {
            causes,
            ..Default::default()
        });
        r
    }

    #[test]
    fn the_line_names_each_cause_at_its_worst_over_the_laps() {
        let records = vec![
            lap("a", 1, vec![Cause::Steal { pct: 4.0 }]),
            lap("a", 2, vec![]),
            lap(
                "b",
                1,
                vec![
                    Cause::OtherProcesses { pct: 30.0 },
                    Cause::Steal { pct: 2.5 },
                ],
            ),
        ];
        let laps = disturbed_laps(&records, false);
        assert_eq!(laps.len(), 2);
        let refs: Vec<&DisturbedLap> = laps.iter().collect();
        assert_eq!(
            summary_line(&refs).unwrap(),
            "2 disturbed laps: steal 4.0%, other processes 30% of the CPUs"
        );
        assert_eq!(without_disturbed(&records).len(), 1);
    }

    #[test]
    fn dropping_disturbed_laps_leaves_them_out_of_the_figures_and_says_why() {
        let mut records: Vec<LapRecord> = [(1, 100.0), (2, 101.0), (3, 50.0)]
            .iter()
            .map(|&(n, rps)| {
                let mut r = lap("a", n, vec![]);
                r.load = Some(serverbench_results::record::Measurement {
                    rps: Some(rps),
                    ..Default::default()
                });
                r
            })
            .collect();
        records[2].disturbance.as_mut().unwrap().causes = vec![Cause::OtherProcesses { pct: 40.0 }];
        let drop = crate::Options {
            drop_disturbed: true,
        };
        let kept = crate::analyze_with(&records, None, None, drop);
        let row = &kept.tables[0].servers[0];
        assert_eq!(row.laps, 2);
        assert_eq!(row.rps.as_ref().unwrap().median, 100.5);
        assert!(kept.disturbed[0].dropped);
        let w = kept
            .warnings
            .iter()
            .find(|w| w.kind == WarningKind::Disturbed)
            .expect("a disturbed warning");
        assert!(
            w.message.contains("1 disturbed lap: other processes 40%"),
            "{}",
            w.message
        );
        assert!(w.message.contains("--drop-disturbed"), "{}", w.message);
        let all = crate::analyze(&records, None, None);
        assert_eq!(all.tables[0].servers[0].laps, 3);
        assert!(!all.disturbed[0].dropped);
    }
}
