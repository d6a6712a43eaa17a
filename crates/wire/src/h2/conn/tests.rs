use super::*;
use crate::h2::Strings;

fn req(n: u64) -> Inflight {
    Inflight {
        intended: n,
        sent: n,
        url: 0,
    }
}

fn put(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    frame::put_head(out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
}

fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::put_settings(&mut out, pairs);
    out
}

/// A test client: the connection, its output and what `feed` needs.
struct Client {
    conn: H2Conn,
    out: Vec<u8>,
    strings: Strings,
    requests: Vec<Request>,
    /// The time fed bytes arrive at, and the histogram of streaming calls' messages.
    now: u64,
    messages: hdrhistogram::Histogram<u64>,
}

impl Client {
    fn new(window: u32, requests: Vec<Request>) -> Client {
        let mut out = Vec::new();
        let conn = H2Conn::new(window, true, 1, &mut out);
        Client {
            conn,
            out,
            strings: Strings::default(),
            requests,
            now: 0,
            messages: hdrhistogram::Histogram::new(3).unwrap(),
        }
    }

    /// Feeds `wire` in pieces of `step` bytes; returns every event (or the first error).
    fn feed(&mut self, wire: &[u8], step: usize) -> Result<Vec<Event>, u32> {
        let mut events = Vec::new();
        for piece in wire.chunks(step) {
            let mut data = piece;
            loop {
                let mut cx = Ctx {
                    out: &mut self.out,
                    strings: &mut self.strings,
                    requests: &self.requests,
                    now: self.now,
                    message_latency: Some(&mut self.messages),
                };
                match self.conn.feed(data, &mut cx)? {
                    (Some(ev), used) => {
                        events.push(ev);
                        data = &data[used..];
                    }
                    (None, used) => {
                        assert_eq!(used, data.len());
                        break;
                    }
                }
            }
        }
        Ok(events)
    }

    fn open(&mut self, n: u64) {
        let r = self.requests[0].clone();
        self.conn.open_stream(&r, req(n), &mut self.out);
    }
}

fn get() -> Request {
    Request::new(&[0x82, 0x86, 0x84, 0x01, 0x01, b'x'], None)
}

#[test]
fn a_new_connection_writes_the_preface_settings_and_a_connection_window() {
    let c = Client::new(frame::MAX_WINDOW, vec![get()]);
    assert!(c.out.starts_with(frame::PREFACE));
    let rest = &c.out[frame::PREFACE.len()..];
    let head = Head::parse(rest[..9].try_into().unwrap());
    assert_eq!((head.kind, head.len), (frame::SETTINGS, 12));
    let wu = &rest[9 + 12..];
    let head = Head::parse(wu[..9].try_into().unwrap());
    assert_eq!((head.kind, head.stream), (frame::WINDOW_UPDATE, 0));
    assert_eq!(
        frame::be32(wu, 9),
        frame::MAX_WINDOW - frame::DEFAULT_WINDOW
    );
    assert!(!c.conn.has_room(10), "not before the server's SETTINGS");
}

/// SETTINGS, then a padded response on stream 1 in HEADERS + CONTINUATION + two DATA frames.
fn server_wire() -> Vec<u8> {
    let mut w = settings(&[(frame::SETTINGS_MAX_CONCURRENT_STREAMS, 5)]);
    put(&mut w, frame::PING, 0, 0, b"12345678");
    put(&mut w, frame::HEADERS, frame::PADDED, 1, &[2, 0x88, 0, 0]);
    put(
        &mut w,
        frame::CONTINUATION,
        frame::END_HEADERS,
        1,
        &[0x0f, 0x10, 1, b'2'],
    );
    put(
        &mut w,
        frame::DATA,
        frame::PADDED,
        1,
        &[3, b'h', b'e', 0, 0, 0],
    );
    put(&mut w, frame::DATA, frame::END_STREAM, 1, b"llo");
    w
}

