//! The gRPC driver (`grpc://` over h2c with prior knowledge, `grpcs://` over h2 by ALPN):
//! calls of the built-in benchmark service, or unary calls of a user's (`--proto`; a message
//! drawn per call is encoded from its template into a buffer of this thread's), as HTTP/2
//! streams, on the HTTP/2 driver's
//! connection machinery (`super::http2::session`). Its connections' protocol state reads, for
//! each call, `:status`, `content-type`, the length-prefixed messages and the `grpc-status`
//! trailer; every call that ends is judged here ([`judge`]) and counted by status code, and a
//! failed one by cause. Reset streams and GOAWAYs are the HTTP/2 machinery's, as for HTTP/2.
//!
//! Streaming calls (`--stream`) are the same streams: a client or bidi call's chunks are its
//! request body (bidi: sent one at a time, each after the echo of the one before, by the
//! connection state, `SendMode::PingPong`), and each message received is timed there into
//! `stats.grpc.message_latency`; a call still ends, and is judged, when its trailers come.

use super::http2::{session, H2Config, OverH2};
use super::Driver;
use crate::config::{Config, GrpcSpec, Schedule};
use crate::conn::Inflight;
use crate::h2::{self, hpack, Call, Event};
use crate::stats::{new_histogram, ErrorKind, GrpcCause, Stats};
use crate::worker::Worker;
use serverbench_model::result::{GrpcResult, GrpcStreamResult, Histograms, ProtocolResult};
use serverbench_protodyn::Template;
use serverbench_wire::http::Response;
use serverbench_wire::ws::Rng;

/// gRPC on one worker thread: the prepared call, this thread's Huffman strings, and for a
/// message drawn per call its generator and buffer; the first reply `--verify` compares a
/// user's service's replies with.
pub struct Grpc<'a> {
    spec: &'a GrpcSpec,
    strings: h2::Strings,
    rng: Rng,
    /// The framed message drawn for the next call.
    drawn: Vec<u8>,
    /// The first good reply's length and hash (a user's service with `--verify`).
    first: Option<(u64, u64)>,
}

impl<'a> Grpc<'a> {
    /// The driver of worker `slot`.
    pub fn new(spec: &'a GrpcSpec, slot: usize) -> Self {
        Grpc {
            spec,
            strings: h2::Strings::default(),
            rng: Rng::from_os(!(slot as u64)),
            drawn: Vec::new(),
            first: None,
        }
    }

    /// Frames the next call's message drawn from the template into `self.drawn`.
    #[inline]
    fn draw(&mut self, template: &Template) {
        let Grpc { rng, drawn, .. } = self;
        drawn.clear();
        drawn.extend_from_slice(&[0; 5]);
        template.encode(&mut || rng.next_u64(), drawn);
        let len = (drawn.len() - 5) as u32;
        drawn[1..5].copy_from_slice(&len.to_be_bytes());
    }
}

impl OverH2 for Grpc<'_> {
    #[inline]
    fn config(&self) -> H2Config {
        H2Config {
            streams: self.spec.streams,
            window: self.spec.window,
            verify: self.spec.verify,
            urls: self.spec.requests.len(),
            grpc: true,
            streaming: self.spec.stream.is_some(),
        }
    }

    #[inline]
    fn parts(&mut self) -> (&mut h2::Strings, &[h2::Request]) {
        (&mut self.strings, &self.spec.requests)
    }

    /// A call ended: judged, counted, completed.
    #[inline]
    fn stream_ended(w: &mut Worker<'_, Self>, i: usize, ev: Event, now: u64) -> bool {
        let (req, resp, call, wire) = match ev {
            Event::Call(req, resp, call, wire) => (req, resp, call, wire),
            // Not sent by a connection made for gRPC; judged as a call without trailers.
            Event::Response(req, resp, wire) => (req, resp, Call::default(), wire),
            _ => return true,
        };
        w.learn(req.url, wire as usize);
        w.call_ended(i, req, resp, call, now);
        w.after_stream(i, now)
    }
}

/// What is wrong with a call that ended (None: nothing), in the order it is checked: the HTTP
/// status, the trailers, the content type, the grpc-status, the framing, a stream's number of
/// messages (`replies`), `--verify`.
pub fn judge(
    resp: &Response,
    call: &Call,
    replies: Option<u32>,
    expect: Option<(u64, u64)>,
) -> Option<GrpcCause> {
    let status = call.grpc_status.filter(|_| call.trailers);
    match status {
        _ if resp.status != 200 => Some(GrpcCause::HttpStatus),
        None => Some(GrpcCause::NoTrailers),
        _ if call.content_type != Some(hpack::CONTENT_GRPC) => Some(GrpcCause::ContentType),
        Some(code) if code != 0 => Some(GrpcCause::Status(code)),
        _ if !call.framed() || call.bad_flag => Some(GrpcCause::Framing),
        _ if replies.is_some_and(|n| n != call.messages) => Some(GrpcCause::MessageCount),
        _ if expect.is_some_and(|e| e != (resp.body_len, resp.body_hash)) => {
            Some(GrpcCause::Verify)
        }
        _ => None,
    }
}

