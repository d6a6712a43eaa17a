//! The scaling tables of a core sweep, defined once for every format: one table per scenario x
//! base profile, a row per server (fastest at the most cores first), and per server core count
//! the median req/s, then, from the second count on, the scaling efficiency and its interval.

use super::{interval_heading, Align, Cell, Column, Grid, Row, View};
use crate::text::{grouped, half_width};
use serverbench_analysis::scaling::{ScalePoint, Scaling};
use serverbench_analysis::stats::IntervalMethod;
use serverbench_analysis::summary::Summary;

/// Marks a figure measured while the client was saturated (a lower bound).
pub const SATURATED: &str = "*";

/// The curves of one scenario x base profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingTable<'a> {
    pub scenario: &'a str,
    /// The profile without its `/Ncpu` suffix.
    pub profile: &'a str,
    /// Sorted by req/s at the table's largest core count, highest first (servers without that
    /// count after, by req/s at their own largest).
    pub curves: Vec<&'a Scaling>,
}

impl ScalingTable<'_> {
    /// Every core count measured in this table, ascending.
    pub fn counts(&self) -> Vec<u32> {
        let mut counts: Vec<u32> = self
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.cpus))
            .collect();
        counts.sort_unstable();
        counts.dedup();
        counts
    }

    /// Whether a figure of this table was measured with a saturated client.
    pub fn client_saturated(&self) -> bool {
        self.curves
            .iter()
            .any(|c| c.points.iter().any(|p| p.client_saturated))
    }
}

/// The scaling tables of `summary`, in the order their curves first appear.
pub fn scaling_tables(summary: &Summary) -> Vec<ScalingTable<'_>> {
    let mut out: Vec<ScalingTable> = Vec::new();
    for c in &summary.scaling {
        match out
            .iter_mut()
            .find(|t| (t.scenario, t.profile) == (c.scenario.as_str(), c.profile.as_str()))
        {
            Some(t) => t.curves.push(c),
            None => out.push(ScalingTable {
                scenario: &c.scenario,
                profile: &c.profile,
                curves: vec![c],
            }),
        }
    }
    for t in &mut out {
        let most = t.counts().last().copied();
        let at_most = |c: &Scaling| {
            let p = c.points.iter().find(|p| Some(p.cpus) == most);
            p.map_or(f64::NEG_INFINITY, |p| p.rps)
        };
        let last = |c: &Scaling| c.points.last().map_or(f64::NEG_INFINITY, |p| p.rps);
        t.curves
            .sort_by(|a, b| (at_most(b).total_cmp(&at_most(a))).then(last(b).total_cmp(&last(a))));
    }
    out
}

/// `1 core`, `4 cores`.
fn cores(n: u32) -> String {
    crate::text::count(n, "core")
}

/// The median req/s at a count, with [`SATURATED`] when the client was saturated.
fn rps_cell(p: Option<&ScalePoint>) -> Cell {
    let Some(p) = p else {
        return Cell::number(None, grouped);
    };
    let mut cell = Cell::number(Some(p.rps), grouped);
    if p.client_saturated && p.rps.is_finite() {
        cell.text.push_str(SATURATED);
    }
    let laps = crate::text::count(p.laps as u64, "lap");
    let hint = match p.client_saturated {
        true => format!("median of {laps}; the client was saturated: a lower bound"),
        false => format!("median of {laps}"),
    };
    cell.with_hint(Some(hint))
}

/// The efficiency at a count: `1.00` at the curve's own first count.
fn efficiency_cell(p: Option<&ScalePoint>) -> Cell {
    Cell::number(p.map(|p| p.efficiency), |v| format!("{v:.2}"))
}

/// The efficiency's interval: `±0.05` in the ranking view (the larger half, as for req/s),
/// `0.86–0.98` in the others; the bounds and the kind of interval in the hint.
fn interval_cell(p: Option<&ScalePoint>, view: View) -> Cell {
    let Some((e, ci)) = p.and_then(|p| Some((p.efficiency, p.efficiency_interval?))) else {
        return Cell::number(None, grouped);
    };
    let kind = match ci.method {
        IntervalMethod::Bootstrap => "95% bootstrap interval",
        IntervalMethod::Range => "min..max over the laps",
    };
    Cell {
        text: match view {
            View::Ranking => format!("±{:.2}", half_width(e, &ci)),
            View::Wide | View::Page => format!("{:.2}–{:.2}", ci.low, ci.high),
        },
        raw: ci.low.to_string(),
        hint: Some(format!(
            "{:.2}–{:.2}: {kind} of rps(N) / rps(m), divided by N/m",
            ci.low, ci.high
        )),
    }
}

/// A column with a heading made at run time.
fn column(key: &'static str, label: String) -> Column {
    Column {
        key,
        label,
        align: Align::Right,
    }
}

/// The grid of one scaling table in `view`: `server`, then per core count `req/s`, and from the
/// second count on `eff.` and its interval.
pub fn scaling_grid(t: &ScalingTable, view: View) -> Grid {
    scaling_grid_of(t, view, &t.counts())
}

