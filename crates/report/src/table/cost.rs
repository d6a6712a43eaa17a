//! The cost table: for each scenario × fixed-rate profile, one row per server with its rank by
//! CPU per request, the rate asked and achieved, the server's (and database's) CPU µs per
//! request, cores, peak memory and p99/p99.9; rows that fell under 95% of the rate are marked
//! and unranked. And its CSV form, every profile in one grid.

use super::{Align, Cell, Grid};
use crate::text::grouped;
use serverbench_analysis::cost::{CostRow, VALID_SHARE};
use serverbench_analysis::summary::Summary;

/// (machine name, heading, alignment); `scenario`/`profile`/`valid` only in the CSV, `db µs`
/// only when a database ran.
const COLUMNS: [(&str, &str, Align); 15] = [
    ("rank", "rank", Align::Right),
    ("server", "server", Align::Left),
    ("scenario", "scenario", Align::Left),
    ("profile", "profile", Align::Left),
    ("rate_target", "target/s", Align::Right),
    ("rate_achieved", "achieved/s", Align::Right),
    ("server_cpu_us_per_req", "srv µs/req", Align::Right),
    ("db_cpu_us_per_req", "db µs/req", Align::Right),
    ("total_cpu_us_per_req", "µs/req", Align::Right),
    ("cores_used", "cores", Align::Right),
    ("rss_peak_mb", "RSS MB", Align::Right),
    ("p99_ms", "p99 ms", Align::Right),
    ("p999_ms", "p99.9 ms", Align::Right),
    ("valid", "valid", Align::Left),
    ("invalid_why", "not ranked because", Align::Left),
];

const CSV_ONLY: [&str; 3] = ["scenario", "profile", "valid"];

fn cells(r: &CostRow) -> [Cell; 15] {
    let one = |v: Option<f64>| Cell::number(v, |v| format!("{v:.1}"));
    let ms = |v: Option<f64>| Cell::number(v.map(|us| us / 1000.0), |v| format!("{v:.2}"));
    [
        Cell::number(r.rank.map(f64::from), |v| format!("{v:.0}")),
        Cell::plain(&r.server),
        Cell::plain(&r.scenario),
        Cell::plain(&r.profile),
        Cell::number(Some(r.rate_target), grouped),
        Cell::number(r.rate_achieved, grouped),
        one(r.server_cpu_us_per_request),
        one(r.db_cpu_us_per_request),
        one(r.total_cpu_us_per_request),
        Cell::number(r.cores_used, |v| format!("{v:.2}")),
        one(r.rss_peak_mb),
        ms(r.p99_us),
        ms(r.p999_us),
        Cell::plain(if r.valid { "yes" } else { "no" }),
        Cell::plain(r.invalid_why.clone().unwrap_or_default()),
    ]
}

fn grid(rows: &[&CostRow], keep: impl Fn(&str) -> bool) -> Grid {
    // A medal only for a rank held alone.
    let medal = |r: &&CostRow| {
        r.rank
            .filter(|&k| k <= 3 && rows.iter().filter(|o| o.rank == Some(k)).count() == 1)
    };
    super::listed_grid(
        &COLUMNS,
        &super::kept(&COLUMNS, keep),
        rows,
        |r| cells(r),
        medal,
    )
}

/// One table per scenario × fixed-rate profile, with its heading; none without such laps.
pub fn cost_tables(summary: &Summary) -> Vec<(String, Grid)> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in &summary.cost {
        if !keys.contains(&(r.scenario.as_str(), r.profile.as_str())) {
            keys.push((&r.scenario, &r.profile));
        }
    }
    keys.into_iter()
        .map(|(scenario, profile)| {
            let rows: Vec<&CostRow> = summary
                .cost
                .iter()
                .filter(|r| (r.scenario.as_str(), r.profile.as_str()) == (scenario, profile))
                .collect();
            let heading = format!("Cost · {scenario} · {profile}: CPU per request at a fixed rate");
            let no_db = rows.iter().all(|r| r.db_cpu_us_per_request.is_none());
            let all_valid = rows.iter().all(|r| r.valid);
            let hidden = |k: &str| {
                CSV_ONLY.contains(&k)
                    || (no_db && k == "db_cpu_us_per_req")
                    || (no_db && k == "server_cpu_us_per_req")
                    || (all_valid && k == "invalid_why")
            };
            (heading, grid(&rows, |k| !hidden(k)))
        })
        .collect()
}

