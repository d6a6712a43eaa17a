//! `serverbench load --hosts FILE --client-hosts A,B URL`: the same load, split across client
//! hosts over ssh, released together, merged exactly (crates/hosts).

use super::{build_config, flag_duration, summary, Args, TcpMode};
use crate::exit::Exit;
use anyhow::{bail, Context};
use serverbench_harness::process::OnInterrupt;
use serverbench_hosts::check::{self, CLOCK_WARN_MS};
use serverbench_hosts::distributed::{self, ClientJob, Deadlines, Distributed, Progress};
use serverbench_hosts::{Host, HostError, RemoteDir, Transport};
use std::fmt::Write as _;
use std::time::Duration;

/// How long after the measured duration (and the request timeout) results may take to arrive.
const RESULT_SLACK: Duration = Duration::from_secs(30);

/// Runs the distributed load; returns the exit code.
pub fn run(args: &Args) -> anyhow::Result<Exit> {
    let file = args.hosts.as_deref().expect("--hosts is set");
    if let Err(e) = validate(args) {
        eprintln!("serverbench load: {e:#}");
        return Ok(Exit::BadInput);
    }
    let inventory = super::super::hosts::inventory(file)?;
    let hosts = inventory.select(&args.client_hosts)?;
    let transport = Transport::new().context("creating the ssh control folder")?;
    if !usable(&transport, &hosts) {
        return Ok(Exit::BadInput);
    }
    // Declared after the transport: the copies are removed before its connections close.
    let cacerts = match copy_cacert(args, &transport, &hosts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("serverbench load: {e:#}");
            return Ok(Exit::BadInput);
        }
    };
    let paths: Vec<&str> = cacerts.iter().map(|(_, p)| p.as_str()).collect();
    let jobs = jobs(args, &hosts, &paths)?;
    let deadlines = deadlines(args)?;
    let quiet = args.quiet || args.json;
    let progress = |p: Progress| {
        if quiet {
            return;
        }
        match p {
            Progress::Ready { host } => eprintln!("{host}: ready"),
            Progress::Released { waited } => eprintln!(
                "released {} hosts (the first ready waited {:.0} ms)",
                hosts.len(),
                waited.as_secs_f64() * 1e3
            ),
            Progress::Finished { host } => eprintln!("{host}: done"),
        }
    };
    let cancel = crate::interrupt::install(OnInterrupt::Cancel);
    let d = match distributed::run(&transport, &jobs, deadlines, &progress, &cancel) {
        Ok(d) => d,
        Err(failure) if failure.cancelled => {
            eprintln!("serverbench load: interrupted; every client host was stopped");
            return Ok(Exit::Interrupted);
        }
        Err(failure) => {
            for f in &failure.faults {
                eprintln!("serverbench load: {f}");
            }
            for h in &failure.completed {
                eprintln!(
                    "serverbench load: {}: completed {} requests ({:.1}/s), not merged",
                    h.host, h.result.requests, h.result.rps
                );
            }
            return Ok(Exit::BadInput);
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
fn validate(a: &Args) -> anyhow::Result<()> {
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
    build_config(a).map(|_| ())
}

/// Probes every host; prints one line per unusable one. Warns about clock offsets.
fn usable(transport: &Transport, hosts: &[Host]) -> bool {
    let mut ok = true;
    for (host, probe) in hosts.iter().zip(check::probe_all(transport, hosts)) {
        match probe.and_then(|p| p.usable(host).map(|()| p)) {
            Ok(p) if p.clock_offset_ms.abs() > CLOCK_WARN_MS => eprintln!(
                "warning: {}: clock {:+.1} ms away from this machine's; the start skew \
                 compares host clocks",
                host.name, p.clock_offset_ms
            ),
            Ok(_) => {}
            Err(e) => {
                eprintln!("serverbench load: {e}");
                ok = false;
            }
        }
    }
    ok
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

/// Each host's command line: its share of the connections, of -R and of --connect-rate, and
/// its copy of --cacert (`cacerts[i]` for host `i`).
fn jobs(a: &Args, hosts: &[Host], cacerts: &[&str]) -> anyhow::Result<Vec<ClientJob>> {
    let n = hosts.len() as u32;
    hosts
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let conns = a.connections / n + u32::from((i as u32) < a.connections % n);
            let share = f64::from(conns) / f64::from(a.connections);
            let there = Share {
                conns,
                share,
                cacert: cacerts.get(i).copied(),
            };
            Ok(ClientJob {
                host: host.clone(),
                argv: remote_argv(a, host, &there)?,
            })
        })
        .collect()
}

/// What differs from one client host to the next.
struct Share<'a> {
    /// Its connections.
    conns: u32,
    /// Its fraction of the connections (and of -R, --connect-rate).
    share: f64,
    /// Its copy of --cacert.
    cacert: Option<&'a str>,
}

