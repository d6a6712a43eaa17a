//! A capacity search's text (`serverbench load --find-max`): one line on the search, the curve
//! as a table, the answer and its note, under 120 columns.

use serverbench_model::capacity::{CapacityResult, Ending};
use serverbench_model::slo::micros;
use serverbench_model::Mode;
use std::fmt::Write as _;

/// The terminal view: one line on the search, the curve, the answer (under 120 columns).
pub fn render(r: &CapacityResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Capacity of {} for {} (±{}%, at most {} steps)",
        r.target.join(" "),
        r.slo,
        r.precision * 100.0,
        r.max_steps
    );
    // With --server-pid a column of the server's CPU per request; the verdict gives way.
    let cpu = r
        .steps
        .iter()
        .any(|s| s.server_cpu_us_per_request.is_some());
    let (cpu_head, room) = if cpu { (" srv µs/req", 22) } else { ("", 33) };
    let (unit, counted) = match r.mode {
        Mode::Grpc => ("calls/s", "calls"),
        _ => ("req/s", "requests"),
    };
    let _ = writeln!(
        s,
        "  {:>4} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7}{cpu_head}  verdict",
        "step", "target/s", "achieved/s", counted, "p50", "p99", "p99.9", "errors", "late"
    );
    for (i, st) in r.steps.iter().enumerate() {
        let verdict = match (&st.client_limit, st.met) {
            (Some(_), _) => "client limit".to_string(),
            (None, true) => "met".to_string(),
            (None, false) => format!("missed: {}", st.misses.join(", ")),
        };
        let _ = writeln!(
            s,
            "  {:>4} {:>10.0} {:>10.1} {:>9} {:>9} {:>9} {:>9} {:>7.3}% {:>7}{}  {}",
            i + 1,
            st.rate_target,
            st.rate_achieved,
            st.requests,
            micros(st.p50_us),
            micros(st.p99_us),
            micros(st.p999_us),
            st.errors_pct,
            st.late,
            match (cpu, st.server_cpu_us_per_request) {
                (false, _) => String::new(),
                (true, Some(us)) => format!(" {us:>10.1}"),
                (true, None) => format!(" {:>10}", "-"),
            },
            clip(&verdict, room)
        );
    }
    let answer = match (r.capacity_rps, r.failed_at_rps, r.ending) {
        (Some(c), _, Ending::ClientLimit) => format!(
            "≥ {c:.0} {unit} (client limit {:.0})",
            r.client_ceiling_rps.unwrap_or(0.0)
        ),
        (Some(c), Some(f), _) => format!("{c:.0} {unit} (missed at {f:.0})"),
        (Some(c), None, _) => format!("at least {c:.0} {unit}"),
        (None, ..) => "none found".to_string(),
    };
    let _ = writeln!(
        s,
        "  Capacity     {answer}: {}; {} steps in {:.1}s",
        r.ending.describe(),
        r.steps.len(),
        r.search_s
    );
    if let (Some(c), false) = (r.client_ceiling_rps, r.ending == Ending::ClientLimit) {
        let _ = writeln!(
            s,
            "  Client       sent at most {c:.0} {unit} open loop in a step it could not keep"
        );
    }
    if let Some(note) = &r.note {
        for (i, line) in wrap(note, 105).iter().enumerate() {
            let head = if i == 0 { "Note" } else { "" };
            let _ = writeln!(s, "  {head:<12} {line}");
        }
    }
    s
}

/// The search's note as said on stderr: wrapped at 90 columns, `head` before the first line
/// and its width of blanks before the others.
pub fn told(note: &str, head: &str) -> String {
    let mut s = String::new();
    for (i, line) in wrap(note, 90).iter().enumerate() {
        let head = if i == 0 { head } else { "" };
        let _ = writeln!(s, "{head:<28} {line}");
    }
    s
}

/// `text` in lines of at most `n` characters, broken at spaces.
fn wrap(text: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= n => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(clip(word, n)),
        }
    }
    lines
}

