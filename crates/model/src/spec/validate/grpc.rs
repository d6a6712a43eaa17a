//! The rules of a gRPC load (`grpc://` and `grpcs://` URLs): a method of the built-in
//! benchmark service (`spec/serverbench.proto`), its options, and what does not apply.

use super::{Key, Rule, Why};
use crate::spec::LoadSpec;
use crate::Workload;

/// The benchmark service's unary methods the load generator calls.
pub const METHODS: [&str; 2] = [SUM, ECHO];
/// `Sum(SumRequest{a, b}) -> SumReply{result}`.
pub const SUM: &str = "/serverbench.Bench/Sum";
/// `Echo(Payload{data}) -> Payload`.
pub const ECHO: &str = "/serverbench.Bench/Echo";
/// The largest Echo payload (`--message-size`): gRPC's default receive limit is 4 MiB.
pub const MAX_GRPC_MESSAGE: usize = 4 << 20;

/// A built-in unary method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrpcMethod {
    Sum,
    Echo,
}

impl GrpcMethod {
    /// Its path, `/serverbench.Bench/Sum`.
    pub fn path(self) -> &'static str {
        match self {
            GrpcMethod::Sum => SUM,
            GrpcMethod::Echo => ECHO,
        }
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
        p => Err(p.to_string()),
    }
}

impl LoadSpec {
    /// A gRPC load's method and options; a non-gRPC load gives none of them.
    pub(super) fn grpc_rules(&self, w: Workload) -> Rule {
        let deadline = self.grpc.deadline;
        if w != Workload::Grpc {
            return match deadline {
                Some(_) => Err((Key::Deadline, Why::NotFor(w))),
                None => Ok(()),
            };
        }
        let path = match self.work.paths.as_slice() {
            [] => "",
            [one] => one.as_str(),
            [_, second, ..] => {
                return Err((Key::GrpcMethod, Why::UnknownGrpcMethod(second.clone())))
            }
        };
        let method = match grpc_method(path) {
            Ok(Some(m)) => m,
            Ok(None) => return Err((Key::GrpcMethod, Why::NoGrpcMethod)),
            Err(path) => return Err((Key::GrpcMethod, Why::UnknownGrpcMethod(path))),
        };
        match self.work.size.map(|n| n as usize) {
            _ if self.transport.protocol.is_h2() => Err((Key::Http2, Why::NotFor(w))),
            _ if self.pipeline > 1 => Err((Key::Pipeline, Why::NotFor(w))),
            _ if deadline.is_some_and(|d| d.is_zero()) => Err((Key::Deadline, Why::MoreThanZero)),
            Some(_) if method != GrpcMethod::Echo => {
                Err((Key::MessageSize, Why::EchoOnly(method.path().to_string())))
            }
            Some(n) if n > MAX_GRPC_MESSAGE => {
                Err((Key::MessageSize, Why::Over(n, MAX_GRPC_MESSAGE)))
            }
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
    }
}
