//! Per-thread statistics (no sharing on the hot path), merged into a `LoadResult` at the end.

pub(crate) mod assemble;
mod bodies;
mod connections;
mod grpc;
mod h3;
mod http2;
mod mix;
mod silence;
mod warmup;
mod ws;

pub use bodies::{BodyStats, EncodingCause};
pub use connections::ConnStats;
pub use grpc::{GrpcCause, GrpcStats};
pub use h3::{H3Stats, QuicTotals};
pub use http2::H2Stats;
pub use mix::{results as mix_results, EntryStats};
pub use silence::Silences;
pub use warmup::WarmUp;
pub use ws::{WsCause, WsStats};

use crate::result::{Errors, TimelinePoint};
use crate::tls::{Negotiated, TlsCause};
use hdrhistogram::Histogram;
pub(crate) use serverbench_model::histo::{
    latency_of, merge_sparse, new_histogram, p99_of_buckets, BUCKETS, SUB,
};
use serverbench_wire::http::Encoding;

/// The error kinds of `Errors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Connect,
    Read,
    Write,
    Timeout,
    Parse,
    Status,
    Body,
    /// A failed handshake or a TLS error on an established session, with its cause.
    Tls(TlsCause),
    /// HTTP/2: a connection error, a GOAWAY with an error or a stream reset, with its code.
    H2(u32),
    /// HTTP/2: the server reset a stream with REFUSED_STREAM (it did not process it).
    RefusedStream,
    /// WebSocket: a failed upgrade, a protocol error, a wrong echo or an unexpected close.
    Ws(WsCause),
    /// `--verify`: an answer in a coding not asked for, or not decodable.
    Encoding(EncodingCause),
    /// A body that ended before its length said (the connection closed).
    Truncated,
    /// HTTP/3: a connection closed with a QUIC transport error or an HTTP/3 code, a reset
    /// stream, a malformed answer (each by name in [`H3Stats`]); counted as `protocol`.
    H3,
    /// gRPC: a call that failed by gRPC's rules, with its cause.
    Grpc(GrpcCause),
}

fn bucket_of(us: u64) -> usize {
    let v = us.clamp(1, (1 << 36) - 1);
    if v < 8 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    (8 + (e - 3) * SUB + ((v >> (e - 3)) as u32 - 8)) as usize
}

/// One second of one thread (or of all threads once merged). Its latency buckets are kept
/// sparse, sorted by bucket, because a second hits a few dozen of the [`BUCKETS`]: the timeline
/// grows by tens of bytes per second instead of a kilobyte. The current second is counted in a
/// dense array in [`Stats`] and packed when the next one starts.
#[derive(Clone, Default)]
pub struct Second {
    pub requests: u64,
    pub errors: u64,
    pub sum_us: u64,
    pub bytes_read: u64,
    /// (bucket, count) for every bucket hit, in bucket order.
    pub buckets: Vec<(u16, u32)>,
}

impl Second {
    fn merge(&mut self, o: &Second) {
        self.requests += o.requests;
        self.errors += o.errors;
        self.sum_us += o.sum_us;
        self.bytes_read += o.bytes_read;
        self.buckets = merge_sparse(&self.buckets, &o.buckets);
    }

    fn point(&self, second: u32) -> TimelinePoint {
        let count: u64 = self.buckets.iter().map(|&(_, c)| c as u64).sum();
        let p99 = p99_of_buckets(&self.buckets);
        TimelinePoint {
            second,
            requests: self.requests,
            errors: self.errors,
            latency_mean_us: if count > 0 {
                self.sum_us as f64 / count as f64
            } else {
                0.0
            },
            latency_p99_us: p99,
            bytes_read: self.bytes_read,
        }
    }
}

