//! Content codings verify decodes before it compares a body (`compression`, `static`): gzip,
//! deflate (zlib-wrapped as RFC 9110 says, or raw as some servers send), br and zstd, each with
//! its kept crate ([`Coding`] lives in serverbench-wire: the load generator decodes too).

use serverbench_wire::coding::Coding;

/// What a response's `Content-Encoding` says: nothing (identity), one coding verify decodes,
/// or something else (several codings, an unknown token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Encoded {
    /// No `Content-Encoding` (or `identity`).
    Identity,
    /// One known coding.
    One(Coding),
    /// Anything else, as sent.
    Other(String),
}

impl Encoded {
    /// From the `Content-Encoding` header value, if any.
    pub fn of(header: Option<&str>) -> Encoded {
        match header.map(str::trim) {
            None | Some("") => Encoded::Identity,
            Some(v) if v.eq_ignore_ascii_case("identity") => Encoded::Identity,
            Some(v) => Coding::parse(v).map_or_else(|| Encoded::Other(v.to_string()), Encoded::One),
        }
    }

    /// How it reads in a diff.
    pub fn label(&self) -> String {
        match self {
            Encoded::Identity => "no Content-Encoding".into(),
            Encoded::One(c) => c.as_str().into(),
            Encoded::Other(s) => s.clone(),
        }
    }
}

/// True when a `Vary` header value names `Accept-Encoding` (or is `*`).
pub fn varies_on_encoding(vary: Option<&str>) -> bool {
    vary.is_some_and(|v| {
        v.split(',')
            .map(str::trim)
            .any(|t| t == "*" || t.eq_ignore_ascii_case("accept-encoding"))
    })
}

#[cfg(test)]
pub(crate) fn encode(c: Coding, body: &[u8]) -> Vec<u8> {
    use std::io::Write;
    match c {
        Coding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(body).unwrap();
            e.finish().unwrap()
        }
        Coding::Deflate => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(body).unwrap();
            e.finish().unwrap()
        }
        Coding::Br => {
            let mut out = Vec::new();
            let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            w.write_all(body).unwrap();
            drop(w);
            out
        }
        Coding::Zstd => zstd::stream::encode_all(body, 3).unwrap(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_coding_round_trips() {
        let body = b"{\"message\":\"Hello, World!\"}".repeat(20);
        for c in Coding::ALL {
            assert_eq!(c.decode(&encode(c, &body)).unwrap(), body, "{c:?}");
        }
    }

    #[test]
    fn raw_deflate_is_decoded_too() {
        use std::io::Write;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b"raw deflate").unwrap();
        let raw = e.finish().unwrap();
        assert_eq!(Coding::Deflate.decode(&raw).unwrap(), b"raw deflate");
    }

    #[test]
    fn a_body_that_is_not_the_coding_is_an_error_naming_it() {
        let err = Coding::Gzip.decode(b"plain text").unwrap_err().to_string();
        assert!(err.contains("gzip"), "{err}");
    }

    #[test]
    fn content_encoding_and_vary_are_read_as_sent() {
        assert_eq!(Encoded::of(None), Encoded::Identity);
        assert_eq!(Encoded::of(Some("GZIP")), Encoded::One(Coding::Gzip));
        assert_eq!(
            Encoded::of(Some("gzip, br")),
            Encoded::Other("gzip, br".into())
        );
        assert!(varies_on_encoding(Some("Origin, accept-encoding")));
        assert!(!varies_on_encoding(Some("Origin")));
    }
}
