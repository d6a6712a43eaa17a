//! The `static` feature (issue 32, HttpArena's static profile): the tree of
//! [`crate::static_tree`] served under `/static/` from `STATIC_DIR`, with exact bytes,
//! `Content-Type` by extension, `Content-Length`, a validator (`ETag` or `Last-Modified`) and a
//! `304` on revalidation, `br` or `gzip` when asked (precompressed or on the fly), a 404 for a
//! missing file and no way out of the folder with `..` (raw or percent-encoded).

use super::compression::{decoded, get_encoded};
use super::diff::Diff;
use super::encoding::Encoded;
use super::http::{Conn, Dial, Response};
use super::shapes::request;
use super::static_tree::{StaticFile, FILES, SENTINEL, SENTINEL_NAME};
use super::Check;

/// What is asked when a file is to come compressed.
const ACCEPT: &str = "br, gzip";

pub(crate) fn url(f: &StaticFile) -> String {
    format!("/static/{}", f.path)
}

fn raw_get(to: Dial<'_>, path: &str, extra: &[&str]) -> std::io::Result<Response> {
    let mut c = Conn::open(to)?;
    c.send(&request(path, &to.host(), "HTTP/1.1", extra))?;
    c.read_response()
}

/// Status, type, length and bytes of one file asked without `Accept-Encoding`.
pub(crate) fn plain_diffs(f: &StaticFile, r: &Response) -> Vec<Diff> {
    let at = |what: &str| format!("{}: {what}", f.path);
    let mut d = Vec::new();
    if r.status != 200 {
        return vec![Diff::new(at("status"), "200", r.status.to_string())];
    }
    let types = f.kind().media_types();
    let got = r.media_type().unwrap_or_default();
    if !types.contains(&got.as_str()) {
        d.push(Diff::new(
            at("content-type"),
            types.join(" or "),
            r.header("content-type").unwrap_or("none"),
        ));
    }
    if r.header("content-length").is_none() {
        d.push(Diff::new(
            at("content-length"),
            f.size.to_string(),
            "none (chunked or close-delimited)",
        ));
    }
    let enc = Encoded::of(r.header("content-encoding"));
    if enc != Encoded::Identity {
        d.push(Diff::new(
            at("content-encoding"),
            "none (none asked)",
            enc.label(),
        ));
    }
    d.extend(Diff::bytes(&at("body"), &f.bytes(), &r.body));
    d
}

/// The name of the check of every file (over HTTP/3 too).
pub(crate) const EACH_FILE: &str =
    "GET /static/: the 20 files, exact bytes, Content-Type, Content-Length";

fn each_file(to: Dial<'_>) -> Check {
    let mut d = Vec::new();
    for f in &FILES {
        match raw_get(to, &url(f), &[]) {
            Ok(r) => d.extend(plain_diffs(f, &r)),
            Err(e) => d.push(Diff::error(format!("{}: response", f.path), "200", &e)),
        }
    }
    Check::new(EACH_FILE, d)
}

/// The validator to send back: `If-None-Match` for an `ETag`, else `If-Modified-Since`.
fn revalidation(r: &Response) -> Option<String> {
    if let Some(tag) = r.header("etag") {
        return Some(format!("If-None-Match: {tag}"));
    }
    r.header("last-modified")
        .map(|lm| format!("If-Modified-Since: {lm}"))
}

