//! The quick contract check before a server's first lap, over every transport its laps use; a
//! server that fails it is excluded from the run with the reason.

use super::context::Context;
use super::start::Turn;
use crate::catalog::Server;
use crate::run::errors::{QuickCheckError, QuickCheckFailed};
use crate::run::Event;
use crate::tools::Target;
use serverbench_contract::TlsTarget;
use serverbench_model::Feature;
use serverbench_results::env::Skipped;
use std::collections::HashSet;

/// The servers checked so far, and those excluded (by their index in the plan) with why.
#[derive(Debug, Default)]
pub(super) struct Checks {
    verified: HashSet<usize>,
    excluded: Vec<(usize, String)>,
}

impl Checks {
    /// The quick contract check, once per server (with `quick_verify`); a failing server is
    /// excluded from the run.
    pub(super) fn verify_once(
        &mut self,
        ctx: &Context,
        turn: &Turn,
        target: &Target,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), QuickCheckFailed> {
        if !ctx.opts.quick_verify || self.verified.contains(&turn.si) {
            return Ok(());
        }
        let server = turn.server;
        on_event(Event::Verifying {
            server: server.id.clone(),
        });
        let (suite, ws) = (&ctx.opts.suite, benches_websocket(&ctx.opts.suite, server));
        match quick_check(server, target, &transports(suite, server), ws) {
            Ok(()) => {
                self.verified.insert(turn.si);
                Ok(())
            }
            Err(e) => {
                let e = QuickCheckFailed(e);
                self.excluded.push((turn.si, e.to_string()));
                Err(e)
            }
        }
    }

    /// Why server `si` was excluded, if it was.
    pub(super) fn exclusion(&self, si: usize) -> Option<&str> {
        let found = self.excluded.iter().find(|(s, _)| *s == si);
        found.map(|(_, why)| why.as_str())
    }

    /// Servers excluded during the run (failed their quick verify).
    pub(super) fn excluded(&self, servers: &[Server]) -> Vec<Skipped> {
        let skipped = self.excluded.iter().map(|(si, why)| Skipped {
            server: servers[*si].id.clone(),
            why: why.clone(),
        });
        skipped.collect()
    }
}

/// A fast contract check before the first lap: `verify::quick` (one request per declared
/// endpoint, one echo), then the same requests over each transport the server's laps use
/// (`tls`, `h2`, `h2c`, `h3`), so a lap over TLS, HTTP/2 or HTTP/3 starts on a server that
/// answers there.
/// When its laps bench `ws-echo` (`ws`), every `ws-echo` check runs (well under a second), so a
/// server failing any of them (beyond the deviations its manifest declares) is not benchmarked
/// on it; otherwise none does.
fn quick_check(
    server: &Server,
    target: &Target,
    transports: &[Feature],
    ws: bool,
) -> Result<(), QuickCheckError> {
    let address = |source| QuickCheckError::Address {
        host: target.host.clone(),
        source,
    };
    let http = server.serves_http().then_some(target.port);
    let mut targets = serverbench_contract::Targets::new(&target.host, http, target.echo_port)
        .map_err(address)?;
    if let (Some(port), Some(ca)) = (target.tls_port, &target.ca_file) {
        let addr = serverbench_contract::resolve(&target.host, port).map_err(address)?;
        targets = targets.with_tls(TlsTarget::with_cert(addr, &target.host, ca));
    }
    if let Some(port) = target.h3_port {
        let addr = serverbench_contract::resolve(&target.host, port).map_err(address)?;
        targets = targets.with_h3(addr);
    }
    let features: Vec<Feature> = (server.manifest.implements.iter())
        .filter(|f| !f.is_websocket())
        .copied()
        .collect();
    let features = &features;
    let mut failures = serverbench_contract::quick(&targets, features).failure_lines();
    if ws {
        let mut report = serverbench_contract::check_ws(&targets);
        crate::verify::mark_deviations(&mut report.checks, server);
        failures.extend(report.failure_lines());
    }
    for &over in transports {
        let report = serverbench_contract::quick_over(&targets, features, over);
        failures.extend(report.failure_lines());
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(QuickCheckError::Failed(failures))
    }
}

/// The transports (`tls`, `h2`, `h2c`, `h3`) of the scenarios `server` runs in `suite`.
pub(super) fn transports(suite: &crate::suite::Suite, server: &Server) -> Vec<Feature> {
    let mut v: Vec<Feature> = suite
        .scenarios
        .iter()
        .filter(|sc| sc.needs().iter().all(|f| server.implements(*f)))
        .filter_map(|sc| sc.transport_feature())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// True when a scenario of `suite` that `server` runs needs a WebSocket feature (`ws-echo`).
pub(super) fn benches_websocket(suite: &crate::suite::Suite, server: &Server) -> bool {
    suite
        .scenarios
        .iter()
        .filter(|sc| sc.needs().iter().all(|f| server.implements(*f)))
        .any(|sc| sc.requires.iter().any(|f| f.is_websocket()))
}
