//! `serverbench load --hosts FILE --client-hosts A,B URL`: the same load, split across client
//! hosts over ssh, released together, merged exactly (crates/hosts).

use super::{summary, Args};
use crate::exit::Exit;
use anyhow::{bail, Context};
use serverbench_harness::process::OnInterrupt;
use serverbench_hosts::distributed::{self, Deadlines, Distributed, Progress};
use serverbench_hosts::{Host, HostError, RemoteDir, Transport};
use serverbench_model::LoadSpec;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The client hosts of a `--hosts` run, probed, with `--cacert` copied to each: ready for one
/// load, or for each step of a capacity search.
pub struct Session {
    // Dropped first: the copies are removed before the transport's connections close.
    cacerts: Vec<(RemoteDir, String)>,
    transport: Transport,
    hosts: Vec<Host>,
    barrier_timeout: std::time::Duration,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// Why a distributed load did not complete: the exit, and one line per cause.
pub struct Failed {
    pub exit: Exit,
    pub lines: Vec<String>,
}

impl Session {
    /// Probes the client hosts of `--hosts`/`--client-hosts` and copies `--cacert` to them;
    /// returns the session and the spec as the hosts take it (a body file read here), or the
    /// exit after printing why not.
    pub fn open(args: &Args, spec: &LoadSpec) -> anyhow::Result<Result<(Session, LoadSpec), Exit>> {
        let file = args.hosts.as_deref().expect("--hosts is set");
        let spec = match validate(args, spec).and_then(|()| with_body(spec)) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("serverbench load: {e:#}");
                return Ok(Err(Exit::BadInput));
            }
        };
        let inventory = super::super::hosts::inventory(file)?;
        let hosts = inventory.select(&args.client_hosts)?;
        let transport = Transport::new().context("creating the ssh control folder")?;
        if let Err(failed) = super::super::hosts::usable_probes(&transport, &hosts) {
            for f in failed {
                eprintln!("serverbench load: {f}");
            }
            return Ok(Err(Exit::BadInput));
        }
        let cacerts = match copy_cacert(args, &transport, &hosts) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("serverbench load: {e:#}");
                return Ok(Err(Exit::BadInput));
            }
        };
        let session = Session {
            cacerts,
            transport,
            hosts,
            barrier_timeout: args.barrier_timeout,
            cancel: crate::interrupt::install(OnInterrupt::Cancel),
        };
        Ok(Ok((session, spec)))
    }

    /// The client hosts, in `--client-hosts` order.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// Runs `spec` split across the client hosts, released together, merged exactly.
    pub fn load(
        &self,
        spec: &LoadSpec,
        progress: &dyn Fn(Progress),
    ) -> Result<Distributed, Failed> {
        let paths: Vec<PathBuf> = self.cacerts.iter().map(|(_, p)| PathBuf::from(p)).collect();
        let jobs = distributed::jobs(spec, &self.hosts, &paths);
        let deadlines = Deadlines::of(spec, self.barrier_timeout);
        distributed::run(&self.transport, &jobs, deadlines, progress, &self.cancel).map_err(
            |failure| {
                if failure.cancelled {
                    return Failed {
                        exit: Exit::Interrupted,
                        lines: vec!["interrupted; every client host was stopped".into()],
                    };
                }
                let mut lines: Vec<String> = failure.faults.iter().map(|f| f.to_string()).collect();
                for h in &failure.completed {
                    lines.push(format!(
                        "{}: completed {} requests ({:.1}/s), not merged",
                        h.host, h.result.requests, h.result.rps
                    ));
                }
                Failed {
                    exit: Exit::BadInput,
                    lines,
                }
            },
        )
    }
}

