//! What a database lap records about its database: where it ran, the pool the server was given,
//! and what `pg_stat_statements` counted during the measured load.

use serde::{Deserialize, Serialize};

/// The database of a lap whose scenario needs one (`db`, `queries`, `fortunes`, `updates`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DatabaseLap {
    /// Where it ran: `local` or the host's name (`--db-host`).
    pub host: String,
    /// The CPUs it was pinned to (empty: not pinned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<usize>,
    /// Statements executed during the measured load (`pg_stat_statements` calls, the server's
    /// role only).
    pub statements: u64,
    /// Rows those statements read or wrote.
    pub rows: u64,
    /// `statements` per request the load completed.
    pub statements_per_request: Option<f64>,
    /// `rows` per second of the measured load.
    pub rows_per_s: Option<f64>,
}

impl DatabaseLap {
    /// The figures of a delta of `statements` and `rows` over a load of `requests` in `wall_s`.
    pub fn measured(
        host: String,
        cpus: Vec<usize>,
        (statements, rows): (u64, u64),
        requests: Option<u64>,
        wall_s: f64,
    ) -> DatabaseLap {
        DatabaseLap {
            host,
            cpus,
            statements,
            rows,
            statements_per_request: requests
                .filter(|&n| n > 0)
                .map(|n| statements as f64 / n as f64),
            rows_per_s: (wall_s > 0.0).then(|| rows as f64 / wall_s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_gives_statements_per_request_and_rows_per_second() {
        let d = DatabaseLap::measured("local".into(), vec![0], (2000, 2000), Some(1000), 2.0);
        assert_eq!(d.statements_per_request, Some(2.0));
        assert_eq!(d.rows_per_s, Some(1000.0));
        let none = DatabaseLap::measured("local".into(), vec![], (5, 5), Some(0), 0.0);
        assert_eq!((none.statements_per_request, none.rows_per_s), (None, None));
    }
}
