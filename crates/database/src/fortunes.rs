//! The `fortune` table as verify reads it to judge `/fortunes` (as the referee's role, like the
//! other reads of ours).

use crate::{DbError, Result};
use postgres::Client;

/// Every row of `fortune` as (id, message), ordered by id (one statement; not one of a server's).
pub fn read_fortunes(client: &mut Client) -> Result<Vec<(i32, String)>> {
    let rows = client
        .query("SELECT id, message FROM fortune ORDER BY id", &[])
        .map_err(|source| DbError::Query {
            url: "fortune".into(),
            source,
        })?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}