fn remote_argv(a: &Args, host: &Host, there: &Share) -> anyhow::Result<Vec<String>> {
    let (conns, share) = (there.conns, there.share);
    let mut v: Vec<String> = vec![host.binary.to_string_lossy().into_owned(), "load".into()];
    let mut push = |flag: &str, value: String| {
        v.push(flag.to_string());
        v.push(value);
    };
    push("-c", conns.to_string());
    push("-d", a.duration.clone().unwrap_or_else(|| "10s".into()));
    push("--warmup", a.warmup.clone());
    push("--timeout", a.timeout.clone());
    push("-X", a.method.clone());
    push("-p", a.pipeline.to_string());
    push("--idle", a.idle.to_string());
    if let Some(t) = a.threads {
        push("-t", t.to_string());
    }
    if !host.cpus.is_empty() {
        let list: Vec<String> = host.cpus.iter().map(|c| c.to_string()).collect();
        push("--cpus", list.join(","));
    }
    for h in &a.headers {
        push("-H", h.clone());
    }
    if let Some(body) = body(a)? {
        push("--body", body);
    }
    if let Some(r) = a.rate {
        push("-R", format!("{}", r * share));
    }
    if let Some(r) = a.connect_rate {
        push("--connect-rate", format!("{}", r * share));
    }
    if !a.expect_status.is_empty() {
        let codes: Vec<String> = a.expect_status.iter().map(|c| c.to_string()).collect();
        push("--expect-status", codes.join(","));
    }
    if let Some(tcp) = &a.tcp {
        push("--tcp", tcp.clone());
        let mode = match a.mode {
            TcpMode::Stream => "stream",
            TcpMode::Pingpong => "pingpong",
        };
        push("--mode", mode.into());
        push("--message", a.message.clone());
        push("--size", a.size.to_string());
    }
    for (on, flag) in [(a.verify, "--verify"), (a.eager_reads, "--eager-reads")] {
        if on {
            v.push(flag.into());
        }
    }
    push_protocol(a, there.cacert, &mut v);
    v.extend(["--barrier", "--json", "-q"].map(String::from));
    if a.tcp.is_none() {
        v.push("--".into());
        v.extend(a.urls.iter().cloned());
    }
    Ok(v)
}

/// HTTP/2 and TLS flags, passed on as given, `--cacert` as the host's own copy.
fn push_protocol(a: &Args, cacert: Option<&str>, v: &mut Vec<String>) {
    if a.http2 {
        v.extend(["--http2".into(), "--streams".into(), a.streams.to_string()]);
    }
    for (on, flag) in [(a.new_conn, "--new-conn"), (a.insecure, "--insecure")] {
        if on {
            v.push(flag.into());
        }
    }
    if let Some(r) = a.tls_resume {
        v.extend(["--tls-resume".into(), name_of(r)]);
    }
    if let Some(t) = a.tls_version {
        v.extend(["--tls-version".into(), name_of(t)]);
    }
    if let Some(ca) = cacert {
        v.extend(["--cacert".into(), ca.to_string()]);
    }
}

/// A flag value as it is spelled on the command line.
fn name_of<T: clap::ValueEnum>(value: T) -> String {
    value
        .to_possible_value()
        .map(|p| p.get_name().to_owned())
        .unwrap_or_default()
}

