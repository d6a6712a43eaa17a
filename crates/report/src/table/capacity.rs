//! The capacity table: for each scenario × `find_max` profile, one row per server with the
//! highest rate that met the goal (median of the laps, its interval), the lowest rate that
//! missed it, the server's CPU per request at its capacity, how long the search took and how
//! it ended. And the CSV forms: the rows, and the
//! curve (every step of every lap).

use super::{Align, Cell, Grid};
use crate::text::grouped;
use serverbench_analysis::capacity_rows::CapacityRow;
use serverbench_analysis::summary::Summary;
use serverbench_model::capacity::{Ending, Step};

const COLUMNS: [(&str, &str, Align); 13] = [
    ("rank", "rank", Align::Right),
    ("server", "server", Align::Left),
    ("scenario", "scenario", Align::Left),
    ("profile", "profile", Align::Left),
    ("slo", "goal", Align::Left),
    ("capacity_rps", "capacity/s", Align::Right),
    ("interval", "interval", Align::Right),
    ("failed_at_rps", "missed at/s", Align::Right),
    ("server_cpu_us_per_req", "µs/req", Align::Right),
    ("laps", "laps", Align::Right),
    ("search_s", "search s", Align::Right),
    ("ending", "ended", Align::Left),
    ("client_ceiling_rps", "client max/s", Align::Right),
];

const CSV_ONLY: [&str; 3] = ["scenario", "profile", "slo"];

fn ending(r: &CapacityRow) -> String {
    let mut e: Vec<&str> = r
        .endings
        .iter()
        .map(|e| match e {
            Ending::Converged => "converged",
            Ending::StepLimit => "step limit",
            Ending::ClientLimit => "client limit (a lower bound)",
            Ending::GoalMissedAtStart => "missed at the first rate",
            Ending::RateCeiling => "ceiling",
            Ending::Aborted => "aborted",
        })
        .collect();
    e.dedup();
    e.join(", ")
}

fn cells(r: &CapacityRow) -> [Cell; 13] {
    let interval = match r.interval {
        Some(i) => Cell {
            text: format!("{}–{}", grouped(i.low), grouped(i.high)),
            raw: format!("{}..{}", i.low, i.high),
            hint: None,
        },
        None => Cell::number(None, grouped),
    };
    [
        Cell::number(r.rank.map(f64::from), |v| format!("{v:.0}")),
        Cell::plain(&r.server),
        Cell::plain(&r.scenario),
        Cell::plain(&r.profile),
        Cell::plain(&r.slo),
        Cell::number(r.capacity_rps, grouped),
        interval,
        Cell::number(r.failed_at_rps, grouped),
        Cell::number(r.server_cpu_us_per_request, |v| format!("{v:.1}")),
        Cell::plain(r.laps.to_string()),
        Cell::number(r.search_s, |v| format!("{v:.1}")),
        Cell::plain(ending(r)),
        Cell::number(r.client_ceiling_rps, grouped),
    ]
}

fn grid(rows: &[&CapacityRow], keep: impl Fn(&str) -> bool) -> Grid {
    super::listed_grid(
        &COLUMNS,
        &super::kept(&COLUMNS, keep),
        rows,
        |r| cells(r),
        |_| None,
    )
}

