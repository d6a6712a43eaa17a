//! `grpc://` and `grpcs://`: unary calls of the built-in benchmark service
//! (`spec/serverbench.proto`), prepared once: one HEADERS block (POST to the method,
//! `content-type: application/grpc`, `te: trailers`, `grpc-timeout` with `--deadline`) and
//! one framed request message, and the framed reply `--verify` expects.

use super::{plain_refuses_tls_flags, resolve, ConfigError, Protocol, Url};
use crate::h2;
use crate::tls::TlsSpec;
use serverbench_model::spec::{grpc_method, GrpcMethod};
use serverbench_model::LoadSpec;
use serverbench_wire::grpc;
use std::net::SocketAddr;
use std::time::Duration;

/// Sum's operands: the reply is their sum, 42.
pub const SUM_A: u32 = 20;
pub const SUM_B: u32 = 22;

/// The prepared gRPC calls.
#[derive(Debug, Clone)]
pub struct GrpcSpec {
    /// The one call, HEADERS and framed message, encoded once.
    pub requests: Vec<h2::Request>,
    /// The method called.
    pub method: GrpcMethod,
    /// `-m/--streams`: concurrent calls per connection.
    pub streams: u32,
    /// The receive window we advertise per stream and for the connection.
    pub window: u32,
    /// `--verify`: every reply compared with the expected one.
    pub verify: bool,
    /// The framed reply expected: its length and hash.
    pub expect: (u64, u64),
    /// Bytes of the framed request message.
    pub message_len: u64,
    /// `--deadline`, sent as `grpc-timeout`.
    pub deadline: Option<Duration>,
}

/// A resolved gRPC target.
#[derive(Debug, Clone)]
pub struct GrpcTarget {
    pub addr: SocketAddr,
    pub protocol: Protocol,
    pub tls: Option<TlsSpec>,
}

/// Parses the spec's `grpc[s]://` URL, resolves it, and prepares the call: `-m`, `--verify`,
/// `--message-size` (Echo's payload), `--deadline`, `-H` (metadata) and the TLS flags.
pub fn grpc_target(spec: &LoadSpec) -> Result<GrpcTarget, ConfigError> {
    let urls = spec.urls();
    let [url] = urls.as_slice() else {
        return Err(ConfigError::flag(
            "URL",
            "give one grpc:// or grpcs:// URL (a gRPC load calls one method)",
        ));
    };
    let tls_options = super::spec::tls_options(spec);
    let bad = |why: &str| ConfigError::BadUrl {
        url: url.to_string(),
        why: why.to_string(),
    };
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
    let tls = match scheme.to_ascii_lowercase().as_str() {
        "grpc" => false,
        "grpcs" => true,
        _ => return Err(bad("expected grpc[s]://HOST:PORT/package.Service/Method")),
    };
    let method = match grpc_method(url) {
        Ok(Some(m)) => m,
        _ => return Err(bad("expected grpc[s]://HOST:PORT/package.Service/Method")),
    };
    let u = Url::parse(&format!("{}://{rest}", if tls { "https" } else { "http" }))?;
    let tls = match tls {
        true => Some(TlsSpec::new(&tls_options, &u.host, &[b"h2"])?),
        false => {
            plain_refuses_tls_flags(&tls_options)?;
            None
        }
    };
    let addr = resolve(&u.host, u.port)?;
    let (message, reply) = messages(method, spec.work.size.unwrap_or(0) as usize);
    let framed = grpc::framed(&message, false);
    let expected = grpc::framed(&reply, false);
    let mut headers = vec![
        ("content-type".to_string(), grpc::CONTENT_TYPE.to_string()),
        ("te".to_string(), "trailers".to_string()),
    ];
    let deadline = spec.grpc.deadline;
    if let Some(d) = deadline {
        headers.push(("grpc-timeout".to_string(), grpc::timeout(d)));
    }
    for h in &spec.http.headers {
        let (name, value) = h
            .split_once(':')
            .filter(|_| !h.contains(['\r', '\n']))
            .ok_or_else(|| {
                ConfigError::flag("-H/--header", format!("`{h}` is not `Name: value`"))
            })?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    let block =
        h2::hpack::encode_request("POST", scheme, &u.host_header(), method.path(), &headers);
    let spec = GrpcSpec {
        requests: vec![h2::Request::new(&block, Some(&framed))],
        method,
        streams: spec.streams(),
        window: h2::DEFAULT_WINDOW,
        verify: spec.http.verify,
        expect: (
            expected.len() as u64,
            serverbench_wire::http::body_hash(&expected),
        ),
        message_len: framed.len() as u64,
        deadline,
    };
    Ok(GrpcTarget {
        addr,
        protocol: Protocol::Grpc(spec),
        tls,
    })
}

/// The request message and the reply the benchmark service owes it, protobuf-encoded:
/// `SumRequest{a: 20, b: 22}` and `SumReply{result: 42}`, or `Payload{data}` both ways.
pub fn messages(method: GrpcMethod, size: usize) -> (Vec<u8>, Vec<u8>) {
    match method {
        GrpcMethod::Sum => {
            let mut req = vec![0x08];
            varint(&mut req, SUM_A as u64);
            req.push(0x10);
            varint(&mut req, SUM_B as u64);
            let mut reply = vec![0x08];
            varint(&mut reply, (SUM_A + SUM_B) as u64);
            (req, reply)
        }
        GrpcMethod::Echo => {
            let mut m = Vec::with_capacity(size + 6);
            if size > 0 {
                m.push(0x0a);
                varint(&mut m, size as u64);
                m.extend((0..size).map(|i| b'a' + (i % 26) as u8));
            }
            (m.clone(), m)
        }
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_and_echo_are_encoded_as_protobuf_with_the_reply_they_owe() {
        let (req, reply) = messages(GrpcMethod::Sum, 0);
        assert_eq!((req, reply), (vec![0x08, 20, 0x10, 22], vec![0x08, 42]));
        let (req, reply) = messages(GrpcMethod::Echo, 200);
        assert_eq!(&req[..3], &[0x0a, 0xc8, 0x01]);
        assert_eq!(req.len(), 203);
        assert_eq!(req, reply);
        assert!(messages(GrpcMethod::Echo, 0).0.is_empty());
    }

    #[test]
    fn a_grpc_url_becomes_one_post_with_its_deadline_and_tls_flags_need_grpcs() {
        let mut spec = LoadSpec::default();
        spec.at_urls(&["grpc://127.0.0.1:50051/serverbench.Bench/Sum".into()])
            .unwrap();
        spec.transport.streams = Some(4);
        spec.http.verify = true;
        spec.http.headers = vec!["X-Tenant: 7".into()];
        spec.grpc.deadline = Some(Duration::from_millis(250));
        let t = grpc_target(&spec).unwrap();
        let Protocol::Grpc(g) = &t.protocol else {
            panic!("not grpc")
        };
        assert!(t.tls.is_none());
        assert_eq!((g.streams, g.message_len, g.expect.0), (4, 9, 7));
        let h = &g.requests[0].headers;
        assert!(h.windows(4).any(|w| w == b"250m"), "grpc-timeout 250m");
        assert!(h.windows(8).any(|w| w == b"x-tenant"), "metadata from -H");
        let mut bad = spec.clone();
        bad.http.headers = vec!["no colon".into()];
        let e = grpc_target(&bad).unwrap_err().to_string();
        assert!(e.starts_with("-H/--header"), "{e}");
        let mut insecure = spec.clone();
        insecure.http.insecure = true;
        let e = grpc_target(&insecure).unwrap_err().to_string();
        assert!(e.starts_with("--cacert/-k"), "{e}");
    }
}
