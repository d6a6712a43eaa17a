//! `--http3 https://HOST:PORT/PATH`: the HTTP/3 load, prepared once. Each URL (or `--mix`
//! entry) becomes its request stream's bytes (HEADERS encoded with QPACK's static table and
//! literals, and a DATA frame for a body); TLS is 1.3 only, ALPN `h3`, with the trust flags
//! of any `https://` load (`--cacert`, `-k`).

use super::mix::{wanted, Wanted};
use super::{resolve, spec, ConfigError, HttpTarget, Protocol, Url};
use crate::tls::TlsSpec;
use serverbench_model::{LoadSpec, Method, TlsVersion};
use serverbench_wire::h3;

/// The prepared HTTP/3 load.
#[derive(Debug, Clone)]
pub struct H3Spec {
    /// One request stream's bytes per URL (or mix entry), encoded once.
    pub requests: Vec<h3::Request>,
    /// `--expect-status`: codes that are not errors (empty: any 2xx).
    pub expect_status: Vec<u16>,
    /// `--verify`: compare each body's length and checksum with the first one per URL.
    pub verify: bool,
    /// `-m/--streams`: concurrent request streams per connection (the server's
    /// `initial_max_streams_bidi` may lower it).
    pub streams: u32,
    /// The name the server is asked for (SNI) and its certificate is checked against.
    pub server_name: String,
    /// `--0rtt`: requests on resumed connections go out in 0-RTT.
    pub zero_rtt: bool,
}

/// The spec's `https://` URLs as an HTTP/3 load: the address (UDP), the requests, and TLS 1.3
/// with ALPN `h3`. The spec's protocol field is not read: the caller chose HTTP/3.
pub fn h3_target(spec: &LoadSpec) -> Result<HttpTarget, ConfigError> {
    let parsed = super::parsed_urls(spec)?;
    let first = &parsed[0];
    if !first.tls {
        return Err(ConfigError::flag(
            "--http3",
            "needs https://: QUIC carries TLS 1.3",
        ));
    }
    let method = spec.work.method.unwrap_or(Method::Get).as_str();
    let body = spec::body_of(spec)?;
    let mix = spec.work.mix_requests.as_ref();
    let wanted = wanted(method, &parsed, &spec.http.headers, body.as_deref(), mix)?;
    let mut options = spec::tls_options(spec);
    if options.version == Some(TlsVersion::V1_2) {
        return Err(ConfigError::flag(
            "--tls-version",
            "1.2 with --http3: QUIC carries TLS 1.3 only",
        ));
    }
    options.version = Some(TlsVersion::V1_3);
    let tls = TlsSpec::new(&options, &first.host, &[h3::ALPN])?;
    let addr = resolve(&first.host, first.port)?;
    let requests = wanted.iter().map(|w| request(w, first)).collect();
    Ok(HttpTarget {
        addr,
        protocol: Protocol::Http3(H3Spec {
            requests,
            expect_status: spec.http.expect_status.clone(),
            verify: spec.http.verify,
            streams: spec.streams(),
            server_name: first.host.trim_matches(['[', ']']).to_string(),
            zero_rtt: spec.http3.zero_rtt,
        }),
        tls: Some(tls),
    })
}

/// One request's stream bytes: `-H` headers without the hop-by-hop ones, `Host` as the
/// authority, and a `content-length` for a body.
fn request(w: &Wanted<'_>, url: &Url) -> h3::Request {
    let split = |h: &String| {
        let (n, v) = h.split_once(':').expect("checked `Name: value`");
        (n.trim().to_ascii_lowercase(), v.trim().to_string())
    };
    let given: Vec<(String, String)> = w.headers.iter().map(split).collect();
    let authority = (given.iter().find(|(n, _)| n == "host"))
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| url.host_header());
    let mut headers: Vec<(String, String)> = given
        .into_iter()
        .filter(|(n, _)| !super::HOP_BY_HOP.contains(&n.as_str()))
        .collect();
    if let Some(body) = w.body {
        if !headers.iter().any(|(n, _)| n == "content-length") {
            headers.push(("content-length".into(), body.len().to_string()));
        }
    }
    h3::Request::new(w.method, &authority, w.path, &headers, w.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_of(url: &str) -> LoadSpec {
        let mut s = LoadSpec::default();
        s.at_urls(&[url.to_string()]).unwrap();
        s
    }

    #[test]
    fn an_https_url_becomes_one_prepared_request_over_tls_1_3() {
        let t = h3_target(&spec_of("https://127.0.0.1:4433/hello")).unwrap();
        let Protocol::Http3(h) = t.protocol else {
            panic!("an HTTP/3 load")
        };
        assert_eq!(h.requests.len(), 1);
        assert_eq!(h.server_name, "127.0.0.1");
        let want = h3::Request::new("GET", "127.0.0.1:4433", "/hello", &[], None);
        assert_eq!(h.requests[0], want);
        assert!(t.tls.is_some());
    }

    #[test]
    fn a_plain_url_and_tls_1_2_are_refused_naming_the_flag() {
        let e = h3_target(&spec_of("http://127.0.0.1:4433/")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--http3: needs https://: QUIC carries TLS 1.3"
        );
        let mut s = spec_of("https://127.0.0.1:4433/");
        s.http.tls_version = Some(TlsVersion::V1_2);
        let e = h3_target(&s).unwrap_err();
        assert!(e.to_string().starts_with("--tls-version"), "{e}");
    }
}