/// The request body, read here when it comes from a file (it must be UTF-8 to travel).
fn body(a: &Args) -> anyhow::Result<Option<String>> {
    match (&a.body, &a.body_file) {
        (Some(b), _) => Ok(Some(b.clone())),
        (None, Some(f)) => {
            let bytes = std::fs::read(f).with_context(|| format!("--body-file {}", f.display()))?;
            String::from_utf8(bytes).map(Some).map_err(|_| {
                anyhow::anyhow!(
                    "--body-file {}: with --hosts the body must be UTF-8 text",
                    f.display()
                )
            })
        }
        (None, None) => Ok(None),
    }
}

fn deadlines(a: &Args) -> anyhow::Result<Deadlines> {
    let duration = match &a.duration {
        Some(d) => flag_duration("-d/--duration", d)?,
        None => Duration::from_secs(10),
    };
    Ok(Deadlines {
        ready: flag_duration("--barrier-timeout", &a.barrier_timeout)?
            + flag_duration("--warmup", &a.warmup)?,
        finish: duration + flag_duration("--timeout", &a.timeout)? + RESULT_SLACK,
    })
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
            summary::us(r.latency_us.p50),
            summary::us(r.latency_us.p99),
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
    use super::super::{ResumeArg, VersionArg};
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        load: Args,
    }

    fn args(argv: &[&str]) -> Args {
        Cli::parse_from(std::iter::once("load").chain(argv.iter().copied())).load
    }

    fn host() -> Host {
        Host {
            name: "load1".into(),
            ssh: "load1".into(),
            address: "198.18.0.2".into(),
            checkout: "/srv/serverbench".into(),
            binary: "/srv/serverbench/target/release/serverbench".into(),
            cpus: vec![],
            ssh_config: None,
            ssh_options: vec![],
        }
    }

    #[test]
    fn a_client_host_is_given_the_method_the_protocol_and_the_tls_settings_asked_for() {
        let asked = args(&[
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
            "-c",
            "10",
            "https://198.18.0.1:8443/hello",
        ]);
        let there = Share {
            conns: 5,
            share: 0.5,
            cacert: None,
        };
        let argv = remote_argv(&asked, &host(), &there).unwrap();
        let remote = args(&argv[2..].iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(remote.method, "POST");
        assert!(remote.http2 && remote.insecure && remote.new_conn && remote.barrier);
        assert_eq!(remote.streams, 10);
        assert_eq!(
            remote.idle,
            serverbench_engine::Idle::Nap(Duration::from_micros(40))
        );
        assert_eq!(remote.tls_resume, Some(ResumeArg::Tickets));
        assert_eq!(remote.tls_version, Some(VersionArg::V1_3));
        assert_eq!(remote.connections, 5);
        assert_eq!(remote.urls, ["https://198.18.0.1:8443/hello"]);
    }

    #[test]
    fn a_client_host_trusts_its_own_copy_of_cacert_not_the_controllers_path() {
        let asked = args(&[
            "--cacert",
            "/home/me/ca.pem",
            "https://198.18.0.1:8443/hello",
        ]);
        let there = Share {
            conns: 1,
            share: 1.0,
            cacert: Some("/tmp/serverbench-run.x/ca.pem"),
        };
        let argv = remote_argv(&asked, &host(), &there).unwrap();
        let remote = args(&argv[2..].iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            remote.cacert.as_deref(),
            Some(std::path::Path::new("/tmp/serverbench-run.x/ca.pem"))
        );
        assert!(!remote.insecure);
    }

    #[test]
    fn a_cacert_that_cannot_be_read_is_named_before_any_host_is_touched() {
        let asked = args(&[
            "--cacert",
            "/nonexistent/ca.pem",
            "https://198.18.0.1:8443/",
        ]);
        let transport = Transport::new().unwrap();
        let err = copy_cacert(&asked, &transport, &[host()]).unwrap_err();
        assert!(
            format!("{err:#}").starts_with("--cacert /nonexistent/ca.pem: "),
            "{err:#}"
        );
    }
}
