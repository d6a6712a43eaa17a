//! Line charts: one polyline per series, on a linear, log10 or percentile x axis.

use crate::scale::{format_number, nice_ticks, Linear, TARGET_TICKS};
use crate::svg::{self, px, PALETTE, TITLE_HEIGHT, WIDTH};
use std::fmt::Write;

const HEIGHT: f64 = 340.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 170.0;
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
            XAxis::Log10 => {
                let (a, b) = (lo.floor() as i32, hi.ceil().max(lo.floor() + 1.0) as i32);
                (a..=b)
                    .map(|e| (e as f64, format_number(10f64.powi(e))))
                    .collect()
            }
            XAxis::Percentile => PERCENTILE_TICKS
                .iter()
                .filter_map(|p| self.transform(*p).map(|t| (t, format!("{p}%"))))
                .filter(|(t, _)| *t <= hi + 1e-9)
                .collect(),
        }
    }
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
}

impl LineChart {
    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let series: Vec<Placed> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s, self.transformed(s)))
            .filter(|(_, _, pts)| !pts.is_empty())
            .collect();
        let legend_h = TITLE_HEIGHT + series.len() as f64 * LEGEND_ROW + 10.0;
        let height = HEIGHT.max(legend_h);
        let mut out = String::new();
        svg::open(&mut out, WIDTH, height, &self.title);
        let all: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|(_, _, p)| p.iter().copied())
            .collect();
        if all.is_empty() {
            svg::empty_note(&mut out, WIDTH, height);
            out.push_str("</svg>");
            return out;
        }
        let (xlo, xhi) = bounds(all.iter().map(|p| p.0));
        let xlo = if self.x_axis == XAxis::Percentile {
            0.0
        } else {
            xlo
        };
        let (_, yhi) = bounds(all.iter().map(|p| p.1));
        let yticks = nice_ticks(0.0, yhi, TARGET_TICKS);
        let xticks = self.x_axis.ticks(xlo, xhi);
        let x0 = xticks.first().map_or(xlo, |t| t.0.min(xlo));
        let x1 = xticks.last().map_or(xhi, |t| t.0.max(xhi));
        let plot_bottom = height - BOTTOM;
        let x = Linear {
            d0: x0,
            d1: x1,
            p0: LEFT,
            p1: WIDTH - RIGHT,
        };
        let y = Linear {
            d0: 0.0,
            d1: *yticks.last().unwrap(),
            p0: plot_bottom,
            p1: TITLE_HEIGHT + 8.0,
        };
        self.draw_axes(&mut out, &x, &y, &xticks, &yticks);
        for (color, s, pts) in &series {
            draw_series(&mut out, s, pts, PALETTE[color % PALETTE.len()], &x, &y);
        }
        for (row, (color, s, _)) in series.iter().enumerate() {
            let ly = TITLE_HEIGHT + 10.0 + row as f64 * LEGEND_ROW;
            let lx = WIDTH - RIGHT + 14.0;
            svg::line(
                &mut out,
                (lx, ly),
                (lx + 18.0, ly),
                PALETTE[color % PALETTE.len()],
                3.0,
            );
            svg::text(&mut out, lx + 24.0, ly + 4.0, "start", "#222222", &s.name);
        }
        out.push_str("</svg>");
        out
    }

    fn transformed(&self, s: &Series) -> Vec<(f64, f64)> {
        s.points
            .iter()
            .filter(|(_, v)| v.is_finite())
            .filter_map(|(px, py)| self.x_axis.transform(*px).map(|t| (t, *py)))
            .collect()
    }

    fn draw_axes(
        &self,
        out: &mut String,
        x: &Linear,
        y: &Linear,
        xt: &[(f64, String)],
        yt: &[f64],
    ) {
        for t in yt {
            let ty = y.map(*t);
            svg::line(out, (x.p0, ty), (x.p1, ty), "#e5e5e5", 1.0);
            svg::text(
                out,
                x.p0 - 6.0,
                ty + 4.0,
                "end",
                "#444444",
                &format_number(*t),
            );
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
        LineChart {
            title: "Latency by percentile".into(),
            x_label: "percentile".into(),
            y_label: "latency (µs)".into(),
            x_axis: XAxis::Percentile,
            series: vec![Series {
                name: "node/http".into(),
                points: vec![(50.0, 300.0), (90.0, 450.0), (99.0, 900.0), (99.9, 4000.0)],
            }],
        }
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
        let chart = LineChart {
            title: "Mbps".into(),
            x_label: "connections".into(),
            y_label: "Mbps".into(),
            x_axis: XAxis::Log10,
            series: vec![Series {
                name: "go".into(),
                points: vec![(0.0, 1.0), (1.0, 5.0), (100.0, 3.0)],
            }],
        };
        let svg = chart.to_svg();
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains(">100<"));
    }

    #[test]
    fn chart_without_points_says_no_data() {
        let mut c = percentile_chart();
        c.series.clear();
        assert!(c.to_svg().contains("no data"));
    }
}
