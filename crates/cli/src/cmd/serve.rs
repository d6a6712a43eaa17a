//! `serverbench serve SERVER`: run one catalog server in the foreground with its log streamed.

use crate::exit::Exit;
use anyhow::{bail, Context};
use serverbench_catalog::paths::{slug, Paths};
use serverbench_catalog::{not_ready, Server};
use serverbench_harness::certs;
use serverbench_harness::process::{self, OnInterrupt, StartOptions};
use serverbench_hosts::{ServeReady, SERVE_READY_PREFIX};
use serverbench_model::Feature;
use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `serverbench serve`.
#[derive(clap::Args)]
pub struct Args {
    /// The server (`language/name`).
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// HTTP port (default: a free one).
    #[arg(long)]
    pub port: Option<u16>,
    /// TCP echo port (default: a free one, when the server implements echo).
    #[arg(long)]
    pub echo_port: Option<u16>,
    /// WORKERS (default: 1, or the number of --cpus).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Pin the server to these CPUs (e.g. `0` or `0-1`).
    #[arg(long, value_name = "LIST", value_parser = crate::cpus::parse)]
    pub cpus: Option<serverbench_model::CpuList>,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// HTTPS port, for servers that implement tls or h2 (default: a free one); the certificate
    /// is generated for the address and its path printed.
    #[arg(long)]
    pub tls_port: Option<u16>,
    /// Serve TLS with this certificate (PEM) instead of generating one (with --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM, PKCS#8) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The serverbench checkout whose catalog to use (default: SERVERBENCH_ROOT, else found
    /// above the current folder).
    #[arg(long, value_name = "DIR", long_help = crate::cmd::ROOT_HELP)]
    pub root: Option<PathBuf>,
    /// When ready, also print one `serverbench-serve-ready {json}` line (pid, ports) for a
    /// controller driving this over ssh (`run --hosts`).
    #[arg(long, hide = true)]
    pub ready_line: bool,
    /// Before starting, read `KEY=VALUE` lines from stdin up to an empty line: more environment
    /// for the server (`run --hosts` hands it the database's URL this way, off any command line).
    #[arg(long, hide = true)]
    pub env_stdin: bool,
}

/// Runs `serverbench serve` until Ctrl-C (`Exit::Interrupted`) or the server exits (`Exit::BadInput`).
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let interrupted = crate::interrupt::install(OnInterrupt::Exit);
    let (paths, catalog) = super::catalog(args.root.as_deref(), "serverbench serve")?;
    let server = catalog.get(&args.server)?;
    if let Some(why) = not_ready(server, &paths) {
        bail!("{}: {why}", server.id);
    }
    // One folder per server in the cache, overwritten by the next `serve`: a temporary folder
    // would outlive every Ctrl-C or SIGTERM (the exit skips destructors).
    let cert_dir = paths.cache.join("serve-tls").join(slug(&server.id));
    let mut opts = options(&args, server, &paths, &cert_dir)?;
    if args.env_stdin {
        opts.extra_env.extend(env_from_stdin()?);
    }
    eprintln!("starting {} (log: {})", server.id, opts.log_path.display());
    let mut proc = match process::start(server, &paths, &opts) {
        Ok(p) => p,
        Err(e) => {
            print_new(&opts.log_path, &mut 0);
            return Err(e).context(format!("starting {}", server.id));
        }
    };
    let mut offset = 0u64;
    print_new(&opts.log_path, &mut offset);
    println!(
        "{} started (pid {}, process group {})",
        server.id,
        proc.pid(),
        proc.pgid()
    );
    print_urls(server, &opts);
    if args.ready_line {
        let ready = ServeReady {
            pid: proc.pid(),
            port: opts.port,
            echo_port: opts.echo_port,
            tls_port: opts.tls.as_ref().map(|t| t.port),
            h3_port: opts.tls.as_ref().and_then(|t| t.h3_port),
        };
        let json = serde_json::to_string(&ready).context("serializing the ready line")?;
        println!("{SERVE_READY_PREFIX}{json}");
        let _ = std::io::stdout().flush();
    }
    loop {
        print_new(&opts.log_path, &mut offset);
        if let Some(status) = proc.try_exit() {
            if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
                // The handler stopped it and exits 130 itself.
                std::thread::sleep(Duration::from_secs(60));
            }
            print_new(&opts.log_path, &mut offset);
            eprintln!("{} exited ({status})", server.id);
            proc.stop();
            return Ok(Exit::BadInput);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn options(
    args: &Args,
    server: &Server,
    paths: &Paths,
    cert_dir: &Path,
) -> anyhow::Result<StartOptions> {
    let port = match args.port {
        Some(p) => p,
        None => process::free_port(&args.host).context("finding a free port")?,
    };
    let echo_port = match (args.echo_port, server.implements(Feature::Echo)) {
        (Some(p), _) => Some(p),
        (None, true) => Some(process::free_port(&args.host).context("finding a free port")?),
        (None, false) => None,
    };
    let log = paths
        .logs_dir()
        .join(format!("{}.serve.log", slug(&server.id)));
    let mut opts = StartOptions::new(server, port, echo_port, log);
    opts.host = args.host.clone();
    opts.cpus = crate::cpus::of(&args.cpus).unwrap_or_default();
    opts.workers = args.workers.unwrap_or(opts.cpus.len().max(1));
    if process::serves_tls(server) {
        let port = match args.tls_port {
            Some(p) => p,
            None => process::free_port(&args.host).context("finding a free port")?,
        };
        let files = match given_tls_files(args)? {
            Some(files) => files,
            None => certs::generate(cert_dir, &args.host)?,
        };
        let listener = process::tls_listener(server, &args.host, port, files);
        opts.tls = Some(listener.context("finding a free UDP port for H3_PORT")?);
    } else if args.tls_cert.is_some() {
        bail!(
            "--tls-cert: {} implements neither tls nor h2, so it serves no TLS",
            server.id
        );
    }
    Ok(opts)
}

/// `KEY=VALUE` lines from stdin, up to an empty line or the end.
fn env_from_stdin() -> anyhow::Result<Vec<(String, String)>> {
    let mut env = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line.context("reading the environment on stdin")?;
        if line.is_empty() {
            break;
        }
        // Never the line itself in the message: it may hold a password.
        let (k, v) = line
            .split_once('=')
            .context("--env-stdin: a line is not KEY=VALUE")?;
        env.push((k.to_owned(), v.to_owned()));
    }
    Ok(env)
}

