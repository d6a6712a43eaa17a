//! serverbench-analysis owns the statistics of a results folder: [`stats`] (medians, bootstrap
//! intervals, ranks), [`summary`] (one table per scenario x profile), [`diagnostics`] (every
//! warning, in one pass) and [`compare`] (two folders, server by server).
//!
//! Pure functions over [`serverbench_results`] values: no I/O, no processes, no printing.

pub mod compare;
pub mod diagnostics;
pub mod stats;
pub mod summary;
