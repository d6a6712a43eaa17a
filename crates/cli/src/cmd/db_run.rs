//! `serverbench db run`: the cluster in the foreground, for a controller over ssh (`run --hosts`
//! with the database on a host). It prints [`DB_READY_PREFIX`] and the postmaster's pid and URL
//! once the cluster accepts connections, answers each [`DB_SNAPSHOT`] line on stdin with the
//! statements so far (read on the host, so the controller needs no TCP access), and stops the
//! cluster when stdin closes (the session ended), on SIGINT/SIGTERM, or fails (exit 1) when the
//! postmaster dies.

use crate::exit::Exit;
use anyhow::Context;
use serverbench_database::{Cluster, Config, RunningDb, Snapshot};
use serverbench_harness::process::{install_interrupt, OnInterrupt};
use serverbench_hosts::DB_SNAPSHOT_PREFIX;
use serverbench_hosts::{DbReady, DB_READY_PREFIX, DB_SNAPSHOT, DB_SNAPSHOT_FAILED};
use std::io::{BufRead, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// How often the postmaster and the signal flag are looked at.
const POLL: Duration = Duration::from_millis(100);

/// Runs the cluster of `config` until the session ends.
pub fn run(config: &Config) -> anyhow::Result<Exit> {
    let stop =
        install_interrupt(OnInterrupt::Cancel, |_| {}).context("installing the signal handler")?;
    let cluster = Cluster::prepare(config)?;
    let db = cluster.start()?;
    let ready = DbReady {
        pid: db.pid,
        url: db.url().expose(),
    };
    let json = serde_json::to_string(&ready).context("serializing the ready line")?;
    say(&format!("{DB_READY_PREFIX}{json}"));
    let lines = stdin_lines();
    loop {
        match lines.recv_timeout(POLL) {
            Ok(line) if line.trim() == DB_SNAPSHOT => say(&snapshot(&db)),
            Ok(_) => {}
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                if !serverbench_database::is_running(db.pid) {
                    let log = cluster.layout().log_file();
                    eprintln!("{}", serverbench_catalog::logs::log_tail(&log, 3));
                    // The error comes last: the line a controller names the failure with.
                    anyhow::bail!("the database (postgres, pid {}) exited", db.pid);
                }
            }
        }
    }
    db.stop()?;
    eprintln!("database: stopped");
    Ok(Exit::Ok)
}

/// One answer to [`DB_SNAPSHOT`].
fn snapshot(db: &RunningDb) -> String {
    // As the referee's role: its own statements are not in the snapshot.
    let taken = serverbench_database::connect(&db.referee_url())
        .and_then(|mut client| Snapshot::take(&mut client))
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::to_string(&s).map_err(|e| e.to_string()));
    match taken {
        Ok(json) => format!("{DB_SNAPSHOT_PREFIX}{json}"),
        Err(why) => format!("{DB_SNAPSHOT_FAILED}{}", why.replace('\n', " ")),
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Stdin's lines on a channel, closed at EOF.
fn stdin_lines() -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}
