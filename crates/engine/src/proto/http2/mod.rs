//! The HTTP/2 driver (h2 over TLS, negotiated by ALPN, or h2c with prior knowledge): a
//! connection that is up sends the preface and its SETTINGS; requests follow the server's
//! SETTINGS as streams (`-m N` per connection, lowered by the server's
//! SETTINGS_MAX_CONCURRENT_STREAMS). Received bytes go to the connection's protocol state,
//! whose events complete streams, count resets and GOAWAYs, and free stream slots for the
//! schedule (closed loop: a new stream at once; `-R`: the connection is idle again).

use super::{Common, Driver};
use crate::config::{Config, Http2Spec, Schedule};
use crate::h2::{self, Event};
use crate::stats::Stats;
use crate::worker::Worker;
use serverbench_model::result::{Http2Result, ProtocolResult};

pub(crate) mod session;
pub(crate) use session::{H2Config, OverH2};

/// HTTP/2 on one worker thread: the prepared requests and this thread's memory of the
/// Huffman strings servers send.
pub struct Http2<'a> {
    spec: &'a Http2Spec,
    strings: h2::Strings,
}

impl<'a> Http2<'a> {
    pub fn new(spec: &'a Http2Spec) -> Self {
        Http2 {
            spec,
            strings: h2::Strings::default(),
        }
    }
}

impl OverH2 for Http2<'_> {
    #[inline]
    fn config(&self) -> H2Config {
        H2Config {
            streams: self.spec.streams,
            window: self.spec.window,
            verify: self.spec.verify,
            urls: self.spec.requests.len(),
            grpc: false,
            streaming: false,
        }
    }

    #[inline]
    fn parts(&mut self) -> (&mut h2::Strings, &[h2::Request]) {
        (&mut self.strings, &self.spec.requests)
    }

    /// A whole response: its size learnt, completed (and judged) as HTTP.
    #[inline]
    fn stream_ended(w: &mut Worker<'_, Self>, i: usize, ev: Event, now: u64) -> bool {
        if let Event::Response(req, resp, wire) | Event::Call(req, resp, _, wire) = ev {
            w.learn(req.url, wire as usize);
            w.complete(i, req, resp, now);
        }
        w.after_stream(i, now)
    }
}

impl Driver for Http2<'_> {
    const MULTIPLEXED: bool = true;
    const ALPN: Option<&'static [u8]> = Some(b"h2");

    /// Streams, not a pipeline: the window is the connection's streams.
    fn depth(&self, _schedule: Schedule) -> usize {
        0
    }

    fn urls(&self) -> usize {
        self.spec.requests.len()
    }

    fn checks(&self) -> Option<(&[u16], bool)> {
        Some((&self.spec.expect_status, self.spec.verify))
    }

    /// The preface and SETTINGS go out; requests follow the server's SETTINGS.
    fn on_ready(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        session::on_ready(w, i, now);
    }

    /// Its preface and SETTINGS are done: a new session would send a second preface on the
    /// same connection.
    fn resume(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        session::resume(w, i, now);
    }

    fn fill(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        session::fill(w, i, now);
    }

    #[inline]
    fn issue(w: &mut Worker<'_, Self>, i: usize, intended: u64, now: u64) {
        session::issue(w, i, intended, now);
    }

    #[inline]
    fn consume(w: &mut Worker<'_, Self>, i: usize, data: &[u8], now: u64) -> bool {
        w.consume_h2(i, data, now)
    }

    #[inline]
    fn has_room(w: &Worker<'_, Self>, i: usize) -> bool {
        session::has_room(w, i)
    }

    /// Each stream's frames are counted as they arrive: the mark is the smallest response seen
    /// per URL times the open streams, less what has arrived for them (`-m` > 1 only).
    fn lowat(w: &mut Worker<'_, Self>, i: usize, window: bool) -> (usize, bool) {
        session::lowat(w, i, window)
    }

    /// A reset stream or a dropped mark: the sizes overshoot.
    fn mark_dropped(w: &mut Worker<'_, Self>) {
        w.unexpected_end();
    }
}

/// One thread's HTTP/2 block: the server's SETTINGS, GOAWAYs and stream errors.
pub(crate) fn result(
    config: &Config,
    spec: &Http2Spec,
    s: &Stats,
    (connection_mode, mix): Common,
) -> ProtocolResult {
    let settings = s.h2.settings;
    ProtocolResult::Http2(Http2Result {
        protocol: if config.tls.is_some() { "h2" } else { "h2c" }.to_string(),
        streams: spec.streams,
        max_concurrent_streams: settings.and_then(|s| s.max_concurrent_streams),
        initial_window_size: settings.map(|s| s.initial_window_size),
        max_frame_size: settings.map(|s| s.max_frame_size),
        goaways: s.h2.goaways,
        errors: (s.h2.errors_by_name())
            .map(|(name, n)| (name.to_string(), n))
            .collect(),
        connection_mode,
        mix,
    })
}
