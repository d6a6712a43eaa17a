//! Small, dependency-free SVG charts for serverbench reports.
//!
//! Every chart is a plain value (data in, SVG text out) so the output is deterministic and can be
//! snapshot-tested: horizontal bars with interval whiskers ([`BarChart`]) and line charts on a
//! linear, log10 or HdrHistogram-style percentile axis ([`LineChart`]). The SVG needs no script,
//! no font and no network: it renders the same from a `file://` URL or embedded in a README.
//!
//! Hand-written on purpose: the output must be byte-for-byte deterministic (fixed number
//! formatting, no generated ids, no timestamps) for the report snapshots, and small enough to
//! inline in HTML without a script; charting crates render through a JavaScript runtime
//! (charming: ECharts) or bring far more than the two chart kinds needed here (plotters).

mod bars;
mod lines;
mod scale;
mod svg;

pub use bars::{Bar, BarChart};
pub use lines::{LineChart, Series, XAxis};
pub use scale::{format_number, nice_ticks};
pub use svg::PALETTE;