impl Worker<'_, Grpc<'_>> {
    /// Counts what the call said, its failure if any, and completes it.
    fn call_ended(&mut self, i: usize, req: Inflight, resp: Response, call: Call, now: u64) {
        let spec = self.proto.spec;
        if self.stats.measuring(now) {
            let g = &mut self.stats.grpc;
            if let Some(code) = call.grpc_status.filter(|_| call.trailers) {
                g.status(code);
            }
            g.messages_received += call.messages as u64;
            g.bytes_received += resp.body_len;
            if let Some(bidi) = spec.stream.as_ref().filter(|s| !s.sent_bytes.is_empty()) {
                let sent = (call.sent as usize).min(bidi.messages as usize);
                g.messages_sent += sent as u64;
                g.bytes_sent += bidi.sent_bytes[sent];
            }
        }
        let seen = (resp.body_len, resp.body_hash);
        let replies = spec.stream.as_ref().map(|s| s.replies);
        let expect = match spec.expect {
            _ if !spec.verify => None,
            Some(e) => Some(e),
            // A user's service: the first reply that passes is the one every other must be.
            None => match self.proto.first {
                Some(first) => Some(first),
                None => {
                    if judge(&resp, &call, replies, None).is_none() {
                        self.proto.first = Some(seen);
                    }
                    None
                }
            },
        };
        if let Some(cause) = judge(&resp, &call, replies, expect) {
            self.stats.error(now, ErrorKind::Grpc(cause));
        }
        self.complete(i, req, resp, now);
    }
}

impl Driver for Grpc<'_> {
    const MULTIPLEXED: bool = true;
    const ALPN: Option<&'static [u8]> = Some(b"h2");

    /// Streams, not a pipeline: the window is the connection's streams.
    fn depth(&self, _schedule: Schedule) -> usize {
        0
    }

    fn on_ready(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        session::on_ready(w, i, now);
    }

    fn resume(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        session::resume(w, i, now);
    }

    fn fill(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        session::fill(w, i, now);
    }

    /// Opens a call's stream: its HEADERS and its one message (client streaming: all its
    /// chunks; bidi: its first chunk, the others counted when the call ends).
    #[inline]
    fn issue(w: &mut Worker<'_, Self>, i: usize, intended: u64, now: u64) {
        let before = w.issued;
        let spec = w.proto.spec;
        let sent = match &spec.drawn {
            None => {
                session::issue(w, i, intended, now);
                spec.message_len
            }
            Some(template) => {
                w.proto.draw(template);
                let drawn = std::mem::take(&mut w.proto.drawn);
                session::issue_with(w, i, intended, now, Some(&drawn));
                let len = drawn.len() as u64;
                w.proto.drawn = drawn;
                len
            }
        };
        if w.issued > before && w.stats.measuring(now) {
            w.stats.grpc.messages_sent += w.proto.spec.issue_messages;
            w.stats.grpc.bytes_sent += sent;
        }
    }

    #[inline]
    fn consume(w: &mut Worker<'_, Self>, i: usize, data: &[u8], now: u64) -> bool {
        w.consume_h2(i, data, now)
    }

    #[inline]
    fn has_room(w: &Worker<'_, Self>, i: usize) -> bool {
        session::has_room(w, i)
    }

    fn lowat(w: &mut Worker<'_, Self>, i: usize, window: bool) -> (usize, bool) {
        session::lowat(w, i, window)
    }

    fn mark_dropped(w: &mut Worker<'_, Self>) {
        w.unexpected_end();
    }
}

/// One thread's gRPC block: calls by code, failures by cause (reset streams by their HTTP/2
/// code, `RST_STREAM CANCEL`), messages and bytes; a stream's message latency histogram
/// into `h` (its percentiles and rate are the merge's).
pub(crate) fn result(
    config: &Config,
    spec: &GrpcSpec,
    s: &Stats,
    h: &mut Histograms,
) -> ProtocolResult {
    let mut r = GrpcResult {
        protocol: if config.tls.is_some() { "h2" } else { "h2c" }.to_string(),
        method: spec.path.clone(),
        streams: spec.streams,
        max_concurrent_streams: s.h2.settings.and_then(|s| s.max_concurrent_streams),
        deadline_ms: spec.deadline.map(|d| d.as_millis() as u64),
        goaways: s.h2.goaways,
        stream: spec.stream.as_ref().map(|p| GrpcStreamResult {
            kind: p.kind,
            messages_per_call: p.messages,
            message_size: p.size,
            messages_per_s: 0.0,
            message_latency_us: Default::default(),
        }),
        ..Default::default()
    };
    if r.stream.is_some() {
        let empty = new_histogram();
        let messages = s.grpc.message_latency.as_ref().unwrap_or(&empty);
        h.message_latency_us = Some(serverbench_model::histo::encode(messages));
    }
    s.grpc.fill(&mut r);
    for (name, n) in s.h2.errors_by_name() {
        *r.failures.entry(format!("RST_STREAM {name}")).or_insert(0) += n;
    }
    ProtocolResult::Grpc(r)
}

#[cfg(test)]
mod tests;
