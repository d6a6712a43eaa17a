//! The HTTP/1.1 contract over TLS (feature `tls`, spec/contract.md "Transports"): a TLS 1.3 and
//! a TLS 1.2 handshake offering ALPN `http/1.1` (what was negotiated is noted), then every
//! declared endpoint, the 404s, keep-alive, 16 requests pipelined in one write, and HTTP/1.0
//! with and without keep-alive, each named as on `PORT` with [`SUFFIX`] so a deviation the
//! manifest declares covers both.
//!
//! The HTTP/1.0 checks offer no ALPN: there is no protocol id an HTTP/1.0 client could offer
//! that servers accept (`http/1.0` is refused by Go, rustls and nginx alike).

use crate::checks::{self, Endpoint};
use crate::diff::Diff;
use crate::http::{Conn, Dial};
use crate::shapes;
use crate::tls::{TlsClient, TlsTarget};
use crate::Check;
use serverbench_model::Feature;
use serverbench_model::TlsVersion;

/// Appended to the name of every check run over TLS.
pub const SUFFIX: &str = " over TLS";
/// The ALPN offer of the HTTP/1.1 checks.
const HTTP11: &[u8] = b"http/1.1";

/// The clients the checks use.
struct Clients {
    tls13: TlsClient,
    tls12: TlsClient,
    http11: TlsClient,
    no_alpn: TlsClient,
}

impl Clients {
    fn new(t: &TlsTarget) -> Result<Clients, crate::tls::TlsError> {
        Ok(Clients {
            tls13: TlsClient::new(t, &[HTTP11], Some(TlsVersion::V1_3))?,
            tls12: TlsClient::new(t, &[HTTP11], Some(TlsVersion::V1_2))?,
            http11: TlsClient::new(t, &[HTTP11], None)?,
            no_alpn: TlsClient::new(t, &[], None)?,
        })
    }
}

/// Every check of the `tls` feature against `target`.
pub fn check_all(target: &TlsTarget, features: &[Feature]) -> Vec<Check> {
    let clients = match Clients::new(target) {
        Ok(c) => c,
        Err(e) => {
            let d = Diff::error("TLS client", "a client trusting the certificate", &e);
            return vec![Check::new(format!("TLS client{SUFFIX}"), vec![d])];
        }
    };
    let addr = target.addr;
    let mut out = vec![
        check_handshake(Dial::tls(addr, &clients.tls13), TlsVersion::V1_3),
        check_handshake(Dial::tls(addr, &clients.tls12), TlsVersion::V1_2),
    ];
    let h11 = Dial::tls(addr, &clients.http11);
    let mut good: Vec<Endpoint> = Vec::new();
    for e in checks::declared(features) {
        let c = checks::check_endpoint(h11, &e, true);
        if c.passed() {
            good.push(e);
        }
        out.push(c);
    }
    out.extend(checks::check_404(h11, features));
    if let Some(e) = good.first() {
        let plain = Dial::tls(addr, &clients.no_alpn);
        out.push(checks::check_keep_alive(h11, e, 100));
        out.push(checks::check_pipelining(h11, &good, 16));
        out.push(checks::check_http10(plain, e));
        out.push(shapes::check_http10_keep_alive(plain, e));
    }
    for c in &mut out {
        c.name.push_str(SUFFIX);
    }
    out
}

/// A handshake of `version` offering ALPN `http/1.1`: the server may choose it or no ALPN, not
/// another protocol. The note says what was negotiated.
fn check_handshake(to: Dial<'_>, version: TlsVersion) -> Check {
    let name = format!("{version} handshake, ALPN http/1.1 offered");
    let conn = match Conn::open(to) {
        Ok(c) => c,
        Err(e) => {
            let d = Diff::error("handshake", format!("a {version} handshake"), &e);
            return Check::new(name, vec![d]);
        }
    };
    let Some(n) = conn.negotiated() else {
        return Check::new(name, vec![Diff::new("transport", "TLS", "plain TCP")]);
    };
    let mut diffs = Vec::new();
    if n.version != version {
        diffs.push(Diff::new(
            "TLS version",
            version.as_str(),
            n.version.as_str(),
        ));
    }
    if let Some(alpn) = n.alpn.filter(|a| *a != "http/1.1") {
        diffs.push(Diff::new("ALPN", "http/1.1 (or none)", alpn));
    }
    Check::new(name, diffs).with_note(n.to_string())
}
