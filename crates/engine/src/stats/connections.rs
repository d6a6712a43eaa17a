//! Per-thread statistics of connections: how long connects and TLS handshakes took (one
//! HdrHistogram each, merged like the request latency), full vs resumed handshakes, what was
//! negotiated, and TLS failures by cause.

use super::new_histogram;
use crate::tls::{Negotiated, TlsCause};
use hdrhistogram::Histogram;

pub struct ConnStats {
    /// From `connect()` to the socket being writable, µs.
    pub connect: Histogram<u64>,
    /// From the TCP connection being up to the TLS handshake done, µs.
    pub handshake: Histogram<u64>,
    /// TCP connections established during measurement.
    pub connects: u64,
    pub handshakes_full: u64,
    pub handshakes_resumed: u64,
    /// What the first handshake of the thread negotiated.
    pub negotiated: Option<Negotiated>,
    /// Another handshake negotiated something else.
    pub mixed: bool,
    /// `errors.tls` by cause (a handful at most: a list beats a map).
    pub tls_errors: Vec<(TlsCause, u64)>,
}

impl Default for ConnStats {
    fn default() -> Self {
        Self::new()
    }
}

impl ConnStats {
    pub fn new() -> Self {
        ConnStats {
            connect: new_histogram(),
            handshake: new_histogram(),
            connects: 0,
            handshakes_full: 0,
            handshakes_resumed: 0,
            negotiated: None,
            mixed: false,
            tls_errors: Vec::new(),
        }
    }

    pub fn connected(&mut self, ns: u64) {
        self.connects += 1;
        self.connect.saturating_record(ns.div_ceil(1000).max(1));
    }

    pub fn handshake(&mut self, ns: u64, resumed: bool, negotiated: Negotiated) {
        self.handshake.saturating_record(ns.div_ceil(1000).max(1));
        if resumed {
            self.handshakes_resumed += 1;
        } else {
            self.handshakes_full += 1;
        }
        self.note(negotiated);
    }

    /// What a handshake negotiated (counted or not): the first, or `mixed` if it differs.
    pub fn note(&mut self, n: Negotiated) {
        match self.negotiated {
            None => self.negotiated = Some(n),
            Some(first) => self.mixed |= first != n,
        }
    }

    pub fn tls_error(&mut self, cause: TlsCause) {
        match self.tls_errors.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, n)) => *n += 1,
            None => self.tls_errors.push((cause, 1)),
        }
    }

    pub fn merge(&mut self, o: &ConnStats) {
        self.connect.add(&o.connect).expect("same histogram bounds");
        self.handshake
            .add(&o.handshake)
            .expect("same histogram bounds");
        self.connects += o.connects;
        self.handshakes_full += o.handshakes_full;
        self.handshakes_resumed += o.handshakes_resumed;
        self.mixed |= o.mixed;
        if let Some(n) = o.negotiated {
            self.note(n);
        }
        for &(cause, n) in &o.tls_errors {
            match self.tls_errors.iter_mut().find(|(c, _)| *c == cause) {
                Some((_, m)) => *m += n,
                None => self.tls_errors.push((cause, n)),
            }
        }
    }

    pub fn handshakes(&self) -> u64 {
        self.handshakes_full + self.handshakes_resumed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls13() -> Negotiated {
        Negotiated {
            version: serverbench_model::TlsVersion::V1_3,
            cipher_suite: Some(crate::tls::Cipher(
                rustls::CipherSuite::TLS13_AES_128_GCM_SHA256,
            )),
            key_exchange_group: "X25519",
            alpn: Some("http/1.1"),
        }
    }

    #[test]
    fn merged_threads_add_handshakes_and_errors_by_cause() {
        let mut a = ConnStats::new();
        let mut b = ConnStats::new();
        a.handshake(100_000, false, tls13());
        b.handshake(50_000, true, tls13());
        b.handshake(60_000, true, tls13());
        a.tls_error(TlsCause::UnknownIssuer);
        b.tls_error(TlsCause::UnknownIssuer);
        b.tls_error(TlsCause::HandshakeEof);
        a.merge(&b);
        assert_eq!((a.handshakes_full, a.handshakes_resumed), (1, 2));
        assert_eq!(a.handshake.len(), 3);
        assert_eq!(
            a.tls_errors,
            vec![(TlsCause::UnknownIssuer, 2), (TlsCause::HandshakeEof, 1)]
        );
        assert!(!a.mixed);
    }

    #[test]
    fn a_different_negotiation_marks_the_run_mixed() {
        let mut a = ConnStats::new();
        a.handshake(1, false, tls13());
        a.handshake(
            1,
            false,
            Negotiated {
                version: serverbench_model::TlsVersion::V1_2,
                ..tls13()
            },
        );
        assert!(a.mixed);
    }
}
