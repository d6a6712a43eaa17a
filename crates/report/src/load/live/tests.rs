use super::*;

fn shape() -> Shape {
    Shape {
        warmup: Duration::from_secs(2),
        duration: Some(Duration::from_secs(10)),
        ..Shape::default()
    }
}

fn measuring() -> Snapshot {
    Snapshot {
        phase: Phase::Measuring,
        elapsed: Duration::from_millis(3_020),
        connected: 50,
        connections: 50,
        requests: 422_994,
        rate_now: 142_310.4,
        p50_us: Some(352.0),
        p99_us: Some(1_204.0),
        ..Snapshot::default()
    }
}

#[test]
fn a_measuring_line_shows_time_rates_percentiles_and_errors() {
    assert_eq!(
        render(&measuring(), &shape()),
        "measuring      3s/10s  ·    142,310 req/s (140,064 so far)  ·  p50 352µs  p99 1.20ms  ·  0 errors"
    );
}

#[test]
fn the_warm_up_is_its_own_phase_against_its_own_length() {
    let s = Snapshot {
        phase: Phase::WarmUp,
        elapsed: Duration::from_millis(1_000),
        requests: 40_100,
        rate_now: 41_233.0,
        p50_us: Some(610.0),
        p99_us: Some(1_900.0),
        ..Snapshot::default()
    };
    let line = render(&s, &shape());
    assert!(
        line.starts_with("warm-up         1s/2s  ·     41,233 req/s (40,100 so far)"),
        "{line}"
    );
}

#[test]
fn connecting_shows_how_many_connections_are_up() {
    let s = Snapshot {
        elapsed: Duration::from_millis(2_000),
        connected: 1_200,
        connections: 20_000,
        ..Snapshot::default()
    };
    assert_eq!(
        render(&s, &shape()),
        "connecting         2s  ·  1,200 of 20,000 connections up"
    );
}

#[test]
fn errors_are_listed_by_kind_when_there_are_some() {
    let mut s = measuring();
    s.errors.timeout = 5;
    s.errors.read = 2;
    let line = render(&s, &shape());
    assert!(line.ends_with("·  7 errors (read 2, timeout 5)"), "{line}");
}

#[test]
fn handshakes_and_streams_show_only_where_they_apply() {
    let mut s = measuring();
    s.handshakes_now = 4_210.0;
    s.in_flight = 512;
    let plain = render(&s, &shape());
    assert!(
        !plain.contains("handshakes") && !plain.contains("streams"),
        "{plain}"
    );
    let tls = render(
        &s,
        &Shape {
            handshakes: true,
            ..shape()
        },
    );
    assert!(tls.ends_with("·  4,210 handshakes/s"), "{tls}");
    let h2 = render(
        &s,
        &Shape {
            streams: true,
            ..shape()
        },
    );
    assert!(h2.ends_with("·  512 streams open"), "{h2}");
    let grpc = render(
        &s,
        &Shape {
            calls: true,
            ..shape()
        },
    );
    assert!(
        grpc.ends_with("·  512 calls open") && grpc.contains("calls/s"),
        "{grpc}"
    );
    assert!(!grpc.contains("msg/s"), "unary calls: {grpc}");
    let stream = render(
        &Snapshot {
            messages_now: 123_456.0,
            ..s.clone()
        },
        &Shape {
            calls: true,
            call_messages: true,
            ..shape()
        },
    );
    assert!(
        stream.ends_with("·  0 errors  ·  123,456 msg/s"),
        "{stream}"
    );
    assert!(stream.chars().count() <= 120, "{stream}");
}

#[test]
fn a_request_count_has_no_total_and_a_tcp_stream_shows_throughput() {
    let mut s = measuring();
    s.elapsed = Duration::from_secs(2);
    s.bytes_read = 250_000_000;
    s.bytes_written = 250_000_000;
    let counted = render(
        &s,
        &Shape {
            duration: None,
            ..shape()
        },
    );
    assert!(counted.starts_with("measuring          2s  ·"), "{counted}");
    let stream = render(
        &s,
        &Shape {
            stream: true,
            ..shape()
        },
    );
    assert!(
        stream.contains("1000.0 Mbps down, 1000.0 Mbps up  ·  0 errors"),
        "{stream}"
    );
    assert!(!stream.contains("req/s"), "{stream}");
}

#[test]
fn the_busiest_line_fits_120_columns() {
    let mut s = measuring();
    s.rate_now = 12_345_678.0;
    s.requests = 999_999_999;
    s.p50_us = Some(1_234_567.0);
    s.p99_us = Some(59_000_000.0);
    s.errors.connect = 1;
    s.errors.timeout = 12_345;
    s.in_flight = 100_000;
    let line = render(
        &s,
        &Shape {
            streams: true,
            ..shape()
        },
    );
    let cut = fit(&line, MAX_WIDTH - 1);
    assert!(cut.chars().count() < MAX_WIDTH, "{cut}");
    assert!(line.starts_with(&cut));
    assert_eq!(fit("µs", 1), "µ", "cut on characters, not bytes");
}

#[test]
fn durations_read_as_seconds_or_minutes() {
    assert_eq!(secs(Duration::from_millis(500)), "0.5s");
    assert_eq!(secs(Duration::from_millis(12_400)), "12s");
    assert_eq!(secs(Duration::from_secs(90)), "1m 30s");
}

#[test]
fn the_line_is_cleared_only_once_drawn_and_connections_are_told_above_it() {
    let mut line = LiveLine::new(shape(), Some(80));
    assert_eq!(line.clear(), "");
    let drawn = line.tick(&measuring());
    assert!(
        drawn.starts_with("\rmeasuring") && drawn.ends_with("\x1b[K"),
        "{drawn:?}"
    );
    assert!(drawn.chars().count() <= 80 + 4, "{drawn:?}");
    assert_eq!(
        line.connected(3, 50).as_deref(),
        Some("\r\x1b[K3 of 50 connections up\n")
    );
    assert_eq!(line.connected(50, 50), None);
    assert_eq!(line.clear(), "");
}
