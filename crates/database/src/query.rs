//! Small reads of the database for the harness and verify: a connection, a set of world rows,
//! and resetting `pg_stat_statements`. Run them as the referee's role
//! ([`REFEREE_USER`](crate::REFEREE_USER)): snapshots leave that role's statements out.

use crate::{DbError, DbUrl, Result};
use postgres::{Client, NoTls};

/// A row of `world`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct World {
    /// `id` (1–10,000).
    pub id: i32,
    /// `randomnumber` (1–10,000).
    pub random_number: i32,
}

/// A connection to `url` (no TLS: loopback or a test bed's private network).
pub fn connect(url: &DbUrl) -> Result<Client> {
    url.client_config()
        .connect(NoTls)
        .map_err(|source| DbError::Query {
            url: url.to_string(),
            source,
        })
}

fn query_err(client_url: &str) -> impl FnOnce(postgres::Error) -> DbError + '_ {
    move |source| DbError::Query {
        url: client_url.to_owned(),
        source,
    }
}

/// The `world` rows of `ids` that exist, ordered by id (one statement; not one of a server's).
pub fn read_worlds(client: &mut Client, ids: &[i32]) -> Result<Vec<World>> {
    let rows = client
        .query(
            "SELECT w.id, w.randomnumber FROM world AS w \
             JOIN unnest($1::int4[]) AS u(id) ON u.id = w.id ORDER BY w.id",
            &[&ids],
        )
        .map_err(query_err("world"))?;
    Ok(rows
        .iter()
        .map(|r| World {
            id: r.get(0),
            random_number: r.get(1),
        })
        .collect())
}

/// Empties `pg_stat_statements` (the role is the cluster's superuser, so it may).
pub fn reset_statements(client: &mut Client) -> Result<()> {
    client
        .batch_execute("SELECT pg_stat_statements_reset()")
        .map_err(query_err("pg_stat_statements_reset()"))
}
