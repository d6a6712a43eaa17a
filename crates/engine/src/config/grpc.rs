//! `grpc://` and `grpcs://`: calls of the built-in benchmark service (`spec/serverbench.proto`),
//! prepared once: one HEADERS block (POST to the method, `content-type: application/grpc`,
//! `te: trailers`, `grpc-timeout` with `--deadline`), the framed request message (or, for
//! `--stream client|bidi`, the call's chunks), and the length and hash of the framed reply
//! `--verify` expects (`--stream server|bidi`: of every chunk, in order). With `--proto`, a
//! unary method of any service: its compiled descriptors decoded, the method looked up and the
//! JSON message encoded by `serverbench_protodyn`, once, or when it draws `{rand:A-B}` kept as
//! a template the driver encodes per call.

use super::{plain_refuses_tls_flags, resolve, ConfigError, Protocol, Url};
use crate::h2;
use crate::tls::TlsSpec;
use serverbench_model::spec::ProtoCall;
use serverbench_model::spec::{GrpcMethod, GrpcStream};
use serverbench_model::LoadSpec;
use serverbench_protodyn::{Proto, Template};
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
    /// The method called, `/package.Service/Method`.
    pub path: String,
    /// `-m/--streams`: concurrent calls per connection.
    pub streams: u32,
    /// The receive window we advertise per stream and for the connection.
    pub window: u32,
    /// `--verify`: every reply compared with the expected one, or with the first.
    pub verify: bool,
    /// The framed reply expected: its length and hash (streams: of all its messages). None:
    /// a user's service (`--proto`), whose replies are compared with each thread's first.
    pub expect: Option<(u64, u64)>,
    /// Messages and their bytes (framed) a call sends when it is issued (bidi: none, each
    /// counted when the call ends, see [`StreamPlan::sent_bytes`]).
    pub issue_messages: u64,
    pub message_len: u64,
    /// `--deadline`, sent as `grpc-timeout`.
    pub deadline: Option<Duration>,
    /// `--stream`: the streaming calls (None: unary).
    pub stream: Option<StreamPlan>,
    /// `--proto` with `{rand:A-B}`: the request message, encoded per call from this template.
    pub drawn: Option<Template>,
}

/// Streaming calls (`--stream`): `messages` chunks of `size` data bytes per call, chunk i with
/// `seq` i and its bytes of value i % 256 (the contract's ServerStream chunks).
#[derive(Debug, Clone)]
pub struct StreamPlan {
    pub kind: GrpcStream,
    pub messages: u32,
    pub size: u32,
    /// Messages a right call receives (server and bidi: every chunk; client: one Count).
    pub replies: u32,
    /// Bidi: the framed bytes of the first k chunks, k = 0..=messages.
    pub sent_bytes: Vec<u64>,
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
    let path = spec.work.paths.first().map_or("", String::as_str);
    let call = match (&spec.grpc.proto, spec.grpc_call()) {
        (Some(p), _) => Prepared::user(p, path)?,
        (None, Some(method)) => Prepared::of(spec, method),
        (None, None) => return Err(bad("expected grpc[s]://HOST:PORT/package.Service/Method")),
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
    let block = h2::hpack::encode_request("POST", scheme, &u.host_header(), &call.path, &headers);
    let request = match call.stream.as_ref().map(|s| s.kind) {
        Some(GrpcStream::Bidi) => h2::Request::ping_pong(&block, &call.body),
        _ => h2::Request::new(&block, Some(&call.body)),
    };
    let spec = GrpcSpec {
        requests: vec![request],
        path: call.path,
        streams: spec.streams(),
        window: h2::DEFAULT_WINDOW,
        verify: spec.http.verify,
        expect: call.expect,
        issue_messages: call.issue_messages,
        message_len: call.issue_bytes,
        deadline,
        stream: call.stream,
        drawn: call.drawn,
    };
    Ok(GrpcTarget {
        addr,
        protocol: Protocol::Grpc(spec),
        tls,
    })
}

/// A call prepared: its request body, the reply expected (length, hash), what issuing it
/// sends, and the stream plan.
struct Prepared {
    path: String,
    body: Vec<u8>,
    expect: Option<(u64, u64)>,
    issue_messages: u64,
    issue_bytes: u64,
    stream: Option<StreamPlan>,
    drawn: Option<Template>,
}

impl Prepared {
    /// A unary call of a user's service (`--proto`): the method `path` names in the compiled
    /// files, its message from `--data` encoded once; a message drawing `{rand:A-B}` keeps its
    /// template (each placeholder at its lowest value makes the prepared request's body).
    fn user(p: &ProtoCall, path: &str) -> Result<Prepared, ConfigError> {
        let file = p.file.display();
        let proto = Proto::from_base64(&p.descriptors)
            .map_err(|e| ConfigError::value("--proto", format!("{file}: {e}")))?;
        let method = proto.method(path).and_then(|m| m.unary());
        let method = method.map_err(|e| ConfigError::flag("--call", e.to_string()))?;
        let template = method.template(&p.data).map_err(|e| match &p.data_file {
            Some(f) => ConfigError::value("--data-file", format!("{}: {e}", f.display())),
            None => ConfigError::flag("--data", e.to_string()),
        })?;
        let mut message = Vec::new();
        template.encode(&mut || 0, &mut message);
        let body = grpc::framed(&message, false);
        Ok(Prepared {
            path: method.path(),
            issue_bytes: body.len() as u64,
            body,
            expect: None,
            issue_messages: 1,
            stream: None,
            drawn: template.fixed().is_none().then_some(template),
        })
    }

