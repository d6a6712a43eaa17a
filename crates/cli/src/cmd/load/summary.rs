//! The short, wrk-like human summary of one load run.

use serverbench_engine::result::{Latency, LoadResult};
use std::fmt::Write;

/// Renders the summary (several lines, ending in a newline).
pub fn render(r: &LoadResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} ({}, {} threads, {} connections, {:.2}s)",
        r.target.join(" "),
        r.mode,
        r.threads,
        r.connections,
        r.duration_s
    );
    let what = if r.mode.is_stream() {
        "messages"
    } else {
        "requests"
    };
    let _ = writeln!(s, "  Requests     {} {what}, {:.1}/s", r.requests, r.rps);
    let _ = writeln!(
        s,
        "  Transfer     {} read, {} written",
        bytes(r.bytes_read),
        bytes(r.bytes_written)
    );
    if let (Some(down), Some(up)) = (r.mbps_down, r.mbps_up) {
        let _ = writeln!(
            s,
            "  Throughput   {down:.1} Mbps down, {up:.1} Mbps up, {} per connection",
            bytes(r.bytes_per_connection.unwrap_or(0.0) as u64)
        );
    }
    if r.requests > 0 && !r.mode.is_stream() {
        latency(&mut s, "Latency", &r.latency_us);
        if let Some(u) = &r.latency_us_uncorrected {
            latency(&mut s, "Uncorrected", u);
        }
    }
    if let (Some(target), Some(achieved)) = (r.rate_target, r.rate_achieved) {
        let _ = writeln!(
            s,
            "  Rate         target {target:.0}/s, achieved {achieved:.1}/s, {} late",
            r.late.unwrap_or(0)
        );
    }
    if !r.status.is_empty() {
        let codes: Vec<String> = r.status.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let _ = writeln!(s, "  Status       {}", codes.join(", "));
    }
    let _ = writeln!(s, "  Errors       {}", errors(r));
    let per_req = r
        .client_cpu_us_per_request
        .map_or(String::new(), |u| format!(" ({u:.2} µs/request)"));
    let saturated = if r.client_saturated {
        " -- CLIENT SATURATED: results may measure the client, not the server"
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "  Client CPU   {:.2}s{per_req}{saturated}",
        r.client_cpu_s
    );
    s
}

fn latency(s: &mut String, label: &str, l: &Latency) {
    let _ = writeln!(
        s,
        "  {label:<12} mean {}, stdev {}, max {}",
        us(l.mean),
        us(l.stdev),
        us(l.max)
    );
    let _ = writeln!(
        s,
        "  {:<12} p50 {}  p75 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}",
        "",
        us(l.p50),
        us(l.p75),
        us(l.p90),
        us(l.p99),
        us(l.p999),
        us(l.p9999)
    );
}

fn errors(r: &LoadResult) -> String {
    let e = &r.errors;
    if e.total() == 0 {
        return "none".to_string();
    }
    let kinds = [
        ("connect", e.connect),
        ("read", e.read),
        ("write", e.write),
        ("timeout", e.timeout),
        ("parse", e.parse),
        ("status", e.status),
        ("body", e.body),
    ];
    let parts: Vec<String> = kinds
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    parts.join(", ")
}

/// Microseconds, scaled to a readable unit.
pub(super) fn us(v: f64) -> String {
    if v >= 1_000_000.0 {
        format!("{:.2}s", v / 1e6)
    } else if v >= 1000.0 {
        format!("{:.2}ms", v / 1e3)
    } else {
        format!("{v:.0}µs")
    }
}

fn bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_engine::result::Mode;

    #[test]
    fn summary_lists_percentiles_status_and_errors() {
        let mut r = LoadResult {
            mode: Mode::Http,
            target: vec!["http://127.0.0.1:1/".into()],
            requests: 10,
            ..Default::default()
        };
        r.latency_us.p99 = 1500.0;
        r.status.insert("200".into(), 10);
        r.errors.read = 2;
        let out = render(&r);
        assert!(out.contains("p99 1.50ms"), "{out}");
        assert!(out.contains("200: 10"));
        assert!(out.contains("read 2"));
    }

    #[test]
    fn units_scale_with_magnitude() {
        assert_eq!(us(12.0), "12µs");
        assert_eq!(us(2_500_000.0), "2.50s");
        assert_eq!(bytes(1500), "1.5 kB");
    }
}