#[test]
fn a_response_split_at_any_byte_completes_once_with_its_body() {
    let mut whole = None;
    for step in [usize::MAX, 1, 2, 3, 5, 7, 9, 10, 13] {
        let mut c = Client::new(frame::MAX_WINDOW, vec![get()]);
        c.out.clear();
        let events = c.feed(&server_wire()[..9 + 6], step.min(64)).unwrap();
        assert_eq!(events, vec![Event::Ready]);
        assert!(c.conn.has_room(10) && c.conn.peer().max_concurrent_streams == Some(5));
        c.open(7);
        let events = c.feed(&server_wire()[9 + 6..], step.min(64)).unwrap();
        let [Event::Response(r, resp, wire)] = events.as_slice() else {
            panic!("step {step}: {events:?}");
        };
        assert_eq!(
            (r.sent, resp.status, resp.body_len),
            (7, 200, 5),
            "step {step}"
        );
        assert_eq!(*wire, 4 * 9 + 4 + 4 + 6 + 3, "its frames, padding included");
        assert_eq!(*whole.get_or_insert(resp.body_hash), resp.body_hash);
        assert_eq!(resp.body_hash, fnv(FNV_OFFSET, b"hello"));
        assert_eq!(c.conn.open(), 0);
        // Our SETTINGS ack, the HEADERS and the PING's answer went out.
        let ping_ack = [0, 0, 8, frame::PING, frame::ACK, 0, 0, 0, 0];
        assert!(c.out.windows(9).any(|w| w == ping_ack));
    }
}

#[test]
fn the_servers_stream_limit_caps_the_streams_opened() {
    let mut c = Client::new(frame::MAX_WINDOW, vec![get()]);
    c.feed(
        &settings(&[(frame::SETTINGS_MAX_CONCURRENT_STREAMS, 2)]),
        100,
    )
    .unwrap();
    c.open(0);
    assert!(c.conn.has_room(10));
    c.open(1);
    assert!(!c.conn.has_room(10) && c.conn.open() == 2);
}

#[test]
fn the_bytes_still_expected_count_down_as_frames_arrive() {
    let mut c = Client::new(frame::MAX_WINDOW, vec![get()]);
    c.feed(&settings(&[]), 100).unwrap();
    c.open(0);
    c.open(1);
    assert_eq!(c.conn.expected_bytes(&[0]), None, "no size known yet");
    assert_eq!(c.conn.expected_bytes(&[30]), Some(60));
    let mut w = Vec::new();
    put(&mut w, frame::HEADERS, frame::END_HEADERS, 1, &[0x88]);
    put(&mut w, frame::PING, 0, 0, b"12345678"); // not a stream's: not counted
    c.feed(&w, 100).unwrap();
    assert_eq!(c.conn.expected_bytes(&[30]), Some(50));
    let mut w = Vec::new();
    put(&mut w, frame::DATA, frame::END_STREAM, 1, b"ok");
    let events = c.feed(&w, 100).unwrap();
    assert!(
        matches!(events[..], [Event::Response(_, _, 21)]),
        "{events:?}"
    );
    assert_eq!(c.conn.expected_bytes(&[30]), Some(30), "stream 3 is left");
}

#[test]
fn consumed_data_is_given_back_in_batched_window_updates() {
    let mut c = Client::new(100, vec![get()]);
    c.feed(&settings(&[]), 100).unwrap();
    c.open(0);
    c.out.clear();
    let mut w = Vec::new();
    put(&mut w, frame::HEADERS, frame::END_HEADERS, 1, &[0x88]);
    put(&mut w, frame::DATA, 0, 1, &[b'x'; 40]);
    c.feed(&w, 1000).unwrap();
    assert!(c.out.is_empty(), "40 bytes is less than half a window");
    let mut w = Vec::new();
    put(&mut w, frame::DATA, 0, 1, &[b'x'; 20]);
    c.feed(&w, 1000).unwrap();
    // The stream's window (100) is half used: one WINDOW_UPDATE of 60 for stream 1. The
    // connection's window is 65,535 (it cannot be smaller): no update for it yet.
    assert_eq!(c.out.len(), 13);
    let head = Head::parse(c.out[..9].try_into().unwrap());
    assert_eq!(
        (head.kind, head.stream, frame::be32(&c.out, 9)),
        (frame::WINDOW_UPDATE, 1, 60)
    );
}

