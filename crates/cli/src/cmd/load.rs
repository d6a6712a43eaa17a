//! `serverbench load`: glue. The flags ([`crate::flags::load`]) give a `LoadSpec`; it runs on
//! the engine here, split across client hosts (`--hosts`, serverbench-harness's `clients`) or
//! step by step (`--find-max`, the harness's step measurer); serverbench-report's `load`
//! renders it; the result picks the exit code.

mod distributed;
mod find_max;

use crate::exit::Exit;
pub use crate::flags::load::Args;
use anyhow::Context;
use serverbench_engine::{Config, EngineError, Event, Lifetime, Stop};
use serverbench_hosts::distributed::released_by_go;
use serverbench_model::LoadResult;
use serverbench_report::load::live::{LiveLine, Shape};
use serverbench_report::load::summary;
use serverbench_report::load::verdict::{self, Shortfall};
use std::io::{IsTerminal, Write};

/// Runs `serverbench load`.
pub fn run(mut args: Args) -> anyhow::Result<Exit> {
    args.json |= args.format == Some(crate::flags::TextOrJson::Json);
    let spec = match args.load_spec() {
        Ok(s) => s,
        Err(e) => return Ok(bad(e)),
    };
    if args.find_max.find_max {
        return find_max::run(&args, spec);
    }
    if let Some(flag) = args.find_max.stray() {
        return Ok(bad(format!("{flag} applies only with --find-max")));
    }
    if args.hosts.is_some() {
        return distributed::run(&args, &spec);
    }
    let config = match Config::try_from(&spec) {
        Ok(c) => c,
        Err(e) => return Ok(bad(e)),
    };
    let quiet = args.quiet || !std::io::stderr().is_terminal();
    let line = (!quiet).then(|| LiveLine::new(shape(&config), crate::terminal::width()));
    let line = std::cell::RefCell::new(line);
    let observer = |ev: Event| {
        let text = line.borrow_mut().as_mut().and_then(|l| match ev {
            Event::Connected { connected, total } => l.connected(connected, total),
            Event::Tick { snapshot, .. } => Some(l.tick(&snapshot)),
            _ => None,
        });
        text.iter().for_each(|t| draw(t));
    };
    let gate = args.barrier.then_some(&released_by_go as &dyn Fn() -> bool);
    let outcome = serverbench_engine::run_gated(&config, &observer, gate);
    line.borrow_mut().iter_mut().for_each(|l| draw(l.clear()));
    let result = match outcome {
        Ok(r) => r,
        Err(EngineError::Cancelled) => {
            eprintln!("serverbench load: --barrier: no `go` line on stdin (closed or another line); nothing measured");
            return Ok(Exit::NoGo);
        }
        Err(e @ EngineError::Refused { .. }) => {
            eprintln!("serverbench load: {e}");
            return Ok(Exit::Refused);
        }
        Err(e @ (EngineError::Config(_) | EngineError::FileLimit { .. })) => return Ok(bad(e)),
        Err(e) => return Err(e).context("serverbench load"),
    };
    output(&args, &result, || summary::render(&result))?;
    Ok(exit_of(&result))
}

/// A usage error, said on stderr.
fn bad(why: impl std::fmt::Display) -> Exit {
    eprintln!("serverbench load: {why:#}");
    Exit::BadInput
}

/// Writes the result: as JSON to `-o FILE`, and on stdout as JSON (`--json`) or as `text`.
fn output<T: serde::Serialize>(
    args: &Args,
    result: &T,
    text: impl FnOnce() -> String,
) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(result).context("serializing the result")?;
    if let Some(path) = &args.output {
        std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("writing --output {}", path.display()))?;
    }
    match args.json {
        true => println!("{json}"),
        false => print!("{}", text()),
    }
    Ok(())
}

/// How a completed load exits: why it measured nothing that was asked said on stderr.
fn exit_of(r: &LoadResult) -> Exit {
    let Some((short, why)) = verdict::of(r) else {
        return Exit::Ok;
    };
    eprintln!("serverbench load: {why}");
    match short {
        Shortfall::Tls => Exit::Tls,
        Shortfall::NoSuccess => Exit::NoSuccess,
    }
}

/// Writes the live line's `text` to stderr now.
fn draw(text: &str) {
    eprint!("{text}");
    let _ = std::io::stderr().flush();
}

/// What the live line shows for this run, from the workload the spec names.
fn shape(c: &Config) -> Shape {
    use serverbench_model::Workload;
    let w = c.spec.workload();
    Shape {
        warmup: c.spec.warmup,
        duration: match c.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => None,
        },
        stream: w == Workload::TcpStream,
        // QUIC's handshake is inside its transport: HTTP/3 has no TLS layer of the worker's.
        handshakes: (c.tls.is_some() || w == Workload::Http3) && c.lifetime == Lifetime::PerRequest,
        streams: matches!(w, Workload::Http2 | Workload::Http3),
        messages: w == Workload::WebSocket,
        calls: w == Workload::Grpc,
        call_messages: w == Workload::Grpc && c.spec.work.stream.is_some(),
    }
}
