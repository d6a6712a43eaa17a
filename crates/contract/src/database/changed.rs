//! Answers against the database as it is now: verify changes the tables behind the server's
//! back, between requests, and requires the next answers to show it. Every `world` row gets a
//! new random number before `/db` and `/queries` are asked again ([`ROUNDS`] times); a fortune
//! is added and another changed before `/fortunes` is asked again. A server that answers from a
//! cache (even one that still sends a decoy `SELECT` per row, so the audit's counts match)
//! returns the old numbers or the old page, and fails here.

use super::rows::{compare_with_table, fetch_rows, json_rows, Row, Shape, N};
use super::{fortunes, Referee, World};
use crate::diff::Diff;
use crate::http::{get, Dial};
use crate::Check;
use serverbench_model::Feature;
use std::net::SocketAddr;

/// Times the `world` table is changed, each followed by the requests.
pub const ROUNDS: usize = 3;
/// `/db` requests after each change.
const DB_REQUESTS: usize = 3;

/// The checks of the declared read features after changes of the tables.
pub fn check(addr: SocketAddr, declared: &[Feature], referee: &mut dyn Referee) -> Vec<Check> {
    let mut out = Vec::new();
    let db = declared.contains(&Feature::Db);
    let queries = declared.contains(&Feature::Queries);
    if db || queries {
        let mut asked = Vec::new();
        if db {
            asked.push("/db".to_owned());
        }
        if queries {
            asked.push(format!("/queries?queries={N}"));
        }
        let name = format!(
            "GET {} after verify changed every world row ({ROUNDS} times): the numbers as they \
             are now",
            asked.join(", ")
        );
        out.push(Check::new(name, world_rounds(addr, db, queries, referee)));
    }
    if declared.contains(&Feature::Fortunes) {
        let name =
            "GET /fortunes after verify added a fortune and changed one: the table as it is \
                    now";
        let diffs = match referee.change_fortunes() {
            Ok(table) => match get(Dial::tcp(addr), "/fortunes") {
                Ok(r) => fortunes::compare(&r, &table),
                Err(e) => vec![Diff::error("response", "200 /fortunes", &e)],
            },
            Err(e) => vec![Diff::new(
                "database",
                "fortune changed by verify",
                e.to_string(),
            )],
        };
        out.push(Check::new(name, diffs));
    }
    out
}

fn world_rounds(addr: SocketAddr, db: bool, queries: bool, referee: &mut dyn Referee) -> Vec<Diff> {
    for round in 1..=ROUNDS {
        let world = match referee.change_world() {
            Ok(w) => w,
            Err(e) => {
                return vec![Diff::new(
                    "database",
                    "world changed by verify",
                    e.to_string(),
                )]
            }
        };
        let at = format!("after change {round} of {ROUNDS}");
        let mut diffs = Vec::new();
        if db {
            diffs.extend(db_rows(addr, &world));
        }
        if queries && diffs.is_empty() {
            diffs.extend(
                match fetch_rows(addr, &format!("/queries?queries={N}"), N) {
                    Ok(rows) => compare_with_table(&rows, &world, "changed"),
                    Err(d) => d,
                },
            );
        }
        if !diffs.is_empty() {
            return crate::shapes::prefixed(diffs, &at);
        }
    }
    Vec::new()
}

fn db_rows(addr: SocketAddr, world: &World) -> Vec<Diff> {
    let mut rows: Vec<Row> = Vec::new();
    for _ in 0..DB_REQUESTS {
        match get(Dial::tcp(addr), "/db") {
            Ok(r) => match json_rows(&r, Shape::Object) {
                Ok(mut one) => rows.append(&mut one),
                Err(d) => return d,
            },
            Err(e) => return vec![Diff::error("response", "200 /db", &e)],
        }
    }
    compare_with_table(&rows, world, "changed")
}
