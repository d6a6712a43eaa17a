//! `serverbench verify [SERVER...]`: start servers and check them against spec/contract.md.

use crate::exit::Exit;
use anyhow::Context;
use serverbench_catalog::paths::Paths;
use serverbench_catalog::{availability, not_ready, Catalog, Server};
use serverbench_contract::database::{self, pg::PgReferee};
use serverbench_contract::{check_all, Check, Diff, Targets, TlsTarget, VerifyReport};
use serverbench_database::DbUrl;
use serverbench_harness::verify::{verify_server, VerifyOptions};
use serverbench_model::Feature;
use serverbench_tools::Target;
use serverbench_wire::tls::Trust;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `serverbench verify`.
#[derive(clap::Args)]
pub struct Args {
    /// Servers to verify (`language/name`); every ready server when none is given.
    #[arg(value_name = "SERVER")]
    pub servers: Vec<String>,
    /// Pin the server to these CPUs (e.g. `0` or `0-1`); no pinning by default.
    #[arg(long, value_name = "LIST", value_parser = crate::cpus::parse)]
    pub cpus: Option<serverbench_model::CpuList>,
    /// WORKERS for the server (default: 1, or the number of --cpus).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Address to bind and test.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Check a server that is already running at this URL (yours, in a container, elsewhere)
    /// instead of starting catalog servers. An https:// URL is checked over TLS (`tls`, and
    /// `h2` or `h3` when --implements says so) and needs --cacert or -k.
    #[arg(long, value_name = "URL", conflicts_with = "servers")]
    pub url: Option<String>,
    /// With --url: what the server implements of spec/contract.md (default: the HTTP features,
    /// and `tls` for an https:// URL; `ws-echo` checks the WebSocket echo on /ws; `grpc` the gRPC
    /// service of spec/serverbench.proto, over h2c for http://, over TLS for https://).
    #[arg(long, value_name = "LIST", value_delimiter = ',', requires = "url")]
    pub implements: Vec<String>,
    /// With an https:// --url: trust exactly the certificates in this PEM file.
    #[arg(
        long,
        value_name = "FILE",
        requires = "url",
        conflicts_with = "insecure"
    )]
    pub cacert: Option<PathBuf>,
    /// With an https:// --url: accept any certificate (the handshake is still checked).
    #[arg(short = 'k', long, requires = "url")]
    pub insecure: bool,
    /// With an https:// --url and `h3` in --implements: the UDP port of HTTP/3 (default: the
    /// URL's port, as a server on 443 serves both).
    #[arg(long, value_name = "PORT", requires = "url")]
    pub h3_port: Option<u16>,
    /// With --url and `db`, `queries`, `fortunes` or `updates` in --implements: the PostgreSQL
    /// the server uses (postgres://USER:PASSWORD@HOST:PORT/DBNAME), with a role of verify's own,
    /// never the server's (its statements are told apart by role). verify reads the tables,
    /// changes them behind the server's back and puts them back, and audits the statements the
    /// server runs: the role must be granted pg_read_all_stats and write world and fortune, the
    /// database needs pg_stat_statements, and verify must be its only other client.
    #[arg(long, value_name = "URL", requires = "url")]
    pub database_url: Option<String>,
    /// With --database-url: the DATABASE_POOL the server was given; its connections are held
    /// to it (unchecked without it).
    #[arg(long, value_name = "N", requires = "database_url")]
    pub database_pool: Option<u32>,
    /// `-f json` (or `--json`): the reports as JSON.
    #[command(flatten)]
    pub format: crate::flags::Format,
    #[command(flatten)]
    pub servers_flag: crate::flags::Servers,
    /// The serverbench checkout whose catalog to use (default: SERVERBENCH_ROOT, else found
    /// above the current folder).
    #[arg(long, value_name = "DIR", long_help = crate::cmd::ROOT_HELP)]
    pub root: Option<PathBuf>,
}

