//! The database workloads (`/db`, `/queries`, `/fortunes`, `/updates`) on tokio-postgres with a
//! deadpool-postgres pool of `DATABASE_POOL` connections. Statements are prepared once per
//! connection (`prepare_cached`); the reads of one request are pipelined on its connection,
//! each query with its own Sync (tokio-postgres sends Bind/Execute/Sync per query).

use askama::Template;
use bytes::Bytes;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use futures_util::future::try_join_all;
use hyper::StatusCode;
use serde::Serialize;
use tokio_postgres::types::ToSql;
use tokio_postgres::NoTls;

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
const MAX_QUERIES: usize = 500;
const DEFAULT_POOL: usize = 16;
const JSON: &str = "application/json";
const HTML_UTF8: &str = "text/html; charset=utf-8";

#[derive(Serialize, Clone, Copy)]
struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

struct Fortune {
    id: i32,
    message: String,
}

#[derive(Template)]
#[template(path = "fortunes.html")]
struct FortunesPage<'a> {
    fortunes: &'a [Fortune],
}

/// Any database, template or serialisation failure: the request answers 500.
pub struct DbError(pub String);

impl<E: std::fmt::Display> From<E> for DbError {
    fn from(e: E) -> Self {
        DbError(e.to_string())
    }
}

type DbResult<T> = Result<T, DbError>;

/// The pool: `Clone` is an `Arc` clone.
#[derive(Clone)]
pub struct Db {
    pool: Pool,
}

fn random_id() -> i32 {
    rand::random_range(1..=10_000)
}

/// N from `queries=N`: missing, empty or not a number means 1; clamped to 1..=500.
fn query_count(raw: Option<&str>) -> usize {
    let value = raw
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("queries="));
    match value.and_then(|v| v.parse::<i64>().ok()) {
        Some(n) => n.clamp(1, MAX_QUERIES as i64) as usize,
        None => 1,
    }
}

async fn read_world(client: &Object, id: i32) -> DbResult<World> {
    let stmt = client.prepare_cached(SELECT_WORLD).await?;
    let row = client.query_one(&stmt, &[&id]).await?;
    Ok(World {
        id: row.get(0),
        random_number: row.get(1),
    })
}

/// N rows, each read by its own SELECT; the queries are pipelined on one connection.
async fn read_worlds(client: &Object, n: usize) -> DbResult<Vec<World>> {
    try_join_all((0..n).map(|_| read_world(client, random_id()))).await
}

/// One batched statement for `n` distinct rows:
/// `UPDATE world SET randomnumber = v.r FROM (VALUES ($1::int, $2::int), …) AS v(id, r) WHERE …`.
fn batched_update_sql(n: usize) -> String {
    let values: Vec<String> = (0..n)
        .map(|i| format!("(${}::int, ${}::int)", 2 * i + 1, 2 * i + 2))
        .collect();
    format!(
        "UPDATE world SET randomnumber = v.r FROM (VALUES {}) AS v(id, r) WHERE world.id = v.id",
        values.join(", ")
    )
}

