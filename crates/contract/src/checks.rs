//! The HTTP checks of spec/contract.md: endpoints, 404, keep-alive, pipelining, HTTP/1.0.

use super::diff::Diff;
use super::http::{get_request, Conn, Dial, Response};
use super::Check;
use serverbench_model::Feature;
use std::sync::OnceLock;
use std::time::Duration;

/// Size of the `/payload` and `/pingpong` body.
pub const PAYLOAD_LEN: usize = 1 << 20;

/// The 1 MiB body: byte i = `'a' + i mod 26`.
pub fn payload() -> &'static [u8] {
    static P: OnceLock<Vec<u8>> = OnceLock::new();
    P.get_or_init(|| (0..PAYLOAD_LEN).map(|i| b'a' + (i % 26) as u8).collect())
}

/// What a body must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// These exact bytes.
    Exact(&'static [u8]),
    /// `{"message":"Hello, World!"}`, compared parsed.
    HelloJson,
    /// The 1 MiB pattern.
    Payload,
}

/// One endpoint of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// The feature it belongs to.
    pub feature: Feature,
    /// The request path.
    pub path: &'static str,
    /// Expected status.
    pub status: u16,
    /// Expected media type.
    pub media_type: &'static str,
    /// Expected body.
    pub body: Body,
}

const fn ep(
    feature: Feature,
    path: &'static str,
    media_type: &'static str,
    body: Body,
) -> Endpoint {
    Endpoint {
        feature,
        path,
        status: 200,
        media_type,
        body,
    }
}

/// Every endpoint of the contract (the 404 is separate).
pub const ENDPOINTS: [Endpoint; 7] = [
    ep(
        Feature::Hello,
        "/hello",
        "text/plain",
        Body::Exact(b"Hello World!"),
    ),
    ep(Feature::Routes, "/hey", "text/plain", Body::Exact(b"Hey!")),
    ep(
        Feature::Routes,
        "/hell",
        "text/plain",
        Body::Exact(b"Hell!"),
    ),
    ep(
        Feature::Routes,
        "/about",
        "text/html",
        Body::Exact(b"<html><body>About page</body></html>"),
    ),
    ep(Feature::Json, "/json", "application/json", Body::HelloJson),
    ep(
        Feature::Payload,
        "/payload",
        "application/octet-stream",
        Body::Payload,
    ),
    ep(
        Feature::Pingpong,
        "/pingpong",
        "application/octet-stream",
        Body::Payload,
    ),
];

/// The 404 expected for `path` (body and media type only checked when `routes` is declared).
pub fn not_found(path: &'static str) -> Endpoint {
    Endpoint {
        feature: Feature::Routes,
        path,
        status: 404,
        media_type: "text/plain",
        body: Body::Exact(b"Not Found"),
    }
}

/// The declared endpoints, in contract order.
pub fn declared(features: &[Feature]) -> Vec<Endpoint> {
    ENDPOINTS
        .iter()
        .filter(|e| features.contains(&e.feature))
        .copied()
        .collect()
}

/// Compares a response with an endpoint's expectation; `strict` also checks media type and body.
pub fn compare(e: &Endpoint, r: &Response, strict: bool) -> Vec<Diff> {
    let mut diffs = Vec::new();
    if r.status != e.status {
        diffs.push(Diff::new(
            "status",
            e.status.to_string(),
            r.status.to_string(),
        ));
    }
    // HTTP/1.0 may delimit by closing; HTTP/2 and HTTP/3 frame every body (the stream's end).
    let framed_by_protocol = matches!(r.version.as_str(), "HTTP/1.0" | "HTTP/2" | "HTTP/3");
    if r.header("content-length").is_none()
        && r.header("transfer-encoding").is_none()
        && !framed_by_protocol
    {
        diffs.push(Diff::new(
            "framing",
            "Content-Length or Transfer-Encoding: chunked",
            "neither (body delimited by closing)",
        ));
    }
    if !strict {
        return diffs;
    }
    match r.media_type() {
        Some(m) if m == e.media_type => {}
        got => diffs.push(Diff::new(
            "Content-Type",
            e.media_type,
            got.unwrap_or_else(|| "no Content-Type header".into()),
        )),
    }
    diffs.extend(compare_body(e.body, &r.body));
    diffs
}

