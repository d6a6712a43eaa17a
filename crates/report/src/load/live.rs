//! `load`'s live view: one line on stderr, redrawn in place once a second from the engine's
//! [`Snapshot`]s — the phase, elapsed of total, req/s over the last second and so far, p50 and
//! p99 so far, errors by kind, and handshakes/s (`--new-conn` over TLS) or open streams
//! (HTTP/2, HTTP/3), calls/s and calls open (gRPC; streams: messages received/s instead of calls open) where they apply. Only on a terminal and without
//! `-q`; stdout is never touched.

use super::units::us;
use crate::grouped;
use serverbench_model::live::{Phase, Snapshot};
use std::time::Duration;

/// The widest line drawn (narrower when the terminal is).
const MAX_WIDTH: usize = 120;

/// What the line shows besides the common figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shape {
    /// The warm-up's length.
    pub warmup: Duration,
    /// The measurement's length (`None` with `-n`).
    pub duration: Option<Duration>,
    /// TCP stream: throughput instead of requests.
    pub stream: bool,
    /// `--new-conn` over https://: handshakes per second.
    pub handshakes: bool,
    /// HTTP/2 and HTTP/3: streams open.
    pub streams: bool,
    /// WebSocket: messages per second instead of requests.
    pub messages: bool,
    /// gRPC: calls per second and calls open instead of requests and streams.
    pub calls: bool,
    /// gRPC streaming calls: messages received per second instead of calls open.
    pub call_messages: bool,
}

/// The line on screen, redrawn at each tick and cleared at the end: the text to write to
/// stderr for each, escape codes included (the CLI writes it).
pub struct LiveLine {
    shape: Shape,
    width: usize,
    drawn: bool,
}

impl LiveLine {
    /// A line for `shape`, at most `columns` wide (the terminal's, when known).
    pub fn new(shape: Shape, columns: Option<usize>) -> Self {
        LiveLine {
            shape,
            width: columns.unwrap_or(MAX_WIDTH).min(MAX_WIDTH),
            drawn: false,
        }
    }

    /// A line of its own above the live one while connections open, e.g. `3 of 50
    /// connections up` (nothing once all are up).
    pub fn connected(&mut self, connected: u64, total: u64) -> Option<String> {
        (connected < total)
            .then(|| format!("{}{connected} of {total} connections up\n", self.clear()))
    }

    /// The line redrawn for a tick.
    pub fn tick(&mut self, snapshot: &Snapshot) -> String {
        self.drawn = true;
        let line = fit(&render(snapshot, &self.shape), self.width.saturating_sub(1));
        format!("\r{line}\x1b[K")
    }

    /// What removes the line (before the summary is printed): nothing when none is drawn.
    pub fn clear(&mut self) -> &'static str {
        match std::mem::take(&mut self.drawn) {
            true => "\r\x1b[K",
            false => "",
        }
    }
}

/// Cuts `line` to `width` characters.
fn fit(line: &str, width: usize) -> String {
    match line.char_indices().nth(width) {
        Some((i, _)) => line[..i].to_string(),
        None => line.to_string(),
    }
}

/// The line for one snapshot (no escape codes).
pub fn render(s: &Snapshot, shape: &Shape) -> String {
    let (label, total) = match s.phase {
        Phase::Connecting => {
            return format!(
                "connecting  {:>9}  ·  {} of {} connections up",
                secs(Duration::from_secs(s.elapsed.as_secs_f64().round() as u64)),
                grouped(s.connected as f64),
                grouped(s.connections as f64)
            )
        }
        Phase::WarmUp => ("warm-up", Some(shape.warmup)),
        Phase::Measuring => ("measuring", shape.duration),
    };
    // Ticks come about once a second: whole seconds, rounded.
    let elapsed = Duration::from_secs(s.elapsed.as_secs_f64().round() as u64);
    let time = match total {
        Some(t) => format!("{}/{}", secs(elapsed.min(t)), secs(t)),
        None => secs(elapsed),
    };
    let mut parts = vec![format!("{label:<10}  {time:>9}")];
    if shape.stream {
        parts.push(mbps(s));
    } else {
        parts.push(format!(
            "{:>9} {} ({} so far)",
            grouped(s.rate_now),
            match shape {
                Shape { messages: true, .. } => "msg/s",
                Shape { calls: true, .. } => "calls/s",
                _ => "req/s",
            },
            grouped(s.rate())
        ));
        parts.push(match (s.p50_us, s.p99_us) {
            (Some(p50), Some(p99)) => format!("p50 {}  p99 {}", us(p50), us(p99)),
            _ => "p50 -  p99 -".to_string(),
        });
    }
    parts.push(errors(s));
    if shape.handshakes {
        parts.push(format!("{} handshakes/s", grouped(s.handshakes_now)));
    }
    if shape.streams {
        parts.push(format!("{} streams open", grouped(s.in_flight as f64)));
    }
    if shape.call_messages {
        // In place of the calls open: the line stays within 120 columns.
        parts.push(format!("{} msg/s", grouped(s.messages_now)));
    } else if shape.calls {
        parts.push(format!("{} calls open", grouped(s.in_flight as f64)));
    }
    parts.join("  ·  ")
}

/// `3s`, `2.5s`, `1m 30s`.
fn secs(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 60_000 {
        humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
    } else if ms.is_multiple_of(1000) || ms >= 10_000 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

fn mbps(s: &Snapshot) -> String {
    let secs = s.elapsed.as_secs_f64().max(1e-9);
    let rate = |b: u64| b as f64 * 8.0 / secs / 1e6;
    format!(
        "{:.1} Mbps down, {:.1} Mbps up",
        rate(s.bytes_read),
        rate(s.bytes_written)
    )
}

/// `0 errors`, or the total and the kinds: `7 errors (timeout 5, read 2)`.
fn errors(s: &Snapshot) -> String {
    let total = s.errors.total();
    let noun = if total == 1 { "error" } else { "errors" };
    if total == 0 {
        return format!("0 {noun}");
    }
    let kinds: Vec<String> = s
        .errors
        .by_kind()
        .map(|(k, n)| format!("{k} {}", grouped(n as f64)))
        .collect();
    format!("{} {noun} ({})", grouped(total as f64), kinds.join(", "))
}

#[cfg(test)]
mod tests;