/// Every cost row for CSV; `None` without fixed-rate laps.
pub fn cost_csv(summary: &Summary) -> Option<Grid> {
    let rows: Vec<&CostRow> = summary.cost.iter().collect();
    (!rows.is_empty()).then(|| grid(&rows, |_| true))
}

/// What the cost table's columns mean (shown under it).
pub fn cost_legend(summary: &Summary) -> Vec<String> {
    if summary.cost.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "Cost: each server held the same open-loop rate; µs/req is the CPU its whole process \
         tree spent per request (plus the database's where one ran: srv and db apart), the \
         median over the laps; cores: CPU seconds per second; RSS: peak over the laps; p99 and \
         p99.9 from the intended send times. Rank 1 is the cheapest (within 2% share a rank). \
         A row is valid, and ranked, only when the median of its laps' req/s reached at least \
         {:.0}% of the target and no lap failed.",
        VALID_SHARE * 100.0
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(server: &str, rank: Option<u32>, why: Option<&str>) -> CostRow {
        CostRow {
            server: server.into(),
            scenario: "hello".into(),
            profile: "rate 10k".into(),
            rate_target: 10_000.0,
            rate_achieved: Some(9_990.0),
            server_cpu_us_per_request: Some(25.0),
            db_cpu_us_per_request: None,
            total_cpu_us_per_request: Some(25.0),
            cores_used: Some(0.25),
            rss_peak_mb: Some(12.5),
            p99_us: Some(1_250.0),
            p999_us: Some(4_000.0),
            error_rate: Some(0.0),
            valid: why.is_none(),
            invalid_why: why.map(str::to_owned),
            rank,
            laps: 3,
            failed_laps: 0,
        }
    }

    fn summary(rows: Vec<CostRow>) -> Summary {
        let mut s = serverbench_analysis::summary::summarize(&[], None);
        s.cost = rows;
        s
    }

    #[test]
    fn a_cost_table_shows_the_why_only_when_a_row_is_invalid() {
        let s = summary(vec![row("a", Some(1), None), row("b", Some(2), None)]);
        let (heading, g) = &cost_tables(&s)[0];
        assert!(heading.contains("rate 10k"), "{heading}");
        let keys: Vec<&str> = g.columns.iter().map(|c| c.key).collect();
        assert_eq!(
            keys,
            vec![
                "rank",
                "server",
                "rate_target",
                "rate_achieved",
                "total_cpu_us_per_req",
                "cores_used",
                "rss_peak_mb",
                "p99_ms",
                "p999_ms"
            ]
        );
        assert_eq!(g.rows[0].medal, Some(1));
        let s = summary(vec![
            row("a", Some(1), None),
            row("b", None, Some("achieved 60%")),
        ]);
        let (_, g) = &cost_tables(&s)[0];
        assert_eq!(g.columns.last().unwrap().key, "invalid_why");
        assert_eq!(g.rows[1].cells.last().unwrap().text, "achieved 60%");
        assert_eq!(g.rows[1].cells[0].text, crate::text::MISSING);
    }

    #[test]
    fn the_csv_has_every_column_and_says_valid_or_not() {
        let s = summary(vec![row("b", None, Some("1 of 3 laps failed"))]);
        let g = cost_csv(&s).unwrap();
        assert_eq!(g.columns.len(), COLUMNS.len());
        let valid = g.columns.iter().position(|c| c.key == "valid").unwrap();
        assert_eq!(g.rows[0].cells[valid].raw, "no");
        assert!(cost_csv(&summary(vec![])).is_none());
    }
}