impl Db {
    /// The pool, when `DATABASE_URL` is set: `DATABASE_POOL` connections at most (default 16),
    /// opened on first use. Without `DATABASE_URL` the server has no database routes.
    pub fn from_env() -> Option<Db> {
        let url = std::env::var("DATABASE_URL").ok()?;
        let config: tokio_postgres::Config = url
            .parse()
            .unwrap_or_else(|e| panic!("DATABASE_URL is not a PostgreSQL URL: {e}"));
        let size = std::env::var("DATABASE_POOL")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(DEFAULT_POOL)
            .max(1);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size)
            .build()
            .expect("a pool with a runtime builds");
        println!("rust/hyper: database pool of {size} connections");
        Some(Db { pool })
    }

    /// Opens one connection at start, so a wrong `DATABASE_URL` shows in the log at once.
    pub async fn check(&self) {
        if let Err(e) = self.pool.get().await {
            eprintln!("rust/hyper: cannot connect to DATABASE_URL: {e}");
        }
    }

    /// Answers one of the four database paths: status, media type, body.
    pub async fn handle(
        &self,
        path: &str,
        query: Option<&str>,
    ) -> (StatusCode, &'static str, Bytes) {
        let result = match path {
            "/db" => self.db().await.map(|b| (JSON, b)),
            "/queries" => self.queries(query_count(query)).await.map(|b| (JSON, b)),
            "/updates" => self.updates(query_count(query)).await.map(|b| (JSON, b)),
            _ => self.fortunes().await.map(|b| (HTML_UTF8, b)),
        };
        match result {
            Ok((media, body)) => (StatusCode::OK, media, body),
            Err(DbError(e)) => {
                eprintln!("rust/hyper: database error on {path}: {e}");
                let body = Bytes::from_static(b"database error");
                (StatusCode::INTERNAL_SERVER_ERROR, "text/plain", body)
            }
        }
    }

    async fn db(&self) -> DbResult<Bytes> {
        let client = self.pool.get().await?;
        let world = read_world(&client, random_id()).await?;
        Ok(serde_json::to_vec(&world)?.into())
    }

    async fn queries(&self, n: usize) -> DbResult<Bytes> {
        let client = self.pool.get().await?;
        let worlds = read_worlds(&client, n).await?;
        Ok(serde_json::to_vec(&worlds)?.into())
    }

    async fn fortunes(&self) -> DbResult<Bytes> {
        let client = self.pool.get().await?;
        let stmt = client.prepare_cached(SELECT_FORTUNES).await?;
        let mut rows: Vec<Fortune> = client
            .query(&stmt, &[])
            .await?
            .iter()
            .map(|row| Fortune {
                id: row.get(0),
                message: row.get(1),
            })
            .collect();
        rows.push(Fortune {
            id: 0,
            message: "Additional fortune added at request time.".to_string(),
        });
        rows.sort_unstable_by(|a, b| a.message.cmp(&b.message));
        Ok(FortunesPage { fortunes: &rows }.render()?.into())
    }

    /// Reads N rows one by one (pipelined), gives each a new number and writes them back in
    /// one batched UPDATE, ids sorted (so concurrent requests lock rows in the same order) and
    /// distinct (a row drawn twice gets one new number, shown in both places).
    async fn updates(&self, n: usize) -> DbResult<Bytes> {
        let client = self.pool.get().await?;
        let mut worlds = read_worlds(&client, n).await?;
        let mut changes: Vec<(i32, i32)> = worlds.iter().map(|w| (w.id, random_id())).collect();
        changes.sort_by_key(|&(id, _)| id);
        changes.dedup_by_key(|&mut (id, _)| id);
        for world in &mut worlds {
            let at = changes.binary_search_by_key(&world.id, |&(id, _)| id);
            world.random_number = changes[at.expect("every id is in changes")].1;
        }
        let stmt = client
            .prepare_cached(&batched_update_sql(changes.len()))
            .await?;
        let params: Vec<&(dyn ToSql + Sync)> = changes
            .iter()
            .flat_map(|(id, number)| [id as _, number as _])
            .collect();
        client.execute(&stmt, &params).await?;
        Ok(serde_json::to_vec(&worlds)?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_count_clamps_and_defaults_to_one() {
        assert_eq!(query_count(None), 1);
        assert_eq!(query_count(Some("queries=")), 1);
        assert_eq!(query_count(Some("queries=foo")), 1);
        assert_eq!(query_count(Some("queries=0")), 1);
        assert_eq!(query_count(Some("queries=20")), 20);
        assert_eq!(query_count(Some("x=1&queries=501")), 500);
    }

    #[test]
    fn fortunes_page_escapes_html() {
        let rows = [Fortune {
            id: 11,
            message: "<script>\"&'".to_string(),
        }];
        let html = FortunesPage { fortunes: &rows }.render().unwrap();
        assert!(
            html.contains("<td>11</td><td>&#60;script&#62;&#34;&#38;&#39;</td>"),
            "{html}"
        );
    }
}
