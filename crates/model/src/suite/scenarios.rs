//! The built-in scenarios (`serverbench run --scenario NAME`) and what a scenario's protocol
//! keys need: the transport feature a server must declare, and which combinations apply.

use super::{Mode, Protocol, Scenario, TlsResume};
use crate::Feature;

impl Scenario {
    /// The built-in scenario `name` of the ad-hoc form (`serverbench run --scenario NAME`), one
    /// of [`Scenario::BUILTIN`].
    pub fn builtin(name: &str) -> Option<Scenario> {
        let http = |paths: &[&str], f: &[Feature]| Scenario {
            name: name.to_string(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
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
            s.transport.tls = p == Protocol::H2;
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
            "echo-stream" => Scenario {
                name: name.to_string(),
                mode: Mode::TcpStream,
                message: Some("hello world".to_string()),
                requires: vec![Feature::Echo],
                ..Scenario::default()
            },
            "ws-echo" => Scenario {
                name: name.to_string(),
                mode: Mode::Ws,
                requires: vec![Feature::WsEcho],
                ..Scenario::default()
            },
            "echo-pingpong" => Scenario {
                name: name.to_string(),
                mode: Mode::TcpPingpong,
                size: Some(64),
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
            paths: vec![path],
            requires: vec![feature],
            ..Scenario::default()
        })
    }

    /// Whether a lap of it needs the harness's database.
    pub fn needs_database(&self) -> bool {
        self.requires.iter().any(|f| f.is_database())
    }

    /// Every built-in scenario, in the order `run --help` lists them: the one list
    /// [`Scenario::builtin`] accepts names from (`queries-N` and `updates-N` take N queries per
    /// request, 1 to 500).
    pub const BUILTIN: [&'static str; 21] = [
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

    /// The transport feature the scenario's protocol needs: `tls`, `h2` or `h2c`.
    pub fn transport_feature(&self) -> Option<Feature> {
        match (self.transport.protocol, self.transport.tls) {
            (Protocol::H2, _) => Some(Feature::H2),
            (Protocol::H2c, _) => Some(Feature::H2c),
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

    /// Checks the protocol keys; returns the key (within the scenario) and the message.
    pub(super) fn validate_protocol(&self) -> Result<(), (&'static str, &'static str)> {
        let transport = self.transport.protocol != Protocol::H1
            || self.transport.tls
            || self.transport.new_conn;
        if self.mode != Mode::Http && (transport || self.transport.streams.is_some()) {
            return Err((
                "protocol",
                "protocol, tls, new_conn and streams apply to http only",
            ));
        }
        if self.transport.protocol == Protocol::H2c && self.transport.tls {
            return Err((
                "tls",
                "h2c is HTTP/2 without TLS; over TLS it is protocol = \"h2\"",
            ));
        }
        if self.transport.tls_resume.is_some() && !(self.transport.tls && self.transport.new_conn) {
            return Err((
                "tls_resume",
                "needs tls = true and new_conn = true (keep-alive connections handshake once)",
            ));
        }
        match self.transport.streams {
            Some(_) if !self.transport.protocol.is_h2() => {
                Err(("streams", "applies to h2 and h2c only"))
            }
            Some(0) => Err(("streams", "must be at least 1")),
            Some(m) if m > 1 && self.transport.new_conn => Err((
                "streams",
                "cannot be combined with new_conn (one request per connection)",
            )),
            _ => Ok(()),
        }
    }
}

impl super::Suite {
    /// Reads each scenario's mix file (a relative one from `dir`, then made absolute so a
    /// suite read back from `env.json` finds it too). Returns the scenario and the message.
    pub fn read_mixes(&mut self, dir: &std::path::Path) -> Result<(), (usize, String)> {
        for (i, s) in self.scenarios.iter_mut().enumerate() {
            let Some(file) = &s.mix else { continue };
            let file = dir.join(file);
            let file = std::path::absolute(&file).unwrap_or(file);
            s.mix_requests = Some(crate::Mix::load(&file).map_err(|e| (i, e.to_string()))?);
            s.mix = Some(file);
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
        assert_eq!(q.paths, ["/queries?queries=5"]);
        assert_eq!(q.requires, [Feature::Queries]);
        assert!(q.needs_database());
        let u = Scenario::builtin("updates-20").unwrap();
        assert_eq!(u.paths, ["/updates?queries=20"]);
        assert_eq!(Scenario::builtin("db").unwrap().paths, ["/db"]);
        assert_eq!(Scenario::builtin("fortunes").unwrap().paths, ["/fortunes"]);
        assert!(!Scenario::builtin("hello").unwrap().needs_database());
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
