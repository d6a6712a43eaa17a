//! One HTTP/2 connection's protocol state: frames parsed as bytes arrive (a frame may span
//! reads; DATA payloads are never copied, only counted and, with `--verify`, hashed), streams,
//! flow control both ways and the server's settings.

use super::frame::{self, Head, HEADER_LEN};
use super::hpack::Decoder;
use super::streams::{Call, Stream, Streams};
use super::{Ctx, Event, Request, SendMode, Settings};
use crate::http::{fnv, Response, FNV_OFFSET};
use crate::Inflight;
use std::collections::VecDeque;

/// The last stream id a client may use.
const MAX_STREAM_ID: u32 = frame::MAX_WINDOW;

/// The frame being received.
#[derive(Debug, Default)]
struct Reader {
    head: [u8; HEADER_LEN],
    have: usize,
    cur: Option<Head>,
    /// Payload bytes of `cur` still to come.
    left: usize,
    /// A non-DATA payload gathered across reads.
    payload: Vec<u8>,
    /// DATA: the pad length byte is still to come.
    pad_pending: bool,
    /// DATA: content bytes (not padding) still to come.
    content: usize,
    /// A header block gathered across CONTINUATION frames, its stream (0: none) and whether
    /// the HEADERS that began it ended the stream.
    block: Vec<u8>,
    block_stream: u32,
    block_end: bool,
}

/// The HTTP/2 state of one connection.
#[derive(Debug)]
pub struct H2Conn {
    reader: Reader,
    decoder: Decoder,
    streams: Streams,
    next_id: u32,
    ready: bool,
    draining: bool,
    peer: Settings,
    /// The receive window we advertised per stream, and the connection's.
    window: u32,
    conn_window: u32,
    /// DATA bytes received since the last connection WINDOW_UPDATE.
    conn_unacked: u32,
    /// What the server lets us send on the connection (request bodies).
    send_window: i64,
    /// Streams whose request body waits for a window, with the body when it is the stream's
    /// own ([`H2Conn::open_stream_with`]) rather than its request's.
    blocked: VecDeque<(u32, Option<Box<[u8]>>)>,
    verify: bool,
    /// Open streams by URL, and the bytes received on them so far (see
    /// [`H2Conn::expected_bytes`]).
    open_by_url: Vec<u32>,
    received: u64,
    /// Reads so far, up to [`WARM_READS`].
    reads: u32,
    /// gRPC calls: header blocks are read for the gRPC fields, DATA for its message framing,
    /// and a stream ends in [`Event::Call`].
    grpc: bool,
    /// gRPC streaming calls: each message received is timed, and a ping-pong call sends its
    /// next message.
    streaming: bool,
}

/// Reads a connection takes before its low-water mark may count on predicted sizes: a new
/// connection's congestion window is small, and a server writing each response apart (nginx)
/// runs out of it while our delayed ACKs wait for the mark (a 40 ms stall each time).
const WARM_READS: u32 = 64;