/// Runs the distributed load of `spec` (the flags' load); returns the exit code.
pub fn run(args: &Args, spec: &LoadSpec) -> anyhow::Result<Exit> {
    let (session, spec) = match Session::open(args, spec)? {
        Ok(s) => s,
        Err(exit) => return Ok(exit),
    };
    let quiet = args.quiet || args.json;
    let count = session.hosts().len();
    let progress = |p: Progress| {
        if quiet {
            return;
        }
        match p {
            Progress::Ready { host } => eprintln!("{host}: ready"),
            Progress::Released { waited } => eprintln!(
                "released {count} hosts (the first ready waited {:.0} ms)",
                waited.as_secs_f64() * 1e3
            ),
            Progress::Finished { host } => eprintln!("{host}: done"),
        }
    };
    let d = match session.load(&spec, &progress) {
        Ok(d) => d,
        Err(failed) => {
            for line in &failed.lines {
                eprintln!("serverbench load: {line}");
            }
            return Ok(failed.exit);
        }
    };
    let json = serde_json::to_string_pretty(&d).context("serializing the result")?;
    if let Some(path) = &args.output {
        std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("writing --output {}", path.display()))?;
    }
    if args.json {
        println!("{json}");
    } else {
        print!("{}{}", summary::render(&d.merged), render_hosts(&d));
    }
    let (exit, why) = super::verdict::of(&d.merged);
    if let Some(why) = why {
        eprintln!("serverbench load: {why}");
    }
    Ok(exit)
}

/// Flags that make no sense across hosts, and the local validation of the rest.
fn validate(a: &Args, spec: &LoadSpec) -> anyhow::Result<()> {
    if a.client_hosts.is_empty() {
        bail!("--hosts needs --client-hosts A,B: the hosts that generate the load");
    }
    if a.cpus.is_some() {
        bail!("--cpus cannot be used with --hosts: give each host's `cpus` in the inventory");
    }
    if a.requests.is_some() {
        bail!("-n/--requests cannot be used with --hosts: give -d/--duration");
    }
    if a.barrier {
        bail!("--barrier is what --hosts runs on each client host; do not give both");
    }
    if (a.connections as usize) < a.client_hosts.len() {
        bail!(
            "-c/--connections {} is fewer than the {} client hosts",
            a.connections,
            a.client_hosts.len()
        );
    }
    serverbench_engine::Config::try_from(spec)?;
    Ok(())
}

/// `--cacert FILE`: a copy on each client host, in a folder of the run's own that is removed
/// when the returned folders drop; with each copy's path there, in the order of `hosts`.
fn copy_cacert(
    a: &Args,
    transport: &Transport,
    hosts: &[Host],
) -> anyhow::Result<Vec<(RemoteDir, String)>> {
    let Some(file) = &a.cacert else {
        return Ok(Vec::new());
    };
    let pem = std::fs::read(file).with_context(|| format!("--cacert {}", file.display()))?;
    let copy = |host: &Host| -> Result<(RemoteDir, String), HostError> {
        let dir = RemoteDir::create(transport, host)?;
        let path = dir.put(transport, "ca.pem", &pem)?;
        Ok((dir, path))
    };
    let copies: Result<Vec<_>, HostError> = hosts.iter().map(copy).collect();
    copies.with_context(|| format!("copying --cacert {} to the client hosts", file.display()))
}

/// The spec with `--body-file` read here (it must be UTF-8 to travel to the hosts).
fn with_body(spec: &LoadSpec) -> anyhow::Result<LoadSpec> {
    let mut spec = spec.clone();
    if let (None, Some(f)) = (&spec.http.body, spec.http.body_file.take()) {
        let bytes = std::fs::read(&f).with_context(|| format!("--body-file {}", f.display()))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            anyhow::anyhow!(
                "--body-file {}: with --hosts the body must be UTF-8 text",
                f.display()
            )
        })?;
        spec.http.body = Some(text);
    }
    Ok(spec)
}

