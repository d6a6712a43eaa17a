//! The latency-versus-load chart of a capacity search: for each server × `find_max` profile,
//! p50, p99 and p99.9 (ms, log axis) against the rate asked for, every step of every lap, with
//! the goal's latency limits as flat lines. The knee is where the curves leave the floor.

use crate::figures::{slug, Figure};
use serverbench_analysis::capacity_rows::CapacityRow;
use serverbench_analysis::summary::Summary;
use serverbench_charts::{LineChart, Series, XAxis};
use serverbench_model::capacity::Step;
use serverbench_model::Slo;

/// One chart per capacity row with a curve (id `<scenario>-<profile>-<server>-capacity`).
pub fn capacity_charts(summary: &Summary) -> Vec<Figure> {
    summary
        .capacity
        .iter()
        .filter(|r| !r.curve.is_empty())
        .map(chart)
        .collect()
}

fn chart(r: &CapacityRow) -> Figure {
    let line = |name: &str, f: fn(&Step) -> f64| Series {
        name: name.to_string(),
        points: r
            .curve
            .iter()
            .map(|s| (s.rate_target, f(s) / 1000.0))
            .filter(|&(_, ms)| ms > 0.0)
            .collect(),
    };
    let mut series = vec![
        line("p50", |s| s.p50_us),
        line("p99", |s| s.p99_us),
        line("p99.9", |s| s.p999_us),
    ];
    let (lo, hi) = r.curve.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), s| {
        (lo.min(s.rate_target), hi.max(s.rate_target))
    });
    if let Ok(slo) = r.slo.parse::<Slo>() {
        for g in slo.goals.iter().filter(|g| g.measure.quantile().is_some()) {
            series.push(Series {
                name: format!("goal {g}"),
                points: vec![(lo, g.limit / 1000.0), (hi, g.limit / 1000.0)],
            });
        }
    }
    let title = format!(
        "{} · {} · {}: latency against load (capacity {})",
        r.server,
        r.scenario,
        r.profile,
        r.capacity_rps
            .map_or("none".to_string(), |c| format!("{c:.0}/s"))
    );
    let svg = LineChart::new(
        title.clone(),
        "requests/s asked for (open loop)",
        "latency ms (log)",
        XAxis::Linear,
        series,
    )
    .with_log_y()
    .to_svg();
    Figure {
        id: slug(&[&r.scenario, &r.profile, &r.server, "capacity"]),
        title,
        svg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capacity_chart_draws_three_percentiles_and_the_goal() {
        let step = |rate: f64, p99: f64| Step {
            rate_target: rate,
            p50_us: 500.0,
            p99_us: p99,
            p999_us: p99 * 2.0,
            ..Step::default()
        };
        let mut s = serverbench_analysis::summary::summarize(&[], None);
        s.capacity = vec![CapacityRow {
            server: "go/net-http".into(),
            scenario: "hello".into(),
            profile: "p99".into(),
            slo: "p99<=5ms".into(),
            capacity_rps: Some(2000.0),
            interval: None,
            lap_capacity: vec![2000.0],
            failed_at_rps: Some(2100.0),
            search_s: Some(10.0),
            server_cpu_us_per_request: None,
            endings: vec![],
            client_limited: false,
            client_ceiling_rps: None,
            curve: vec![
                step(1000.0, 1000.0),
                step(2000.0, 3000.0),
                step(2100.0, 50_000.0),
            ],
            rank: Some(1),
            laps: 1,
            failed_laps: 0,
        }];
        let figs = capacity_charts(&s);
        assert_eq!(figs.len(), 1);
        assert_eq!(figs[0].id, "hello-p99-go-net-http-capacity");
        for name in ["p50", "p99.9", "goal p99&lt;=5ms"] {
            assert!(figs[0].svg.contains(name), "{name}");
        }
    }
}
