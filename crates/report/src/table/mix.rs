//! The mix tables: for each scenario x profile of laps that ran a weighted mix, one row per
//! server x entry with the share of requests asked (the weight) and got, req/s, p50 and p99
//! (from the merged histograms) and errors. And their CSV form, every mix row in one grid.

use super::{Align, Cell, Grid};
use crate::text::grouped;
use serverbench_analysis::mix::MixRow;
use serverbench_analysis::summary::Summary;

/// (machine name, heading, alignment) of each column; `scenario` and `profile` in the CSV only.
const COLUMNS: [(&str, &str, Align); 10] = [
    ("server", "server", Align::Left),
    ("scenario", "scenario", Align::Left),
    ("profile", "profile", Align::Left),
    ("entry", "entry", Align::Left),
    ("weight_share", "asked", Align::Right),
    ("share", "got", Align::Right),
    ("rps", "req/s", Align::Right),
    ("p50_ms", "p50 ms", Align::Right),
    ("p99_ms", "p99 ms", Align::Right),
    ("errors", "errors", Align::Right),
];

const CSV_ONLY: [&str; 2] = ["scenario", "profile"];

fn cells(r: &MixRow) -> [Cell; 10] {
    let pct = |v: Option<f64>| Cell::number(v.map(|f| f * 100.0), |v| format!("{v:.1}%"));
    let ms = |v: Option<f64>| Cell::number(v.map(|us| us / 1000.0), |v| format!("{v:.2}"));
    [
        Cell::plain(&r.server),
        Cell::plain(&r.scenario),
        Cell::plain(&r.profile),
        Cell::plain(&r.entry),
        pct(Some(r.weight_share)),
        pct(r.share),
        Cell::number(r.rps, grouped),
        ms(r.p50_us),
        ms(r.p99_us),
        Cell::number(Some(r.errors as f64), grouped),
    ]
}

fn grid(rows: &[&MixRow], keep: impl Fn(&str) -> bool) -> Grid {
    super::listed_grid(
        &COLUMNS,
        &super::kept(&COLUMNS, keep),
        rows,
        |r| cells(r),
        |_| None,
    )
}

/// One table per scenario x profile that ran a mix, with its heading; none without them.
pub fn mix_tables(summary: &Summary) -> Vec<(String, Grid)> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in &summary.mix {
        if !keys.contains(&(&r.scenario, &r.profile)) {
            keys.push((&r.scenario, &r.profile));
        }
    }
    keys.into_iter()
        .map(|(scenario, profile)| {
            let rows: Vec<&MixRow> = summary
                .mix
                .iter()
                .filter(|r| (r.scenario.as_str(), r.profile.as_str()) == (scenario, profile))
                .collect();
            let heading = format!("Mix · {scenario} · {profile}: each entry, per server");
            (heading, grid(&rows, |k| !CSV_ONLY.contains(&k)))
        })
        .collect()
}

/// Every mix row for CSV; `None` without mix laps.
pub fn mix_csv(summary: &Summary) -> Option<Grid> {
    let rows: Vec<&MixRow> = summary.mix.iter().collect();
    (!rows.is_empty()).then(|| grid(&rows, |_| true))
}

/// What the mix tables' columns mean (shown under them).
pub fn mix_legend(summary: &Summary) -> Vec<String> {
    if summary.mix.is_empty() {
        return Vec::new();
    }
    vec![
        "Mix: asked, each entry's weight over the mix's total; got, its share of the requests \
         over every lap; req/s, median over the laps; p50 and p99 from the laps' histograms of \
         that entry merged; errors, those counted on the entry over every lap."
            .to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_table_per_scenario_and_profile_with_shares_in_percent() {
        let row = |server: &str, entry: &str| MixRow {
            server: server.into(),
            scenario: "api-4".into(),
            profile: "c64".into(),
            entry: entry.into(),
            weight_share: 0.375,
            share: Some(0.38),
            rps: Some(1234.0),
            p50_us: Some(1500.0),
            p99_us: None,
            errors: 0,
            laps: 2,
        };
        let summary = Summary {
            suite: None,
            baseline: None,
            tables: Vec::new(),
            warnings: Vec::new(),
            scaling: Vec::new(),
            hosts: Vec::new(),
            protocols: Vec::new(),
            database: Vec::new(),
            cost: Vec::new(),
            capacity: Vec::new(),
            mix: vec![row("a", "json"), row("b", "json")],
            disturbed: Vec::new(),
            until_ci: None,
        };
        let tables = mix_tables(&summary);
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].0, "Mix · api-4 · c64: each entry, per server");
        let g = &tables[0].1;
        assert_eq!(g.rows.len(), 2);
        let texts: Vec<&str> = g.rows[0].cells.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts[..5], ["a", "json", "37.5%", "38.0%", "1,234"]);
        assert_eq!(mix_csv(&summary).unwrap().columns.len(), 10);
    }
}