#[test]
fn a_request_body_waits_for_the_servers_windows() {
    let body = vec![b'b'; 100_000];
    let mut c = Client::new(frame::MAX_WINDOW, vec![Request::new(&[0x83], Some(&body))]);
    c.feed(
        &settings(&[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 10_000)]),
        100,
    )
    .unwrap();
    c.out.clear();
    c.open(0);
    // (DATA bytes, whether the last DATA frame ends the stream)
    let data = |out: &[u8]| {
        let (mut at, mut n, mut end) = (0, 0, false);
        while at < out.len() {
            let h = Head::parse(out[at..at + 9].try_into().unwrap());
            if h.kind == frame::DATA {
                n += h.len as usize;
                end = h.flags & frame::END_STREAM != 0;
            }
            at += 9 + h.len as usize;
        }
        (n, end)
    };
    assert_eq!(data(&c.out), (10_000, false), "the stream's window");
    c.out.clear();
    let mut w = Vec::new();
    put(
        &mut w,
        frame::WINDOW_UPDATE,
        0,
        1,
        &100_000u32.to_be_bytes(),
    );
    c.feed(&w, 100).unwrap();
    assert_eq!(
        data(&c.out),
        (55_535, false),
        "the rest of the connection's window"
    );
    c.out.clear();
    let mut w = Vec::new();
    put(
        &mut w,
        frame::WINDOW_UPDATE,
        0,
        0,
        &100_000u32.to_be_bytes(),
    );
    c.feed(&w, 100).unwrap();
    assert_eq!(data(&c.out), (34_465, true));
}

#[test]
fn a_reset_and_a_goaway_end_their_streams() {
    let mut c = Client::new(frame::MAX_WINDOW, vec![get()]);
    c.feed(&settings(&[]), 100).unwrap();
    for n in 0..4 {
        c.open(n); // streams 1, 3, 5, 7
    }
    let mut w = Vec::new();
    put(
        &mut w,
        frame::RST_STREAM,
        0,
        3,
        &frame::REFUSED_STREAM.to_be_bytes(),
    );
    put(&mut w, frame::GOAWAY, 0, 0, &[0, 0, 0, 5, 0, 0, 0, 0]);
    let events = c.feed(&w, 100).unwrap();
    assert_eq!(
        events,
        vec![
            Event::Reset(req(1), frame::REFUSED_STREAM),
            Event::GoAway {
                code: frame::NO_ERROR,
                lost: 1
            }
        ]
    );
    assert!(c.conn.draining() && !c.conn.has_room(10));
    assert_eq!(c.conn.open(), 2, "streams 1 and 5 may still complete");
}

#[test]
fn protocol_violations_are_connection_errors_with_their_code() {
    let cases: Vec<(Vec<u8>, u32)> = vec![
        (
            {
                let mut w = Vec::new();
                put(&mut w, frame::PING, 0, 0, b"1234");
                w
            },
            frame::FRAME_SIZE_ERROR,
        ),
        (
            {
                let mut w = Vec::new();
                frame::put_head(&mut w, 20_000, frame::DATA, 0, 1);
                w
            },
            frame::FRAME_SIZE_ERROR,
        ),
        (
            {
                let mut w = Vec::new();
                put(&mut w, frame::HEADERS, 0, 1, &[0x88]);
                put(&mut w, frame::PING, 0, 0, b"12345678");
                w
            },
            frame::PROTOCOL_ERROR,
        ),
        (
            {
                let mut w = Vec::new();
                put(&mut w, frame::HEADERS, frame::END_HEADERS, 1, &[0x80]);
                w
            },
            frame::COMPRESSION_ERROR,
        ),
        (
            {
                let mut w = Vec::new();
                put(
                    &mut w,
                    frame::PUSH_PROMISE,
                    frame::END_HEADERS,
                    1,
                    &[0, 0, 0, 2, 0x82],
                );
                w
            },
            frame::PROTOCOL_ERROR,
        ),
    ];
    for (wire, code) in cases {
        let mut c = Client::new(frame::MAX_WINDOW, vec![get()]);
        c.feed(&settings(&[]), 100).unwrap();
        assert_eq!(c.feed(&wire, 1000), Err(code), "{wire:02x?}");
    }
}

