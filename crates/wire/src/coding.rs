//! Content codings (`gzip`, `deflate`, `br`, `zstd`), each decoded with its kept crate: the load
//! generator's `--verify` decodes answers before it compares them, and the contract's checks
//! decode what servers send. [`Accepts`] is what a request's `Accept-Encoding` lists.

use std::io::Read;

/// A body that is not valid in its coding: the coding and the decoder's error.
#[derive(Debug, thiserror::Error)]
#[error("not valid {}: {source}", coding.as_str())]
pub struct DecodeError {
    /// The coding the body claimed.
    pub coding: Coding,
    /// What the decoder said.
    pub source: std::io::Error,
}

/// A content coding of `Content-Encoding` / `Accept-Encoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// `gzip`
    Gzip,
    /// `deflate`
    Deflate,
    /// `br`
    Br,
    /// `zstd`
    Zstd,
}

impl Coding {
    /// Every coding verify decodes.
    pub const ALL: [Coding; 4] = [Coding::Gzip, Coding::Deflate, Coding::Br, Coding::Zstd];

    /// The token.
    pub fn as_str(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Br => "br",
            Coding::Zstd => "zstd",
        }
    }

    /// The coding of a token (case-insensitive; `x-gzip` is gzip).
    pub fn parse(token: &str) -> Option<Coding> {
        let t = token.trim().to_ascii_lowercase();
        Coding::ALL
            .into_iter()
            .find(|c| c.as_str() == t || (t == "x-gzip" && *c == Coding::Gzip))
    }

    /// Decodes `body`; the error says why (named by the coding).
    pub fn decode(self, body: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::new();
        let r = match self {
            Coding::Gzip => flate2::read::MultiGzDecoder::new(body).read_to_end(&mut out),
            Coding::Deflate => {
                let zlib = flate2::read::ZlibDecoder::new(body).read_to_end(&mut out);
                if zlib.is_err() {
                    out.clear();
                    flate2::read::DeflateDecoder::new(body).read_to_end(&mut out)
                } else {
                    zlib
                }
            }
            Coding::Br => brotli::Decompressor::new(body, 4096).read_to_end(&mut out),
            Coding::Zstd => {
                zstd::stream::read::Decoder::new(body).and_then(|mut d| d.read_to_end(&mut out))
            }
        };
        r.map(|_| out).map_err(|source| DecodeError {
            coding: self,
            source,
        })
    }
}

/// The codings a request's `Accept-Encoding` lists, as a set (`*` lists every one); `None` when
/// the request has no `Accept-Encoding` (then any `Content-Encoding` is one it did not ask for).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accepts(u8);

impl Accepts {
    fn bit(c: Coding) -> u8 {
        1 << (c as u8)
    }

    /// The set an `Accept-Encoding` value lists (`q=0` excludes a coding).
    pub fn of_value(value: &str) -> Accepts {
        let mut set = 0;
        for item in value.split(',') {
            let mut params = item.split(';');
            let token = params.next().unwrap_or_default().trim();
            let refused = params.any(|p| {
                let (k, v) = p.split_once('=').unwrap_or_default();
                k.trim().eq_ignore_ascii_case("q") && v.trim().parse::<f32>() == Ok(0.0)
            });
            if refused {
                continue;
            }
            if token == "*" {
                set = Coding::ALL.iter().fold(set, |s, &c| s | Accepts::bit(c));
            } else if let Some(c) = Coding::parse(token) {
                set |= Accepts::bit(c);
            }
        }
        Accepts(set)
    }

    /// The set listed by the `Accept-Encoding` among `headers` (`Name: value`), empty without one.
    pub fn of_headers(headers: &[String]) -> Accepts {
        headers
            .iter()
            .filter_map(|h| h.split_once(':'))
            .filter(|(n, _)| n.trim().eq_ignore_ascii_case("accept-encoding"))
            .fold(Accepts(0), |a, (_, v)| {
                Accepts(a.0 | Accepts::of_value(v).0)
            })
    }

    /// Whether `c` is listed.
    pub fn has(self, c: Coding) -> bool {
        self.0 & Accepts::bit(c) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_lists_codings_and_q_zero_takes_one_out() {
        let a = Accepts::of_value("gzip, br;q=0.8, zstd;q=0");
        assert!(a.has(Coding::Gzip) && a.has(Coding::Br));
        assert!(!a.has(Coding::Zstd) && !a.has(Coding::Deflate));
        let all = Accepts::of_value("*");
        assert!(Coding::ALL.iter().all(|&c| all.has(c)));
    }

    #[test]
    fn without_an_accept_encoding_header_no_coding_is_listed() {
        let none = Accepts::of_headers(&["Host: x".into()]);
        assert!(Coding::ALL.iter().all(|&c| !none.has(c)));
        let some = Accepts::of_headers(&["accept-encoding: GZIP".into()]);
        assert!(some.has(Coding::Gzip) && !some.has(Coding::Br));
    }

    #[test]
    fn a_coding_decodes_what_its_crate_encodes_and_names_itself_when_it_cannot() {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b"hello").unwrap();
        assert_eq!(Coding::Gzip.decode(&e.finish().unwrap()).unwrap(), b"hello");
        let z = zstd::stream::encode_all(&b"hello"[..], 3).unwrap();
        assert_eq!(Coding::Zstd.decode(&z).unwrap(), b"hello");
        assert!(Coding::Br
            .decode(b"plain")
            .unwrap_err()
            .to_string()
            .contains("br"));
    }
}
