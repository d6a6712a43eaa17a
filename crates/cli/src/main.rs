//! `serverbench`: glue between the command line and the libraries. Logic lives in the crates.

mod cmd;
mod cpus;
mod exit;
mod flags;
mod interrupt;
mod terminal;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use exit::Exit;
use std::process::ExitCode;

/// A reproducible, polyglot benchmark suite for HTTP and TCP servers.
#[derive(Parser)]
#[command(
    name = "serverbench",
    version = serverbench_build_info::VERSION,
    about,
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate load against HTTP/1.1 or HTTP/2 URLs (http:// or https://) or a TCP echo server.
    Load(Box<cmd::load::Args>),
    /// List the catalog's servers, what they implement and whether they can run here.
    List(cmd::list::Args),
    /// Install what the servers need and build them (idempotent, cached).
    Setup(cmd::setup::Args),
    /// Start servers and check them against the contract (spec/contract.md).
    Verify(cmd::verify::Args),
    /// Run one catalog server in the foreground.
    Serve(cmd::serve::Args),
    /// Run a suite (or an ad-hoc set of servers and a scenario) and record the results.
    Run(Box<cmd::run::Args>),
    /// Render a results folder as a terminal table, Markdown, JSON, CSV, HTML or SVG charts.
    Report(cmd::report::Args),
    /// Compare two results folders server by server.
    Compare(cmd::compare::Args),
    /// Several machines: check the hosts of an inventory (spec/hosts.md).
    Hosts(cmd::hosts::Args),
    /// serverbench's private PostgreSQL for the database workloads: up, down, status, psql.
    Db(cmd::db::Args),
    /// Check this machine for benchmarking (governor, steal, other processes, limits...).
    Doctor(cmd::doctor::Args),
    /// The results history: import, list, show, trend, check (exit 4 regression, 9 inconclusive).
    History(cmd::history::Args),
}

fn main() -> ExitCode {
    match run() {
        Ok(exit) => exit.into(),
        Err(err) => {
            eprintln!("serverbench: error: {err:#}");
            Exit::BadInput.into()
        }
    }
}

/// Parses the command line and runs the subcommand; returns the process exit code.
fn run() -> anyhow::Result<Exit> {
    let parsed = Cli::command()
        .after_help(exit::table())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            // A bad value (a duration, a CPU list): one line naming the flag, as other bad input.
            let text = e.render().to_string();
            eprintln!("{}", text.lines().next().unwrap_or_default());
            return Ok(Exit::BadInput);
        }
        Err(e) => {
            // --help and --version are "errors" printed to stdout with success.
            let exit = Exit::unless(e.use_stderr(), Exit::BadInput);
            let _ = e.print();
            return Ok(exit);
        }
    };
    match cli.command {
        Command::Load(args) => cmd::load::run(*args),
        Command::List(args) => cmd::list::run(args),
        Command::Setup(args) => cmd::setup::run(args),
        Command::Verify(args) => cmd::verify::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Run(args) => cmd::run::run(*args),
        Command::Report(args) => cmd::report::run(args),
        Command::Compare(args) => cmd::compare::run(args),
        Command::Hosts(args) => cmd::hosts::run(args),
        Command::Db(args) => cmd::db::run(args),
        Command::Doctor(args) => cmd::doctor::run(args),
        Command::History(args) => cmd::history::run(args),
    }
}
