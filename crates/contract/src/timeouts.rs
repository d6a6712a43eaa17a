//! The timeouts every check's connection shares (plain, TLS or echo).

use std::time::Duration;

/// Timeout of every connect, read and write.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);