/// Everything one worker thread measured.
pub struct Stats {
    pub latency: Histogram<u64>,
    /// `-R` only: latency from the actual send.
    pub uncorrected: Option<Histogram<u64>>,
    pub errors: Errors,
    pub status: Vec<u64>,
    pub requests: u64,
    /// Requests sent during measurement (`-R`: the achieved send rate).
    pub sent: u64,
    pub late: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// TCP stream: bytes sent whose echo had not come back when the drain after the end gave up.
    pub bytes_in_flight: u64,
    pub seconds: Vec<Second>,
    /// Connects and TLS handshakes.
    pub conn: ConnStats,
    /// HTTP/2 settings, GOAWAYs and errors by code.
    pub h2: H2Stats,
    /// WebSocket upgrades, messages sent, closes and failures by cause.
    pub ws: WsStats,
    /// gRPC calls by status code, failures by cause, messages.
    pub grpc: GrpcStats,
    /// HTTP/3: SETTINGS, GOAWAYs, QUIC and H3 errors by name, QUIC counters.
    pub h3: H3Stats,
    /// HTTP/1.1: request and response bodies, encodings and encoding errors.
    pub bodies: BodyStats,
    /// Before the measured window (for the live view only).
    pub warm: WarmUp,
    /// Naps taken when idle (`--idle`), over the whole run.
    pub naps: crate::idle::NapStats,
    /// `--mix`: per entry (empty without a mix).
    pub mix: Vec<EntryStats>,
    /// The measured window's spans without an answer (merged: without any answer anywhere).
    pub silences: Silences,
    /// Requests sent and not answered when the thread's loop ended.
    pub in_flight_at_end: u64,
    /// The current second's latency buckets, dense (fixed size), packed into `seconds` by
    /// [`Stats::close`] or when the next second starts.
    current: Box<[u32; BUCKETS]>,
    current_dirty: bool,
    start: u64,
    end: u64,
    cur_end: u64,
}

impl Stats {
    pub fn new(rate: bool) -> Self {
        Stats {
            latency: new_histogram(),
            uncorrected: rate.then(new_histogram),
            errors: Errors::default(),
            status: vec![0; 600],
            requests: 0,
            sent: 0,
            late: 0,
            bytes_read: 0,
            bytes_written: 0,
            bytes_in_flight: 0,
            seconds: Vec::new(),
            naps: Default::default(),
            mix: Vec::new(),
            silences: Silences::default(),
            in_flight_at_end: 0,
            conn: ConnStats::new(),
            h2: H2Stats::default(),
            ws: WsStats::default(),
            grpc: GrpcStats::default(),
            h3: H3Stats::default(),
            bodies: BodyStats::default(),
            warm: WarmUp::default(),
            current: Box::new([0; BUCKETS]),
            current_dirty: false,
            start: u64::MAX,
            end: u64::MAX,
            cur_end: 0,
        }
    }

    /// Sets the measured window `[start, end)` in monotonic ns.
    pub fn set_window(&mut self, start: u64, end: u64) {
        self.start = start;
        self.end = end;
        self.cur_end = start;
        self.silences.reset(start);
    }

    /// The thread's loop ended at `now` with `in_flight` requests unanswered: the silence since
    /// its last answer runs to the window's end (with `-n`, to `now`).
    pub fn finish(&mut self, now: u64, in_flight: u64) {
        if self.started(now) {
            self.silences.finish(now.min(self.end));
        }
        self.in_flight_at_end = in_flight;
    }

    /// The silences in seconds from the start of measurement.
    pub fn silences_s(&self) -> Vec<serverbench_model::result::Silence> {
        self.silences.from(self.start)
    }

    #[inline]
    pub fn measuring(&self, now: u64) -> bool {
        now >= self.start && now < self.end
    }

    /// Whether the measured window has begun (it may be over).
    #[inline]
    pub fn started(&self, now: u64) -> bool {
        now >= self.start
    }