/// `text` cut to `n` characters with an ellipsis.
fn clip(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_string();
    }
    let mut t: String = text.chars().take(n - 1).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::capacity::Step;

    fn result() -> CapacityResult {
        let step = |rate: f64, p99: f64, met: bool| Step {
            rate_target: rate,
            rate_achieved: rate,
            requests: 10_000,
            p50_us: 900.0,
            p99_us: p99,
            p999_us: p99 * 2.0,
            met,
            misses: if met {
                vec![]
            } else {
                vec![format!("p99 {} > 5ms", micros(p99))]
            },
            ..Step::default()
        };
        CapacityResult {
            target: vec!["http://127.0.0.1:8080/hello".into()],
            mode: Mode::Http,
            slo: "p99<=5ms,errors<=0.1%".parse().unwrap(),
            precision: 0.05,
            max_steps: 20,
            capacity_rps: Some(1000.0),
            failed_at_rps: Some(1031.0),
            client_ceiling_rps: None,
            ending: Ending::Converged,
            note: None,
            search_s: 12.5,
            steps: vec![step(1000.0, 1200.0, true), step(2000.0, 123_456.0, false)],
        }
    }

    #[test]
    fn the_table_fits_in_120_columns_and_gives_the_answer() {
        let text = render(&result());
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{line}");
        }
        assert!(
            text.contains("Capacity     1000 req/s (missed at 1031)"),
            "{text}"
        );
        assert!(text.contains("missed: p99 123.456ms > 5ms"), "{text}");
    }

    #[test]
    fn a_grpc_search_counts_calls_and_answers_in_calls_per_second() {
        let mut r = result();
        r.target = vec!["grpc://127.0.0.1:50051/serverbench.Bench/Sum".into()];
        r.mode = Mode::Grpc;
        let text = render(&r);
        assert!(
            text.contains("Capacity     1000 calls/s (missed at 1031)"),
            "{text}"
        );
        let head = text.lines().nth(1).unwrap();
        assert!(
            head.contains("calls") && !head.contains("requests"),
            "{head}"
        );
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains(r#""mode":"grpc""#), "{json}");
        let http = serde_json::to_string(&result()).unwrap();
        assert!(!http.contains("mode"), "{http}");
    }

    #[test]
    fn a_search_ended_by_the_client_gives_both_figures_and_what_would_find_the_knee() {
        let mut r = result();
        r.ending = Ending::ClientLimit;
        r.failed_at_rps = None;
        r.client_ceiling_rps = Some(1040.0);
        r.note = Some(format!(
            "capacity ≥ 1000/s (client limit 1040/s): {}",
            "x ".repeat(80)
        ));
        let text = render(&r);
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{line}");
        }
        assert!(
            text.contains("Capacity     ≥ 1000 req/s (client limit 1040)"),
            "{text}"
        );
        assert!(!text.contains('…'), "the note is wrapped, not cut: {text}");
        let said = told(r.note.as_deref().unwrap(), "serverbench load --find-max:");
        assert!(
            said.starts_with("serverbench load --find-max: capacity ≥ 1000/s"),
            "{said}"
        );
        assert!(
            said.lines().skip(1).all(|l| l.starts_with(&" ".repeat(29))),
            "{said}"
        );
        r.ending = Ending::Converged;
        r.failed_at_rps = Some(1031.0);
        let text = render(&r);
        assert!(text.contains("1000 req/s (missed at 1031)"), "{text}");
        assert!(text.contains("sent at most 1040 req/s open loop"), "{text}");
    }

    #[test]
    fn the_servers_cpu_gets_a_column_and_the_table_still_fits() {
        let mut r = result();
        r.steps[0].server_cpu_us_per_request = Some(42.5);
        let text = render(&r);
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{line}");
        }
        assert!(
            text.contains("srv µs/req") && text.contains("42.5"),
            "{text}"
        );
    }
}