/// The grid of one scaling table over some of its core counts only (a terminal splits a table
/// too wide for it); the table's smallest count has no efficiency columns.
pub fn scaling_grid_of(t: &ScalingTable, view: View, counts: &[u32]) -> Grid {
    let first = t.counts().first().copied();
    let mut columns = vec![Column {
        key: "server",
        label: "server".to_owned(),
        align: Align::Left,
    }];
    let mut rows: Vec<Row> = t
        .curves
        .iter()
        .map(|c| Row {
            cells: vec![Cell::plain(&c.server)],
            ..Row::default()
        })
        .collect();
    for &n in counts {
        let at = |c: &Scaling| c.points.iter().find(|p| p.cpus == n).cloned();
        let points: Vec<Option<ScalePoint>> = t.curves.iter().map(|c| at(c)).collect();
        columns.push(column("rps_median", format!("{} req/s", cores(n))));
        for (row, p) in rows.iter_mut().zip(&points) {
            row.cells.push(rps_cell(p.as_ref()));
        }
        if Some(n) == first {
            continue;
        }
        let methods: Vec<IntervalMethod> = points
            .iter()
            .filter_map(|p| Some(p.as_ref()?.efficiency_interval?.method))
            .collect();
        let (heading, mixed) = interval_heading(&methods);
        columns.push(column("efficiency", "eff.".to_owned()));
        columns.push(column("efficiency_ci", heading.to_owned()));
        for (row, p) in rows.iter_mut().zip(&points) {
            let mut ci = interval_cell(p.as_ref(), view);
            let range = p
                .as_ref()
                .and_then(|p| p.efficiency_interval)
                .is_some_and(|i| i.method == IntervalMethod::Range);
            if mixed && range {
                ci.text.push_str(" range");
            }
            row.cells.push(efficiency_cell(p.as_ref()));
            row.cells.push(ci);
        }
    }
    Grid {
        columns,
        rows,
        headline: None,
    }
}

/// What a scaling table shows, one sentence each.
pub fn scaling_legend(summary: &Summary) -> Vec<String> {
    if summary.scaling.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        "Scaling: each server run with N cores and WORKERS=N. eff.: the scaling efficiency \
         rps(N) / (N/m x rps(m)), m the fewest cores measured; 1.00 is linear. Its interval is \
         the 95% bootstrap interval of rps(N) / rps(m) divided by N/m (min..max of the laps with \
         fewer than 3)."
            .to_owned(),
    ];
    if scaling_tables(summary).iter().any(|t| t.client_saturated()) {
        out.push(format!(
            "A figure marked {SATURATED} was measured with the client saturated in some lap: it \
             is a lower bound."
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_analysis::stats::Interval;

    fn point(cpus: u32, rps: f64, efficiency: f64, ci: Option<(f64, f64)>) -> ScalePoint {
        ScalePoint {
            cpus,
            rps,
            laps: 3,
            efficiency,
            efficiency_interval: ci.map(|(low, high)| Interval {
                low,
                high,
                method: IntervalMethod::Bootstrap,
            }),
            client_saturated: false,
        }
    }

    fn curve(server: &str, points: Vec<ScalePoint>) -> Scaling {
        Scaling {
            scenario: "hello".into(),
            profile: "c10".into(),
            server: server.into(),
            points,
        }
    }

    #[test]
    fn the_first_count_has_req_per_second_only_and_the_others_efficiency_too() {
        let flat = curve(
            "flat",
            vec![
                point(1, 1000.0, 1.0, None),
                point(2, 1000.0, 0.5, Some((0.45, 0.6))),
            ],
        );
        let t = ScalingTable {
            scenario: "hello",
            profile: "c10",
            curves: vec![&flat],
        };
        let g = scaling_grid(&t, View::Ranking);
        let labels: Vec<&str> = g.columns.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            ["server", "1 core req/s", "2 cores req/s", "eff.", "95% CI"]
        );
        let texts: Vec<&str> = g.rows[0].cells.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["flat", "1,000", "1,000", "0.50", "±0.10"]);
        let wide = scaling_grid(&t, View::Wide);
        assert_eq!(wide.rows[0].cells[4].text, "0.45–0.60");
    }

    #[test]
    fn a_missing_count_is_a_dash_and_the_fastest_at_the_most_cores_comes_first() {
        let mut summary = crate::full_summary(&[], None, None);
        summary.scaling = vec![
            curve(
                "slow",
                vec![point(1, 10.0, 1.0, None), point(4, 20.0, 0.5, None)],
            ),
            curve(
                "fast",
                vec![point(1, 10.0, 1.0, None), point(2, 19.0, 0.95, None)],
            ),
        ];
        let tables = scaling_tables(&summary);
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].counts(), [1, 2, 4]);
        let g = scaling_grid(&tables[0], View::Ranking);
        let servers: Vec<&str> = g.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
        assert_eq!(
            servers,
            ["slow", "fast"],
            "ordered by req/s at 4 cores, missing last"
        );
        let slow_at_2 = &g.rows[0].cells[2];
        assert_eq!((slow_at_2.text.as_str(), slow_at_2.raw.as_str()), ("-", ""));
    }
}