/// Runs `serverbench verify`; `Exit::CheckFailed` when any server fails.
pub fn run(mut args: Args) -> anyhow::Result<Exit> {
    crate::interrupt::install(serverbench_harness::process::OnInterrupt::Exit);
    args.servers = args.servers_flag.merged(&args.servers);
    let json = args.format.is_json();
    if let Some(url) = &args.url {
        return verify_url(url, &args);
    }
    let (paths, catalog) =
        super::catalog(args.root.as_deref(), "serverbench verify (without --url)")?;
    let servers = pick(&catalog, &paths, &args.servers, json)?;
    let cpus = crate::cpus::of(&args.cpus).unwrap_or_default();
    let mut opts = VerifyOptions::new(&paths);
    opts.host = args.host.clone();
    opts.workers = args.workers.unwrap_or(cpus.len().max(1));
    opts.cpus = cpus;
    let mut reports = Vec::new();
    for (server, not_ready) in servers {
        if !json {
            print!("{} ... ", server.id);
            let _ = std::io::stdout().flush();
        }
        let report = match not_ready {
            Some(why) => not_ready_report(server, &why),
            None => verify_server(server, &paths, &opts),
        };
        if !json {
            print_report(&report);
        }
        reports.push(report);
    }
    let failed = reports.iter().filter(|r| !r.passed()).count();
    if json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else if reports.is_empty() {
        println!("no ready server to verify (see `serverbench list`)");
    } else {
        println!("verify: {} passed, {failed} failed", reports.len() - failed);
    }
    Ok(Exit::unless(failed > 0, Exit::CheckFailed))
}

