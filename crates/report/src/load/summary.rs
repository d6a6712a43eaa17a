//! The short, wrk-like human summary of one load run.

use super::units::us;
use serverbench_model::result::{
    BodyResult, ConnectionMode, Http2Result, IdlePolicy, IdleResult, Latency, LoadResult, Silence,
    TlsResult, WsResult,
};
use std::fmt::Write;

/// Renders the summary (several lines, ending in a newline).
pub fn render(r: &LoadResult) -> String {
    let mut s = String::new();
    let mode = match r.connection_mode() {
        Some(ConnectionMode::NewConn) => format!("{}, a new connection per request", r.mode()),
        _ => r.mode().to_string(),
    };
    let _ = writeln!(
        s,
        "{} ({mode}, {}, {}, {:.2}s)",
        r.target.join(" "),
        plural(u64::from(r.threads), "thread"),
        plural(u64::from(r.connections), "connection"),
        r.duration_s
    );
    requests_lines(&mut s, r);
    let _ = writeln!(
        s,
        "  Transfer     {} read, {} written",
        bytes(r.bytes_read),
        bytes(r.bytes_written)
    );
    if let (Some(down), Some(up)) = (r.mbps_down(), r.mbps_up()) {
        let _ = writeln!(
            s,
            "  Throughput   {down:.1} Mbps down, {up:.1} Mbps up, {} per connection",
            bytes(r.bytes_per_connection().unwrap_or(0.0) as u64)
        );
    }
    if r.requests > 0 && !r.mode().is_stream() {
        latency(&mut s, "Latency", &r.latency_us);
        if let Some(u) = &r.latency_us_uncorrected {
            latency(&mut s, "Uncorrected", u);
        }
    }
    if let (Some(n), Some(per_s), Some(l)) = (r.connects, r.connects_per_s, &r.connect_latency_us) {
        let _ = writeln!(s, "  Connects     {n}, {per_s:.1}/s");
        latency(&mut s, "Connect", l);
    }
    if let Some(tls) = &r.tls {
        tls_lines(&mut s, tls);
    }
    if let Some(h2) = r.http2() {
        http2_line(&mut s, h2);
    }
    if let Some(ws) = r.ws() {
        ws_lines(&mut s, ws);
    }
    if let Some(g) = r.grpc() {
        super::grpc_lines::render(&mut s, g);
    }
    if let Some(h3) = r.http3() {
        super::h3_lines::render(&mut s, h3);
    }
    if let Some(b) = r.bodies() {
        body_lines(&mut s, b);
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
    super::mix_table::render(&mut s, r);
    let per_handshake = r
        .tls
        .as_ref()
        .and_then(|t| t.client_cpu_us_per_handshake)
        .map_or(String::new(), |u| format!(", {u:.1} µs/handshake"));
    let per_req = r.client_cpu_us_per_request.map_or(String::new(), |u| {
        format!(" ({u:.2} µs/request{per_handshake})")
    });
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
    if let Some(idle) = r.idle.as_ref().filter(|i| i.naps > 0) {
        idle_line(&mut s, idle);
    }
    if r.io == Some(serverbench_model::IoBackend::Uring) {
        let _ = writeln!(s, "  I/O          io_uring");
    }
    for note in &r.notes {
        let _ = writeln!(s, "  Note         {note}");
    }
    s
}

/// Requests answered, those still in flight at the end, and the longest silence.
fn requests_lines(s: &mut String, r: &LoadResult) {
    let (label, what) = if r.mode().is_stream() || r.mode().counts_messages() {
        ("Messages", "messages")
    } else if r.grpc().is_some() {
        ("Calls", "calls")
    } else {
        ("Requests", "requests")
    };
    let in_flight = match r.in_flight_at_end {
        0 => String::new(),
        n => format!(", {n} in flight at the end"),
    };
    let _ = writeln!(
        s,
        "  {label:<12} {} {what}, {:.1}/s{in_flight}",
        r.requests, r.rps
    );
    if let Some(l) = Silence::longest(&r.silences) {
        let _ = writeln!(
            s,
            "  Silence      no answer for {:.1} s, from {:.1} s to {:.1} s",
            l.seconds(),
            l.from_s,
            l.to_s
        );
    }
}

/// Request bodies sent, response bodies on the wire and decoded, encodings and their errors.
fn body_lines(s: &mut String, b: &BodyResult) {
    if b.requests_with_body > 0 {
        let _ = writeln!(
            s,
            "  Sent bodies  {}, mean {}, total {}",
            b.requests_with_body,
            bytes(b.request_body_bytes_mean as u64),
            bytes(b.request_body_bytes)
        );
    }
    let codings: Vec<String> = b
        .encodings
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(
        s,
        "  Bodies       mean {} on the wire, {} decoded ({})",
        bytes(b.wire_body_bytes_mean as u64),
        bytes(b.decoded_body_bytes_mean as u64),
        codings.join(", ")
    );
    if !b.encoding_errors.is_empty() {
        let errs: Vec<String> = b
            .encoding_errors
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let _ = writeln!(s, "  Encoding     {}", errs.join(", "));
    }
}

/// The naps taken when idle: their longest bounds what they added to a latency.
fn idle_line(s: &mut String, i: &IdleResult) {
    let policy = match i.policy {
        IdlePolicy::Auto => "auto",
        IdlePolicy::Block => "block",
        IdlePolicy::Nap => "fixed",
    };
    let _ = writeln!(
        s,
        "  Idle         {} naps ({policy}), mean {:.0} µs, max {:.0} µs: each latency may include up \
         to one nap",
        i.naps, i.nap_us_mean, i.nap_us_max
    );
}

/// What was negotiated, handshakes full and resumed, and their latency.
fn tls_lines(s: &mut String, t: &TlsResult) {
    if let Some(version) = &t.version {
        let mut parts = vec![version.clone()];
        parts.extend(t.cipher_suite.clone());
        parts.extend(t.key_exchange_group.clone());
        parts.push(format!("ALPN {}", t.alpn.as_deref().unwrap_or("none")));
        let mixed = if t.mixed { " (and others)" } else { "" };
        let _ = writeln!(s, "  TLS          {}{mixed}", parts.join(", "));
    }
    let _ = writeln!(
        s,
        "  Handshakes   {}, {:.1}/s: {} full, {} resumed (--tls-resume {})",
        t.handshakes, t.handshakes_per_s, t.handshakes_full, t.handshakes_resumed, t.resume
    );
    if t.handshakes > 0 {
        latency(s, "Handshake", &t.handshake_latency_us);
    }
}

/// The protocol, streams and what the server's SETTINGS said.
fn ws_lines(s: &mut String, w: &WsResult) {
    let every = w.reconnect_every.map_or(String::new(), |n| {
        format!(", a new connection every {n} messages")
    });
    let _ = writeln!(
        s,
        "  WebSocket    {} messages of {}, {} sent{every}",
        w.message_kind,
        bytes(w.message_size),
        w.messages_sent
    );
    let unanswered = match w.upgrades_unanswered {
        0 => String::new(),
        n => format!(", {n} unanswered at the end"),
    };
    let _ = writeln!(
        s,
        "  Upgrades     {}, {:.1}/s{unanswered}",
        w.upgrades, w.upgrades_per_s
    );
    if w.upgrades > 0 {
        latency(s, "Upgrade", &w.upgrade_latency_us);
    }
    if !w.close_codes.is_empty() {
        let c: Vec<String> = w
            .close_codes
            .iter()
            .map(|(c, n)| format!("{c} ×{n}"))
            .collect();
        let unexpected = match w.protocol_errors.get("unexpected close") {
            Some(n) => format!(" ({n} unexpected)"),
            None => String::new(),
        };
        let _ = writeln!(s, "  Closes       {}{unexpected}", c.join(", "));
    }
}

fn http2_line(s: &mut String, h: &Http2Result) {
    // The initial window is in every SETTINGS (its default when not sent): without it, none
    // arrived, which says nothing about a limit.
    let limit = match (h.max_concurrent_streams, h.initial_window_size) {
        (Some(n), _) => format!("server max {n}"),
        (None, Some(_)) => "no server limit".to_string(),
        (None, None) => "no server SETTINGS received".to_string(),
    };
    let window = h
        .initial_window_size
        .map_or(String::new(), |w| format!(", server window {w}"));
    let _ = writeln!(
        s,
        "  HTTP/2       {}, {} streams per connection ({limit}{window}), {} GOAWAY",
        h.protocol, h.streams, h.goaways
    );
}

pub(super) fn latency(s: &mut String, label: &str, l: &Latency) {
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
    let list = |m: &mut dyn Iterator<Item = (&String, &u64)>| {
        let c: Vec<String> = m.map(|(c, n)| format!("{c} {n}")).collect();
        format!(" ({})", c.join(", "))
    };
    let tls = r.tls.as_ref().filter(|t| !t.errors.is_empty());
    let tls = tls.map(|t| list(&mut t.errors.iter()));
    let h2 = r.http2().filter(|h| !h.errors.is_empty());
    let ws = r
        .ws()
        .map(|w| list(&mut w.upgrade_failures.iter().chain(&w.protocol_errors)));
    let h3 = r
        .http3()
        .filter(|h| !h.transport_errors.is_empty() || !h.h3_errors.is_empty());
    let h3 = h3.map(|h| list(&mut h.transport_errors.iter().chain(&h.h3_errors)));
    let protocol = h2.map(|h| list(&mut h.errors.iter())).or(ws).or(h3);
    let verdict = r.grpc().map(super::grpc_lines::failed_codes);
    let parts: Vec<String> = e
        .by_kind()
        .map(|(k, n)| match (k, &tls, &protocol, &verdict) {
            ("tls", Some(c), _, _) | ("protocol", _, Some(c), _) | ("verdict", _, _, Some(c)) => {
                format!("{k} {n}{c}")
            }
            _ => format!("{k} {n}"),
        })
        .collect();
    parts.join(", ")
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

/// `1 thread`, `2 threads`.
fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::result::{Http1Result, ProtocolResult};

    #[test]
    fn summary_lists_percentiles_status_and_errors() {
        let mut r = LoadResult {
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
    fn https_summary_shows_the_negotiation_handshakes_and_tls_causes() {
        let mut tls = TlsResult {
            version: Some("TLSv1.3".into()),
            cipher_suite: Some("TLS_AES_256_GCM_SHA384".into()),
            key_exchange_group: Some("X25519".into()),
            alpn: Some("http/1.1".into()),
            resume: "tickets".into(),
            handshakes: 100,
            handshakes_full: 2,
            handshakes_resumed: 98,
            client_cpu_us_per_handshake: Some(61.5),
            ..Default::default()
        };
        tls.errors.insert("handshake eof".into(), 3);
        let mut r = LoadResult {
            protocol: ProtocolResult::Http1(Http1Result {
                connection_mode: ConnectionMode::NewConn,
                ..Default::default()
            }),
            requests: 100,
            client_cpu_us_per_request: Some(61.5),
            tls: Some(tls),
            ..Default::default()
        };
        r.errors.tls = 3;
        let out = render(&r);
        for want in [
            "a new connection per request",
            "TLSv1.3, TLS_AES_256_GCM_SHA384, X25519, ALPN http/1.1",
            "100, 0.0/s: 2 full, 98 resumed (--tls-resume tickets)",
            "tls 3 (handshake eof 3)",
            "61.5 µs/handshake",
        ] {
            assert!(out.contains(want), "`{want}` in\n{out}");
        }
    }

    #[test]
    fn naps_are_shown_only_when_some_were_taken() {
        let mut r = LoadResult {
            requests: 10,
            idle: Some(IdleResult {
                policy: IdlePolicy::Auto,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(!render(&r).contains("Idle"));
        r.idle = Some(IdleResult {
            policy: IdlePolicy::Auto,
            naps: 1200,
            nap_us_mean: 48.2,
            nap_us_max: 201.0,
        });
        let out = render(&r);
        let line = out.lines().find(|l| l.contains("Idle")).unwrap();
        assert!(
            line.contains("1200 naps (auto), mean 48 µs, max 201 µs"),
            "{line}"
        );
        assert!(line.chars().count() <= 120, "{line}");
    }

    #[test]
    fn http2_without_the_servers_settings_does_not_claim_there_is_no_limit() {
        let mut h2 = Http2Result {
            protocol: "h2c".into(),
            streams: 10,
            ..Default::default()
        };
        let mut out = String::new();
        http2_line(&mut out, &h2);
        assert!(out.contains("no server SETTINGS received"), "{out}");
        h2.initial_window_size = Some(65_535);
        out.clear();
        http2_line(&mut out, &h2);
        assert!(
            out.contains("no server limit, server window 65535"),
            "{out}"
        );
    }

    #[test]
    fn an_http3_summary_has_its_lines_and_names_the_codes_behind_its_protocol_errors() {
        let h3 = serverbench_model::result::Http3Result {
            streams: 8,
            transport_errors: [("PROTOCOL_VIOLATION".to_string(), 1)].into(),
            h3_errors: [("H3_MESSAGE_ERROR".to_string(), 2)].into(),
            ..Default::default()
        };
        let r = LoadResult {
            requests: 10,
            protocol: ProtocolResult::Http3(h3),
            errors: serverbench_model::result::Errors {
                protocol: 3,
                ..Default::default()
            },
            ..Default::default()
        };
        let out = render(&r);
        assert!(
            out.contains("  HTTP/3       8 streams per connection"),
            "{out}"
        );
        assert!(
            out.contains("Errors       protocol 3 (PROTOCOL_VIOLATION 1, H3_MESSAGE_ERROR 2)"),
            "{out}"
        );
    }

    #[test]
    fn a_ws_summary_lists_closes_by_code_the_unexpected_ones_and_unanswered_upgrades() {
        let ws = WsResult {
            message_kind: "text".into(),
            upgrades: 3,
            upgrades_unanswered: 1,
            close_codes: [("1000".into(), 2), ("1011".into(), 1)].into(),
            protocol_errors: [("unexpected close".into(), 1)].into(),
            ..Default::default()
        };
        let mut r = LoadResult {
            requests: 150,
            protocol: ProtocolResult::WebSocket(ws),
            ..Default::default()
        };
        r.errors.protocol = 1;
        let out = render(&r);
        for want in [
            "Upgrades     3, 0.0/s, 1 unanswered at the end",
            "Closes       1000 ×2, 1011 ×1 (1 unexpected)",
            "protocol 1 (unexpected close 1)",
        ] {
            assert!(out.contains(want), "`{want}` in\n{out}");
        }
    }

    #[test]
    fn requests_left_in_flight_and_a_silence_are_shown() {
        let r = LoadResult {
            requests: 10,
            in_flight_at_end: 64,
            silences: vec![Silence {
                from_s: 0.5,
                to_s: 4.0,
            }],
            ..Default::default()
        };
        let out = render(&r);
        assert!(
            out.contains("10 requests, 0.0/s, 64 in flight at the end"),
            "{out}"
        );
        assert!(
            out.contains("Silence      no answer for 3.5 s, from 0.5 s to 4.0 s"),
            "{out}"
        );
        let quiet = render(&LoadResult::default());
        assert!(
            !quiet.contains("in flight") && !quiet.contains("Silence"),
            "{quiet}"
        );
    }

    #[test]
    fn units_scale_with_magnitude() {
        assert_eq!(us(12.0), "12µs");
        assert_eq!(us(2_500_000.0), "2.50s");
        assert_eq!(bytes(1500), "1.5 kB");
    }

    #[test]
    fn one_thread_is_not_written_as_threads() {
        assert_eq!(plural(1, "thread"), "1 thread");
        assert_eq!(plural(2, "connection"), "2 connections");
    }
}
