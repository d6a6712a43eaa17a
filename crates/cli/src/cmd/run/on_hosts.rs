//! `serverbench run ... --hosts FILE --server-host NAME --client-hosts A,B [--db-host NAME]`:
//! checks the hosts and places the servers, the load and the database on them.

use super::Args;
use anyhow::{bail, Context};
use serverbench_catalog::paths::Paths;
use serverbench_harness::run::hosts::HostsRun;
use serverbench_hosts::check::Probe;
use serverbench_hosts::{Host, Transport};
use serverbench_model::Tool;
use serverbench_results::env::{HostEnv, HostsEnv, Pinning};
use std::sync::Arc;

/// The hosts of the run and where the servers are pinned, or None without `--hosts`.
pub fn prepare(args: &Args, paths: &Paths) -> anyhow::Result<Option<(Arc<HostsRun>, Pinning)>> {
    let Some(file) = &args.hosts else {
        if let Some(name) = &args.db_host {
            bail!("--db-host {name} needs --hosts FILE: the inventory that names the host");
        }
        return Ok(None);
    };
    if args.tool.is_some_and(|t| t != Tool::Serverbench) {
        bail!("--hosts runs serverbench's own load on the client hosts: drop --tool");
    }
    if args.server_cpus.is_some() || args.client_cpus.is_some() {
        bail!(
            "--server-cpus/--client-cpus cannot be used with --hosts: give `cpus` in the inventory"
        );
    }
    let y = &args.yours;
    if !(y.server.is_empty() && y.server_dir.is_empty() && y.url.is_empty() && y.pid.is_empty()) {
        bail!(
            "--server/--server-dir/--url/--pid cannot be used with --hosts: catalog servers only"
        );
    }
    let local = crate::cmd::hosts::local()?;
    let inventory = crate::cmd::hosts::inventory(file)?;
    let server_name = args
        .server_host
        .as_deref()
        .context("--hosts needs --server-host NAME")?;
    if args.client_hosts.is_empty() {
        bail!("--hosts needs --client-hosts A,B: the hosts that generate the load");
    }
    let server = inventory.host(server_name)?.clone();
    let clients = inventory.select(&args.client_hosts)?;
    if clients.iter().any(|c| c.name == server.name) {
        bail!(
            "{}: a host cannot be both the server host and a client host",
            server.name
        );
    }
    let database = match &args.db_host {
        Some(name) => inventory
            .host(name)
            .with_context(|| format!("--db-host {name}"))?
            .clone(),
        None => server.clone(),
    };
    if clients.iter().any(|c| c.name == database.name) {
        bail!(
            "--db-host {}: a host cannot be both the database host and a client host",
            database.name
        );
    }
    let own_host = database.name != server.name;
    let transport = Transport::new().context("creating the ssh control folder")?;
    let all: Vec<Host> = std::iter::once(server.clone())
        .chain(clients.clone())
        .chain(own_host.then(|| database.clone()))
        .collect();
    let probes = crate::cmd::hosts::usable_probes(&transport, &all)
        .map_err(|failed| anyhow::anyhow!("{}", failed.join("\n")))?;
    let server_cpus: Vec<usize> = if server.cpus.is_empty() {
        (0..probes[0].cpus).collect()
    } else {
        server.cpus.clone()
    };
    let pinning = Pinning {
        workers: server_cpus.len(),
        how: format!(
            "hosts: servers on {} ({} CPUs), load from {}{}",
            server.name,
            server_cpus.len(),
            args.client_hosts.join(", "),
            if own_host {
                format!(", database on {}", database.name)
            } else {
                String::new()
            }
        ),
        server_cpus,
        client_cpus: Vec::new(),
    };
    let env = HostsEnv {
        inventory: file.display().to_string(),
        server: host_env(&server, &probes[0]),
        clients: clients
            .iter()
            .zip(&probes[1..])
            .map(|(h, p)| host_env(h, p))
            .collect(),
        database: own_host.then(|| host_env(&database, &probes[1 + clients.len()])),
    };
    let root = paths.catalog_root("run --hosts")?;
    let run = HostsRun {
        transport,
        root_there: server.path_there(&local, root),
        root_on_database: database.path_there(&local, root),
        database,
        server,
        clients,
        env,
    };
    Ok(Some((Arc::new(run), pinning)))
}

fn host_env(h: &Host, p: &Probe) -> HostEnv {
    HostEnv {
        name: h.name.clone(),
        address: h.address.clone(),
        cpus: p.cpus,
        pinned: h.cpus.clone(),
        version: p.version.clone(),
        clock_offset_ms: p.clock_offset_ms,
        rtt_ms: p.rtt_ms,
    }
}
