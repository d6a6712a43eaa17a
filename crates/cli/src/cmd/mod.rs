//! One module per subcommand: its clap arguments and a `run` that calls into the libraries.

pub mod compare;
pub mod db;
pub mod doctor;
pub mod history;
pub mod hosts;
pub mod list;
pub mod load;
pub mod report;
pub mod run;
pub mod serve;
pub mod setup;
pub mod verify;

use serverbench_catalog::paths::Paths;
use serverbench_catalog::Catalog;

/// `--help` of every `--root`: what the root is and where things go without one.
pub const ROOT_HELP: &str = "The serverbench checkout whose catalog (servers/) to use (default: \
    SERVERBENCH_ROOT, else found above the current folder). Only catalog servers need one: \
    without it, results go to ./results and the cache to SERVERBENCH_CACHE, else \
    $XDG_CACHE_HOME/serverbench or ~/.cache/serverbench";

/// The paths and the catalog for `what` (a command that runs catalog servers): an error saying
/// how to point at a catalog when there is none.
pub fn catalog(root: Option<&std::path::Path>, what: &str) -> anyhow::Result<(Paths, Catalog)> {
    let paths = Paths::discover(root)?;
    let catalog = Catalog::required(&paths, what)?;
    Ok((paths, catalog))
}
