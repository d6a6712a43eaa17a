//! Laps outside the contract's statement rules: `run` judges each database lap at the N it ran
//! (the query audit of `verify`, on the lap's requests; the differences are in the lap's record,
//! `database.off_contract`; why a row's laps are outside: `database::off_contract`). A row with
//! such a lap is left out of the ranks of its table, marked in every report format, and a
//! warning says why.

use crate::summary::Summary;
use crate::warnings::{Warning, WarningKind};

/// One warning per row left out of the ranks for laps outside the statement rules.
pub fn warnings(summary: &Summary) -> Vec<Warning> {
    summary
        .tables
        .iter()
        .flat_map(|t| {
            t.servers.iter().filter_map(move |s| {
                let why = s.off_contract.as_ref()?;
                Some(Warning {
                    kind: WarningKind::OffContract,
                    scenario: t.scenario.clone(),
                    profile: t.profile.clone(),
                    server: Some(s.server.clone()),
                    message: format!(
                        "{} ({}, {}): left out of the ranks: {why}",
                        s.server, t.scenario, t.profile
                    ),
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::off_contract as of_laps;
    use serverbench_results::database::DatabaseLap;
    use serverbench_results::record::LapRecord;

    fn of(server: &str, n: u32, rps: f64) -> LapRecord {
        let mut r = crate::fixture::lap();
        (r.server, r.scenario, r.lap) = (server.into(), "queries-20".into(), n);
        r.load = Some(serverbench_results::record::Measurement {
            rps: Some(rps),
            ..Default::default()
        });
        r
    }

    fn lap(n: u32, off: &[&str]) -> LapRecord {
        let mut r = of("a", n, 1000.0 * f64::from(n));
        r.database = Some(DatabaseLap {
            off_contract: off.iter().map(|s| (*s).to_owned()).collect(),
            ..DatabaseLap::default()
        });
        r
    }

    #[test]
    fn a_row_with_a_lap_outside_the_rules_is_unranked_and_says_why() {
        let why = "single-row SELECTs on world (top level): expected 20 (±1), got PostgreSQL ran 1";
        let mut records = vec![lap(1, &[]), lap(2, &[why]), lap(3, &[])];
        let mut b = of("b", 1, 10.0);
        b.database = Some(DatabaseLap::default());
        records.push(b);
        let refs: Vec<&LapRecord> = records.iter().take(3).collect();
        assert_eq!(
            of_laps(&refs).unwrap(),
            format!("1 of 3 laps outside the statement rules: {why}")
        );
        let summary = crate::summary::summarize(&records, None);
        let t = &summary.tables[0];
        assert_eq!(t.servers[0].server, "b", "the ranked row first");
        assert_eq!(t.servers[0].rank, Some(1));
        assert_eq!(
            (t.servers[1].server.as_str(), t.servers[1].rank),
            ("a", None)
        );
        let w = warnings(&summary);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.starts_with("a (queries-20, "),
            "{}",
            w[0].message
        );
        assert!(
            w[0].message.contains("left out of the ranks: 1 of 3 laps"),
            "{}",
            w[0].message
        );
    }
}
