//! `run --server NAME=COMMAND`, `--server-dir DIR` and `--url NAME=URL [--pid PID]`: the user's
//! own servers, ranked beside catalog servers in one run without touching the catalog.

use anyhow::{bail, Context};
use serverbench_catalog::{Catalog, Server};
use serverbench_harness::run::Attached;
use serverbench_model::Feature;
use serverbench_tools::Target;
use std::path::PathBuf;

/// The flags of your own servers.
#[derive(clap::Args, Debug, Default)]
pub struct Yours {
    /// Your own server, started with `sh -c COMMAND` in the current folder with PORT, HOST and
    /// WORKERS set, pinned, sampled, verified and ranked like catalog servers (repeatable).
    #[arg(long = "server", value_name = "NAME=COMMAND")]
    pub server: Vec<String>,
    /// A folder holding a server.toml anywhere on disk (spec/manifest.md), set up and run like a
    /// catalog server (repeatable).
    #[arg(long = "server-dir", value_name = "DIR")]
    pub server_dir: Vec<PathBuf>,
    /// A server that is already running (a container, another machine): measured by load alone
    /// (repeatable).
    #[arg(long = "url", value_name = "NAME=URL")]
    pub url: Vec<String>,
    /// The PID of a --url server, so its process tree's CPU and memory are sampled
    /// (`PID` with one --url, else `NAME=PID`).
    #[arg(long = "pid", value_name = "[NAME=]PID")]
    pub pid: Vec<String>,
    /// What your --server/--url servers implement of spec/contract.md (default: hello).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "hello"
    )]
    pub implements: Vec<String>,
}

/// Your servers, ready to be added to the catalog, and those already running.
pub struct Resolved {
    /// Every server of yours, by id.
    pub servers: Vec<Server>,
    /// The running ones (`--url`).
    pub attached: Vec<Attached>,
}

fn split<'a>(flag: &str, text: &'a str) -> anyhow::Result<(&'a str, &'a str)> {
    match text.split_once('=') {
        Some((name, rest)) if !name.is_empty() && !rest.is_empty() => Ok((name, rest)),
        _ => bail!("{flag} {text}: expected NAME=VALUE"),
    }
}

impl Yours {
    fn features(&self) -> anyhow::Result<Vec<Feature>> {
        self.implements
            .iter()
            .map(|f| {
                Feature::parse(f).with_context(|| {
                    let all: Vec<&str> = Feature::ALL.iter().map(|f| f.as_str()).collect();
                    format!("--implements {f}: unknown (one of {})", all.join(", "))
                })
            })
            .collect()
    }

    /// Builds the servers, checking every flag; names must not clash with the catalog.
    pub fn resolve(&self, catalog: &Catalog) -> anyhow::Result<Resolved> {
        let features = self.features()?;
        let cwd = std::env::current_dir().context("reading the current folder")?;
        let mut servers = Vec::new();
        for s in &self.server {
            let (name, command) = split("--server", s)?;
            servers.push(
                Server::from_command(name, command, &cwd, &features).map_err(anyhow::Error::msg)?,
            );
        }
        for dir in &self.server_dir {
            let s =
                Server::from_dir(dir).with_context(|| format!("--server-dir {}", dir.display()))?;
            servers.push(s);
        }
        let mut attached = Vec::new();
        for u in &self.url {
            let (name, url) = split("--url", u)?;
            let target = Target::from_url(url).map_err(|e| anyhow::anyhow!("--url {u}: {e}"))?;
            servers.push(Server::attached(name, url, &features).map_err(anyhow::Error::msg)?);
            attached.push(Attached {
                name: name.to_owned(),
                target,
                pid: None,
            });
        }
        self.assign_pids(&mut attached)?;
        for s in &servers {
            if catalog.servers.iter().any(|c| c.id == s.id) {
                bail!(
                    "{}: this name is a catalog server's; give yours another name",
                    s.id
                );
            }
            if servers.iter().filter(|o| o.id == s.id).count() > 1 {
                bail!("{}: two of your servers have this name", s.id);
            }
        }
        Ok(Resolved { servers, attached })
    }

    fn assign_pids(&self, attached: &mut [Attached]) -> anyhow::Result<()> {
        for p in &self.pid {
            let (name, pid) = match p.split_once('=') {
                Some((n, pid)) => (Some(n), pid),
                None => (None, p.as_str()),
            };
            let pid: u32 = pid
                .parse()
                .map_err(|_| anyhow::anyhow!("--pid {p}: not a PID"))?;
            if !serverbench_machine::process::is_running(pid) {
                bail!("--pid {p}: no process {pid} is running");
            }
            let a = match name {
                Some(n) => attached.iter_mut().find(|a| a.name == n),
                None if attached.len() == 1 => attached.first_mut(),
                None => bail!("--pid {p}: with several --url, write --pid NAME=PID"),
            };
            a.with_context(|| format!("--pid {p}: no --url server of that name"))?
                .pid = Some(pid);
        }
        Ok(())
    }
}
