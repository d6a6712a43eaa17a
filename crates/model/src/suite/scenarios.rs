//! The built-in scenarios (`serverbench run --scenario NAME`) and what a scenario's protocol
//! keys need: the transport feature a server must declare, and which combinations apply.

use super::{Mode, Protocol, Scenario, TlsResume};
use crate::spec::Work;
use crate::Feature;

impl Scenario {
    /// The built-in scenario `name` of the ad-hoc form (`serverbench run --scenario NAME`), one
    /// of [`Scenario::BUILTIN`].
    pub fn builtin(name: &str) -> Option<Scenario> {
        let http = |paths: &[&str], f: &[Feature]| Scenario {
            name: name.to_string(),
            work: Work {
                paths: paths.iter().map(|p| p.to_string()).collect(),
                ..Work::default()
            },
            requires: f.to_vec(),
            ..Scenario::default()
        };
        let tls = |mut s: Scenario| {
            s.transport.tls = true;
            s
        };
        let new_conn = |mut s: Scenario, resume: TlsResume| {
            s.transport.new_conn = true;
            s.transport.tls_resume = Some(resume);
            s
        };
        let over = |mut s: Scenario, p: Protocol| {
            s.transport.tls = matches!(p, Protocol::H2 | Protocol::H3);
            s.transport.protocol = p;
            s
        };
        let (hello, routes) = (&["/hello"][..], &["/hey", "/hell", "/hello", "/about"][..]);
        let payload = &["/payload"][..];
        if !Scenario::listed(name) {
            return None;
        }
        if let Some(s) = Scenario::database(name) {
            return Some(s);
        }
        Some(match name {
            "hello" => http(hello, &[Feature::Hello]),
            "routes" => http(routes, &[Feature::Routes]),
            "json" => http(&["/json"], &[Feature::Json]),
            "payload" => http(payload, &[Feature::Payload]),
            "pingpong" => http(&["/pingpong"], &[Feature::Pingpong]),
            "https-hello" => tls(http(hello, &[Feature::Hello])),
            "https-routes" => tls(http(routes, &[Feature::Routes])),
            "https-payload" => tls(http(payload, &[Feature::Payload])),
            "https-handshake" => new_conn(tls(http(hello, &[Feature::Hello])), TlsResume::Off),
            "https-resume" => new_conn(tls(http(hello, &[Feature::Hello])), TlsResume::Tickets),
            "h2-hello" => over(http(hello, &[Feature::Hello]), Protocol::H2),
            "h2c-hello" => over(http(hello, &[Feature::Hello]), Protocol::H2c),
            "h2-payload" => over(http(payload, &[Feature::Payload]), Protocol::H2),
            "h2c-payload" => over(http(payload, &[Feature::Payload]), Protocol::H2c),
            "h3-hello" => over(http(hello, &[Feature::Hello]), Protocol::H3),
            "h3-payload" => over(http(payload, &[Feature::Payload]), Protocol::H3),
            "echo-stream" => Scenario {
                name: name.to_string(),
                work: Work {
                    mode: Mode::TcpStream,
                    message: Some("hello world".to_string()),
                    ..Work::default()
                },
                requires: vec![Feature::Echo],
                ..Scenario::default()
            },
            "ws-echo" => Scenario {
                name: name.to_string(),
                work: Work {
                    mode: Mode::Ws,
                    ..Work::default()
                },
                requires: vec![Feature::WsEcho],
                ..Scenario::default()
            },
            "echo-pingpong" => Scenario {
                name: name.to_string(),
                work: Work {
                    mode: Mode::TcpPingpong,
                    size: Some(64),
                    ..Work::default()
                },
                requires: vec![Feature::Echo],
                ..Scenario::default()
            },
            _ => return None,
        })
    }

    /// The database scenarios: `db`, `fortunes`, `queries-N` and `updates-N` (N queries per
    /// request, 1 to 500).
    fn database(name: &str) -> Option<Scenario> {
        let (path, feature) = match name {
            "db" => ("/db".to_string(), Feature::Db),
            "fortunes" => ("/fortunes".to_string(), Feature::Fortunes),
            _ => {
                let (stem, n) = name.split_once('-')?;
                let n: u32 = n.parse().ok().filter(|n| (1..=500).contains(n))?;
                let feature = match stem {
                    "queries" => Feature::Queries,
                    "updates" => Feature::Updates,
                    _ => return None,
                };
                (format!("/{stem}?queries={n}"), feature)
            }
        };
        Some(Scenario {
            name: name.to_string(),
            work: Work {
                paths: vec![path],
                ..Work::default()
            },
            requires: vec![feature],
            ..Scenario::default()
        })
    }