    /// Packs the current second's buckets into the timeline; call it when the thread is done
    /// (idempotent), before [`Stats::merge`] and [`Stats::timeline`].
    pub fn close(&mut self) {
        if !self.current_dirty {
            return;
        }
        if let Some(last) = self.seconds.last_mut() {
            last.buckets = self
                .current
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c > 0)
                .map(|(b, &c)| (b as u16, c))
                .collect();
        }
        self.current.fill(0);
        self.current_dirty = false;
    }

    #[inline]
    fn second(&mut self, now: u64) -> &mut Second {
        if now >= self.cur_end {
            self.close();
            let idx = ((now - self.start) / 1_000_000_000) as usize;
            if self.seconds.len() <= idx {
                self.seconds.resize(idx + 1, Second::default());
            }
            self.cur_end = self.start + (idx as u64 + 1) * 1_000_000_000;
        }
        self.seconds.last_mut().expect("at least one second")
    }

    /// A completed request: `lat_ns` from the intended send, `uncorrected_ns` from the actual one.
    #[inline]
    pub fn record(&mut self, now: u64, lat_ns: u64, uncorrected_ns: u64, status: u16) {
        let us = lat_ns.div_ceil(1000).max(1);
        if !self.measuring(now) {
            if now < self.start {
                self.warm.record(us);
            }
            return;
        }
        self.requests += 1;
        self.silences.answer(now);
        self.latency.saturating_record(us);
        if let Some(h) = &mut self.uncorrected {
            h.saturating_record(uncorrected_ns.div_ceil(1000).max(1));
        }
        if let Some(s) = self.status.get_mut(status as usize) {
            *s += 1;
        }
        let sec = self.second(now);
        sec.requests += 1;
        sec.sum_us += us;
        self.current[bucket_of(us)] += 1;
        self.current_dirty = true;
    }

    /// `--mix`: a completed request to `entry` (after [`Stats::record`]).
    #[inline]
    pub fn record_entry(&mut self, now: u64, entry: usize, lat_ns: u64) {
        if self.measuring(now) {
            if let Some(e) = self.mix.get_mut(entry) {
                e.record(lat_ns.div_ceil(1000).max(1));
            }
        }
    }

    /// `--mix`: an error (counted by [`Stats::error`] too) that concerns `entry`.
    #[inline]
    pub fn entry_error(&mut self, now: u64, entry: usize, kind: ErrorKind) {
        if self.measuring(now) {
            if let Some(e) = self.mix.get_mut(entry) {
                e.error(kind);
            }
        }
    }

    /// A response with a status but nothing else to time (e.g. counted as an error too).
    #[inline]
    pub fn error(&mut self, now: u64, kind: ErrorKind) {
        if !self.measuring(now) {
            if now < self.start {
                self.warm.error(kind);
            }
            return;
        }
        count_error(&mut self.errors, kind);
        match kind {
            ErrorKind::Tls(cause) => self.conn.tls_error(cause),
            ErrorKind::H2(code) => self.h2.error(code),
            ErrorKind::Ws(cause) => self.ws.failed(cause),
            ErrorKind::Encoding(cause) => self.bodies.failed(cause),
            ErrorKind::Grpc(cause) => self.grpc.failed(cause),
            _ => {}
        }
        self.second(now).errors += 1;
    }

    /// A TCP connection came up `ns` after its connect started.
    pub fn connected(&mut self, now: u64, ns: u64) {
        if self.measuring(now) {
            self.conn.connected(ns);
        }
    }

    /// WebSocket: an upgrade completed `ns` after the connection was up.
    pub fn upgraded(&mut self, now: u64, ns: u64) {
        if self.measuring(now) {
            self.ws.upgraded(ns);
        }
    }

    /// WebSocket: a message (or ping) went out.
    #[inline]
    pub fn message_sent(&mut self, now: u64) {
        if self.measuring(now) {
            self.ws.messages_sent += 1;
        }
    }

    /// WebSocket: the connection closed with `code` (1005: a close frame without one; 1006:
    /// no close frame).
    pub fn ws_closed(&mut self, now: u64, code: u16) {
        if self.measuring(now) {
            self.ws.closed(code);
        }
    }

    /// HTTP/2: a GOAWAY arrived; one with an error code counts as an error too.
    pub fn goaway(&mut self, now: u64, code: u32) {
        if self.measuring(now) {
            self.h2.goaways += 1;
        }
        if code != crate::h2::frame::NO_ERROR {
            self.error(now, ErrorKind::H2(code));
        }
    }

    /// A TLS handshake finished `ns` after it started. One made during the warm-up is not
    /// counted, but what it negotiated is kept: with keep-alive those are the connections the
    /// measurement uses (`--warmup`, and every client host of `--hosts`).
    pub fn handshake(&mut self, now: u64, ns: u64, resumed: bool, negotiated: Negotiated) {
        if self.measuring(now) {
            self.conn.handshake(ns, resumed, negotiated);
        } else if now < self.start {
            self.warm.handshakes += 1;
            self.conn.note(negotiated);
        }
    }

    #[inline]
    pub fn read(&mut self, now: u64, n: usize) {
        if self.measuring(now) {
            self.bytes_read += n as u64;
            self.second(now).bytes_read += n as u64;
        } else if now < self.start {
            self.warm.bytes_read += n as u64;
        }
    }

    #[inline]
    pub fn wrote(&mut self, now: u64, n: usize) {
        if self.measuring(now) {
            self.bytes_written += n as u64;
        } else if now < self.start {
            self.warm.bytes_written += n as u64;
        }
    }

    /// HTTP/1.1: a request with a body of `n` bytes was written out (0: without a body).
    #[inline]
    pub fn request_body(&mut self, now: u64, n: usize) {
        if self.measuring(now) && n > 0 {
            self.bodies.requests += 1;
            self.bodies.request_bytes += n as u64;
        }
    }

    /// HTTP/1.1: a response's body took `wire` bytes and decoded to `decoded`.
    #[inline]
    pub fn response_body(&mut self, now: u64, wire: u64, decoded: u64, encoding: Encoding) {
        if self.measuring(now) {
            self.bodies.response(wire, decoded, encoding);
        }
    }

    #[inline]
    pub fn sent(&mut self, now: u64, late: bool) {
        if self.measuring(now) {
            self.sent += 1;
            self.late += late as u64;
        }
    }

    /// Adds another thread's statistics into this one (both closed: see [`Stats::close`]),
    /// except the protocol's own (HTTP/2, WebSocket, bodies, `--mix`): each thread's are
    /// made a protocol block ([`assemble::protocol_part`]) and merged by the model.
    pub fn merge(&mut self, o: &Stats) {
        debug_assert!(!o.current_dirty, "merge a closed Stats");
        self.close();
        self.latency.add(&o.latency).expect("same histogram bounds");
        if let (Some(a), Some(b)) = (&mut self.uncorrected, &o.uncorrected) {
            a.add(b).expect("same histogram bounds");
        }
        self.errors.add(&o.errors);
        self.conn.merge(&o.conn);
        self.naps.merge(&o.naps);
        for (x, y) in self.status.iter_mut().zip(&o.status) {
            *x += y;
        }
        self.requests += o.requests;
        self.sent += o.sent;
        self.late += o.late;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.bytes_in_flight += o.bytes_in_flight;
        self.in_flight_at_end += o.in_flight_at_end;
        self.silences.intersect(&o.silences);
        if self.seconds.len() < o.seconds.len() {
            self.seconds.resize(o.seconds.len(), Second::default());
        }
        for (x, y) in self.seconds.iter_mut().zip(&o.seconds) {
            x.merge(y);
        }
    }

    /// The per-second timeline, cut to `seconds` points.
    pub fn timeline(&self, seconds: usize) -> Vec<TimelinePoint> {
        debug_assert!(!self.current_dirty, "close() before timeline()");
        self.seconds
            .iter()
            .take(seconds)
            .enumerate()
            .map(|(i, s)| s.point(i as u32))
            .collect()
    }
}

