//! Line charts: one polyline per series, on a linear, log10 or percentile x axis.

use crate::bars::truncate;
use crate::scale::{format_number, nice_ticks, Linear, TARGET_TICKS};
use crate::svg::{self, px, CHAR_WIDTH, PALETTE, TITLE_HEIGHT, WIDTH};
use std::fmt::Write;

const HEIGHT: f64 = 340.0;
const LEFT: f64 = 64.0;
/// The legend's column: between these widths, from its longest name.
const LEGEND_MIN: f64 = 110.0;
const LEGEND_MAX: f64 = 240.0;
const MIN_WIDTH: f64 = 360.0;
/// Room on each side of a lone x value, in axis units (log10 units on a log axis: about 3x).
const SINGLE_X_PAD: f64 = 0.5;
const BOTTOM: f64 = 44.0;
const LEGEND_ROW: f64 = 18.0;

/// Percentiles marked on a [`XAxis::Percentile`] axis.
const PERCENTILE_TICKS: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999];

/// How x values are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    Linear,
    /// Powers of ten are evenly spaced (x must be > 0).
    Log10,
    /// x is a percentile in (0, 100); placed at log10(1 / (1 - p)), as HdrHistogram's percentile
    /// distribution plots do, so the tail (99%, 99.9%, 99.99%) gets as much room as the median.
    Percentile,
}

impl XAxis {
    fn transform(self, x: f64) -> Option<f64> {
        let t = match self {
            XAxis::Linear => x,
            XAxis::Log10 if x > 0.0 => x.log10(),
            XAxis::Percentile if x > 0.0 && x < 100.0 => (100.0 / (100.0 - x)).log10(),
            _ => return None,
        };
        t.is_finite().then_some(t)
    }

    fn ticks(self, lo: f64, hi: f64) -> Vec<(f64, String)> {
        match self {
            XAxis::Linear => nice_ticks(lo, hi, TARGET_TICKS)
                .into_iter()
                .map(|t| (t, format_number(t)))
                .collect(),
            XAxis::Log10 => log_ticks(lo, hi),
            XAxis::Percentile => PERCENTILE_TICKS
                .iter()
                .filter_map(|p| self.transform(*p).map(|t| (t, format!("{p}%"))))
                .filter(|(t, _)| *t <= hi + 1e-9)
                .collect(),
        }
    }
}

/// Ticks at powers of ten covering `[lo, hi]` (in log10 space), with 2x and 5x steps between
/// them when the range spans at most two decades; trimmed to the ticks just outside the range.
fn log_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let (a, b) = (lo.floor() as i32, hi.ceil().max(lo.floor() + 1.0) as i32);
    let steps: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let all: Vec<(f64, f64)> = (a..=b)
        .flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e)))
        .map(|v| (v.log10(), v))
        .collect();
    let first = all.iter().rposition(|t| t.0 <= lo + 1e-9).unwrap_or(0);
    let last = all
        .iter()
        .position(|t| t.0 >= hi - 1e-9)
        .unwrap_or(all.len() - 1)
        .max(first + 1)
        .min(all.len() - 1);
    all[first..=last]
        .iter()
        .map(|(t, v)| (*t, format_number(*v)))
        .collect()
}

/// A series with its palette index and its points mapped onto the x axis.
type Placed<'a> = (usize, &'a Series, Vec<(f64, f64)>);

/// One named polyline.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line chart with a legend on the right.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_axis: XAxis,
    pub series: Vec<Series>,
    /// Width of the SVG in px (at least 360); [`LineChart::new`] uses 760.
    pub width: f64,
    /// A log10 y axis (values must be > 0), for long latency tails where a linear axis would
    /// flatten every curve but the slowest.
    pub y_log: bool,
}