/// One table per scenario × `find_max` profile, with its heading (naming the goal).
pub fn capacity_tables(summary: &Summary) -> Vec<(String, Grid)> {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for r in &summary.capacity {
        let k = (r.scenario.as_str(), r.profile.as_str(), r.slo.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(scenario, profile, slo)| {
            let rows: Vec<&CapacityRow> = summary
                .capacity
                .iter()
                .filter(|r| (r.scenario.as_str(), r.profile.as_str()) == (scenario, profile))
                .collect();
            let heading =
                format!("Capacity · {scenario} · {profile}: the highest rate meeting {slo}");
            // The client's ceiling only where some search met it.
            let client = rows.iter().any(|r| r.client_ceiling_rps.is_some());
            let keep = |k: &str| !CSV_ONLY.contains(&k) && (client || k != "client_ceiling_rps");
            (heading, grid(&rows, keep))
        })
        .collect()
}

/// The capacity rows for CSV; `None` without capacity laps.
pub fn capacity_csv(summary: &Summary) -> Option<Grid> {
    let rows: Vec<&CapacityRow> = summary.capacity.iter().collect();
    (!rows.is_empty()).then(|| grid(&rows, |_| true))
}

/// The columns of a step of a search: the curve of one server, and in CSV every curve (whose
/// keys scripts rely on: only ever append).
const STEP_COLUMNS: [(&str, &str, Align); 11] = [
    ("server", "server", Align::Left),
    ("scenario", "scenario", Align::Left),
    ("profile", "profile", Align::Left),
    ("rate_target", "target/s", Align::Right),
    ("rate_achieved", "achieved/s", Align::Right),
    ("p50_us", "p50 ms", Align::Right),
    ("p99_us", "p99 ms", Align::Right),
    ("p999_us", "p99.9 ms", Align::Right),
    ("errors_pct", "errors %", Align::Right),
    ("met", "goal", Align::Left),
    ("server_cpu_us_per_req", "µs/req", Align::Right),
];

/// The columns a server's own curve leaves out (its heading names them).
const CURVE_OMITS: [&str; 3] = ["server", "scenario", "profile"];

fn step_cells(r: &CapacityRow, s: &Step) -> [Cell; 11] {
    let ms = |v: f64| format!("{:.2}", v / 1000.0);
    let with_raw = |mut c: Cell, raw: f64| {
        c.raw = raw.to_string();
        c
    };
    [
        Cell::plain(&r.server),
        Cell::plain(&r.scenario),
        Cell::plain(&r.profile),
        Cell::number(Some(s.rate_target), grouped),
        Cell::number(Some(s.rate_achieved), grouped),
        with_raw(Cell::number(Some(s.p50_us), ms), s.p50_us),
        with_raw(Cell::number(Some(s.p99_us), ms), s.p99_us),
        with_raw(Cell::number(Some(s.p999_us), ms), s.p999_us),
        Cell::number(Some(s.errors_pct), |v| format!("{v:.3}")),
        Cell {
            text: if s.met { "met" } else { "missed" }.into(),
            raw: s.met.to_string(),
            hint: None,
        },
        Cell::number(s.server_cpu_us_per_request, |v| format!("{v:.1}")),
    ]
}

/// Every step of every capacity lap for CSV: the curves; `None` without capacity laps.
pub fn capacity_steps_csv(summary: &Summary) -> Option<Grid> {
    if summary.capacity.is_empty() {
        return None;
    }
    let steps: Vec<(&CapacityRow, &Step)> = summary
        .capacity
        .iter()
        .flat_map(|r| r.curve.iter().map(move |s| (r, s)))
        .collect();
    let all = super::kept(&STEP_COLUMNS, |_| true);
    Some(super::listed_grid(
        &STEP_COLUMNS,
        &all,
        &steps,
        |(r, s)| step_cells(r, s),
        |_| None,
    ))
}

/// Each server's curve, every step of every lap by rate, with its heading: the figures behind
/// the latency-versus-load chart, for the formats without one (Markdown) and beside it (HTML).
pub fn capacity_curve_tables(summary: &Summary) -> Vec<(String, Grid)> {
    let shown = super::kept(&STEP_COLUMNS, |k| !CURVE_OMITS.contains(&k));
    summary
        .capacity
        .iter()
        .filter(|r| !r.curve.is_empty())
        .map(|r| {
            let heading = format!(
                "Capacity curve · {} · {} · {}: every step of every lap, against {}",
                r.server, r.scenario, r.profile, r.slo
            );
            let grid = super::listed_grid(
                &STEP_COLUMNS,
                &shown,
                &r.curve,
                |s| step_cells(r, s),
                |_| None,
            );
            (heading, grid)
        })
        .collect()
}

/// What the capacity table says (shown under it).
pub fn capacity_legend(summary: &Summary) -> Vec<String> {
    if summary.capacity.is_empty() {
        return Vec::new();
    }
    vec![
        "Capacity: each lap searched for the highest open-loop rate meeting the goal \
          (latency from the intended send time): doubling from the first rate until the goal \
          failed, then halving the bracket to the precision. capacity/s is the median of the \
          laps, interval its 95% bootstrap interval (3 laps or more) or the laps' range; missed \
          at/s the lowest rate that failed; µs/req the server's CPU per request at its \
          capacity (its whole process tree, over that step alone); client max/s the most \
          the client sent open loop in a step it could not keep (its CPU ≥ 90% busy, or short \
          of the rate): its own ceiling. A rate the client could not send is bisected below \
          like a missed goal; a search whose goal held at every rate the client could send \
          ended at the client's limit and its capacity is a lower bound (more client threads, \
          -t, or client hosts, --hosts, would find the knee)."
            .to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_analysis::stats::{Interval, IntervalMethod};

    fn row() -> CapacityRow {
        CapacityRow {
            server: "rust/hyper".into(),
            scenario: "hello".into(),
            profile: "p99".into(),
            slo: "p99<=5ms".into(),
            capacity_rps: Some(41_000.0),
            interval: Some(Interval {
                low: 40_000.0,
                high: 42_000.0,
                method: IntervalMethod::Range,
            }),
            lap_capacity: vec![40_000.0, 42_000.0],
            failed_at_rps: Some(43_000.0),
            search_s: Some(35.2),
            server_cpu_us_per_request: Some(23.46),
            endings: vec![Ending::Converged, Ending::Converged],
            client_limited: false,
            client_ceiling_rps: None,
            curve: vec![Step::default(), Step::default()],
            rank: Some(1),
            laps: 2,
            failed_laps: 0,
        }
    }

    #[test]
    fn the_capacity_table_names_the_goal_and_the_interval() {
        let mut s = serverbench_analysis::summary::summarize(&[], None);
        s.capacity = vec![row()];
        let (heading, g) = &capacity_tables(&s)[0];
        assert!(heading.contains("p99<=5ms"), "{heading}");
        let text: Vec<&str> = g.rows[0].cells.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            text,
            vec![
                "1",
                "rust/hyper",
                "41,000",
                "40,000–42,000",
                "43,000",
                "23.5",
                "2",
                "35.2",
                "converged"
            ]
        );
        assert_eq!(capacity_steps_csv(&s).unwrap().rows.len(), 2);
        s.capacity[0].client_ceiling_rps = Some(52_000.0);
        s.capacity[0].endings = vec![Ending::ClientLimit];
        let (_, g) = &capacity_tables(&s)[0];
        let last = |g: &Grid, i: usize| g.rows[0].cells[g.columns.len() - i].text.clone();
        assert_eq!(last(g, 1), "52,000");
        assert_eq!(last(g, 2), "client limit (a lower bound)");
        assert_eq!(g.columns.last().unwrap().label, "client max/s");
        let (heading, curve) = &capacity_curve_tables(&s)[0];
        assert!(heading.contains("rust/hyper · hello · p99"), "{heading}");
        let labels: Vec<&str> = curve.columns.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels[0], "target/s");
        assert_eq!(curve.rows.len(), 2);
    }
}
