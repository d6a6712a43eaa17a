//! The rules of a gRPC load (`grpc://` and `grpcs://` URLs): a method of the built-in
//! benchmark service (`spec/serverbench.proto`), unary or streaming (`--stream`), its options,
//! and what does not apply.

use super::{Key, Rule, Why};
use crate::spec::{LoadSpec, ProtoCall};
use crate::Workload;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The benchmark service's methods the load generator calls.
pub const METHODS: [&str; 5] = [SUM, ECHO, SERVER_STREAM, CLIENT_STREAM, BIDI_ECHO];
/// `Sum(SumRequest{a, b}) -> SumReply{result}`.
pub const SUM: &str = "/serverbench.Bench/Sum";
/// `Echo(Payload{data}) -> Payload`.
pub const ECHO: &str = "/serverbench.Bench/Echo";
/// `ServerStream(Count{n, size}) -> stream Chunk`.
pub const SERVER_STREAM: &str = "/serverbench.Bench/ServerStream";
/// `ClientStream(stream Chunk) -> Count{n, size}`.
pub const CLIENT_STREAM: &str = "/serverbench.Bench/ClientStream";
/// `BidiEcho(stream Chunk) -> stream Chunk`.
pub const BIDI_ECHO: &str = "/serverbench.Bench/BidiEcho";
/// The largest Echo payload (`--message-size`): gRPC's default receive limit is 4 MiB.
pub const MAX_GRPC_MESSAGE: usize = 4 << 20;
/// `--stream-messages` when not given.
pub const DEFAULT_STREAM_MESSAGES: u32 = 100;
/// A stream's chunk data bytes when `--message-size` is not given (verify's ServerStream's).
pub const DEFAULT_STREAM_MESSAGE_SIZE: u32 = 32;
/// The most messages per streaming call.
pub const MAX_STREAM_MESSAGES: u32 = 1_000_000;
/// The most chunk data bytes per streaming call (the engine prepares a call's chunks once).
pub const MAX_STREAM_BYTES: u64 = 64 << 20;

/// A method of the built-in benchmark service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrpcMethod {
    Sum,
    Echo,
    ServerStream,
    ClientStream,
    BidiEcho,
}

impl GrpcMethod {
    /// Its path, `/serverbench.Bench/Sum`.
    pub fn path(self) -> &'static str {
        match self {
            GrpcMethod::Sum => SUM,
            GrpcMethod::Echo => ECHO,
            GrpcMethod::ServerStream => SERVER_STREAM,
            GrpcMethod::ClientStream => CLIENT_STREAM,
            GrpcMethod::BidiEcho => BIDI_ECHO,
        }
    }

    /// The stream kind of a streaming method (None: unary).
    pub fn stream(self) -> Option<GrpcStream> {
        match self {
            GrpcMethod::Sum | GrpcMethod::Echo => None,
            GrpcMethod::ServerStream => Some(GrpcStream::Server),
            GrpcMethod::ClientStream => Some(GrpcStream::Client),
            GrpcMethod::BidiEcho => Some(GrpcStream::Bidi),
        }
    }
}

/// `--stream`: which side of a call streams (`server`, `client` or `bidi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrpcStream {
    /// `ServerStream`: one Count asks for N chunks, which come back in one call.
    Server,
    /// `ClientStream`: N chunks sent back to back, one Count back.
    Client,
    /// `BidiEcho`: N chunks sent one at a time, each after the echo of the one before.
    Bidi,
}

impl GrpcStream {
    /// Every kind, in the flag's order.
    pub const ALL: [GrpcStream; 3] = [GrpcStream::Server, GrpcStream::Client, GrpcStream::Bidi];

    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            GrpcStream::Server => "server",
            GrpcStream::Client => "client",
            GrpcStream::Bidi => "bidi",
        }
    }

    /// The method of the benchmark service it calls.
    pub fn method(self) -> GrpcMethod {
        match self {
            GrpcStream::Server => GrpcMethod::ServerStream,
            GrpcStream::Client => GrpcMethod::ClientStream,
            GrpcStream::Bidi => GrpcMethod::BidiEcho,
        }
    }
}

impl fmt::Display for GrpcStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for GrpcStream {
    type Err = String;
    fn from_str(s: &str) -> Result<GrpcStream, String> {
        GrpcStream::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("`{s}`: expected server, client or bidi"))
    }
}