/// `verify --url`: the contract's checks against a server that is already running.
fn verify_url(url: &str, args: &Args) -> anyhow::Result<Exit> {
    let https = url.strip_prefix("https://");
    let mut features = if args.implements.is_empty() {
        Feature::ALL
            .into_iter()
            .filter(|f| f.is_http() && !f.is_shape())
            .collect()
    } else {
        args.implements
            .iter()
            .map(|f| {
                Feature::parse(f).with_context(|| format!("--implements {f}: unknown feature"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?
    };
    if features.contains(&Feature::H3) && https.is_none() {
        anyhow::bail!("--implements h3: HTTP/3 is checked with an https:// --url, not {url}");
    }
    if args.h3_port.is_some() && !features.contains(&Feature::H3) {
        anyhow::bail!("--h3-port is for a server that implements h3 (add it to --implements)");
    }
    let targets = match https {
        None => {
            if args.cacert.is_some() || args.insecure {
                anyhow::bail!("--cacert and -k are for an https:// --url, not {url}");
            }
            let target = Target::from_url(url).map_err(|e| anyhow::anyhow!("--url {url}: {e}"))?;
            Targets::new(&target.host, Some(target.port), None)
                .with_context(|| format!("--url {url}"))?
        }
        Some(rest) => {
            if !features.contains(&Feature::Tls) && !features.contains(&Feature::H2) {
                features.push(Feature::Tls);
            }
            https_targets(url, rest, args)?
        }
    };
    let mut referee =
        database_referee(&features, args.database_url.as_deref())?.map(|r| {
            match args.database_pool {
                Some(pool) => r.with_pool(pool),
                None => r,
            }
        });
    let mut checks = check_all(&targets, &features);
    if let (Some(referee), Some(addr)) = (referee.as_mut(), targets.http) {
        checks.extend(database::check_all(addr, &features, referee));
    }
    let report = VerifyReport {
        server: url.to_owned(),
        checks,
        log_path: None,
    };
    if args.format.is_json() {
        println!("{}", serde_json::to_string_pretty(&[&report])?);
    } else {
        print!("{url} ... ");
        print_report(&report);
    }
    Ok(Exit::unless(!report.passed(), Exit::CheckFailed))
}

/// verify's connection to --database-url when a database feature is declared.
fn database_referee(
    features: &[Feature],
    database_url: Option<&str>,
) -> anyhow::Result<Option<PgReferee>> {
    let declared: Vec<&str> = features
        .iter()
        .filter(|f| f.is_database())
        .map(|f| f.as_str())
        .collect();
    match (declared.is_empty(), database_url) {
        (true, None) => Ok(None),
        (true, Some(_)) => anyhow::bail!(
            "--database-url is for a server that implements db, queries, fortunes or updates \
             (add them to --implements)"
        ),
        (false, None) => anyhow::bail!(
            "--implements {}: verify needs the server's database, --database-url URL",
            declared.join(",")
        ),
        (false, Some(url)) => {
            let url = DbUrl::parse(url).map_err(|e| anyhow::anyhow!("--database-url: {e}"))?;
            let referee = PgReferee::connect(&url)
                .map_err(|e| anyhow::anyhow!("--database-url {url}: {e}"))?;
            Ok(Some(referee))
        }
    }
}

/// The TLS target of `https://<rest>` (port 443 unless given), trusting --cacert or, with -k,
/// anything.
fn https_targets(url: &str, rest: &str, args: &Args) -> anyhow::Result<Targets> {
    let trust = match (&args.cacert, args.insecure) {
        (Some(file), _) => {
            std::fs::metadata(file).with_context(|| format!("--cacert {}", file.display()))?;
            Trust::CaFile(file.clone())
        }
        (None, true) => Trust::Insecure,
        (None, false) => anyhow::bail!(
            "--url {url}: an https:// URL needs --cacert FILE (the server's certificate or its \
             CA) or -k to accept any certificate"
        ),
    };
    let authority = rest.split('/').next().unwrap_or("");
    let after_host = authority
        .rsplit_once(']')
        .map_or(authority, |(_, after)| after);
    let mut target = Target::from_url(&format!("http://{rest}"))
        .map_err(|e| anyhow::anyhow!("--url {url}: {e}"))?;
    if !after_host.contains(':') {
        target.port = 443;
    }
    let addr = serverbench_contract::resolve(&target.host, target.port)
        .with_context(|| format!("--url {url}"))?;
    let tls = TlsTarget {
        addr,
        server_name: target.host.clone(),
        trust,
    };
    let h3 = serverbench_contract::resolve(&target.host, args.h3_port.unwrap_or(target.port))
        .with_context(|| format!("--h3-port {:?}", args.h3_port))?;
    Ok(Targets {
        http: None,
        echo: None,
        tls: Some(tls),
        h3: Some(h3),
        group: None,
    })
}

/// Named servers (with why they are not ready), or every ready server.
fn pick<'a>(
    catalog: &'a Catalog,
    paths: &Paths,
    names: &[String],
    quiet: bool,
) -> anyhow::Result<Vec<(&'a Server, Option<String>)>> {
    if names.is_empty() {
        let mut out = Vec::new();
        for s in &catalog.servers {
            let a = availability(s, paths);
            if a.is_ready() {
                out.push((s, None));
            } else if !quiet {
                println!("{}: skipped ({a})", s.id);
            }
        }
        return Ok(out);
    }
    names
        .iter()
        .map(|n| {
            let s = catalog.get(n)?;
            Ok((s, not_ready(s, paths)))
        })
        .collect()
}

fn not_ready_report(server: &Server, why: &str) -> VerifyReport {
    VerifyReport {
        server: server.id.clone(),
        checks: vec![Check::new("ready", vec![Diff::new("status", "ready", why)])],
        log_path: None,
    }
}

fn print_report(r: &VerifyReport) {
    let failures = r.failures();
    if failures.is_empty() {
        println!("PASS ({} checks)", r.checks.len());
    } else {
        println!("FAIL ({} of {} checks)", failures.len(), r.checks.len());
    }
    for c in r.checks.iter().filter(|c| c.passed()) {
        if let Some(note) = &c.note {
            println!("  · {}: {note}", c.name);
        }
    }
    for c in r.checks.iter().filter(|c| c.is_known_deviation()) {
        let why = c.known_deviation.as_deref().unwrap_or_default();
        println!(
            "  ~ {}: known deviation, declared in server.toml: {why}",
            c.name
        );
        for d in &c.diffs {
            println!("      {}: expected {}, got {}", d.what, d.expected, d.got);
        }
    }
    if failures.is_empty() {
        return;
    }
    for c in failures {
        println!("  ✗ {}", c.name);
        for d in &c.diffs {
            println!("      {}", d.what);
            for (label, text) in [("expected", &d.expected), ("got     ", &d.got)] {
                let mut lines = text.lines();
                println!("        {label} {}", lines.next().unwrap_or(""));
                for more in lines {
                    println!("                 {more}");
                }
            }
        }
    }
    if let Some(log) = &r.log_path {
        println!("  server log: {}", log.display());
    }
}
