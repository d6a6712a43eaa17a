//! `serverbench load --hosts FILE --client-hosts A,B URL`: the same load, split across client
//! hosts over ssh, released together, merged exactly (serverbench-harness's `clients`).

use super::Args;
use crate::exit::Exit;
use anyhow::Context;
use serverbench_harness::clients::{failure_lines, with_body, Session};
use serverbench_harness::process::OnInterrupt;
use serverbench_hosts::distributed::Progress;
use serverbench_hosts::Transport;
use serverbench_model::LoadSpec;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The client hosts of `--hosts`, probed, `--cacert` copied to each, with the spec as they take
/// it and the flag Ctrl-C raises.
pub struct Opened {
    pub session: Session,
    pub spec: LoadSpec,
    pub cancel: Arc<AtomicBool>,
}

/// Probes the client hosts of `--hosts`/`--client-hosts` and copies `--cacert` to them; or the
/// exit after printing why not.
pub fn open(args: &Args, spec: &LoadSpec) -> anyhow::Result<Result<Opened, Exit>> {
    let file = args.hosts.as_deref().expect("--hosts is set");
    if let Some(why) = args.hosts_conflict() {
        return Ok(Err(super::bad(why)));
    }
    if let Err(e) = serverbench_engine::Config::try_from(spec) {
        return Ok(Err(super::bad(e)));
    }
    let spec = match with_body(spec) {
        Ok(s) => s,
        Err(e) => return Ok(Err(super::bad(e))),
    };
    let hosts = super::super::hosts::inventory(file)?.select(&args.client_hosts)?;
    let transport = Transport::new().context("creating the ssh control folder")?;
    if let Err(failed) = super::super::hosts::usable_probes(&transport, &hosts) {
        failed
            .iter()
            .for_each(|f| eprintln!("serverbench load: {f}"));
        return Ok(Err(Exit::BadInput));
    }
    let mut session = Session::new(transport, hosts, args.barrier_timeout);
    if let Some(Err(e)) = args.cacert.as_deref().map(|f| session.copy_cacert(f)) {
        return Ok(Err(super::bad(e)));
    }
    let cancel = crate::interrupt::install(OnInterrupt::Cancel);
    Ok(Ok(Opened {
        session,
        spec,
        cancel,
    }))
}

/// Runs the distributed load of `spec` (the flags' load); returns the exit code.
pub fn run(args: &Args, spec: &LoadSpec) -> anyhow::Result<Exit> {
    let h = match open(args, spec)? {
        Ok(h) => h,
        Err(exit) => return Ok(exit),
    };
    let quiet = args.quiet || args.json;
    let count = h.session.hosts().len();
    let progress = |p: Progress| match p {
        _ if quiet => {}
        Progress::Ready { host } => eprintln!("{host}: ready"),
        Progress::Released { waited } => eprintln!(
            "released {count} hosts (the first ready waited {:.0} ms)",
            waited.as_secs_f64() * 1e3
        ),
        Progress::Finished { host } => eprintln!("{host}: done"),
    };
    let d = match h
        .session
        .clients()
        .load(&h.spec, &progress, &h.cancel)
        .outcome
    {
        Ok(d) => d,
        Err(f) => {
            failure_lines(&f)
                .iter()
                .for_each(|l| eprintln!("serverbench load: {l}"));
            return Ok(if f.cancelled {
                Exit::Interrupted
            } else {
                Exit::BadInput
            });
        }
    };
    super::output(args, &d, || serverbench_report::load::hosts::render(&d))?;
    Ok(super::exit_of(&d.merged))
}