/// A literal header field without indexing, its name literal too.
fn literal(block: &mut Vec<u8>, name: &str, value: &str) {
    block.push(0);
    block.push(name.len() as u8);
    block.extend_from_slice(name.as_bytes());
    block.push(value.len() as u8);
    block.extend_from_slice(value.as_bytes());
}

/// A gRPC answer on stream 1: `:status 200` and `content-type`, a message, the trailers.
fn grpc_wire(status: &str, trailers: bool) -> Vec<u8> {
    let mut head = vec![0x88];
    literal(&mut head, "content-type", "application/grpc");
    let mut w = Vec::new();
    put(&mut w, frame::HEADERS, frame::END_HEADERS, 1, &head);
    let end = if trailers { 0 } else { frame::END_STREAM };
    put(&mut w, frame::DATA, end, 1, &[0, 0, 0, 0, 2, 0x08, 42]);
    if trailers {
        let mut t = Vec::new();
        literal(&mut t, "grpc-status", status);
        put(
            &mut w,
            frame::HEADERS,
            frame::END_HEADERS | frame::END_STREAM,
            1,
            &t,
        );
    }
    w
}

fn grpc_client() -> Client {
    let mut c = Client::new(frame::MAX_WINDOW, vec![get()]);
    c.conn.for_grpc(false);
    c.feed(&settings(&[]), 64).unwrap();
    c.open(1);
    c
}

#[test]
fn a_grpc_call_split_at_any_byte_ends_once_with_its_status_and_messages() {
    for step in [64, 1, 2, 5, 9, 11] {
        let mut c = grpc_client();
        let events = c.feed(&grpc_wire("13", true), step).unwrap();
        let [Event::Call(_, resp, call, _)] = events.as_slice() else {
            panic!("step {step}: {events:?}");
        };
        assert_eq!((resp.status, resp.body_len), (200, 7));
        assert_eq!(call.content_type, Some(crate::h2::hpack::CONTENT_GRPC));
        assert_eq!((call.trailers, call.grpc_status), (true, Some(13)));
        assert_eq!((call.messages, call.framed()), (1, true));
    }
}

#[test]
fn a_trailers_only_answer_and_one_without_trailers_say_so() {
    let mut c = grpc_client();
    let mut t = vec![0x88];
    literal(&mut t, "content-type", "application/grpc");
    literal(&mut t, "grpc-status", "14");
    let mut w = Vec::new();
    put(
        &mut w,
        frame::HEADERS,
        frame::END_HEADERS | frame::END_STREAM,
        1,
        &t,
    );
    let events = c.feed(&w, 64).unwrap();
    let [Event::Call(_, _, call, _)] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert_eq!(
        (call.trailers, call.grpc_status, call.messages),
        (true, Some(14), 0)
    );
    let mut c = grpc_client();
    let events = c.feed(&grpc_wire("0", false), 64).unwrap();
    let [Event::Call(_, _, call, _)] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert_eq!(
        (call.trailers, call.grpc_status, call.messages),
        (false, None, 1)
    );
}

/// Three chunks, length-prefixed: 2, 1 and 3 bytes.
const CHUNKS: [&[u8]; 3] = [
    &[0, 0, 0, 0, 2, 8, 1],
    &[0, 0, 0, 0, 1, 7],
    &[0, 0, 0, 0, 3, 1, 2, 3],
];

/// The DATA frames of stream 1 in `out` from `at`: (flags, payload) each.
fn data_frames(out: &[u8], mut at: usize) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while at + HEADER_LEN <= out.len() {
        let h = Head::parse(out[at..at + HEADER_LEN].try_into().unwrap());
        let end = at + HEADER_LEN + h.len as usize;
        if h.kind == frame::DATA && h.stream == 1 {
            frames.push((h.flags, out[at + HEADER_LEN..end].to_vec()));
        }
        at = end;
    }
    frames
}

fn ping_pong_client() -> Client {
    let body = CHUNKS.concat();
    let mut c = Client::new(frame::MAX_WINDOW, vec![Request::ping_pong(&[0x83], &body)]);
    c.conn.for_grpc(true);
    c.feed(&settings(&[]), 64).unwrap();
    c
}