/// The per-host breakdown under the merged summary.
fn render_hosts(d: &Distributed) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  Start skew   {:.3} ms between {} client hosts",
        d.start_skew_ms,
        d.hosts.len()
    );
    let width = d.hosts.iter().map(|h| h.host.len()).max().unwrap_or(4);
    let _ = writeln!(
        s,
        "  {:width$}  {:>5}  {:>12}  {:>9}  {:>9}  client CPU",
        "host", "conns", "req/s", "p50", "p99"
    );
    for h in &d.hosts {
        let r = &h.result;
        let _ = writeln!(
            s,
            "  {:width$}  {:>5}  {:>12.1}  {:>9}  {:>9}  {:.2}s{}",
            h.host,
            r.connections,
            r.rps,
            super::units::us(r.latency_us.p50),
            super::units::us(r.latency_us.p99),
            r.client_cpu_s,
            if r.client_saturated { " SATURATED" } else { "" }
        );
    }
    if !d.saturated_hosts.is_empty() {
        let _ = writeln!(
            s,
            "  warning: client host(s) {} saturated: add client hosts or connections elsewhere",
            d.saturated_hosts.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serverbench_hosts::distributed::ClientJob;
    use serverbench_model::{TlsResume, TlsVersion};
    use std::time::Duration;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        load: Args,
    }

    fn args(argv: &[&str]) -> Args {
        Cli::parse_from(std::iter::once("load").chain(argv.iter().copied())).load
    }

    fn host(name: &str) -> Host {
        Host {
            name: name.into(),
            ssh: name.into(),
            address: "198.18.0.2".into(),
            checkout: "/srv/serverbench".into(),
            binary: "/srv/serverbench/target/release/serverbench".into(),
            cpus: vec![],
            ssh_config: None,
            ssh_options: vec![],
        }
    }

    /// What client host `i` of `hosts` is handed for these flags, read back as the host does.
    fn handed(argv: &[&str], hosts: usize, cacerts: &[PathBuf]) -> (Vec<String>, LoadSpec) {
        let spec = args(argv).load_spec().unwrap();
        let all: Vec<Host> = (0..hosts).map(|i| host(&format!("load{i}"))).collect();
        let jobs: Vec<ClientJob> = distributed::jobs(&spec, &all, cacerts);
        let line = jobs[0].spec.to_line();
        (jobs[0].argv(), serde_json::from_str(&line).unwrap())
    }

    #[test]
    fn a_client_host_is_given_the_method_the_protocol_and_the_tls_settings_asked_for() {
        let (argv, remote) = handed(
            &[
                "-X",
                "POST",
                "--http2",
                "-m",
                "10",
                "-k",
                "--new-conn",
                "--tls-resume",
                "tickets",
                "--tls-version",
                "1.3",
                "--idle",
                "40us",
                "--io",
                "uring",
                "-c",
                "10",
                "-d",
                "3s",
                "https://198.18.0.1:8443/hello",
            ],
            2,
            &[],
        );
        assert_eq!(
            argv[1..],
            ["load", "--spec", "-", "--barrier", "--json", "-q"]
        );
        let h = &remote.http;
        assert_eq!(h.method, "POST");
        assert!(h.http2 && h.insecure && h.new_conn);
        assert_eq!(h.streams, 10);
        assert_eq!(remote.idle, "40us");
        assert_eq!(remote.io, serverbench_model::Io::Uring);
        assert_eq!(h.tls_resume, Some(TlsResume::Tickets));
        assert_eq!(h.tls_version, Some(TlsVersion::V1_3));
        assert_eq!(remote.connections, 5);
        assert_eq!(remote.duration, Some(Duration::from_secs(3)));
        assert_eq!(remote.urls, ["https://198.18.0.1:8443/hello"]);
        let idle: serverbench_engine::Idle = remote.idle.parse().unwrap();
        assert_eq!(
            idle,
            serverbench_engine::Idle::Nap(Duration::from_micros(40))
        );
    }

    #[test]
    fn a_client_host_trusts_its_own_copy_of_cacert_not_the_controllers_path() {
        let copy = PathBuf::from("/tmp/serverbench-run.x/ca.pem");
        let (_, remote) = handed(
            &[
                "--cacert",
                "/home/me/ca.pem",
                "https://198.18.0.1:8443/hello",
            ],
            1,
            std::slice::from_ref(&copy),
        );
        assert_eq!(remote.http.cacert, Some(copy));
        assert!(!remote.http.insecure);
    }

    #[test]
    fn a_cacert_that_cannot_be_read_is_named_before_any_host_is_touched() {
        let asked = args(&[
            "--cacert",
            "/nonexistent/ca.pem",
            "https://198.18.0.1:8443/",
        ]);
        let transport = Transport::new().unwrap();
        let err = copy_cacert(&asked, &transport, &[host("load1")]).unwrap_err();
        assert!(
            format!("{err:#}").starts_with("--cacert /nonexistent/ca.pem: "),
            "{err:#}"
        );
    }
}