    fn of(spec: &LoadSpec, method: GrpcMethod) -> Prepared {
        let Some((kind, n, size)) = spec.grpc_stream() else {
            let (message, reply) = messages(method, spec.work.size.unwrap_or(0) as usize);
            let body = grpc::framed(&message, false);
            let reply = grpc::framed(&reply, false);
            return Prepared {
                path: method.path().to_string(),
                issue_bytes: body.len() as u64,
                body,
                expect: Some((
                    reply.len() as u64,
                    serverbench_wire::http::body_hash(&reply),
                )),
                issue_messages: 1,
                stream: None,
                drawn: None,
            };
        };
        let mut chunks = Vec::new();
        let mut sent_bytes = vec![0];
        for i in 0..n {
            grpc::frame(&chunk(i, size), false, &mut chunks);
            sent_bytes.push(chunks.len() as u64);
        }
        let chunks_expect = (
            chunks.len() as u64,
            serverbench_wire::http::body_hash(&chunks),
        );
        let framed_count = |n: u32, size: u64| grpc::framed(&count(n, size), false);
        let (body, expect, replies) = match kind {
            GrpcStream::Server => (framed_count(n, size as u64), chunks_expect, n),
            GrpcStream::Client => {
                let reply = framed_count(n, n as u64 * size as u64);
                let hash = serverbench_wire::http::body_hash(&reply);
                (chunks, (reply.len() as u64, hash), 1)
            }
            GrpcStream::Bidi => (chunks, chunks_expect, n),
        };
        let (issue_messages, issue_bytes) = match kind {
            GrpcStream::Server => (1, body.len() as u64),
            GrpcStream::Client => (n as u64, body.len() as u64),
            GrpcStream::Bidi => (0, 0),
        };
        let sent_bytes = match kind {
            GrpcStream::Bidi => sent_bytes,
            _ => Vec::new(),
        };
        Prepared {
            path: method.path().to_string(),
            body,
            expect: Some(expect),
            issue_messages,
            issue_bytes,
            stream: Some(StreamPlan {
                kind,
                messages: n,
                size,
                replies,
                sent_bytes,
            }),
            drawn: None,
        }
    }
}

/// `Chunk{seq: i, data: size bytes of value i % 256}`, protobuf-encoded (proto3: zero fields
/// left out).
pub fn chunk(i: u32, size: u32) -> Vec<u8> {
    let mut m = Vec::with_capacity(size as usize + 12);
    if i > 0 {
        m.push(0x08);
        varint(&mut m, i as u64);
    }
    if size > 0 {
        m.push(0x12);
        varint(&mut m, size as u64);
        m.resize(m.len() + size as usize, (i % 256) as u8);
    }
    m
}

/// `Count{n, size}` (delay_ms 0), protobuf-encoded.
pub fn count(n: u32, size: u64) -> Vec<u8> {
    let mut m = Vec::with_capacity(12);
    if n > 0 {
        m.push(0x08);
        varint(&mut m, n as u64);
    }
    if size > 0 {
        m.push(0x10);
        varint(&mut m, size);
    }
    m
}

/// The request message and the reply the benchmark service owes it, protobuf-encoded:
/// `SumRequest{a: 20, b: 22}` and `SumReply{result: 42}`, or `Payload{data}` both ways
/// (the streaming methods' are [`chunk`] and [`count`]).
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
        _ => {
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

fn varint(out: &mut Vec<u8>, v: u64) {
    serverbench_protodyn::encode_varint(v, out);
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
        assert_eq!((g.streams, g.message_len, g.expect.unwrap().0), (4, 9, 7));
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

    #[test]
    fn stream_chunks_and_counts_are_canonical_protobuf_and_each_kind_expects_its_replies() {
        assert_eq!(chunk(0, 2), vec![0x12, 2, 0, 0], "seq 0 is left out");
        assert_eq!(chunk(300, 1), vec![0x08, 0xac, 0x02, 0x12, 1, 44]);
        assert_eq!(count(3, 0), vec![0x08, 3]);
        let mut spec = LoadSpec::default();
        spec.at_urls(&["grpc://127.0.0.1:1".into()]).unwrap();
        spec.work.stream_messages = Some(3);
        spec.work.size = Some(2);
        let plan = |spec: &LoadSpec, kind| {
            let mut spec = spec.clone();
            spec.work.stream = Some(kind);
            let Protocol::Grpc(g) = grpc_target(&spec).unwrap().protocol else {
                panic!("not grpc")
            };
            g
        };
        // Three framed chunks: 5 + 4, 5 + 6, 5 + 6 bytes.
        let server = plan(&spec, GrpcStream::Server);
        assert_eq!(server.path, "/serverbench.Bench/ServerStream");
        assert_eq!((server.expect.unwrap().0, server.issue_messages), (31, 1));
        let client = plan(&spec, GrpcStream::Client);
        assert_eq!(client.requests[0].body.as_ref().unwrap().len(), 31);
        assert_eq!(
            (client.expect.unwrap().0, client.issue_messages),
            (5 + 4, 3)
        );
        let bidi = plan(&spec, GrpcStream::Bidi);
        assert_eq!(bidi.requests[0].send, h2::SendMode::PingPong);
        assert_eq!(bidi.stream.unwrap().sent_bytes, vec![0, 9, 20, 31]);
        assert_eq!((bidi.expect, bidi.issue_messages), (server.expect, 0));
    }

    /// A spec calling `path` of spec/serverbench.proto with `data`, compiled as the CLI does.
    fn user(path: &str, data: &str) -> LoadSpec {
        let file =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/serverbench.proto");
        let proto = Proto::compile(&file, &[]).unwrap();
        let mut spec = LoadSpec::default();
        spec.at_urls(&[format!("grpc://127.0.0.1:50051{path}")])
            .unwrap();
        spec.grpc.proto = Some(ProtoCall {
            file,
            data: data.into(),
            descriptors: proto.descriptors_base64(),
            ..ProtoCall::default()
        });
        spec
    }

    fn grpc_of(spec: &LoadSpec) -> GrpcSpec {
        match grpc_target(spec).unwrap().protocol {
            Protocol::Grpc(g) => g,
            _ => panic!("not grpc"),
        }
    }

    #[test]
    fn a_users_call_is_encoded_once_unless_it_draws_and_its_verify_compares_with_the_first() {
        let g = grpc_of(&user("/serverbench.Bench/Sum", r#"{"a":1,"b":2}"#));
        assert_eq!(g.path, "/serverbench.Bench/Sum");
        assert_eq!(
            g.requests[0].body.as_deref(),
            Some(&[0, 0, 0, 0, 4, 8, 1, 16, 2][..])
        );
        assert!(g.drawn.is_none() && g.expect.is_none());
        let g = grpc_of(&user(
            "/serverbench.Bench/Sum",
            r#"{"a":"{rand:1-1000}","b":2}"#,
        ));
        let template = g.drawn.expect("drawn per call");
        let mut m = Vec::new();
        template.encode(&mut || 998, &mut m);
        assert_eq!(m, [16, 2, 8, 0xe7, 0x07], "b once, then a = 1 + 998 % 1000");
    }

    #[test]
    fn a_users_call_names_the_flag_of_what_is_wrong() {
        let e = |spec: LoadSpec| grpc_target(&spec).unwrap_err().to_string();
        let no = e(user("/serverbench.Bench/Nope", ""));
        assert!(
            no.starts_with(
                "--call: `serverbench.Bench` has no method `Nope` (its methods: Sum, Echo, "
            ),
            "{no}"
        );
        let stream = e(user("/serverbench.Bench/ServerStream", ""));
        assert!(stream.contains("is a server-streaming method"), "{stream}");
        let data = e(user("/serverbench.Bench/Sum", r#"{"a":"x"}"#));
        assert!(data.starts_with("--data: field `a` (int32): "), "{data}");
        let mut file = user("/serverbench.Bench/Sum", r#"{"c":1}"#);
        file.grpc.proto.as_mut().unwrap().data_file = Some("sum.json".into());
        let data = e(file);
        assert!(
            data.starts_with("--data-file sum.json: no field `c` in serverbench.SumRequest"),
            "{data}"
        );
        let mut bad = user("/serverbench.Bench/Sum", "");
        bad.grpc.proto.as_mut().unwrap().descriptors = "!!".into();
        assert!(e(bad).starts_with("--proto "), "descriptors");
    }
}
