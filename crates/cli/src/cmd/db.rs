//! `serverbench db up | down | status | psql`: serverbench's private PostgreSQL by hand (the
//! database workloads' `run` starts and stops it by itself).

use crate::cpus;
use crate::exit::Exit;
use anyhow::Context;
use serverbench_catalog::paths::Paths;
use serverbench_database::{Cluster, ClusterStatus, Config, DbError, Layout, Prepared, PG_BIN};
use serverbench_model::CpuList;
use std::net::IpAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

#[path = "db_run.rs"]
mod db_run;

/// Arguments of `serverbench db`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Install PostgreSQL 15 when missing, make the cluster (once per schema version), start it.
    Up {
        #[command(flatten)]
        at: Where,
        #[command(flatten)]
        access: Access,
    },
    /// Stop the cluster's postmaster by its PID.
    Down(Where),
    /// Show what runs and where it listens.
    Status(Where),
    /// Open psql on the running cluster (the password passed in PGPASSWORD).
    Psql {
        #[command(flatten)]
        at: Where,
        /// Arguments passed to psql (after `--`).
        #[arg(last = true, value_name = "PSQL_ARGS")]
        args: Vec<String>,
    },
    /// Run the cluster in the foreground until stdin closes or a signal (`run --hosts` drives
    /// it over ssh on the database host: ready line, snapshots of the statements on request).
    #[command(hide = true)]
    Run {
        #[command(flatten)]
        at: Where,
        #[command(flatten)]
        access: Access,
        /// `max_connections` (default: 1,000).
        #[arg(long, value_name = "N")]
        max_connections: Option<u32>,
    },
}

/// Who may log in over TCP.
#[derive(clap::Args)]
struct Access {
    /// The only addresses or networks (`198.18.0.10`, `10.0.0.0/8`) allowed to log in over TCP
    /// besides the listen address (default: loopback, or any address when it listens on
    /// another); always with the password.
    #[arg(long, value_name = "ADDR", value_delimiter = ',')]
    db_allow: Vec<String>,
}

#[derive(clap::Args)]
struct Where {
    /// The cluster's TCP port.
    #[arg(long, value_name = "PORT", default_value_t = serverbench_database::DEFAULT_PORT)]
    db_port: u16,
    /// CPUs the database runs on (`0`, `0,2`, `0-1`); default: not pinned.
    #[arg(long, value_name = "CPUS", value_parser = cpus::parse)]
    db_cpus: Option<CpuList>,
    /// The address it listens on (besides its private socket).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    db_host: IpAddr,
    /// The serverbench checkout whose cache to use (default: SERVERBENCH_ROOT, else found
    /// above the current folder).
    #[arg(long, value_name = "DIR", long_help = crate::cmd::ROOT_HELP)]
    root: Option<PathBuf>,
}

impl Where {
    fn config(&self) -> anyhow::Result<Config> {
        let paths = Paths::discover(self.root.as_deref())?;
        let mut c = Config::new(paths.cache);
        c.port = self.db_port;
        c.host = self.db_host;
        c.cpus = cpus::of(&self.db_cpus).unwrap_or_default();
        Ok(c)
    }
}

/// Runs `serverbench db …`.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    match args.action {
        Action::Up { at, access } => up(&at.config()?.allowing(access)),
        Action::Down(at) => down(&at.config()?),
        Action::Status(at) => status(&at.config()?),
        Action::Psql { at, args } => psql(&at.config()?, &args),
        Action::Run {
            at,
            access,
            max_connections,
        } => {
            let mut config = at.config()?.allowing(access);
            config.max_connections = max_connections.unwrap_or(config.max_connections);
            config.in_starters_group = true;
            db_run::run(&config)
        }
    }
}

trait Allowing {
    fn allowing(self, access: Access) -> Self;
}

impl Allowing for Config {
    fn allowing(mut self, access: Access) -> Config {
        self.allow = access.db_allow;
        self
    }
}

fn up(config: &Config) -> anyhow::Result<Exit> {
    if let Some(pm) = ClusterStatus::of(config).running {
        if let Ok(cluster) = Cluster::open(config) {
            println!("database: already running (PID {})", pm.pid);
            print_status(&cluster.status(), Some(&cluster));
            return Ok(Exit::Ok);
        }
    }
    let cluster = Cluster::prepare(config)?;
    match cluster.prepared() {
        Prepared::Created => println!("database: created in {}", cluster.layout().dir.display()),
        Prepared::Reused => println!("database: reusing {}", cluster.layout().dir.display()),
        Prepared::Rebuilt { old_stamp } => println!(
            "database: rebuilt {} (it held {})",
            cluster.layout().dir.display(),
            if old_stamp.is_empty() {
                "an unfinished cluster"
            } else {
                old_stamp
            }
        ),
    }
    let pid = match cluster.start() {
        Ok(db) => db.detach(),
        Err(DbError::AlreadyRunning { pid, .. }) => pid,
        Err(e) => return Err(e.into()),
    };
    println!("database: started (PID {pid}); `serverbench db down` stops it");
    print_status(&cluster.status(), Some(&cluster));
    Ok(Exit::Ok)
}

fn down(config: &Config) -> anyhow::Result<Exit> {
    let status = ClusterStatus::of(config);
    match status.running {
        Some(pm) => {
            serverbench_database::stop_pid(pm.pid)?;
            println!("database: stopped (PID {})", pm.pid);
        }
        None => println!("database: not running"),
    }
    Ok(Exit::Ok)
}

fn status(config: &Config) -> anyhow::Result<Exit> {
    let status = ClusterStatus::of(config);
    let cluster = Cluster::open(config).ok();
    match (&status.running, status.prepared) {
        (Some(pm), _) => println!("database: running (PID {})", pm.pid),
        (None, true) => println!("database: stopped"),
        (None, false) => println!("database: none (`serverbench db up` makes it)"),
    }
    print_status(&status, cluster.as_ref());
    Ok(Exit::Ok)
}

fn print_status(status: &ClusterStatus, cluster: Option<&Cluster>) {
    let l: &Layout = &status.layout;
    if let Some(pm) = &status.running {
        println!(
            "  listens   {}:{} and socket {}",
            pm.listen, pm.port, pm.socket_dir
        );
        if let Some(c) = cluster {
            let mut url = c.url();
            url.port = pm.port;
            url.host = pm.listen.clone();
            println!("  url       {url}");
        }
    }
    println!("  data      {}", l.data().display());
    if let Some(why) = &l.moved {
        println!("            (not in the cache: {why})");
    }
    if status.prepared {
        println!("  password  {} (mode 0600)", l.password_file().display());
        println!("  log       {}", l.log_file().display());
    }
}

fn psql(config: &Config, extra: &[String]) -> anyhow::Result<Exit> {
    let status = ClusterStatus::of(config);
    let pm = status
        .running
        .context("the database is not running (start it with `serverbench db up`)")?;
    let cluster = Cluster::open(config)?;
    let url = cluster.url();
    let exe = Path::new(PG_BIN).join("psql");
    let exe = if exe.is_file() {
        exe
    } else {
        PathBuf::from("psql")
    };
    let err = std::process::Command::new(&exe)
        .args(["-h", &pm.socket_dir, "-p", &pm.port.to_string()])
        .args(["-U", &url.user, "-d", &url.dbname])
        .args(extra)
        .env("PGPASSWORD", &url.password)
        .exec();
    Err(err).with_context(|| format!("cannot run {}", exe.display()))
}
