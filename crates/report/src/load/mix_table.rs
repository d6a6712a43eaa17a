//! `--mix`: the summary's table of entries (their weights, the share of requests each got,
//! req/s, p50, p99 and errors), within 120 columns.

use super::units::us;
use serverbench_model::result::LoadResult;
use std::fmt::Write;

/// The widest entry name shown; longer ones keep their start and end.
const NAME: usize = 36;

/// The table (nothing without a mix).
pub fn render(s: &mut String, r: &LoadResult) {
    if r.mix().is_empty() {
        return;
    }
    let total_weight: f64 = r.mix().iter().map(|e| e.weight).sum();
    let total: u64 = r.mix().iter().map(|e| e.requests).sum();
    let _ = writeln!(
        s,
        "  Mix          {:<NAME$} {:>7} {:>7} {:>10} {:>9} {:>9} {:>7}",
        "entry", "weight", "got", "req/s", "p50", "p99", "errors"
    );
    for e in r.mix() {
        let pct = |part: f64, whole: f64| match whole > 0.0 {
            true => format!("{:.1}%", 100.0 * part / whole),
            false => "-".into(),
        };
        let lat = |v: f64| if e.requests > 0 { us(v) } else { "-".into() };
        let _ = writeln!(
            s,
            "               {:<NAME$} {:>7} {:>7} {:>10.1} {:>9} {:>9} {:>7}",
            clip(&e.name),
            pct(e.weight, total_weight),
            pct(e.requests as f64, total as f64),
            e.requests as f64 / r.duration_s.max(1e-9),
            lat(e.latency_us.p50),
            lat(e.latency_us.p99),
            e.errors.total()
        );
    }
}

/// `name`, or its start and end around `…` when longer than [`NAME`] characters.
fn clip(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= NAME {
        return name.to_string();
    }
    let head: String = chars[..NAME / 2].iter().collect();
    let tail: String = chars[chars.len() - (NAME - NAME / 2 - 1)..]
        .iter()
        .collect();
    format!("{head}…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::result::MixEntryResult;

    #[test]
    fn the_table_gives_weights_and_shares_within_120_columns() {
        let entry = |name: &str, weight: f64, requests: u64| MixEntryResult {
            name: name.into(),
            weight,
            requests,
            ..Default::default()
        };
        let r = LoadResult {
            duration_s: 2.0,
            protocol: serverbench_model::result::ProtocolResult::Http1(
                serverbench_model::result::Http1Result {
                    mix: vec![
                        entry("/baseline?a=1&b=2", 3.0, 750),
                        entry(&format!("/static/{}", "x".repeat(80)), 1.0, 250),
                    ],
                    ..Default::default()
                },
            ),
            ..Default::default()
        };
        let mut s = String::new();
        render(&mut s, &r);
        assert!(s.contains("75.0%   75.0%      375.0"), "{s}");
        assert!(s.contains("/static/xxx") && s.contains('…'), "{s}");
        for line in s.lines() {
            assert!(line.chars().count() <= 120, "{line}");
        }
    }
}
