//! `history trend --html FILE`: a self-contained page (no script, no network) with one chart per
//! series, drawn with `serverbench-charts`: the median req/s per run with its interval bounds,
//! each change point a vertical line named by its commit, and the commits under the chart. A
//! series with a cost (laps at a fixed rate, capacity searches) has a second chart: the CPU µs a
//! request cost, by run.

use crate::changepoint;
use crate::db::{History, HistoryError};
use crate::series::{Measure, Point};
use serverbench_charts::{format_number, LineChart, Series, XAxis};
use std::fmt::Write;

/// Most commit labels listed under a chart (the newest ones).
const LABELS: usize = 40;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn chart(title: &str, points: &[Point], m: Measure) -> String {
    let est: Vec<(f64, crate::series::Estimate)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some(((i + 1) as f64, p.stats.get(m)?)))
        .collect();
    let line = |name: &str, f: fn(&crate::series::Estimate) -> f64| Series {
        name: name.into(),
        points: est.iter().map(|(x, e)| (*x, f(e))).collect(),
    };
    let mut series = vec![
        Series {
            name: format!("median {}", m.unit()),
            ..line("", |e| e.median)
        },
        line("interval low", |e| e.low),
        line("interval high", |e| e.high),
    ];
    let medians: Vec<f64> = est.iter().map(|(_, e)| e.median).collect();
    let (lo, hi) = est
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), (_, e)| {
            (lo.min(e.low), hi.max(e.high))
        });
    for c in changepoint::detect(&medians, &changepoint::Options::default()) {
        let x = est[c.index].0;
        series.push(Series {
            name: format!(
                "change {:+.1}% at {}",
                c.magnitude() * 100.0,
                points[c.index].label()
            ),
            points: vec![(x, lo), (x, hi)],
        });
    }
    LineChart::new(title, "run", m.unit(), XAxis::Linear, series).to_svg()
}

/// The page over every series of `history`.
pub fn html(history: &History) -> Result<String, HistoryError> {
    let keys = history.series_keys()?;
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>serverbench history</title>\n<style>body{font-family:system-ui,sans-serif;\
         max-width:1000px;margin:2em auto;color:#222}section{margin-bottom:2.5em}\
         p.commits{font-size:0.8em;color:#555;word-break:break-all}</style></head><body>\n\
         <h1>serverbench history</h1>\n",
    );
    let _ = writeln!(
        out,
        "<p>{} series from <code>{}</code>. Each run: the median req/s of its laps and the 95% \
         bootstrap interval; vertical lines: change points (E-divisive means, t-test).</p>",
        keys.len(),
        esc(&history.path().display().to_string())
    );
    for k in &keys {
        let points = history.series(k)?;
        let title = format!("{} (testbed {:.8})", k.label(), k.testbed);
        let _ = writeln!(out, "<section><h2>{}</h2>", esc(&k.label()));
        out.push_str(&chart(&title, &points, Measure::Rps));
        if points.iter().any(|p| p.stats.cpu.is_some()) {
            let title = format!("{} (testbed {:.8}): CPU per request", k.label(), k.testbed);
            out.push_str(&chart(&title, &points, Measure::Cpu));
        }
        let first = points.len().saturating_sub(LABELS);
        let labels: Vec<String> = points
            .iter()
            .enumerate()
            .skip(first)
            .map(|(i, p)| {
                let m = p.stats.rps.map_or("-".into(), |e| format_number(e.median));
                format!("{}: {} ({m})", i + 1, esc(&p.label()))
            })
            .collect();
        let _ = writeln!(
            out,
            "\n<p class=\"commits\">{}</p></section>",
            labels.join(" · ")
        );
    }
    out.push_str("</body></html>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{record_series, RunSpec};

    #[test]
    fn the_page_has_a_chart_per_series_with_its_change_point_and_no_script() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.db")).unwrap();
        let mut levels = vec![1.0; 10];
        levels.extend([0.8; 5]);
        let base = RunSpec {
            servers: vec![("mine".into(), 1e5), ("node/http".into(), 4e4)],
            ..RunSpec::default()
        };
        record_series(&mut h, dir.path(), &levels, &base).unwrap();
        let page = html(&h).unwrap();
        assert_eq!(page.matches("<svg").count(), 2);
        assert!(page.contains("change -20."), "change point missing");
        assert!(page.contains("c000010"));
        assert!(!page.contains("<script"));
    }

    #[test]
    fn a_series_at_a_fixed_rate_also_charts_what_a_request_cost() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.db")).unwrap();
        let levels = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.4, 1.4, 1.4, 1.4, 1.4, 1.4];
        record_series(
            &mut h,
            dir.path(),
            &levels,
            &RunSpec::at_rate(40.0, 2_000.0, 3),
        )
        .unwrap();
        let page = html(&h).unwrap();
        assert_eq!(page.matches("<svg").count(), 2, "req/s and µs/req");
        assert!(page.contains("CPU per request"));
        let shift: f64 = page
            .split("change +")
            .nth(1)
            .and_then(|rest| rest.split('%').next()?.parse().ok())
            .expect("the cost's change point");
        assert!((35.0..45.0).contains(&shift), "{shift}");
    }
}