impl H2Conn {
    /// A new connection for requests to `urls` URLs: writes the preface, our SETTINGS and the
    /// connection window to `out`.
    pub fn new(window: u32, verify: bool, urls: usize, out: &mut Vec<u8>) -> H2Conn {
        let conn_window = window.max(frame::DEFAULT_WINDOW);
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, window),
            ],
        );
        if conn_window > frame::DEFAULT_WINDOW {
            frame::put_window_update(out, 0, conn_window - frame::DEFAULT_WINDOW);
        }
        H2Conn {
            reader: Reader::default(),
            decoder: Decoder::default(),
            streams: Streams::default(),
            next_id: 1,
            ready: false,
            draining: false,
            peer: Settings::default(),
            window,
            conn_window,
            conn_unacked: 0,
            send_window: frame::DEFAULT_WINDOW as i64,
            blocked: VecDeque::new(),
            verify,
            open_by_url: vec![0; urls],
            received: 0,
            reads: 0,
            grpc: false,
            streaming: false,
        }
    }

    /// Makes this connection's streams gRPC calls (see [`Event::Call`]); `streaming`: each
    /// message received is timed ([`Ctx::message_latency`]) and ping-pong requests
    /// ([`SendMode::PingPong`]) are sent a message at a time.
    pub fn for_grpc(&mut self, streaming: bool) {
        self.grpc = true;
        self.streaming = streaming;
    }

    /// Whether its streams are gRPC calls.
    pub fn grpc(&self) -> bool {
        self.grpc
    }

    /// Counts a read; true once the connection is warm (see [`WARM_READS`]).
    pub fn warm(&mut self) -> bool {
        self.reads = (self.reads + 1).min(WARM_READS);
        self.reads == WARM_READS
    }

    /// The response bytes still to come on the open streams, at least, given the smallest
    /// response seen per URL (`expect`, 0: none yet): the receive low-water mark's prediction.
    /// None when an open stream's URL has no size yet.
    pub fn expected_bytes(&self, expect: &[usize]) -> Option<u64> {
        let mut total = 0;
        for (&open, &size) in self.open_by_url.iter().zip(expect) {
            if open > 0 && size == 0 {
                return None;
            }
            total += open as u64 * size as u64;
        }
        Some(total.saturating_sub(self.received))
    }

    /// A stream closed: it leaves the prediction.
    fn forget(&mut self, s: &Stream) {
        self.open_by_url[s.req.url as usize] -= 1;
        self.received -= s.wire as u64;
    }

    fn remove(&mut self, id: u32) -> Option<Stream> {
        let s = self.streams.remove(id)?;
        self.forget(&s);
        Some(s)
    }

    /// Streams open now.
    pub fn open(&self) -> u32 {
        self.streams.open()
    }

    /// The server's settings (defaults until its SETTINGS arrive).
    pub fn peer(&self) -> Settings {
        self.peer
    }

    /// A GOAWAY arrived: no new streams; the connection closes once the last one ends.
    pub fn draining(&self) -> bool {
        self.draining
    }

    /// When the oldest open stream was sent.
    pub fn oldest_sent(&self) -> Option<u64> {
        self.streams.oldest().map(|s| s.req.sent)
    }

    /// Whether a stream may open now with `limit` streams per connection (`-m`), the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS also applying.
    pub fn has_room(&self, limit: u32) -> bool {
        let cap = limit.min(self.peer.max_concurrent_streams.unwrap_or(u32::MAX));
        self.ready && !self.draining && self.next_id <= MAX_STREAM_ID && self.open() < cap
    }

    /// Ids are spent (2^30 streams): the connection has to be replaced once it is idle.
    pub fn exhausted(&self) -> bool {
        self.next_id > MAX_STREAM_ID
    }

    /// Opens a stream for `req`: its HEADERS (and as much body as the windows allow) go to `out`.
    pub fn open_stream(&mut self, req: &Request, inflight: Inflight, out: &mut Vec<u8>) {
        let id = self.open_headers(req, inflight, out);
        if let Some(body) = &req.body {
            if req.send == SendMode::PingPong {
                if let Some(s) = self.streams.get_mut(id) {
                    s.released = next_message(body, 0);
                    s.call.sent = 1;
                }
            }
            if !self.pump(id, req, out) {
                self.blocked.push_back((id, None));
            }
        }
    }

    /// Opens a stream for `req`'s HEADERS with a body of its own, sent whole (a gRPC message
    /// drawn per call; `req` must have a body, so its HEADERS do not end the stream). What the
    /// windows hold back is copied and kept with the stream: an allocation only then.
    pub fn open_stream_with(
        &mut self,
        req: &Request,
        body: &[u8],
        inflight: Inflight,
        out: &mut Vec<u8>,
    ) {
        debug_assert!(req.body.is_some(), "HEADERS without END_STREAM");
        let id = self.open_headers(req, inflight, out);
        if !self.pump_bytes(id, body, true, out) {
            self.blocked.push_back((id, Some(body.into())));
        }
    }

    /// Writes a new stream's HEADERS and counts it; returns its id.
    fn open_headers(&mut self, req: &Request, inflight: Inflight, out: &mut Vec<u8>) -> u32 {
        let id = self.next_id;
        self.next_id += 2;
        let at = out.len();
        out.extend_from_slice(&req.headers);
        out[at + 5..at + HEADER_LEN].copy_from_slice(&id.to_be_bytes());
        self.streams.push(
            id,
            Stream {
                req: inflight,
                status: 0,
                body_len: 0,
                body_hash: FNV_OFFSET,
                unacked: 0,
                send_window: self.peer.initial_window_size as i64,
                body_sent: 0,
                released: usize::MAX,
                ended: false,
                wire: 0,
                call: Call::started(inflight.sent),
            },
        );
        self.open_by_url[inflight.url as usize] += 1;
        id
    }

    /// Sends as much of stream `id`'s body as the windows allow (a ping-pong call's: up to
    /// what is released); true when all of that is sent (or the stream is gone).
    fn pump(&mut self, id: u32, req: &Request, out: &mut Vec<u8>) -> bool {
        match req.body.as_deref() {
            Some(body) => self.pump_bytes(id, body, req.send == SendMode::Whole, out),
            None => true,
        }
    }

    /// [`H2Conn::pump`] of `body` (`whole`: END_STREAM on its last DATA frame).
    fn pump_bytes(&mut self, id: u32, body: &[u8], whole: bool, out: &mut Vec<u8>) -> bool {
        let Some(s) = self.streams.get_mut(id) else {
            return true;
        };
        let limit = body.len().min(s.released);
        while s.body_sent < limit {
            let n = (limit - s.body_sent)
                .min(self.peer.max_frame_size as usize)
                .min(s.send_window.max(0) as usize)
                .min(self.send_window.max(0) as usize);
            if n == 0 {
                return false;
            }
            let end = whole && s.body_sent + n == body.len();
            let flags = if end { frame::END_STREAM } else { 0 };
            frame::put_head(out, n, frame::DATA, flags, id);
            out.extend_from_slice(&body[s.body_sent..s.body_sent + n]);
            s.body_sent += n;
            s.send_window -= n as i64;
            self.send_window -= n as i64;
        }
        true
    }

    /// A window opened: sends what the blocked streams can.
    fn unblock(&mut self, cx: &mut Ctx<'_>) {
        let mut k = 0;
        while k < self.blocked.len() && self.send_window > 0 {
            let (id, own) = std::mem::take(&mut self.blocked[k]);
            let url = self.streams.get_mut(id).map(|s| s.req.url as usize);
            let done = match (own.as_deref(), url) {
                (Some(body), _) => self.pump_bytes(id, body, true, cx.out),
                (None, Some(u)) => self.pump(id, &cx.requests[u], cx.out),
                (None, None) => true,
            };
            if done {
                self.blocked.remove(k);
            } else {
                self.blocked[k] = (id, own);
                k += 1;
            }
        }
    }

    /// Consumes bytes until an event: returns it with the bytes used, or `None` when all of
    /// `data` was consumed without one. An error is a connection error with its code.
    pub fn feed(&mut self, data: &[u8], cx: &mut Ctx<'_>) -> Result<(Option<Event>, usize), u32> {
        let mut pos = 0;
        loop {
            let head = match self.reader.cur {
                Some(h) => h,
                None => {
                    let r = &mut self.reader;
                    let n = (HEADER_LEN - r.have).min(data.len() - pos);
                    r.head[r.have..r.have + n].copy_from_slice(&data[pos..pos + n]);
                    r.have += n;
                    pos += n;
                    if r.have < HEADER_LEN {
                        return Ok((None, pos));
                    }
                    r.have = 0;
                    let head = Head::parse(&r.head);
                    self.start_frame(head, cx)?;
                    head
                }
            };
            if head.kind == frame::DATA {
                pos += self.data_bytes(head.stream, &data[pos..], cx)?;
                if self.reader.left > 0 {
                    return Ok((None, pos));
                }
                self.reader.cur = None;
                if head.flags & frame::END_STREAM != 0 {
                    if let Some(ev) = self.finish(head.stream) {
                        return Ok((Some(ev), pos));
                    }
                }
                continue;
            }
            let left = self.reader.left;
            let ev = if self.reader.payload.is_empty() && data.len() - pos >= left {
                pos += left;
                self.reader.left = 0;
                self.reader.cur = None;
                self.frame(head, &data[pos - left..pos], cx)?
            } else {
                let n = left.min(data.len() - pos);
                self.reader.payload.extend_from_slice(&data[pos..pos + n]);
                pos += n;
                self.reader.left -= n;
                if self.reader.left > 0 {
                    return Ok((None, pos));
                }
                self.reader.cur = None;
                let payload = std::mem::take(&mut self.reader.payload);
                let ev = self.frame(head, &payload, cx);
                self.reader.payload = payload;
                self.reader.payload.clear();
                ev?
            };
            if ev.is_some() {
                return Ok((ev, pos));
            }
        }
    }

    /// A frame header arrived: checks it and, for DATA, does the flow-control accounting.
    fn start_frame(&mut self, head: Head, cx: &mut Ctx<'_>) -> Result<(), u32> {
        if head.len > frame::DEFAULT_MAX_FRAME {
            return Err(frame::FRAME_SIZE_ERROR);
        }
        let continuing = self.reader.block_stream != 0;
        let is_continuation = head.kind == frame::CONTINUATION;
        if continuing != is_continuation || (continuing && head.stream != self.reader.block_stream)
        {
            return Err(frame::PROTOCOL_ERROR);
        }
        self.reader.cur = Some(head);
        self.reader.left = head.len as usize;
        if matches!(
            head.kind,
            frame::HEADERS | frame::CONTINUATION | frame::DATA
        ) {
            if let Some(s) = self.streams.get_mut(head.stream) {
                let wire = HEADER_LEN as u32 + head.len;
                s.wire += wire;
                self.received += wire as u64;
            }
        }
        if head.kind != frame::DATA {
            return Ok(());
        }
        if head.stream == 0 {
            return Err(frame::PROTOCOL_ERROR);
        }
        self.reader.pad_pending = head.flags & frame::PADDED != 0;
        self.reader.content = if self.reader.pad_pending {
            0
        } else {
            head.len as usize
        };
        self.conn_unacked += head.len;
        if self.conn_unacked >= self.conn_window / 2 {
            frame::put_window_update(cx.out, 0, self.conn_unacked);
            self.conn_unacked = 0;
        }
        let half = self.window / 2;
        if let Some(s) = self.streams.get_mut(head.stream) {
            s.unacked += head.len;
            if s.unacked >= half && head.flags & frame::END_STREAM == 0 {
                frame::put_window_update(cx.out, head.stream, s.unacked);
                s.unacked = 0;
            }
        }
        Ok(())
    }

    /// Takes DATA payload bytes: the pad length, the content (counted and hashed into its
    /// stream) and the padding. Returns the bytes used.
    fn data_bytes(&mut self, stream: u32, input: &[u8], cx: &mut Ctx<'_>) -> Result<usize, u32> {
        let mut used = 0;
        let mut came = false;
        let r = &mut self.reader;
        while used < input.len() && r.left > 0 {
            if r.pad_pending {
                let pad = input[used] as usize;
                used += 1;
                r.left -= 1;
                r.pad_pending = false;
                if pad > r.left {
                    return Err(frame::PROTOCOL_ERROR);
                }
                r.content = r.left - pad;
            } else if r.content > 0 {
                let n = r.content.min(input.len() - used);
                if let Some(s) = self.streams.get_mut(stream) {
                    s.body_len += n as u64;
                    if self.verify {
                        s.body_hash = fnv(s.body_hash, &input[used..used + n]);
                    }
                    if self.grpc {
                        let before = s.call.messages;
                        s.call.deframe(&input[used..used + n]);
                        let got = s.call.messages - before;
                        if got > 0 && self.streaming {
                            s.call.timed(got, cx.now, cx.message_latency.as_deref_mut());
                            came = true;
                        }
                    }
                }
                used += n;
                r.left -= n;
                r.content -= n;
            } else {
                let n = r.left.min(input.len() - used);
                used += n;
                r.left -= n;
            }
        }
        if came {
            self.ping_pong(stream, cx);
        }
        Ok(used)
    }

    /// Messages came back on stream `id`: a ping-pong call whose every message came back
    /// sends its next one, or, after the last, an empty DATA frame ending its side.
    fn ping_pong(&mut self, id: u32, cx: &mut Ctx<'_>) {
        let Some(s) = self.streams.get_mut(id) else {
            return;
        };
        let req = &cx.requests[s.req.url as usize];
        let (SendMode::PingPong, Some(body)) = (req.send, req.body.as_deref()) else {
            return;
        };
        if s.call.messages < s.call.sent || s.ended {
            return;
        }
        if s.released >= body.len() {
            s.ended = true;
            frame::put_head(cx.out, 0, frame::DATA, frame::END_STREAM, id);
            return;
        }
        s.released = next_message(body, s.released);
        s.call.sent += 1;
        if !self.pump(id, req, cx.out) && !self.blocked.iter().any(|(b, _)| *b == id) {
            self.blocked.push_back((id, None));
        }
    }

    /// Stream `id` ended: its response, if it was open.
    fn finish(&mut self, id: u32) -> Option<Event> {
        let s = self.remove(id)?;
        let resp = Response {
            status: s.status,
            close: false,
            body_len: s.body_len,
            body_hash: s.body_hash,
            wire_len: s.body_len,
            encoding: Default::default(),
            undecodable: false,
        };
        if self.grpc {
            return Some(Event::Call(s.req, resp, s.call, s.wire));
        }
        Some(Event::Response(s.req, resp, s.wire))
    }

    /// The request of the oldest open stream (for tests).
    #[cfg(test)]
    pub fn oldest(&self) -> Option<Inflight> {
        self.streams.oldest().map(|s| s.req)
    }
}

/// The end of the length-prefixed message starting at `at` in `body` (at most its end).
fn next_message(body: &[u8], at: usize) -> usize {
    let len = match body.get(at + 1..at + 5) {
        Some(l) => u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize,
        None => 0,
    };
    (at + 5 + len).min(body.len())
}

mod frames;
#[cfg(test)]
mod tests;
