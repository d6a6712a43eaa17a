//! Per-thread body statistics of an HTTP/1.1 run: request bodies sent, and each response's body
//! bytes on the wire beside its decoded size, by `Content-Encoding`, with the encoding errors
//! `--verify` finds by cause.

use serverbench_model::result::BodyResult;
use serverbench_wire::coding::Coding;
use serverbench_wire::http::Encoding;
use std::collections::BTreeMap;

/// Why an answer's coding is an error (counted in `errors.encoding`, by name in the result).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodingCause {
    /// A coding the request's `Accept-Encoding` did not list.
    Unlisted(Coding),
    /// A body that is not valid in its coding.
    Undecodable(Coding),
    /// A `Content-Encoding` the client cannot decode (an unknown token, or several codings).
    Unknown,
}

impl EncodingCause {
    pub fn name(self) -> String {
        match self {
            EncodingCause::Unlisted(c) => format!("unlisted {}", c.as_str()),
            EncodingCause::Undecodable(c) => format!("undecodable {}", c.as_str()),
            EncodingCause::Unknown => "unknown coding".into(),
        }
    }
}

/// Responses per encoding: identity, the four codings in [`Coding::ALL`] order, and others.
const KINDS: usize = 6;

#[derive(Debug, Clone, Default)]
pub struct BodyStats {
    pub requests: u64,
    pub request_bytes: u64,
    pub responses: u64,
    pub wire_bytes: u64,
    pub decoded_bytes: u64,
    pub encodings: [u64; KINDS],
    pub causes: Vec<(EncodingCause, u64)>,
}

fn kind(e: Encoding) -> usize {
    match e {
        Encoding::Identity => 0,
        Encoding::One(c) => 1 + Coding::ALL.iter().position(|&k| k == c).unwrap_or(0),
        Encoding::Other => KINDS - 1,
    }
}

impl BodyStats {
    pub fn response(&mut self, wire: u64, decoded: u64, encoding: Encoding) {
        self.responses += 1;
        self.wire_bytes += wire;
        self.decoded_bytes += decoded;
        self.encodings[kind(encoding)] += 1;
    }

    pub fn failed(&mut self, cause: EncodingCause) {
        match self.causes.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, n)) => *n += 1,
            None => self.causes.push((cause, 1)),
        }
    }

    /// The result's `bodies`.
    pub fn result(&self) -> BodyResult {
        let mean = |bytes: u64, n: u64| if n == 0 { 0.0 } else { bytes as f64 / n as f64 };
        let names = ["identity", "gzip", "deflate", "br", "zstd", "other"];
        BodyResult {
            requests_with_body: self.requests,
            request_body_bytes: self.request_bytes,
            request_body_bytes_mean: mean(self.request_bytes, self.requests),
            responses: self.responses,
            wire_body_bytes: self.wire_bytes,
            wire_body_bytes_mean: mean(self.wire_bytes, self.responses),
            decoded_body_bytes: self.decoded_bytes,
            decoded_body_bytes_mean: mean(self.decoded_bytes, self.responses),
            encodings: names
                .iter()
                .zip(self.encodings)
                .filter(|&(_, n)| n > 0)
                .map(|(k, n)| (k.to_string(), n))
                .collect(),
            encoding_errors: self
                .causes
                .iter()
                .map(|&(c, n)| (c.name(), n))
                .collect::<BTreeMap<_, _>>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_and_decoded_bytes_have_their_own_means_and_encodings_are_counted_by_name() {
        let mut a = BodyStats::default();
        a.response(100, 400, Encoding::One(Coding::Gzip));
        a.response(300, 300, Encoding::Identity);
        a.failed(EncodingCause::Unlisted(Coding::Br));
        let r = a.result();
        assert_eq!(
            (r.wire_body_bytes_mean, r.decoded_body_bytes_mean),
            (200.0, 350.0)
        );
        assert_eq!(r.encodings["gzip"], 1);
        assert_eq!(r.encodings["identity"], 1);
        assert_eq!(r.encoding_errors["unlisted br"], 1);
    }
}
