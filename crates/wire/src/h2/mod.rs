//! HTTP/2 (RFC 9113) for the worker loop: h2 over TLS (ALPN `h2`) and h2c with prior
//! knowledge. A connection's protocol state ([`H2Conn`]) takes bytes in and hands back events
//! (the server's first SETTINGS, a completed stream, a reset stream, a GOAWAY) and writes the
//! frames it owes the server (SETTINGS and PING acknowledgements, WINDOW_UPDATEs, request
//! bodies as windows open) into the connection's output, which the worker loop flushes as it
//! does HTTP/1.1 requests. Nothing here touches a socket.
//!
//! Flow control never throttles a benchmark: we advertise the largest window (2^31 - 1) per
//! stream and for the connection, and give back what we consumed in one WINDOW_UPDATE once half
//! of a window is used. Request header blocks are encoded once per URL ([`Request`]); only the
//! stream id is written into each copy.
//!
//! gRPC streaming calls ([`H2Conn::for_grpc`] with `streaming`): a request body of several
//! length-prefixed messages goes out whole ([`SendMode::Whole`], client streaming) or one message
//! at a time, each once the one before came back ([`SendMode::PingPong`], bidi echo); each message
//! received is timed from the call's start or its previous message into the histogram the
//! caller lends ([`Ctx::message_latency`]). That state lives in each stream's slot ([`Call`]).

mod conn;
pub mod frame;
pub mod hpack;
mod streams;

pub use conn::H2Conn;
pub use hpack::Strings;
pub use streams::Call;

use crate::http::Response;
use crate::Inflight;

/// The receive window we advertise unless told otherwise: the largest there is.
pub const DEFAULT_WINDOW: u32 = frame::MAX_WINDOW;

/// One URL's request, prepared before the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The HEADERS frame, header included, with stream id 0: each stream writes its id in.
    pub headers: Vec<u8>,
    /// The body, sent as DATA frames as the server's windows allow.
    pub body: Option<Vec<u8>>,
    /// How the body goes out.
    pub send: SendMode,
}

/// How a request body goes out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SendMode {
    /// All of it as the windows allow, END_STREAM on its last DATA frame.
    #[default]
    Whole,
    /// gRPC bidi: the body is length-prefixed messages, sent one at a time, each once as many
    /// messages came back as were sent; END_STREAM on an empty DATA frame after the last came
    /// back.
    PingPong,
}

/// The largest header block a request may have: one HEADERS frame (no CONTINUATION).
pub const MAX_REQUEST_BLOCK: usize = frame::DEFAULT_MAX_FRAME as usize;

impl Request {
    /// Frames an encoded header block (see [`hpack::encode_request`]) and a body.
    pub fn new(block: &[u8], body: Option<&[u8]>) -> Request {
        let body = body.filter(|b| !b.is_empty()).map(<[u8]>::to_vec);
        let flags = frame::END_HEADERS | if body.is_none() { frame::END_STREAM } else { 0 };
        let mut headers = Vec::with_capacity(frame::HEADER_LEN + block.len());
        frame::put_head(&mut headers, block.len(), frame::HEADERS, flags, 0);
        headers.extend_from_slice(block);
        Request {
            headers,
            body,
            send: SendMode::Whole,
        }
    }

    /// A gRPC bidi call's request: `body` (length-prefixed messages) sent one message at a
    /// time (see [`SendMode::PingPong`]); the stream stays open after HEADERS.
    pub fn ping_pong(block: &[u8], body: &[u8]) -> Request {
        let mut headers = Vec::with_capacity(frame::HEADER_LEN + block.len());
        frame::put_head(
            &mut headers,
            block.len(),
            frame::HEADERS,
            frame::END_HEADERS,
            0,
        );
        headers.extend_from_slice(block);
        Request {
            headers,
            body: Some(body.to_vec()),
            send: SendMode::PingPong,
        }
    }
}

/// The server's SETTINGS that matter to a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// SETTINGS_MAX_CONCURRENT_STREAMS (None: not sent, no limit).
    pub max_concurrent_streams: Option<u32>,
    /// SETTINGS_INITIAL_WINDOW_SIZE: what we may send on a new stream.
    pub initial_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE: the largest frame we may send.
    pub max_frame_size: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_concurrent_streams: None,
            initial_window_size: frame::DEFAULT_WINDOW,
            max_frame_size: frame::DEFAULT_MAX_FRAME,
        }
    }
}

/// What the bytes fed to a connection amounted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The server's first SETTINGS arrived: streams may open.
    Ready,
    /// A stream ended with a whole response, which took this many bytes on the wire (its
    /// frames, headers included).
    Response(Inflight, Response, u32),
    /// gRPC ([`H2Conn::for_grpc`]): a call's stream ended (END_STREAM) with this response
    /// (its `:status`, the DATA's length and hash), what the call said, and its wire bytes.
    Call(Inflight, Response, Call, u32),
    /// The server reset a stream (RST_STREAM) with this error code.
    Reset(Inflight, u32),
    /// The server is going away (GOAWAY with this code); `lost` streams above its last stream
    /// id were closed unanswered and may be sent again elsewhere.
    GoAway { code: u32, lost: u32 },
}

/// What a connection needs from the worker while it reads.
pub struct Ctx<'a> {
    /// The connection's output, flushed by the worker.
    pub out: &'a mut Vec<u8>,
    /// The thread's Huffman string cache.
    pub strings: &'a mut Strings,
    /// The prepared requests (for request bodies still to send).
    pub requests: &'a [Request],
    /// The time of these bytes (the caller's monotonic nanoseconds): streaming calls time
    /// their messages with it.
    pub now: u64,
    /// Streaming calls: each message's latency in microseconds goes here (None: not
    /// measuring; the messages are still timed, so the next gap is right).
    pub message_latency: Option<&'a mut hdrhistogram::Histogram<u64>>,
}