/// Counts one error of `kind` in `e`.
#[inline]
pub(crate) fn count_error(e: &mut Errors, kind: ErrorKind) {
    match kind {
        ErrorKind::Connect => e.connect += 1,
        ErrorKind::Read => e.read += 1,
        ErrorKind::Write => e.write += 1,
        ErrorKind::Timeout => e.timeout += 1,
        ErrorKind::Parse => e.parse += 1,
        ErrorKind::Status => e.status += 1,
        ErrorKind::Body => e.body += 1,
        ErrorKind::Tls(_) => e.tls += 1,
        ErrorKind::H2(_) | ErrorKind::H3 => e.protocol += 1,
        ErrorKind::RefusedStream => e.refused_stream += 1,
        ErrorKind::Ws(_) => e.protocol += 1,
        ErrorKind::Encoding(_) => e.encoding += 1,
        ErrorKind::Truncated => e.truncated += 1,
        ErrorKind::Grpc(_) => e.verdict += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::histo::bucket_mid;

    #[test]
    fn buckets_are_monotonic_and_close_to_the_value() {
        let mut last = 0;
        for v in [1u64, 7, 8, 9, 15, 16, 100, 1000, 123_456, 60_000_000] {
            let b = bucket_of(v);
            assert!(b >= last);
            last = b;
            let mid = bucket_mid(b);
            assert!(
                (mid - v as f64).abs() <= v as f64 * 0.07 + 0.5,
                "{v} -> {mid}"
            );
        }
    }

    #[test]
    fn merged_threads_add_up_per_second() {
        let mut a = Stats::new(false);
        let mut b = Stats::new(false);
        a.set_window(0, u64::MAX);
        b.set_window(0, u64::MAX);
        a.record(10, 1000, 1000, 200);
        b.record(1_500_000_000, 2000, 2000, 404);
        b.error(1_600_000_000, ErrorKind::Read);
        b.close();
        a.merge(&b);
        let t = a.timeline(10);
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].requests, t[1].requests, t[1].errors), (1, 1, 1));
        assert_eq!((a.status[200], a.status[404], a.errors.read), (1, 1, 1));
    }

    #[test]
    fn per_second_p99_survives_packing_and_merging() {
        let mut a = Stats::new(false);
        let mut b = Stats::new(false);
        a.set_window(0, u64::MAX);
        b.set_window(0, u64::MAX);
        for i in 0..99 {
            a.record(i, 100_000, 100_000, 200); // 100 µs
        }
        b.record(5, 50_000_000, 50_000_000, 200); // 50 ms, the slowest 1%
        b.record(2_000_000_000, 1_000_000, 1_000_000, 200); // a later second
        a.close();
        b.close();
        a.merge(&b);
        let t = a.timeline(10);
        assert_eq!((t[0].requests, t[1].requests, t[2].requests), (100, 0, 1));
        assert!(
            (t[0].latency_p99_us - 100.0).abs() <= 7.0,
            "{}",
            t[0].latency_p99_us
        );
        assert!(
            (t[2].latency_p99_us - 1000.0).abs() <= 70.0,
            "{}",
            t[2].latency_p99_us
        );
        let packed: usize = a.seconds.iter().map(|s| s.buckets.len()).sum();
        assert_eq!(
            packed, 3,
            "one (bucket, count) per distinct latency per second"
        );
    }

    #[test]
    fn closing_twice_keeps_the_packed_second() {
        let mut s = Stats::new(false);
        s.set_window(0, u64::MAX);
        s.record(1, 1_000, 1_000, 200);
        s.close();
        s.close();
        assert_eq!(s.seconds[0].buckets.len(), 1);
    }

    #[test]
    fn what_a_warm_up_handshake_negotiated_is_kept_but_not_counted() {
        let mut s = Stats::new(false);
        s.set_window(100, 200);
        let tls13 = Negotiated {
            version: serverbench_model::TlsVersion::V1_3,
            cipher_suite: Some(crate::tls::Cipher(
                rustls::CipherSuite::TLS13_AES_128_GCM_SHA256,
            )),
            key_exchange_group: "X25519",
            alpn: Some("http/1.1"),
        };
        s.handshake(50, 1_000, false, tls13);
        assert_eq!((s.conn.handshakes(), s.warm.handshakes), (0, 1));
        assert_eq!(
            s.conn.negotiated.map(|n| n.version.as_str()),
            Some("TLSv1.3")
        );
    }

    #[test]
    fn nothing_is_recorded_outside_the_window() {
        let mut s = Stats::new(false);
        s.set_window(100, 200);
        s.record(50, 1, 1, 200);
        s.record(250, 1, 1, 200);
        assert_eq!(s.requests, 0);
    }
}
