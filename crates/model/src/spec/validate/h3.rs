//! The rules of an HTTP/3 load (`--http3 https://…`, a suite's `protocol = "h3"`): QUIC carries
//! TLS 1.3, streams replace pipelining, the driver runs on epoll, and `--0rtt` rides on a
//! resumed session.

use super::{Key, Rule, Why};
use crate::spec::{LoadSpec, TlsVersion};
use crate::{Io, Mode, TlsResume, Workload};

impl LoadSpec {
    /// HTTP/3's transport and `--0rtt`; a load of another protocol gives neither.
    pub(super) fn http3_rules(&self, w: Workload) -> Rule {
        let t = &self.transport;
        let zero_rtt = self.http3.zero_rtt;
        if !t.protocol.is_h3() {
            return match zero_rtt {
                true => Err((Key::ZeroRtt, Why::Needs(Key::Http3, ""))),
                false => Ok(()),
            };
        }
        let tls13 = " (QUIC carries TLS 1.3 only)";
        match () {
            _ if self.work.mode != Mode::Http => Err((Key::Http3, Why::NotFor(w))),
            _ if !t.tls => Err((Key::Http3, Why::NeedsTls)),
            _ if self.pipeline > 1 => Err((Key::Pipeline, Why::NotFor(w))),
            _ if self.io == Io::Uring => Err((Key::Http3, Why::EpollOnly)),
            _ if self.http.tls_version == Some(TlsVersion::V1_2) => {
                Err((Key::TlsVersion, Why::With(Key::Http3, tls13)))
            }
            _ if zero_rtt && t.tls_resume != Some(TlsResume::Tickets) => {
                let why = " tickets (0-RTT data rides on a resumed session)";
                Err((Key::ZeroRtt, Why::Needs(Key::TlsResume, why)))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::{LoadSpec, Origin, TlsVersion};
    use crate::{Io, Mode, Protocol, TlsResume, Workload};

    fn h3(url: &str) -> LoadSpec {
        let mut spec = LoadSpec::default();
        spec.at_urls(&[url.to_string()]).unwrap();
        spec.transport.protocol = Protocol::H3;
        spec
    }

    fn error_of(spec: &LoadSpec) -> String {
        spec.validate(&Origin::Flags).unwrap_err().to_string()
    }

    #[test]
    fn an_http3_load_over_https_with_streams_and_new_connections_is_valid() {
        let mut s = h3("https://127.0.0.1:8443/hello");
        s.transport.streams = Some(64);
        assert_eq!(s.workload(), Workload::Http3);
        assert!(s.validate(&Origin::Flags).is_ok());
        let mut r = h3("https://127.0.0.1:8443/hello");
        r.transport.new_conn = true;
        r.transport.tls_resume = Some(TlsResume::Tickets);
        r.http3.zero_rtt = true;
        assert!(r.validate(&Origin::Flags).is_ok());
        let back = LoadSpec::from_json(&r.to_line()).unwrap();
        assert_eq!(back, r);
        assert!(r.to_line().contains(r#""http3":{"zero_rtt":true}"#));
        assert!(!s.to_line().contains("http3"), "no key when not asked");
    }

    #[test]
    fn http3_over_http_or_with_pipelining_is_refused_naming_the_flag() {
        assert_eq!(
            error_of(&h3("http://127.0.0.1:8080/hello")),
            "--http3: needs https://: QUIC carries TLS 1.3"
        );
        let mut p = h3("https://h:1/");
        p.pipeline = 8;
        assert_eq!(error_of(&p), "-p/--pipeline: does not apply to --http3");
    }

    #[test]
    fn http3_with_tcp_echo_websocket_or_grpc_does_not_apply() {
        let mut tcp = h3("https://h:1/");
        tcp.work.mode = Mode::TcpPingpong;
        assert_eq!(error_of(&tcp), "--http3: does not apply to --tcp");
        let ws = h3("wss://h:1/ws");
        assert_eq!(
            error_of(&ws),
            "--http3: does not apply to ws:// and wss:// URLs"
        );
        let grpc = h3("grpcs://h:1/serverbench.Bench/Sum");
        assert!(error_of(&grpc).starts_with("--http3: does not apply to grpc://"));
    }

    #[test]
    fn http3_refuses_io_uring_and_tls_12_naming_the_flag() {
        let mut u = h3("https://h:1/");
        u.io = Io::Uring;
        assert!(error_of(&u).starts_with("--http3: runs on epoll only"));
        u.io = Io::Epoll;
        assert!(u.validate(&Origin::Flags).is_ok());
        u.http.tls_version = Some(TlsVersion::V1_2);
        assert_eq!(
            error_of(&u),
            "--tls-version: cannot be combined with --http3 (QUIC carries TLS 1.3 only)"
        );
    }

    #[test]
    fn zero_rtt_needs_http3_and_resumption_by_tickets() {
        let mut h2 = h3("https://h:1/");
        h2.transport.protocol = Protocol::H2;
        h2.http3.zero_rtt = true;
        assert_eq!(error_of(&h2), "--0rtt: needs --http3");
        let mut s = h3("https://h:1/");
        s.http3.zero_rtt = true;
        assert!(error_of(&s).starts_with("--0rtt: needs --tls-resume tickets"));
        s.transport.new_conn = true;
        s.transport.tls_resume = Some(TlsResume::Ids);
        assert!(error_of(&s).starts_with("--0rtt: needs --tls-resume tickets"));
    }

    #[test]
    fn streams_and_bodies_apply_to_http3_as_to_http2() {
        let mut s = h3("https://h:1/upload");
        s.work.body = Some("20".into());
        s.transport.streams = Some(8);
        assert!(s.validate(&Origin::Flags).is_ok());
        s.work.body = None;
        s.work.body_size = Some("1KB".parse().unwrap());
        assert!(error_of(&s).starts_with("--body-size: applies to HTTP/1.1 only"));
        let mut h1 = LoadSpec::default();
        h1.at_urls(&["http://h:1/".into()]).unwrap();
        h1.transport.streams = Some(8);
        assert_eq!(
            error_of(&h1),
            "-m/--streams: needs --http2 (or --http3, or a grpc:// URL)"
        );
    }

    #[test]
    fn a_suites_h3_scenario_over_plain_http_names_the_protocol_key() {
        let origin = Origin::Suite {
            scenario: "hello-h3".into(),
            profile: "quick".into(),
        };
        let e = h3("http://h:1/hello").validate(&origin).unwrap_err();
        assert_eq!(
            e.to_string(),
            "protocol in [[scenario]] hello-h3: h3 needs TLS: QUIC carries TLS 1.3"
        );
    }
}