#[test]
fn a_ping_pong_call_sends_each_message_after_the_one_before_came_back_then_ends_its_side() {
    let mut c = ping_pong_client();
    let mark = c.out.len();
    c.now = 1_000;
    c.open(1_000);
    assert_eq!(data_frames(&c.out, mark), vec![(0, CHUNKS[0].to_vec())]);
    let mut head = vec![0x88];
    literal(&mut head, "content-type", "application/grpc");
    let mut w = Vec::new();
    put(&mut w, frame::HEADERS, frame::END_HEADERS, 1, &head);
    assert!(c.feed(&w, 64).unwrap().is_empty());
    for (k, chunk) in CHUNKS.iter().enumerate() {
        let mark = c.out.len();
        c.now += 5_000 * (k as u64 + 1);
        let mut w = Vec::new();
        put(&mut w, frame::DATA, 0, 1, chunk);
        // An echo split at any byte sends the next message once, when it is whole.
        assert!(c.feed(&w, 3).unwrap().is_empty());
        let sent = data_frames(&c.out, mark);
        match CHUNKS.get(k + 1) {
            Some(next) => assert_eq!(sent, vec![(0, next.to_vec())], "after echo {k}"),
            None => assert_eq!(sent, vec![(frame::END_STREAM, vec![])], "the end"),
        }
    }
    let mut t = Vec::new();
    literal(&mut t, "grpc-status", "0");
    let mut w = Vec::new();
    put(
        &mut w,
        frame::HEADERS,
        frame::END_HEADERS | frame::END_STREAM,
        1,
        &t,
    );
    let events = c.feed(&w, 64).unwrap();
    let [Event::Call(_, resp, call, _)] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert_eq!((call.messages, call.sent, call.framed()), (3, 3, true));
    assert_eq!(resp.body_len, CHUNKS.concat().len() as u64);
    // Each echo timed from the message before it (or the call's start): 5, 10 and 15 µs.
    let h = &c.messages;
    assert_eq!((h.len(), h.min(), h.max()), (3, 5, 15));
}

#[test]
fn messages_read_together_on_a_streaming_call_are_timed_once_then_at_zero() {
    let mut c = Client::new(frame::MAX_WINDOW, vec![get()]);
    c.conn.for_grpc(true);
    c.feed(&settings(&[]), 64).unwrap();
    c.open(0);
    let mut w = Vec::new();
    put(&mut w, frame::HEADERS, frame::END_HEADERS, 1, &[0x88]);
    put(&mut w, frame::DATA, 0, 1, &CHUNKS.concat());
    c.now = 40_000;
    c.feed(&w, 1000).unwrap();
    let h = &c.messages;
    assert_eq!((h.len(), h.count_at(0), h.max()), (3, 2, 40));
}

#[test]
fn a_body_of_its_own_held_back_by_a_window_is_sent_whole_after_the_request_changes() {
    let mut c = Client::new(frame::MAX_WINDOW, vec![Request::new(&[0x83], Some(b"x"))]);
    c.feed(&settings(&[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 4)]), 100)
        .unwrap();
    c.out.clear();
    let r = c.requests[0].clone();
    c.conn
        .open_stream_with(&r, b"0123456789", req(0), &mut c.out);
    let has = |out: &[u8], s: &[u8]| out.windows(s.len()).any(|w| w == s);
    assert!(
        has(&c.out, b"0123") && !has(&c.out, b"4"),
        "the stream's window: 4 bytes"
    );
    // The request the stream was opened with changes (a drawn message is re-encoded per call).
    c.requests[0].body = Some(b"zzzzzzzzzz".to_vec());
    c.out.clear();
    let mut w = Vec::new();
    put(&mut w, frame::WINDOW_UPDATE, 0, 1, &100u32.to_be_bytes());
    c.feed(&w, 100).unwrap();
    assert!(
        has(&c.out, b"456789"),
        "the rest of its own body: {:?}",
        c.out
    );
    assert!(!has(&c.out, b"z"), "{:?}", c.out);
}
