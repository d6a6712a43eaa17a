//! Starting a server for its turn: here (pinned, on free ports, with the run's certificate),
//! on the server host over ssh (`run --hosts`), or found already running (`run --url`).

use super::context::Context;
use super::errors::StartError;
use super::hosts::RemoteServer;
use super::running::Running;
use crate::catalog::Server;
use crate::process::{self, ServerProcess, StartOptions};
use crate::tools::Target;
use serverbench_model::Feature;

/// One start of a server: which server, in which lap, on how many CPUs (a core sweep), with
/// which database pool.
#[derive(Debug, Clone, Copy)]
pub(super) struct Turn<'p> {
    /// Index into the plan's servers.
    pub(super) si: usize,
    pub(super) server: &'p Server,
    pub(super) lap: u32,
    /// The server's CPU count, `None` for the run's pinning.
    pub(super) cores: Option<u32>,
    /// `DATABASE_POOL`, for database laps.
    pub(super) pool: Option<u32>,
}

impl Turn<'_> {
    /// Starts the server with `env` added to its environment, or finds the one already
    /// running (`run --url`).
    pub(super) fn start(
        &self,
        ctx: &Context,
        env: Vec<(String, String)>,
    ) -> Result<(Running, Target), StartError> {
        let server = self.server;
        if server.is_attached() {
            let a = ctx.opts.attached.iter().find(|a| a.name == server.id);
            let a = a.ok_or_else(|| StartError::NoUrl {
                server: server.id.clone(),
            })?;
            return Ok((Running::Attached { pid: a.pid }, a.target.clone()));
        }
        if let Some(h) = &ctx.opts.hosts {
            let (cpus, workers) = ctx.server_cpus(self.cores);
            let log = ctx.log_path(server, self.lap);
            let tls = ctx.hosts_tls.as_ref();
            let tls = tls.filter(|_| process::serves_tls(server));
            let at = (workers, cpus.as_slice());
            let (remote, target) = RemoteServer::start(h, server, at, tls, &env, &log)?;
            return Ok((Running::Remote(remote), target));
        }
        let (proc, target) = self.start_here(ctx, env)?;
        Ok((Running::Started(proc), target))
    }

    fn start_here(
        &self,
        ctx: &Context,
        env: Vec<(String, String)>,
    ) -> Result<(ServerProcess, Target), StartError> {
        let (server, host) = (self.server, &ctx.opts.host);
        let free_port = || {
            process::free_port(host).map_err(|source| StartError::NoPort {
                host: host.clone(),
                source,
            })
        };
        let port = free_port()?;
        let echo_port = if server.implements(Feature::Echo) {
            Some(free_port()?)
        } else {
            None
        };
        let log = ctx.log_path(server, self.lap);
        let mut so = StartOptions::new(server, port, echo_port, log);
        so.host = host.clone();
        so.extra_env.extend(env);
        (so.cpus, so.workers) = ctx.server_cpus(self.cores);
        if let (true, Some(files)) = (process::serves_tls(server), &ctx.tls) {
            let port = free_port()?;
            let listener = process::tls_listener(server, host, port, files.clone());
            so.tls = Some(listener.map_err(|source| StartError::NoPort {
                host: host.clone(),
                source,
            })?);
        }
        let proc = process::start(server, ctx.paths, &so)?;
        let target = Target {
            host: host.clone(),
            port,
            echo_port,
            tls_port: so.tls.as_ref().map(|t| t.port),
            h3_port: so.tls.as_ref().and_then(|t| t.h3_port),
            ca_file: so.tls.as_ref().map(|t| t.files.cert.clone()),
        };
        Ok((proc, target))
    }
}