/// The method a `grpc[s]://HOST:PORT/package.Service/Method` URL names: None without a path,
/// Err(path) for a method the built-in service does not have.
pub fn grpc_method(url: &str) -> Result<Option<GrpcMethod>, String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    match path {
        "" | "/" => Ok(None),
        SUM => Ok(Some(GrpcMethod::Sum)),
        ECHO => Ok(Some(GrpcMethod::Echo)),
        SERVER_STREAM => Ok(Some(GrpcMethod::ServerStream)),
        CLIENT_STREAM => Ok(Some(GrpcMethod::ClientStream)),
        BIDI_ECHO => Ok(Some(GrpcMethod::BidiEcho)),
        p => Err(p.to_string()),
    }
}

impl LoadSpec {
    /// The gRPC method called: the URL's path, else the one `--stream` calls (None when
    /// neither says, or the path is not a method of the benchmark service).
    pub fn grpc_call(&self) -> Option<GrpcMethod> {
        let path = self.work.paths.first().map_or("", String::as_str);
        match grpc_method(path) {
            Ok(Some(m)) => Some(m),
            Ok(None) => self.work.stream.map(GrpcStream::method),
            Err(_) => None,
        }
    }

    /// Streaming calls: their kind, messages per call and chunk data bytes (None: unary).
    pub fn grpc_stream(&self) -> Option<(GrpcStream, u32, u32)> {
        let w = &self.work;
        let messages = w.stream_messages.unwrap_or(DEFAULT_STREAM_MESSAGES);
        (w.stream).map(|k| (k, messages, w.size.unwrap_or(DEFAULT_STREAM_MESSAGE_SIZE)))
    }

    /// A gRPC load's method and options; a non-gRPC load gives none of them.
    pub(super) fn grpc_rules(&self, w: Workload) -> Rule {
        let (deadline, stream) = (self.grpc.deadline, self.work.stream);
        if w != Workload::Grpc {
            return match () {
                _ if deadline.is_some() => Err((Key::Deadline, Why::NotFor(w))),
                _ if stream.is_some() => Err((Key::Stream, Why::NotFor(w))),
                _ if self.work.stream_messages.is_some() => {
                    Err((Key::StreamMessages, Why::NotFor(w)))
                }
                _ if self.grpc.proto.is_some() => Err((Key::Proto, Why::NotFor(w))),
                _ => Ok(()),
            };
        }
        if let Some(p) = &self.grpc.proto {
            return self.proto_rules(p);
        }
        let method = self.grpc_method_rules()?;
        match self.work.size.map(|n| n as usize) {
            _ if self.transport.protocol.is_h2() => Err((Key::Http2, Why::NotFor(w))),
            _ if self.pipeline > 1 => Err((Key::Pipeline, Why::NotFor(w))),
            _ if deadline.is_some_and(|d| d.is_zero()) => Err((Key::Deadline, Why::MoreThanZero)),
            Some(_) if method == GrpcMethod::Sum => {
                Err((Key::MessageSize, Why::EchoOnly(method.path().to_string())))
            }
            Some(n) if n > MAX_GRPC_MESSAGE => {
                Err((Key::MessageSize, Why::Over(n, MAX_GRPC_MESSAGE)))
            }
            _ => self.stream_rules(),
        }
    }

    /// The method: the URL's path, or `--stream`'s when the path is left out; the two agree.
    fn grpc_method_rules(&self) -> Result<GrpcMethod, (Key, Why)> {
        let path = match self.work.paths.as_slice() {
            [] => "",
            [one] => one.as_str(),
            [_, second, ..] => {
                return Err((Key::GrpcMethod, Why::UnknownGrpcMethod(second.clone())))
            }
        };
        let stream = self.work.stream;
        match (grpc_method(path), stream) {
            (Ok(None), None) => Err((Key::GrpcMethod, Why::NoGrpcMethod)),
            (Ok(None), Some(k)) => Ok(k.method()),
            (Err(path), _) => Err((Key::GrpcMethod, Why::UnknownGrpcMethod(path))),
            (Ok(Some(m)), Some(k)) if m != k.method() => {
                Err((Key::Stream, Why::StreamMethod(k, m.path().to_string())))
            }
            (Ok(Some(m)), None) if m.stream().is_some() => Err((
                Key::Stream,
                Why::StreamNeeded(m.stream().expect("streaming")),
            )),
            (Ok(Some(m)), _) => Ok(m),
        }
    }

