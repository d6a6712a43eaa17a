//! Horizontal bars, one per label, with an optional interval drawn as a whisker.

use crate::scale::{format_number, nice_ticks, Linear, TARGET_TICKS};
use crate::svg::{self, px, CHAR_WIDTH, PALETTE, TITLE_HEIGHT, WIDTH};

/// The narrowest chart drawn, in px.
const MIN_WIDTH: f64 = 320.0;
use std::fmt::Write;

const BAR_HEIGHT: f64 = 18.0;
const BAR_GAP: f64 = 8.0;
const AXIS_HEIGHT: f64 = 34.0;
const RIGHT_MARGIN: f64 = 90.0;
const MAX_LABEL_WIDTH: f64 = 260.0;

/// One bar: a value and, when known, the interval around it (e.g. a 95% CI of the median).
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    /// Which palette colour to use (bars of one series share a colour).
    pub color: usize,
}

impl Bar {
    pub fn new(label: impl Into<String>, value: f64) -> Self {
        Bar {
            label: label.into(),
            value,
            interval: None,
            color: 0,
        }
    }

    pub fn with_interval(mut self, low: f64, high: f64) -> Self {
        self.interval = Some((low, high));
        self
    }
}

/// Horizontal bar chart; bars are drawn in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    /// Unit shown after each value and under the axis, e.g. `req/s`.
    pub unit: String,
    pub bars: Vec<Bar>,
    /// Width of the SVG in px (at least 320); [`BarChart::new`] uses 760.
    pub width: f64,
}

impl BarChart {
    /// A chart of the default width.
    pub fn new(title: impl Into<String>, unit: impl Into<String>, bars: Vec<Bar>) -> Self {
        BarChart {
            title: title.into(),
            unit: unit.into(),
            bars,
            width: WIDTH,
        }
    }

    /// The same chart drawn `width` px wide.
    pub fn with_width(mut self, width: f64) -> Self {
        self.width = width;
        self
    }

    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let width = self.width.max(MIN_WIDTH);
        let bars: Vec<&Bar> = self.bars.iter().filter(|b| b.value.is_finite()).collect();
        let label_w = bars
            .iter()
            .map(|b| b.label.chars().count() as f64 * CHAR_WIDTH + 12.0)
            .fold(60.0, f64::max)
            .min(MAX_LABEL_WIDTH.min(width / 3.0));
        let plot_h = bars.len().max(1) as f64 * (BAR_HEIGHT + BAR_GAP);
        let height = TITLE_HEIGHT + plot_h + AXIS_HEIGHT;
        let mut out = String::new();
        svg::open(&mut out, width, height, &self.title);
        if bars.is_empty() {
            svg::empty_note(&mut out, width, height);
            out.push_str("</svg>");
            return out;
        }
        let max = bars
            .iter()
            .map(|b| b.interval.map_or(b.value, |(_, hi)| hi.max(b.value)))
            .fold(0.0, f64::max);
        let ticks = nice_ticks(0.0, max, TARGET_TICKS);
        let x = Linear {
            d0: 0.0,
            d1: *ticks.last().unwrap(),
            p0: label_w,
            p1: width - RIGHT_MARGIN,
        };
        let axis_y = TITLE_HEIGHT + plot_h;
        for t in &ticks {
            let tx = x.map(*t);
            svg::line(&mut out, (tx, TITLE_HEIGHT), (tx, axis_y), "#e5e5e5", 1.0);
            svg::text(
                &mut out,
                tx,
                axis_y + 14.0,
                "middle",
                "#444444",
                &format_number(*t),
            );
        }
        svg::line(
            &mut out,
            (label_w, axis_y),
            (width - RIGHT_MARGIN, axis_y),
            "#999999",
            1.0,
        );
        let unit_x = (label_w + width - RIGHT_MARGIN) / 2.0;
        svg::text(
            &mut out,
            unit_x,
            axis_y + 29.0,
            "middle",
            "#444444",
            &self.unit,
        );
        for (i, bar) in bars.iter().enumerate() {
            let y = TITLE_HEIGHT + i as f64 * (BAR_HEIGHT + BAR_GAP) + BAR_GAP / 2.0;
            self.draw_bar(&mut out, bar, &x, y);
        }
        out.push_str("</svg>");
        out
    }

    fn draw_bar(&self, out: &mut String, bar: &Bar, x: &Linear, y: f64) {
        let mid = y + BAR_HEIGHT / 2.0;
        let label: String = truncate(&bar.label, ((x.p0 - 12.0) / CHAR_WIDTH) as usize);
        svg::text(out, x.p0 - 6.0, mid + 4.0, "end", "#222222", &label);
        let w = (x.map(bar.value.max(0.0)) - x.p0).max(0.5);
        let color = PALETTE[bar.color % PALETTE.len()];
        let _ = write!(
            out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{color}"><title>{}: {} {}</title></rect>"#,
            px(x.p0),
            px(y),
            px(w),
            px(BAR_HEIGHT),
            svg::escape(&bar.label),
            format_number(bar.value),
            svg::escape(&self.unit)
        );
        let mut value_x = x.map(bar.value.max(0.0));
        if let Some((lo, hi)) = bar.interval {
            let (lx, hx) = (x.map(lo.max(0.0)), x.map(hi.max(0.0)));
            svg::line(out, (lx, mid), (hx, mid), "#222222", 1.5);
            svg::line(out, (lx, mid - 5.0), (lx, mid + 5.0), "#222222", 1.5);
            svg::line(out, (hx, mid - 5.0), (hx, mid + 5.0), "#222222", 1.5);
            value_x = value_x.max(hx);
        }
        svg::text(
            out,
            value_x + 5.0,
            mid + 4.0,
            "start",
            "#222222",
            &format_number(bar.value),
        );
    }
}

pub(crate) fn truncate(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars || max_chars < 2 {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max_chars - 1).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> BarChart {
        BarChart::new(
            "Requests/s",
            "req/s",
            vec![
                Bar::new("c/epoll", 120_000.0).with_interval(110_000.0, 125_000.0),
                Bar::new("node/<http>", 30_000.0),
            ],
        )
    }

    #[test]
    fn bar_chart_draws_one_rect_per_bar_and_a_whisker_for_intervals() {
        let svg = chart().to_svg();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 3, "background + two bars");
        assert!(svg.contains("120k") && svg.contains("30k"));
        assert!(svg.contains("node/&lt;http&gt;"), "labels are escaped");
    }

    #[test]
    fn bar_chart_without_data_says_so() {
        let svg = BarChart::new("t", "u", vec![]).to_svg();
        assert!(svg.contains("no data"));
    }

    #[test]
    fn bar_chart_output_is_deterministic() {
        assert_eq!(chart().to_svg(), chart().to_svg());
    }

    #[test]
    fn bar_chart_takes_the_width_it_is_given() {
        let svg = chart().with_width(500.0).to_svg();
        assert!(svg.contains(r#"width="500""#), "{svg}");
        assert!(chart().with_width(10.0).to_svg().contains(r#"width="320""#));
    }

    #[test]
    fn long_labels_are_truncated_with_an_ellipsis() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