    /// The driver its laps run: its `mode` over its `protocol`.
    pub fn workload(&self) -> crate::Workload {
        crate::Workload::of(self.work.mode, self.transport.protocol)
    }

    /// Whether a lap of it needs the harness's database.
    pub fn needs_database(&self) -> bool {
        self.requires.iter().any(|f| f.is_database())
    }

    /// Every built-in scenario, in the order `run --help` lists them: the one list
    /// [`Scenario::builtin`] accepts names from (`queries-N` and `updates-N` take N queries per
    /// request, 1 to 500).
    pub const BUILTIN: [&'static str; 23] = [
        "hello",
        "routes",
        "json",
        "payload",
        "pingpong",
        "https-hello",
        "https-routes",
        "https-payload",
        "https-handshake",
        "https-resume",
        "h2-hello",
        "h2c-hello",
        "h2-payload",
        "h2c-payload",
        "h3-hello",
        "h3-payload",
        "echo-stream",
        "echo-pingpong",
        "ws-echo",
        "db",
        "queries-N",
        "fortunes",
        "updates-N",
    ];

    /// Whether `name` is in [`Scenario::BUILTIN`] (`N` standing for any text after the `-`).
    fn listed(name: &str) -> bool {
        Scenario::BUILTIN
            .iter()
            .any(|b| match b.strip_suffix("-N") {
                Some(stem) => name.strip_prefix(stem).is_some_and(|n| n.starts_with('-')),
                None => *b == name,
            })
    }

    /// [`Scenario::BUILTIN`] with an example `N` (20): names [`Scenario::builtin`] builds.
    pub fn builtin_examples() -> Vec<String> {
        Scenario::BUILTIN
            .iter()
            .map(|b| b.replace("-N", "-20"))
            .collect()
    }

    /// The transport feature the scenario's protocol needs: `tls`, `h2`, `h2c` or `h3`.
    pub fn transport_feature(&self) -> Option<Feature> {
        match (self.transport.protocol, self.transport.tls) {
            (Protocol::H2, _) => Some(Feature::H2),
            (Protocol::H2c, _) => Some(Feature::H2c),
            (Protocol::H3, _) => Some(Feature::H3),
            (Protocol::H1, true) => Some(Feature::Tls),
            (Protocol::H1, false) => None,
        }
    }

    /// Every feature a server needs to run the scenario: `requires` and its transport.
    pub fn needs(&self) -> Vec<Feature> {
        let mut v = self.requires.clone();
        v.extend(self.transport_feature());
        v.dedup();
        v
    }

    /// Checks what the scenario's mode needs and allows; returns the key (within the
    /// scenario) and the message. The rules a load has whatever its origin are
    /// [`crate::LoadSpec::validate`]'s.
    pub(super) fn validate_shape(&self) -> Result<(), (&'static str, &'static str)> {
        let w = &self.work;
        if w.mix.is_some() && (w.mode != Mode::Http || !w.paths.is_empty()) {
            return Err(("mix", "a mix is an http scenario's requests: give no paths"));
        }
        if w.method == Some(crate::Method::Head) {
            let why = "HEAD is not a suite's method: its answers carry no body (GET, POST, PUT, \
                       DELETE, PATCH or OPTIONS)";
            return Err(("method", why));
        }
        match w.mode {
            Mode::Http if w.paths.is_empty() && w.mix.is_none() => {
                Err(("paths", "http needs paths (or a mix)"))
            }
            Mode::Http if w.paths.iter().any(|p| !p.starts_with('/')) => {
                Err(("paths", "every path starts with /"))
            }
            Mode::TcpStream if w.message.as_deref().unwrap_or("").is_empty() => {
                Err(("message", "tcp-stream needs a message"))
            }
            Mode::TcpPingpong if w.size.unwrap_or(0) == 0 => {
                Err(("size", "tcp-pingpong needs a size > 0"))
            }
            Mode::Grpc if !self.requires.contains(&Feature::Grpc) => {
                Err(("requires", "a grpc scenario requires \"grpc\""))
            }
            // A grpc scenario's one path is its method: LoadSpec::validate names what is wrong.
            _ if !matches!(w.mode, Mode::Http | Mode::Grpc) && !w.paths.is_empty() => {
                Err(("paths", "paths only apply to http (and grpc: its method)"))
            }
            Mode::Ws if !self.requires.contains(&Feature::WsEcho) => {
                Err(("requires", "a ws scenario requires \"ws-echo\""))
            }
            _ => Ok(()),
        }
    }

