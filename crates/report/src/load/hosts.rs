//! A distributed load's text (`serverbench load --hosts`): the merged summary, then each client
//! host's part and the hosts that ran out of CPU.

use super::units::us;
use serverbench_hosts::distributed::Distributed;
use std::fmt::Write as _;

/// The merged summary and the per-host breakdown under it.
pub fn render(d: &Distributed) -> String {
    let mut s = super::summary::render(&d.merged);
    let _ = writeln!(
        s,
        "  Start skew   {:.3} ms between {} client hosts",
        d.start_skew_ms,
        d.hosts.len()
    );
    let width = d.hosts.iter().map(|h| h.host.len()).max().unwrap_or(4);
    let _ = writeln!(
        s,
        "  {:width$}  {:>5}  {:>12}  {:>9}  {:>9}  client CPU",
        "host", "conns", "req/s", "p50", "p99"
    );
    for h in &d.hosts {
        let r = &h.result;
        let _ = writeln!(
            s,
            "  {:width$}  {:>5}  {:>12.1}  {:>9}  {:>9}  {:.2}s{}",
            h.host,
            r.connections,
            r.rps,
            us(r.latency_us.p50),
            us(r.latency_us.p99),
            r.client_cpu_s,
            if r.client_saturated { " SATURATED" } else { "" }
        );
    }
    if !d.saturated_hosts.is_empty() {
        let _ = writeln!(
            s,
            "  warning: client host(s) {} saturated: add client hosts or connections elsewhere",
            d.saturated_hosts.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_hosts::distributed::HostResult;
    use serverbench_model::LoadResult;

    #[test]
    fn each_client_host_gets_a_row_and_a_saturated_one_is_named_under_them() {
        let host = |name: &str, saturated: bool| HostResult {
            host: name.into(),
            result: LoadResult {
                connections: 25,
                rps: 1234.5,
                client_saturated: saturated,
                ..LoadResult::default()
            },
        };
        let d = Distributed {
            merged: LoadResult::default(),
            start_skew_ms: 0.25,
            saturated_hosts: vec!["load2".into()],
            hosts: vec![host("load1", false), host("load2", true)],
        };
        let text = render(&d);
        assert!(
            text.contains("Start skew   0.250 ms between 2 client hosts"),
            "{text}"
        );
        assert!(text.contains("  load1     25        1234.5"), "{text}");
        assert!(text
            .lines()
            .any(|l| l.starts_with("  load2") && l.ends_with("SATURATED")));
        assert!(text.contains("client host(s) load2 saturated"), "{text}");
    }
}