    /// `--stream-messages`: with `--stream`, at least one, within the limits.
    fn stream_rules(&self) -> Rule {
        let given = self.work.stream_messages;
        let Some((_, n, size)) = self.grpc_stream() else {
            return match given {
                Some(_) => Err((Key::StreamMessages, Why::Needs(Key::Stream, ""))),
                None => Ok(()),
            };
        };
        let (n, size) = (n as u64, size as u64);
        match () {
            _ if n == 0 => Err((Key::StreamMessages, Why::AtLeastOne)),
            _ if n > MAX_STREAM_MESSAGES as u64 || n * size > MAX_STREAM_BYTES => {
                Err((Key::StreamMessages, Why::StreamOver(n, size)))
            }
            _ => Ok(()),
        }
    }
}

impl LoadSpec {
    /// A call of a user's service (`--proto`): the method and the message are the engine's to
    /// look up in the compiled files; here, what does not go with them.
    fn proto_rules(&self, proto: &ProtoCall) -> Rule {
        let w = Workload::Grpc;
        let named = matches!(self.work.paths.as_slice(), [p] if p.len() > 1);
        match () {
            _ if !named => Err((Key::GrpcMethod, Why::NoGrpcMethod)),
            _ if self.transport.protocol.is_h2() => Err((Key::Http2, Why::NotFor(w))),
            _ if self.pipeline > 1 => Err((Key::Pipeline, Why::NotFor(w))),
            _ if self.grpc.deadline.is_some_and(|d| d.is_zero()) => {
                Err((Key::Deadline, Why::MoreThanZero))
            }
            _ if self.work.stream.is_some() => Err((Key::Stream, Why::Excludes(Key::Proto))),
            _ if self.work.stream_messages.is_some() => {
                Err((Key::StreamMessages, Why::Excludes(Key::Proto)))
            }
            _ if self.work.size.is_some() => Err((Key::MessageSize, Why::Excludes(Key::Proto))),
            _ if proto.descriptors.is_empty() => Err((Key::Proto, Why::NotCompiled)),
            _ if self.http.verify && proto.draws() => Err((Key::Verify, Why::Draws)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Origin;
    use std::time::Duration;

    fn grpc(url: &str) -> LoadSpec {
        let mut spec = LoadSpec::default();
        spec.at_urls(&[url.to_string()]).unwrap();
        spec
    }

    fn error_of(spec: &LoadSpec) -> String {
        spec.validate(&Origin::Flags).unwrap_err().to_string()
    }

    #[test]
    fn a_grpc_url_names_a_built_in_method_or_the_error_names_the_url_form() {
        let ok = grpc("grpc://127.0.0.1:50051/serverbench.Bench/Sum");
        assert_eq!(ok.workload(), Workload::Grpc);
        assert!(ok.validate(&Origin::Flags).is_ok());
        let none = error_of(&grpc("grpc://127.0.0.1:50051"));
        assert!(
            none.starts_with("grpc://HOST:PORT/package.Service/Method: "),
            "{none}"
        );
        let unknown = error_of(&grpc("grpcs://h:1/serverbench.Bench/Nope"));
        assert!(
            unknown.contains("`/serverbench.Bench/Nope` is not a method"),
            "{unknown}"
        );
    }

    #[test]
    fn http2_pipelining_and_a_sum_message_size_are_refused_naming_the_flag() {
        let mut s = grpc("grpc://h:1/serverbench.Bench/Sum");
        s.transport.protocol = crate::transport::Protocol::H2c;
        assert!(error_of(&s).starts_with("--http2: does not apply to grpc://"));
        s.transport.protocol = crate::transport::Protocol::H1;
        s.pipeline = 4;
        assert!(error_of(&s).starts_with("-p/--pipeline: "));
        s.pipeline = 1;
        s.work.size = Some(10);
        assert!(error_of(&s).starts_with("--message-size: applies to /serverbench.Bench/Echo"));
        let mut h = grpc("http://h:1/");
        h.grpc.deadline = Some(Duration::from_millis(5));
        assert!(error_of(&h).starts_with("--deadline: does not apply"));
    }

    #[test]
    fn a_grpc_spec_travels_as_one_line_of_json_and_reads_back_the_same() {
        let mut s = grpc("grpcs://h:1/serverbench.Bench/Echo");
        s.work.size = Some(512);
        s.transport.streams = Some(16);
        s.grpc.deadline = Some(Duration::from_millis(100));
        let back = LoadSpec::from_json(&s.to_line()).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.workload(), Workload::Grpc);
        assert_eq!(back.urls(), ["grpcs://h:1/serverbench.Bench/Echo"]);
        assert!(back.validate(&Origin::Flags).is_ok());
        let mut stream = grpc("grpc://h:1");
        stream.work.stream = Some(GrpcStream::Bidi);
        stream.work.stream_messages = Some(20);
        let line = stream.to_line();
        assert!(
            line.contains(r#""stream":"bidi","stream_messages":20"#),
            "{line}"
        );
        assert_eq!(LoadSpec::from_json(&line).unwrap(), stream);
    }

    #[test]
    fn a_stream_picks_its_method_or_refuses_a_url_naming_another_naming_the_flag() {
        let mut bare = grpc("grpc://h:1");
        bare.work.stream = Some(GrpcStream::Server);
        assert!(bare.validate(&Origin::Flags).is_ok());
        assert_eq!(bare.grpc_call(), Some(GrpcMethod::ServerStream));
        assert_eq!(bare.grpc_stream(), Some((GrpcStream::Server, 100, 32)));
        let mut named = grpc("grpc://h:1/serverbench.Bench/BidiEcho");
        named.work.stream = Some(GrpcStream::Bidi);
        assert!(named.validate(&Origin::Flags).is_ok());
        named.work.stream = Some(GrpcStream::Client);
        let e = error_of(&named);
        assert!(
            e.starts_with("--stream: `client` calls /serverbench.Bench/ClientStream, not "),
            "{e}"
        );
        named.work.stream = None;
        assert_eq!(
            error_of(&named),
            "--stream: /serverbench.Bench/BidiEcho is a streaming method: give --stream bidi"
        );
    }

    #[test]
    fn stream_messages_need_a_stream_at_least_one_and_a_call_within_64_mib() {
        let mut s = grpc("grpc://h:1/serverbench.Bench/Sum");
        s.work.stream_messages = Some(5);
        assert_eq!(error_of(&s), "--stream-messages: needs --stream");
        s.work.stream = Some(GrpcStream::Client);
        s.work.paths.clear();
        s.work.stream_messages = Some(0);
        assert_eq!(error_of(&s), "--stream-messages: must be at least 1");
        s.work.stream_messages = Some(1000);
        s.work.size = Some(1 << 20);
        let e = error_of(&s);
        assert!(
            e.contains("at most 1000000 messages and 64 MiB per call"),
            "{e}"
        );
        s.work.size = Some(1024);
        assert!(s.validate(&Origin::Flags).is_ok());
        let mut h = grpc("ws://h:1/ws");
        h.work.stream = Some(GrpcStream::Bidi);
        assert!(error_of(&h).starts_with("--stream: does not apply to ws://"));
    }

    #[test]
    fn a_call_of_a_users_service_travels_compiled_and_refuses_what_does_not_go_with_it() {
        let mut s = grpc("grpc://h:1/shop.Shop/Place");
        s.grpc.proto = Some(ProtoCall {
            file: "api/shop.proto".into(),
            includes: vec!["api".into()],
            data: r#"{"n":"{rand:1-9}"}"#.into(),
            data_file: None,
            descriptors: "CgA=".into(),
        });
        assert!(s.validate(&Origin::Flags).is_ok());
        let back = LoadSpec::from_json(&s.to_line()).unwrap();
        assert_eq!(back, s);
        let mut v = s.clone();
        v.http.verify = true;
        assert!(error_of(&v).starts_with("--verify: cannot be combined with {rand:A-B} in --data"));
        let mut m = s.clone();
        m.work.size = Some(8);
        assert_eq!(
            error_of(&m),
            "--message-size: cannot be combined with --proto"
        );
        let mut st = s.clone();
        st.work.stream = Some(GrpcStream::Server);
        assert_eq!(error_of(&st), "--stream: cannot be combined with --proto");
        let mut bare = s.clone();
        bare.grpc.proto.as_mut().unwrap().descriptors.clear();
        assert!(error_of(&bare).starts_with("--proto: its compiled descriptors are missing"));
        let mut http = grpc("http://h:1/");
        http.grpc.proto = s.grpc.proto.clone();
        assert!(error_of(&http).starts_with("--proto: does not apply to"));
        let mut none = grpc("grpc://h:1");
        none.grpc.proto = s.grpc.proto.clone();
        assert!(error_of(&none).starts_with("grpc://HOST:PORT/package.Service/Method: "));
    }
}
