//! `run` on a noisy machine: `--until-ci PCT` with `--min-laps`/`--max-laps` (laps go on until
//! each cell's interval is narrow enough), `--drop-disturbed` for the final table, and the
//! doctor's one-line summary in the run's header (its full result goes to `env.json`).

use anyhow::bail;
use serverbench_machine::doctor::{self, Options};
use serverbench_machine::Live;
use serverbench_model::doctor::Check;
use serverbench_model::suite::until_ci::parse_pct;
use serverbench_model::suite::Suite;
use serverbench_results::env::Pinning;

/// The doctor's probe in a run's header: short, the run is waiting.
const PROBE_S: f64 = 0.5;

/// The flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Noisy {
    /// Run laps (still interleaved across servers) until each cell's 95% interval of the median
    /// is within ±PCT (e.g. `5%`), between --min-laps and --max-laps (overrides the suite).
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    pub until_ci: Option<f64>,
    /// With --until-ci: laps every cell runs before it is judged (default: the suite's laps).
    #[arg(long, value_name = "N")]
    pub min_laps: Option<u32>,
    /// With --until-ci: laps after which a cell stops, clear or not (default: 3 x laps).
    #[arg(long, value_name = "N")]
    pub max_laps: Option<u32>,
    /// Leave laps that something else disturbed (steal, other processes on the pinned CPUs...)
    /// out of the final table's statistics; they are listed with the reason.
    #[arg(long)]
    pub drop_disturbed: bool,
}

impl Noisy {
    /// Sets the suite's `until_ci` bounds from the flags.
    pub fn apply(&self, suite: &mut Suite) -> anyhow::Result<()> {
        if self.until_ci.is_some() {
            suite.until_ci = self.until_ci;
        }
        if self.min_laps.is_some() {
            suite.min_laps = self.min_laps;
        }
        if self.max_laps.is_some() {
            suite.max_laps = self.max_laps;
        }
        if suite.until_ci.is_none() && (self.min_laps.is_some() || self.max_laps.is_some()) {
            bail!("--min-laps and --max-laps go with --until-ci PCT (or a suite's until_ci)");
        }
        if let (Some(min), Some(max)) = (suite.min_laps, suite.max_laps) {
            if max < min {
                bail!("--max-laps {max} is below --min-laps {min}");
            }
        }
        Ok(())
    }
}

/// The doctor's checks over a short probe, for `env.json`; prints their one-line summary.
pub fn doctor_header(pinning: &Pinning) -> Vec<Check> {
    let opts = Options {
        server_cpus: pinning.server_cpus.clone(),
        client_cpus: pinning.client_cpus.clone(),
    };
    let probe = doctor::probe_live(PROBE_S);
    let checks = doctor::diagnose(&Live, &probe, &opts);
    match doctor::one_line(&checks) {
        Some(line) => eprintln!("machine: {line} (details: serverbench doctor)"),
        None => eprintln!("machine: no warning from serverbench doctor"),
    }
    checks
}
