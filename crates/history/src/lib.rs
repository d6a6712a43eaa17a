//! serverbench-history keeps the series of a suite run again and again: an index of results
//! folders in one SQLite file ([`History`]), read back as series per testbed x settings x cell
//! ([`series`]), judged against a baseline run and by change-point detection ([`check`],
//! [`changepoint`]) and written in the formats CI systems and benchmark trackers read
//! ([`format`]), or as a page of charts ([`trend`]).
//!
//! The results folders stay the source of truth: the database is an index that can be rebuilt
//! from them with [`History::import`]. Series are never pooled across testbeds or settings.
//! Like the other libraries it never prints: every function returns values or text.

pub mod changepoint;
pub mod check;
#[cfg(test)]
mod check_tests;
mod db;
pub mod format;
mod import;
#[cfg(test)]
mod import_tests;
pub mod series;
pub mod settle;
pub mod show;
pub mod synth;
pub mod trend;
pub mod ttest;

pub use db::{History, HistoryError, SCHEMA_VERSION};
pub use import::{ImportOutcome, ImportReport, Source};
pub use series::{Measure, Point, SeriesKey};

use std::path::{Path, PathBuf};

/// Where the history lives unless `--history FILE` says otherwise: `<root>/.serverbench/history.db`.
pub fn default_path(root: &Path) -> PathBuf {
    root.join(".serverbench").join("history.db")
}
