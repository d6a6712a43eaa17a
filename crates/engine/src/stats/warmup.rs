//! What a worker saw before measurement started (the warm-up, or a gated run waiting for its
//! gate): never in the result, counted only for the live view, so that the warm-up shows its
//! own rate, latency and errors. Recorded on the branch `Stats` already takes for requests
//! outside the measured window, so the measured path costs nothing more.

use super::{count_error, new_histogram, ErrorKind};
use crate::result::Errors;
use hdrhistogram::Histogram;

pub struct WarmUp {
    pub requests: u64,
    pub errors: Errors,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub handshakes: u64,
    /// µs, as the measured latency.
    pub latency: Histogram<u64>,
}

impl Default for WarmUp {
    fn default() -> Self {
        WarmUp {
            requests: 0,
            errors: Errors::default(),
            bytes_read: 0,
            bytes_written: 0,
            handshakes: 0,
            latency: new_histogram(),
        }
    }
}

impl WarmUp {
    #[cold]
    pub(super) fn record(&mut self, us: u64) {
        self.requests += 1;
        self.latency.saturating_record(us);
    }

    #[cold]
    pub(super) fn error(&mut self, kind: ErrorKind) {
        count_error(&mut self.errors, kind);
    }
}