    /// Checks the protocol keys a suite writes (a load from flags has a URL's scheme
    /// instead); returns the key (within the scenario) and the message.
    pub(super) fn validate_protocol(&self) -> Result<(), (&'static str, &'static str)> {
        let t = &self.transport;
        if self.work.mode == Mode::Grpc {
            return match () {
                _ if t.protocol != Protocol::H1 => Err((
                    "protocol",
                    "gRPC is HTTP/2 already: h2c on PORT, or tls = true for h2 on TLS_PORT",
                )),
                _ if t.new_conn => Err((
                    "new_conn",
                    "a grpc scenario keeps its connections (tls and streams apply)",
                )),
                _ if t.tls_resume.is_some() => Err((
                    "tls_resume",
                    "a grpc scenario keeps its connections: it handshakes once per connection",
                )),
                _ => Ok(()),
            };
        }
        let transport = t.protocol != Protocol::H1 || t.tls || t.new_conn;
        if self.work.mode != Mode::Http && (transport || t.streams.is_some()) {
            return Err((
                "protocol",
                "protocol, tls, new_conn and streams apply to http (and grpc: tls, streams)",
            ));
        }
        if t.protocol == Protocol::H2c && t.tls {
            return Err((
                "tls",
                "h2c is HTTP/2 without TLS; over TLS it is protocol = \"h2\"",
            ));
        }
        if t.tls_resume.is_some() && !t.tls {
            return Err((
                "tls_resume",
                "needs tls = true and new_conn = true (keep-alive connections handshake once)",
            ));
        }
        match t.streams {
            Some(_) if !t.protocol.is_h2() && !t.protocol.is_h3() => {
                Err(("streams", "applies to h2, h2c and h3 only"))
            }
            _ => Ok(()),
        }
    }
}

impl super::Suite {
    /// Reads each scenario's mix file (a relative one from `dir`, then made absolute so a
    /// suite read back from `env.json` finds it too). Returns the scenario and the message.
    pub fn read_mixes(&mut self, dir: &std::path::Path) -> Result<(), (usize, String)> {
        for (i, s) in self.scenarios.iter_mut().enumerate() {
            let w = &mut s.work;
            let Some(file) = &w.mix else { continue };
            let file = dir.join(file);
            let file = std::path::absolute(&file).unwrap_or(file);
            w.mix_requests = Some(crate::Mix::load(&file).map_err(|e| (i, e.to_string()))?);
            w.mix = Some(file);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_scenarios_request_their_paths_and_need_the_database() {
        let q = Scenario::builtin("queries-5").unwrap();
        assert_eq!(q.work.paths, ["/queries?queries=5"]);
        assert_eq!(q.requires, [Feature::Queries]);
        assert!(q.needs_database());
        let u = Scenario::builtin("updates-20").unwrap();
        assert_eq!(u.work.paths, ["/updates?queries=20"]);
        assert_eq!(Scenario::builtin("db").unwrap().work.paths, ["/db"]);
        assert_eq!(
            Scenario::builtin("fortunes").unwrap().work.paths,
            ["/fortunes"]
        );
        assert!(!Scenario::builtin("hello").unwrap().needs_database());
        let h2 = Scenario::builtin("h2c-hello").unwrap();
        assert_eq!(h2.workload(), crate::Workload::Http2);
    }

    #[test]
    fn queries_per_request_outside_1_to_500_is_no_scenario() {
        for name in [
            "queries-0",
            "queries-501",
            "queries-x",
            "updates-",
            "selects-5",
        ] {
            assert!(Scenario::builtin(name).is_none(), "{name}");
        }
    }
}
