//! serverbench's exit codes, in one place (the README's "Exit codes" table lists them).

/// Everything worked.
pub const OK: u8 = 0;
/// Bad input (a usage error) or an error before anything was measured.
pub const ERROR: u8 = 1;
/// `load`: the target refused every connection.
pub const REFUSED: u8 = 2;
/// `run`: at least one lap failed (a server or the load broke); the results are still written.
pub const LAPS_FAILED: u8 = 3;
/// `compare --fail-above`: a server regressed by more than the threshold.
pub const REGRESSION: u8 = 4;
/// `load` over TLS: every handshake failed, or resumption was asked and the server resumed none.
pub const TLS: u8 = 5;
/// Interrupted by Ctrl-C or SIGTERM.
pub const INTERRUPTED: u8 = 130;
/// `history check`: a change straddles the threshold (neither clearly within nor beyond it).
pub const INCONCLUSIVE: u8 = 6;
