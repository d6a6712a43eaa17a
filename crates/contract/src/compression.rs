//! The `compression` feature (issue 32, HttpArena's json-comp profile): `GET /json` with
//! `Accept-Encoding` answers in a coding the client listed (gzip when only gzip is listed;
//! for a coding the server lacks, identity is allowed), says `Vary: Accept-Encoding` on an
//! encoded answer, and decodes to the JSON answer; without `Accept-Encoding`, no
//! `Content-Encoding`.

use super::diff::Diff;
use super::encoding::{varies_on_encoding, Encoded};
use super::http::{Conn, Dial, Response};
use super::shapes::request;
use super::Check;
use serverbench_wire::coding::Coding;

/// The `Accept-Encoding` values asked, and whether an identity answer is allowed.
const ASKED: [(&str, bool); 5] = [
    ("gzip", false),
    ("br", true),
    ("zstd", true),
    ("deflate", true),
    ("gzip, deflate, br, zstd", false),
];

/// A GET of `path` with `Accept-Encoding: accept` (none when `None`).
pub fn get_encoded(to: Dial<'_>, path: &str, accept: Option<&str>) -> std::io::Result<Response> {
    let header = accept.map(|a| format!("Accept-Encoding: {a}"));
    let extra: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut c = Conn::open(to)?;
    c.send(&request(path, &to.host(), "HTTP/1.1", &extra))?;
    c.read_response()
}

/// The body of `r` decoded per its `Content-Encoding`, which must be identity or one of the
/// codings in `accept` (a comma-separated list); the coding is returned beside it.
pub fn decoded(r: &Response, accept: Option<&str>) -> Result<(Encoded, Vec<u8>), Diff> {
    let listed: Vec<Coding> = accept
        .unwrap_or("")
        .split(',')
        .filter_map(|t| Coding::parse(t.split(';').next().unwrap_or("")))
        .collect();
    let enc = Encoded::of(r.header("content-encoding"));
    let expected = || match accept {
        None => "no Content-Encoding (none asked)".to_string(),
        Some(a) => format!("one of {a} (or none)"),
    };
    match &enc {
        Encoded::Identity => Ok((enc, r.body.clone())),
        Encoded::One(c) if listed.contains(c) => {
            c.decode(&r.body).map(|b| (enc.clone(), b)).map_err(|e| {
                Diff::new(
                    "body",
                    format!("a valid {} body", c.as_str()),
                    e.to_string(),
                )
            })
        }
        _ => Err(Diff::new("content-encoding", expected(), enc.label())),
    }
}

fn json_ok(body: &[u8]) -> Option<Diff> {
    let want = serde_json::json!({"message": "Hello, World!"});
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(v) if v == want => None,
        _ => Diff::bytes("decoded body", br#"{"message":"Hello, World!"}"#, body),
    }
}

fn check_one(to: Dial<'_>, accept: Option<&str>, identity_ok: bool) -> Check {
    let name = match accept {
        None => "GET /json without Accept-Encoding: not encoded".to_string(),
        Some(a) => format!("GET /json with Accept-Encoding: {a}"),
    };
    let r = match get_encoded(to, "/json", accept) {
        Ok(r) => r,
        Err(e) => return Check::new(name, vec![Diff::error("response", "200 /json", &e)]),
    };
    let mut d = Vec::new();
    if r.status != 200 {
        d.push(Diff::new("status", "200", r.status.to_string()));
    }
    if r.media_type().as_deref() != Some("application/json") {
        let got = r.header("content-type").unwrap_or("none");
        d.push(Diff::new("content-type", "application/json", got));
    }
    let (enc, body) = match decoded(&r, accept) {
        Ok(x) => x,
        Err(diff) => return Check::new(name, [d, vec![diff]].concat()),
    };
    d.extend(json_ok(&body));
    if accept.is_some() && enc == Encoded::Identity && !identity_ok {
        d.push(Diff::new(
            "content-encoding",
            accept.unwrap_or(""),
            enc.label(),
        ));
    }
    if enc != Encoded::Identity && !varies_on_encoding(r.header("vary")) {
        let got = r.header("vary").unwrap_or("no Vary");
        d.push(Diff::new("vary", "Accept-Encoding", got));
    }
    let note = format!("answered {} in {} bytes", enc.label(), r.body.len());
    Check::new(name, d).with_note(note)
}

/// Every check of `compression`.
pub fn check_all(to: Dial<'_>) -> Vec<Check> {
    let mut out = vec![check_one(to, None, true)];
    out.extend(
        ASKED
            .iter()
            .map(|&(a, identity_ok)| check_one(to, Some(a), identity_ok)),
    );
    out
}
