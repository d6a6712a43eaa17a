//! What one HTTP/1.1 request sends: a [`RequestTemplate`], built once per URL (or per mix
//! entry) and written per request. A constant request is one copy of its bytes, as before
//! templates existed; only a request with `{rand:A-B}` in its path or a body drawn per request
//! (`--body-size`) or sent chunked is written piece by piece. Bodies of [`SPLICE_MIN`] bytes or
//! more are not copied: the connection's output refers to the shared bytes ([`Splices`]).

use crate::conn::Splices;
use serverbench_wire::coding::Accepts;
use serverbench_wire::ws::Rng;
use std::sync::Arc;

/// Body pieces (a whole body, or a chunk) smaller than this are copied into the output; larger
/// ones are written from the shared bytes.
pub const SPLICE_MIN: usize = 16 * 1024;

/// `--chunk-size`'s default.
pub const DEFAULT_CHUNK: usize = serverbench_model::spec::DEFAULT_CHUNK_SIZE as usize;

/// A piece of the request line: text, or `{rand:A-B}` (a fresh integer per request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinePart {
    Text(String),
    Rand { lo: u64, hi: u64 },
}

/// The body a template asks for (before it is built).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Body {
    #[default]
    None,
    /// `--body`, `--body-file`: the same bytes every time.
    Fixed(Vec<u8>),
    /// `--body-size`: random bytes, the size drawn per request from `min..=max`.
    Random { min: usize, max: usize },
}

/// Where a built template's body comes from.
#[derive(Debug, Clone)]
enum Source {
    /// No body, or a fixed one written with the head (it is in `head`).
    Inline,
    /// A fixed body written from shared bytes (large, or chunked).
    Bytes(Arc<[u8]>),
    /// The thread's random bytes ([`Draw::random`]), `min..=max` of them.
    Random { min: usize, max: usize },
}

/// Why a request cannot be built; names the flag or the URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("`{path}`: {why}")]
    Placeholder { path: String, why: String },
    #[error("-H/--header: `{header}` cannot be given with {flag} (the engine writes the framing)")]
    Framing { header: String, flag: &'static str },
    #[error("--chunked: needs a body (--body, --body-file or --body-size)")]
    ChunkedWithoutBody,
}

impl Body {
    /// The body the flags ask for: `--body-size` (`min..=max`), else `--body`/`--body-file`;
    /// `--chunked` needs one of them.
    pub fn of(
        fixed: Option<&[u8]>,
        size: Option<(usize, usize)>,
        chunked: Option<usize>,
    ) -> Result<Body, TemplateError> {
        match (fixed, size) {
            (_, Some((min, max))) => Ok(Body::Random { min, max }),
            (Some(b), None) => Ok(Body::Fixed(b.to_vec())),
            (None, None) if chunked.is_some() => Err(TemplateError::ChunkedWithoutBody),
            (None, None) => Ok(Body::None),
        }
    }
}

/// One request, prepared: see the module documentation.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    /// The request line in parts when its path has placeholders (`None`: it is in `head`).
    line: Option<Vec<LinePart>>,
    /// The constant bytes: the request line (unless `line`), the headers, and, when the body's
    /// length is known, the blank line and an inline body.
    head: Vec<u8>,
    body: Source,
    /// `--chunked`: the chunk size.
    chunk: Option<usize>,
    /// The codings the request's `Accept-Encoding` lists (`--verify` counts others).
    pub accepts: Accepts,
    /// Whether it has a body.
    with_body: bool,
    /// A constant request's body size (in `head`).
    inline_len: usize,
    /// No placeholder and the body in `head`: every request is `head`.
    constant: bool,
}

/// A worker thread's means to write requests: its generator and its random body bytes.
pub struct Draw {
    pub rng: Rng,
    /// `--body-size`: random bytes, as many as the largest body (empty without).
    pub random: Arc<[u8]>,
    /// Bodies copied into the output even when large (TLS: rustls copies anyway).
    pub copy: bool,
}

