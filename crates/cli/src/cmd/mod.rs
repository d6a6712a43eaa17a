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