fn revalidate(to: Dial<'_>) -> Check {
    let mut d = Vec::new();
    let mut used = Vec::new();
    for f in [&FILES[0], &FILES[15]] {
        let at = |what: &str| format!("{}: {what}", f.path);
        let first = match raw_get(to, &url(f), &[]) {
            Ok(r) => r,
            Err(e) => {
                d.push(Diff::error(at("response"), "200", &e));
                continue;
            }
        };
        let Some(header) = revalidation(&first) else {
            d.push(Diff::new(
                at("validator"),
                "ETag or Last-Modified",
                "neither",
            ));
            continue;
        };
        used.push(header.split(':').next().unwrap_or("").to_string());
        match raw_get(to, &url(f), &[&header]) {
            Ok(r) if r.status == 304 && r.body.is_empty() => {}
            Ok(r) => d.push(Diff::new(
                at(&format!("status with {header}")),
                "304, no body",
                format!("{} ({} bytes)", r.status, r.body.len()),
            )),
            Err(e) => d.push(Diff::error(at("revalidation"), "304", &e)),
        }
    }
    used.dedup();
    Check::new(
        "GET /static/ revalidated (If-None-Match or If-Modified-Since) -> 304",
        d,
    )
    .with_note(format!("revalidated with {}", used.join(", ")))
}

fn compressed(to: Dial<'_>) -> Check {
    let mut d = Vec::new();
    let mut codings = Vec::new();
    for f in FILES.iter().filter(|f| f.kind().is_text()) {
        let at = |what: &str| format!("{}: {what}", f.path);
        let r = match get_encoded(to, &url(f), Some(ACCEPT)) {
            Ok(r) if r.status == 200 => r,
            Ok(r) => {
                d.push(Diff::new(at("status"), "200", r.status.to_string()));
                continue;
            }
            Err(e) => {
                d.push(Diff::error(at("response"), "200", &e));
                continue;
            }
        };
        match decoded(&r, Some(ACCEPT)) {
            Ok((Encoded::Identity, _)) => {
                d.push(Diff::new(at("content-encoding"), "br or gzip", "none"))
            }
            Ok((enc, body)) => {
                codings.push(enc.label());
                d.extend(Diff::bytes(&at("decoded body"), &f.bytes(), &body));
            }
            Err(mut diff) => {
                diff.what = at(&diff.what);
                d.push(diff);
            }
        }
    }
    codings.sort();
    codings.dedup();
    Check::new(
        format!("GET /static/ text files with Accept-Encoding: {ACCEPT} -> compressed"),
        d,
    )
    .with_note(format!("answered {}", codings.join(", ")))
}

fn missing(to: Dial<'_>) -> Check {
    let d = match raw_get(to, "/static/css/missing.css", &[]) {
        Ok(r) if r.status == 404 => Vec::new(),
        Ok(r) => vec![Diff::new("status", "404", r.status.to_string())],
        Err(e) => vec![Diff::error("response", "404", &e)],
    };
    Check::new("GET /static/css/missing.css -> 404", d)
}

/// A traversal answered: 400, 403 or 404, or a redirect to the cleaned path (Go's mux does),
/// and never the sentinel's bytes.
fn traversal(to: Dial<'_>, path: &str) -> Check {
    let name = format!("GET {path} (outside STATIC_DIR) -> 403 or 404");
    let d = match raw_get(to, path, &[]) {
        Ok(r)
            if r.body
                .windows(SENTINEL.len().min(40))
                .any(|w| w == &SENTINEL[..40]) =>
        {
            vec![Diff::new(
                "body",
                "not the file outside the folder",
                format!("{SENTINEL_NAME} served ({})", r.status),
            )]
        }
        Ok(r) if matches!(r.status, 400 | 403 | 404 | 301 | 302 | 307 | 308) => Vec::new(),
        Ok(r) => vec![Diff::new("status", "400, 403 or 404", r.status.to_string())],
        // A server may just close such a connection.
        Err(_) => Vec::new(),
    };
    Check::new(name, d)
}

/// Every check of `static`.
pub fn check_all(to: Dial<'_>) -> Vec<Check> {
    vec![
        each_file(to),
        revalidate(to),
        compressed(to),
        missing(to),
        traversal(to, &format!("/static/../{SENTINEL_NAME}")),
        traversal(to, &format!("/static/%2e%2e/{SENTINEL_NAME}")),
        traversal(to, &format!("/static/..%2f{SENTINEL_NAME}")),
    ]
}