fn compare_body(body: Body, got: &[u8]) -> Option<Diff> {
    match body {
        Body::Exact(b) => Diff::bytes("body", b, got),
        Body::Payload => Diff::bytes("body", payload(), got),
        Body::HelloJson => {
            let expected = serde_json::json!({"message": "Hello, World!"});
            match serde_json::from_slice::<serde_json::Value>(got) {
                Ok(v) if v == expected => None,
                Ok(v) => Some(Diff::new("JSON body", expected.to_string(), v.to_string())),
                Err(e) => Some(Diff::new(
                    "JSON body",
                    expected.to_string(),
                    format!(
                        "{} (not JSON: {e})",
                        super::diff::quote(&got[..got.len().min(60)])
                    ),
                )),
            }
        }
    }
}

/// One GET on a fresh connection, compared with `e`.
pub fn check_endpoint(to: Dial<'_>, e: &Endpoint, strict: bool) -> Check {
    let name = format!("GET {}", e.path);
    let diffs = match super::http::get(to, e.path) {
        Ok(r) => compare(e, &r, strict),
        Err(err) => vec![Diff::error(
            "response",
            format!("{} {}", e.status, e.path),
            &err,
        )],
    };
    Check::new(name, diffs)
}

/// The 404 checks: a path sharing no prefix and one sharing a prefix with the routes.
pub fn check_404(to: Dial<'_>, features: &[Feature]) -> Vec<Check> {
    let strict = features.contains(&Feature::Routes);
    ["/serverbench-unknown", "/hel"]
        .into_iter()
        .map(|p| {
            let mut c = check_endpoint(to, &not_found(p), strict);
            c.name = format!("GET {p} (unknown path) -> 404");
            c
        })
        .collect()
}

/// `n` requests one after the other on one keep-alive connection.
pub fn check_keep_alive(to: Dial<'_>, e: &Endpoint, n: usize) -> Check {
    let name = format!("{n} requests on one keep-alive connection");
    let mut conn = match Conn::open(to) {
        Ok(c) => c,
        Err(err) => return Check::new(name, vec![Diff::error("connect", "a connection", &err)]),
    };
    let req = get_request(e.path, &to.host(), false);
    for i in 0..n {
        let got = conn.send(&req).and_then(|()| conn.read_response());
        let diffs = match got {
            Ok(r) => compare(e, &r, true),
            Err(err) => vec![Diff::error("response", format!("200 {}", e.path), &err)],
        };
        if !diffs.is_empty() {
            return Check::new(name, prefix(diffs, &format!("request {} of {n}", i + 1)));
        }
    }
    Check::pass(name)
}

/// `n` requests cycling through `eps`, written at once, answered in order.
pub fn check_pipelining(to: Dial<'_>, eps: &[Endpoint], n: usize) -> Check {
    let name = format!("{n} mixed requests pipelined in one write");
    if eps.is_empty() {
        return Check::pass(name);
    }
    let plan: Vec<Endpoint> = (0..n).map(|i| eps[i % eps.len()]).collect();
    let mut conn = match Conn::open(to) {
        Ok(c) => c,
        Err(err) => return Check::new(name, vec![Diff::error("connect", "a connection", &err)]),
    };
    let mut all = Vec::new();
    for e in &plan {
        all.extend(get_request(e.path, &to.host(), false));
    }
    if let Err(err) = conn.send(&all) {
        return Check::new(
            name,
            vec![Diff::error("write", "the requests accepted", &err)],
        );
    }
    for (i, e) in plan.iter().enumerate() {
        let diffs = match conn.read_response() {
            Ok(r) => compare(e, &r, true),
            Err(err) => vec![Diff::error("response", format!("200 {}", e.path), &err)],
        };
        if !diffs.is_empty() {
            let at = format!("response {} of {n} (GET {})", i + 1, e.path);
            return Check::new(name, prefix(diffs, &at));
        }
    }
    Check::pass(name)
}

