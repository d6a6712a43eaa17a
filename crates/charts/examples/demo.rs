//! Writes one chart of each kind into the folder given as the first argument:
//! `cargo run -p serverbench-charts --example demo -- /tmp/charts`.

use serverbench_charts::{Bar, BarChart, LineChart, Series, XAxis};
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    std::fs::create_dir_all(&dir)?;
    let bars = BarChart::new(
        "Requests/s (median, 95% interval)",
        "requests/s",
        vec![
            Bar::new("c/epoll", 182_000.0).with_interval(176_000.0, 185_500.0),
            Bar::new("rust/hyper", 151_000.0).with_interval(149_000.0, 158_000.0),
            Bar::new("node/http", 31_500.0).with_interval(30_100.0, 33_000.0),
        ],
    );
    let curve = |name: &str, k: f64| Series {
        name: name.into(),
        points: [50.0, 75.0, 90.0, 99.0, 99.9, 99.99]
            .iter()
            .map(|p: &f64| (*p, k * (1.0 + (100.0 / (100.0 - p)).ln().powi(2))))
            .collect(),
    };
    let lines = LineChart::new(
        "Latency by percentile",
        "percentile",
        "latency (µs)",
        XAxis::Percentile,
        vec![curve("c/epoll", 120.0), curve("node/http", 900.0)],
    )
    .with_log_y();
    std::fs::write(dir.join("bars.svg"), bars.to_svg())?;
    std::fs::write(dir.join("percentiles.svg"), lines.to_svg())?;
    Ok(())
}