impl LineChart {
    /// A chart of the default width with a linear y axis.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
        x_axis: XAxis,
        series: Vec<Series>,
    ) -> Self {
        LineChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_axis,
            series,
            width: WIDTH,
            y_log: false,
        }
    }

    /// The same chart drawn `width` px wide.
    pub fn with_width(mut self, width: f64) -> Self {
        self.width = width;
        self
    }

    /// The same chart with a log10 y axis.
    pub fn with_log_y(mut self) -> Self {
        self.y_log = true;
        self
    }

    fn y_ticks(&self, lo: f64, hi: f64) -> Vec<(f64, String)> {
        if self.y_log {
            return log_ticks(lo, hi);
        }
        nice_ticks(0.0, hi, TARGET_TICKS)
            .into_iter()
            .map(|t| (t, format_number(t)))
            .collect()
    }

    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let width = self.width.max(MIN_WIDTH);
        let series: Vec<Placed> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s, self.transformed(s)))
            .filter(|(_, _, pts)| !pts.is_empty())
            .collect();
        let right = series
            .iter()
            .map(|(_, s, _)| s.name.chars().count() as f64 * CHAR_WIDTH + 50.0)
            .fold(LEGEND_MIN, f64::max)
            .min(LEGEND_MAX);
        let legend_h = TITLE_HEIGHT + series.len() as f64 * LEGEND_ROW + 10.0;
        let height = HEIGHT.max(legend_h);
        let mut out = String::new();
        svg::open(&mut out, width, height, &self.title);
        let all: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|(_, _, p)| p.iter().copied())
            .collect();
        if all.is_empty() {
            svg::empty_note(&mut out, width, height);
            out.push_str("</svg>");
            return out;
        }
        let (xlo, xhi) = match bounds(all.iter().map(|p| p.0)) {
            (_, hi) if self.x_axis == XAxis::Percentile => (0.0, hi),
            // A single x value (one connection count, one second) sits mid-axis, not on an edge.
            (lo, hi) if hi - lo < 1e-9 => (lo - SINGLE_X_PAD, hi + SINGLE_X_PAD),
            bounds => bounds,
        };
        let (ylo, yhi) = bounds(all.iter().map(|p| p.1));
        let yticks = self.y_ticks(ylo, yhi);
        let xticks = self.x_axis.ticks(xlo, xhi);
        let x0 = xticks.first().map_or(xlo, |t| t.0.min(xlo));
        let x1 = xticks.last().map_or(xhi, |t| t.0.max(xhi));
        let plot_bottom = height - BOTTOM;
        let x = Linear {
            d0: x0,
            d1: x1,
            p0: LEFT,
            p1: width - right,
        };
        let y = Linear {
            d0: yticks.first().map_or(0.0, |t| t.0),
            d1: yticks.last().map_or(1.0, |t| t.0),
            p0: plot_bottom,
            p1: TITLE_HEIGHT + 18.0,
        };
        self.draw_axes(&mut out, &x, &y, &xticks, &yticks);
        for (color, s, pts) in &series {
            draw_series(&mut out, s, pts, PALETTE[color % PALETTE.len()], &x, &y);
        }
        for (row, (color, s, _)) in series.iter().enumerate() {
            let ly = TITLE_HEIGHT + 10.0 + row as f64 * LEGEND_ROW;
            let lx = width - right + 14.0;
            svg::line(
                &mut out,
                (lx, ly),
                (lx + 18.0, ly),
                PALETTE[color % PALETTE.len()],
                3.0,
            );
            let max_chars = ((right - 44.0) / CHAR_WIDTH) as usize;
            let name = truncate(&s.name, max_chars);
            svg::text(&mut out, lx + 24.0, ly + 4.0, "start", "#222222", &name);
        }
        out.push_str("</svg>");
        out
    }

    fn transformed(&self, s: &Series) -> Vec<(f64, f64)> {
        let y = |v: f64| match self.y_log {
            true => XAxis::Log10.transform(v),
            false => v.is_finite().then_some(v),
        };
        s.points
            .iter()
            .filter_map(|(px, py)| Some((self.x_axis.transform(*px)?, y(*py)?)))
            .collect()
    }

    fn draw_axes(
        &self,
        out: &mut String,
        x: &Linear,
        y: &Linear,
        xt: &[(f64, String)],
        yt: &[(f64, String)],
    ) {
        for (t, label) in yt {
            let ty = y.map(*t);
            svg::line(out, (x.p0, ty), (x.p1, ty), "#e5e5e5", 1.0);
            svg::text(out, x.p0 - 6.0, ty + 4.0, "end", "#444444", label);
        }
        for (t, label) in xt {
            let tx = x.map(*t);
            svg::line(out, (tx, y.p0), (tx, y.p1), "#f0f0f0", 1.0);
            svg::text(out, tx, y.p0 + 15.0, "middle", "#444444", label);
        }
        svg::line(out, (x.p0, y.p0), (x.p1, y.p0), "#999999", 1.0);
        svg::line(out, (x.p0, y.p0), (x.p0, y.p1), "#999999", 1.0);
        svg::text(
            out,
            (x.p0 + x.p1) / 2.0,
            y.p0 + 32.0,
            "middle",
            "#444444",
            &self.x_label,
        );
        let _ = write!(
            out,
            r##"<text x="14" y="{}" text-anchor="middle" fill="#444444" transform="rotate(-90 14 {})">{}</text>"##,
            px((y.p0 + y.p1) / 2.0),
            px((y.p0 + y.p1) / 2.0),
            svg::escape(&self.y_label)
        );
    }
}