/// An HTTP/1.0 request without keep-alive: answered, then the connection is closed.
pub fn check_http10(to: Dial<'_>, e: &Endpoint) -> Check {
    let name = format!("HTTP/1.0 GET {}", e.path);
    let mut conn = match Conn::open(to) {
        Ok(c) => c,
        Err(err) => return Check::new(name, vec![Diff::error("connect", "a connection", &err)]),
    };
    let got = conn
        .send(&get_request(e.path, &to.host(), true))
        .and_then(|()| conn.read_response());
    let r = match got {
        Ok(r) => r,
        Err(err) => {
            return Check::new(
                name,
                vec![Diff::error("response", format!("200 {}", e.path), &err)],
            )
        }
    };
    let mut diffs: Vec<Diff> = compare(e, &r, true)
        .into_iter()
        .filter(|d| d.what != "framing")
        .collect();
    if !r.close_delimited && !conn.closed_by_peer(Duration::from_secs(2)) {
        diffs.push(Diff::new(
            "connection",
            "closed after the response (no Connection: keep-alive asked)",
            "still open after 2 s",
        ));
    }
    Check::new(name, diffs)
}

fn prefix(diffs: Vec<Diff>, at: &str) -> Vec<Diff> {
    diffs
        .into_iter()
        .map(|mut d| {
            d.what = format!("{at}: {}", d.what);
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, ctype: &str, body: &[u8]) -> Response {
        Response {
            version: "HTTP/1.1".into(),
            status,
            headers: vec![
                ("Content-Type".into(), ctype.into()),
                ("Content-Length".into(), body.len().to_string()),
            ],
            body: body.to_vec(),
            close_delimited: false,
        }
    }

    /// Answers every request on a connection with `Hello World!` and never closes.
    fn keep_open_server() -> Dial<'static> {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 4096];
            while matches!(s.read(&mut b), Ok(n) if n > 0) {
                let r = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nHello World!";
                let _ = s.write_all(r.as_bytes());
            }
        });
        Dial::tcp(addr)
    }

    #[test]
    fn an_http10_response_left_open_fails_the_connection_check() {
        let c = check_http10(keep_open_server(), &ENDPOINTS[0]);
        let whats: Vec<&str> = c.diffs.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(whats, vec!["connection"]);
    }

    #[test]
    fn the_payload_follows_the_alphabet_pattern() {
        let p = payload();
        assert_eq!(p.len(), 1_048_576);
        assert_eq!(&p[..3], b"abc");
        assert_eq!(p[26], b'a');
        assert_eq!(p[PAYLOAD_LEN - 1], b'a' + ((PAYLOAD_LEN - 1) % 26) as u8);
    }

    #[test]
    fn media_type_parameters_are_ignored() {
        let r = resp(200, "Text/Plain; charset=utf-8", b"Hello World!");
        assert!(compare(&ENDPOINTS[0], &r, true).is_empty());
    }

    #[test]
    fn json_is_compared_parsed() {
        let e = ENDPOINTS[4];
        let r = resp(
            200,
            "application/json",
            b"{ \"message\" : \"Hello, World!\" }",
        );
        assert!(compare(&e, &r, true).is_empty());
        let r = resp(200, "application/json", b"{\"message\":\"Hello World\"}");
        assert_eq!(compare(&e, &r, true)[0].what, "JSON body");
    }

    #[test]
    fn wrong_status_type_and_body_are_all_reported() {
        let r = resp(500, "text/html", b"oops");
        let whats: Vec<String> = compare(&ENDPOINTS[0], &r, true)
            .into_iter()
            .map(|d| d.what)
            .collect();
        assert_eq!(whats, vec!["status", "Content-Type", "body"]);
    }

    #[test]
    fn only_declared_features_give_endpoints() {
        let paths: Vec<&str> = declared(&[Feature::Json, Feature::Routes])
            .iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(paths, vec!["/hey", "/hell", "/about", "/json"]);
    }
}