impl Draw {
    /// A thread's generator (seeded from the OS, salted with `salt`) and `random_len` random bytes.
    pub fn new(salt: u64, random_len: usize, copy: bool) -> Draw {
        let mut rng = Rng::from_os(salt);
        let mut random = vec![0u8; random_len];
        for c in random.chunks_mut(8) {
            let r = rng.next_u64().to_le_bytes();
            c.copy_from_slice(&r[..c.len()]);
        }
        Draw {
            rng,
            random: random.into(),
            copy,
        }
    }

    /// A uniform integer in `lo..=hi` (Lemire's multiply, no division).
    #[inline]
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        let span = (hi - lo) as u128 + 1;
        lo + ((u128::from(self.rng.next_u64()) * span) >> 64) as u64
    }
}

/// The header names the engine writes itself when it frames the body.
fn framing_header(h: &str) -> bool {
    let name = h.split(':').next().unwrap_or_default().trim();
    name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")
}

fn has_header(headers: &[String], name: &str) -> bool {
    headers.iter().any(|h| {
        h.split(':')
            .next()
            .is_some_and(|n| n.trim().eq_ignore_ascii_case(name))
    })
}

impl RequestTemplate {
    /// Prepares `method path` to `host` (the `Host` header unless `headers` has one) with
    /// `body`, sent chunked in `chunk`-byte chunks when given.
    pub fn new(
        method: &str,
        path: &str,
        host: &str,
        headers: &[String],
        body: Body,
        chunk: Option<usize>,
    ) -> Result<RequestTemplate, TemplateError> {
        let parts = split_placeholders(path)?;
        const VERSION: &str = " HTTP/1.1\r\n";
        let dynamic = parts.iter().any(|p| matches!(p, LinePart::Rand { .. }));
        let mut head = Vec::new();
        let line = if dynamic {
            let mut all = vec![LinePart::Text(format!("{method} "))];
            all.extend(parts);
            all.push(LinePart::Text(VERSION.into()));
            Some(all)
        } else {
            head.extend_from_slice(format!("{method} {path}{VERSION}").as_bytes());
            None
        };
        let with_body = body != Body::None;
        let mut inline_len = 0;
        let framed = chunk.is_some() || matches!(body, Body::Random { .. });
        if framed {
            if let Some(h) = headers.iter().find(|h| framing_header(h)) {
                let flag = match chunk {
                    Some(_) => "--chunked",
                    None => "--body-size",
                };
                return Err(TemplateError::Framing {
                    header: h.clone(),
                    flag,
                });
            }
        }
        if !has_header(headers, "host") {
            head.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
        }
        for h in headers {
            head.extend_from_slice(h.trim().as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        if chunk.is_some() {
            head.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        }
        let body = match body {
            Body::None => {
                head.extend_from_slice(b"\r\n");
                Source::Inline
            }
            Body::Fixed(b) if chunk.is_none() => {
                if !has_header(headers, "content-length") {
                    head.extend_from_slice(format!("Content-Length: {}\r\n", b.len()).as_bytes());
                }
                head.extend_from_slice(b"\r\n");
                if b.len() < SPLICE_MIN {
                    inline_len = b.len();
                    head.extend_from_slice(&b);
                    Source::Inline
                } else {
                    Source::Bytes(b.into())
                }
            }
            Body::Fixed(b) => Source::Bytes(b.into()),
            Body::Random { min, max } => Source::Random { min, max },
        };
        Ok(RequestTemplate {
            constant: line.is_none() && matches!(body, Source::Inline),
            line,
            head,
            body,
            chunk: chunk.map(|c| c.max(1)),
            accepts: Accepts::of_headers(headers),
            with_body,
            inline_len,
        })
    }

    /// Whether every request is the same bytes ([`RequestTemplate::constant`]).
    #[inline]
    pub fn is_constant(&self) -> bool {
        self.constant
    }

    /// The whole request, when [`RequestTemplate::is_constant`].
    #[inline]
    pub fn constant(&self) -> &[u8] {
        &self.head
    }

    /// The body size of a constant request (0: none).
    #[inline]
    pub fn constant_body_len(&self) -> usize {
        self.inline_len
    }

    /// Whether requests carry a body.
    pub fn sends_body(&self) -> bool {
        self.with_body
    }

    /// The random bytes a thread needs for this template's bodies.
    pub fn random_len(&self) -> usize {
        match self.body {
            Source::Random { max, .. } => max,
            _ => 0,
        }
    }

    /// Appends one request to `out`, large body pieces as `splices`; returns the body's size.
    pub fn write(&self, out: &mut Vec<u8>, splices: &mut Splices, draw: &mut Draw) -> usize {
        if self.is_constant() {
            out.extend_from_slice(&self.head);
            return 0;
        }
        if let Some(parts) = &self.line {
            for p in parts {
                match p {
                    LinePart::Text(t) => out.extend_from_slice(t.as_bytes()),
                    LinePart::Rand { lo, hi } => push_decimal(out, draw.between(*lo, *hi)),
                }
            }
        }
        out.extend_from_slice(&self.head);
        let (bytes, start, len) = match &self.body {
            Source::Inline => return 0,
            Source::Bytes(b) => (b.clone(), 0, b.len()),
            Source::Random { min, max } => {
                let len = draw.between(*min as u64, *max as u64) as usize;
                let start = draw.between(0, (draw.random.len() - len) as u64) as usize;
                (draw.random.clone(), start, len)
            }
        };
        let Some(chunk) = self.chunk else {
            if matches!(self.body, Source::Random { .. }) {
                out.extend_from_slice(b"Content-Length: ");
                push_decimal(out, len as u64);
                out.extend_from_slice(b"\r\n\r\n");
            }
            put(out, splices, &bytes, start, len, draw.copy);
            return len;
        };
        let mut at = start;
        while at < start + len {
            let n = chunk.min(start + len - at);
            out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
            put(out, splices, &bytes, at, n, draw.copy);
            out.extend_from_slice(b"\r\n");
            at += n;
        }
        out.extend_from_slice(b"0\r\n\r\n");
        len
    }
}

/// Appends `bytes[start..start + len]`: copied when small (or `copy`), else spliced.
fn put(
    out: &mut Vec<u8>,
    splices: &mut Splices,
    bytes: &Arc<[u8]>,
    start: usize,
    len: usize,
    copy: bool,
) {
    if copy || len < SPLICE_MIN {
        out.extend_from_slice(&bytes[start..start + len]);
    } else {
        splices.push(out.len(), bytes.clone(), start, len);
    }
}

/// Appends `n` in decimal.
#[inline]
fn push_decimal(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Splits a path at its `{rand:A-B}` placeholders; other braces are left as they are.
pub fn split_placeholders(path: &str) -> Result<Vec<LinePart>, TemplateError> {
    let mut parts = Vec::new();
    let mut rest = path;
    while let Some(at) = rest.find("{rand:") {
        let bad = |why: &str| TemplateError::Placeholder {
            path: path.to_string(),
            why: why.to_string(),
        };
        let end = rest[at..]
            .find('}')
            .ok_or_else(|| bad("`{rand:` without its `}`"))?;
        let spec = &rest[at + 6..at + end];
        let (lo, hi) = spec
            .split_once('-')
            .and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)))
            .ok_or_else(|| {
                bad(&format!(
                    "`{{rand:{spec}}}`: give {{rand:A-B}}, e.g. {{rand:1-100}}"
                ))
            })?;
        if lo > hi {
            return Err(bad(&format!("`{{rand:{spec}}}`: the range is backwards")));
        }
        if at > 0 {
            parts.push(LinePart::Text(rest[..at].to_string()));
        }
        parts.push(LinePart::Rand { lo, hi });
        rest = &rest[at + end + 1..];
    }
    if !rest.is_empty() || parts.is_empty() {
        parts.push(LinePart::Text(rest.to_string()));
    }
    Ok(parts)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