fn draw_series(
    out: &mut String,
    s: &Series,
    pts: &[(f64, f64)],
    color: &str,
    x: &Linear,
    y: &Linear,
) {
    let coords: Vec<String> = pts
        .iter()
        .map(|(a, b)| format!("{},{}", px(x.map(*a)), px(y.map(*b))))
        .collect();
    let _ = write!(
        out,
        r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"><title>{}</title></polyline>"#,
        coords.join(" "),
        svg::escape(&s.name)
    );
    for (a, b) in pts {
        let _ = write!(
            out,
            r#"<circle cx="{}" cy="{}" r="3" fill="{color}"/>"#,
            px(x.map(*a)),
            px(y.map(*b))
        );
    }
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn percentile_chart() -> LineChart {
        LineChart::new(
            "Latency by percentile",
            "percentile",
            "latency (µs)",
            XAxis::Percentile,
            vec![Series {
                name: "node/http".into(),
                points: vec![(50.0, 300.0), (90.0, 450.0), (99.0, 900.0), (99.9, 4000.0)],
            }],
        )
    }

    #[test]
    fn percentile_axis_spaces_each_nine_evenly() {
        let a = XAxis::Percentile;
        assert!((a.transform(90.0).unwrap() - 1.0).abs() < 1e-12);
        assert!((a.transform(99.0).unwrap() - 2.0).abs() < 1e-12);
        assert!((a.transform(99.9).unwrap() - 3.0).abs() < 1e-9);
        assert_eq!(a.transform(100.0), None);
    }

    #[test]
    fn percentile_chart_labels_the_tail_ticks_it_reaches() {
        let svg = percentile_chart().to_svg();
        assert!(svg.contains(">99.9%<") && svg.contains(">50%<"));
        assert!(!svg.contains(">99.99%<"), "no tick beyond the data");
        assert_eq!(svg.matches("<circle").count(), 4);
    }

    #[test]
    fn log_axis_drops_points_it_cannot_place() {
        let chart = LineChart::new(
            "Mbps",
            "connections",
            "Mbps",
            XAxis::Log10,
            vec![Series {
                name: "go".into(),
                points: vec![(0.0, 1.0), (1.0, 5.0), (100.0, 3.0)],
            }],
        );
        let svg = chart.to_svg();
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains(">100<"));
    }

    #[test]
    fn log_y_axis_labels_decades_and_drops_values_it_cannot_place() {
        let mut c = percentile_chart().with_log_y();
        c.series[0].points.push((99.99, 0.0));
        let svg = c.to_svg();
        assert!(svg.contains(">200<") && svg.contains(">1000<") && svg.contains(">5000<"));
        assert_eq!(svg.matches("<circle").count(), 4, "the zero is left out");
    }

    #[test]
    fn log_ticks_add_two_and_five_steps_over_a_short_range() {
        let labels: Vec<String> = log_ticks(2f64.log10(), 30f64.log10())
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(labels, ["2", "5", "10", "20", "50"]);
    }

    #[test]
    fn long_legend_names_are_truncated_to_the_legend_column() {
        let mut c = percentile_chart();
        c.series[0].name = "x".repeat(80);
        let svg = c.to_svg();
        assert!(svg.contains('…'));
        assert_eq!(
            svg.matches(&"x".repeat(80)).count(),
            1,
            "only in the line's tooltip"
        );
    }

    #[test]
    fn a_single_x_value_is_drawn_inside_the_axis_not_on_its_edge() {
        let chart = LineChart::new(
            "Mbps",
            "connections",
            "Mbps",
            XAxis::Log10,
            vec![Series {
                name: "go".into(),
                points: vec![(100.0, 5.0)],
            }],
        );
        let svg = chart.to_svg();
        assert!(svg.contains(">50<") && svg.contains(">500<"), "{svg}");
        assert!(!svg.contains(&format!(r#"<circle cx="{}""#, px(LEFT))));
    }

    #[test]
    fn chart_without_points_says_no_data() {
        let mut c = percentile_chart();
        c.series.clear();
        assert!(c.to_svg().contains("no data"));
    }
}