/// `--tls-cert` and `--tls-key`, each an existing file.
fn given_tls_files(args: &Args) -> anyhow::Result<Option<certs::TlsFiles>> {
    let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) else {
        return Ok(None);
    };
    for (flag, path) in [("--tls-cert", cert), ("--tls-key", key)] {
        if !path.is_file() {
            bail!("{flag} {}: no such file", path.display());
        }
    }
    Ok(Some(certs::TlsFiles {
        cert: cert.clone(),
        key: key.clone(),
    }))
}

fn print_urls(server: &Server, opts: &StartOptions) {
    let host = if opts.host.contains(':') {
        format!("[{}]", opts.host)
    } else {
        opts.host.clone()
    };
    println!("{} is ready (Ctrl-C to stop). Try:", server.id);
    for e in serverbench_contract::checks::declared(&server.manifest.implements) {
        println!("  curl -i http://{host}:{}{}", opts.port, e.path);
    }
    let sum = "serverbench.Bench/Sum";
    if server.implements(Feature::Grpc) {
        println!("  serverbench load -d 5s grpc://{host}:{}/{sum}", opts.port);
    }
    if let Some(t) = &opts.tls {
        let cert = t.files.cert.display();
        if server.implements(Feature::Hello) {
            println!("  curl -i --cacert {cert} https://{host}:{}/hello", t.port);
        }
        if server.implements(Feature::Grpc) {
            println!(
                "  serverbench load -d 5s --cacert {cert} grpcs://{host}:{}/{sum}",
                t.port
            );
        }
        if let Some(h3) = t.h3_port {
            println!("  serverbench load --http3 --cacert {cert} -d 5s https://{host}:{h3}/hello");
        }
    }
    if let (true, Some(p)) = (server.implements(Feature::Echo), opts.echo_port) {
        println!("  echo hello | nc -q1 {} {p}", opts.host);
    }
    let _ = std::io::stdout().flush();
}

/// Prints what the log gained since `offset`.
fn print_new(path: &Path, offset: &mut u64) {
    let Ok(mut f) = std::fs::File::open(path) else {
        return;
    };
    if f.seek(SeekFrom::Start(*offset)).is_err() {
        return;
    }
    let mut buf = Vec::new();
    if let Ok(n) = f.read_to_end(&mut buf) {
        *offset += n as u64;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&buf);
        let _ = out.flush();
    }
}
