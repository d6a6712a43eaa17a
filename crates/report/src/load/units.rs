//! How a load's text writes microseconds: its summary, live line and tables.

/// Microseconds, scaled to a readable unit.
pub fn us(v: f64) -> String {
    if v >= 1_000_000.0 {
        format!("{:.2}s", v / 1e6)
    } else if v >= 1000.0 {
        format!("{:.2}ms", v / 1e3)
    } else {
        format!("{v:.0}µs")
    }
}
