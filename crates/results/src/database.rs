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
    /// Statements executed during the measured load (`pg_stat_statements` calls of top-level
    /// statements, the round trips: serverbench's own role left out; records made before
    /// counted nested ones too).
    pub statements: u64,
    /// Rows those statements read or wrote.
    pub rows: u64,
    /// `statements` per request the load completed.
    pub statements_per_request: Option<f64>,
    /// `rows` per second of the measured load.
    pub rows_per_s: Option<f64>,
    /// Requests in flight when the load stopped, which the server still answered (their
    /// statements are counted): added to the load's requests for `statements_per_request`.
    /// Absent in older records (whose statements per request read a few percent high).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight_at_end: Option<u64>,
    /// The lap judged by the contract's statement rules at the N it ran (the query audit of
    /// `verify`, on the lap's requests): each difference, e.g. `single-row SELECTs on world (top
    /// level): expected 20,000 (±1,000), got PostgreSQL ran 1,000 (a cache?)`. Empty: within
    /// the margins (or a record made before laps were judged). A lap with any is left out of
    /// the ranks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub off_contract: Vec<String>,
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
            in_flight_at_end: None,
            off_contract: Vec::new(),
        }
    }
}

/// The database's floor at one concurrency (issue 22): what the run's database answered alone,
/// `pgbench -M prepared` asking `/db`'s select (one `world` row by id) from `clients` sessions,
/// the database on its lap CPUs, pgbench on the client CPUs: one select per round trip, and
/// in pipeline mode. A reference rate, not a ceiling: a server whose driver pipelines its
/// queries can pass the first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DatabaseFloor {
    /// pgbench's sessions: the most database connections a `/db` lap could use (its
    /// connections, at most its pool).
    pub clients: u32,
    /// pgbench's threads.
    pub threads: u32,
    /// The round of laps it followed (1-based: measured after every server's lap N, so the
    /// floors interleave with the laps).
    #[serde(default)]
    pub round: u32,
    /// Selects per second (pgbench's tps without the connection time).
    pub selects_per_s: f64,
    /// Selects completed.
    pub transactions: u64,
    /// Selects per second in pipeline mode (20 selects sent before their answers are read);
    /// absent in records made before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipelined_selects_per_s: Option<f64>,
    /// Seconds measured.
    pub duration_s: f64,
    /// The database's CPUs (empty: not pinned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub db_cpus: Vec<usize>,
    /// pgbench's CPUs (empty: not pinned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_cpus: Vec<usize>,
}

impl DatabaseFloor {
    /// The sessions of the floor a `/db` lap of `connections` with a pool of `pool` is read
    /// against, among those of `floors`: `min(connections, pool)`, else the nearest below, else
    /// the nearest.
    pub fn sessions_for_lap(
        floors: &[DatabaseFloor],
        connections: u32,
        pool: Option<u32>,
    ) -> Option<u32> {
        let want = pool.map_or(connections, |p| connections.min(p));
        let below = floors
            .iter()
            .map(|f| f.clients)
            .filter(|&c| c <= want)
            .max();
        below.or_else(|| {
            floors
                .iter()
                .map(|f| f.clients)
                .min_by_key(|c| c.abs_diff(want))
        })
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

    fn floor(clients: u32) -> DatabaseFloor {
        DatabaseFloor {
            clients,
            selects_per_s: f64::from(clients) * 1000.0,
            ..DatabaseFloor::default()
        }
    }

    #[test]
    fn a_db_lap_takes_the_floor_of_as_many_sessions_as_its_pool_lets_it_use() {
        let floors = [floor(16), floor(4), floor(64)];
        let of = |c, pool| DatabaseFloor::sessions_for_lap(&floors, c, pool);
        assert_eq!(of(256, Some(16)), Some(16));
        assert_eq!(of(16, Some(16)), Some(16));
        assert_eq!(of(8, Some(16)), Some(4));
        assert_eq!(of(2, Some(16)), Some(4));
        assert_eq!(of(256, None), Some(64));
        assert_eq!(DatabaseFloor::sessions_for_lap(&[], 16, Some(16)), None);
    }
}
