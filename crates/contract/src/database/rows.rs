//! `/db`, `/queries` and `/updates`: status, `Content-Type`, the exact JSON shape, N and its
//! clamping, and every row compared with the `world` table verify read itself (before the
//! requests for reads; after them for updates, with the numbers before to see they changed).

use super::{clamp_queries, Referee, World, MAX_QUERIES, NUMBERS, WORLD_IDS};
use crate::diff::{quote, Diff};
use crate::http::{get, get_request, Conn, Dial, Response};
use crate::Check;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

/// `/db` requests of its check.
pub const DB_REQUESTS: usize = 20;
/// N of the `/queries` and `/updates` value checks.
pub const N: usize = 20;
/// Row mismatches shown in full before the rest are counted.
const SHOWN: usize = 3;

/// The `queries` values of the clamping checks: (query string, N it means).
pub fn clamp_cases() -> Vec<(&'static str, usize)> {
    let raw = [
        "?queries=0",
        "?queries=foo",
        "?queries=",
        "",
        "?queries=501",
        "?queries=99999999999",
        "?queries=-3",
    ];
    raw.into_iter()
        .map(|q| (q, clamp_queries(q.strip_prefix("?queries="))))
        .collect()
}

/// One `world` row as a server returned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// `id`.
    pub id: i32,
    /// `randomNumber`.
    pub number: i32,
}

/// `GET /db`, [`DB_REQUESTS`] times on one keep-alive connection: a JSON object each time,
/// the row as it is in the table, and not the same id every time.
pub fn check_db(addr: SocketAddr, world: &World) -> Check {
    let name = format!("GET /db, {DB_REQUESTS} times: rows of the table, random ids");
    let mut conn = match Conn::connect(addr) {
        Ok(c) => c,
        Err(e) => return Check::new(name, vec![Diff::error("connect", "a connection", &e)]),
    };
    let mut rows = Vec::new();
    for i in 1..=DB_REQUESTS {
        let got = conn
            .send(&get_request("/db", &addr.to_string(), false))
            .and_then(|()| conn.read_response());
        let at = format!("request {i} of {DB_REQUESTS}");
        match got.map_err(|e| vec![Diff::error("response", "200 /db", &e)]) {
            Ok(r) => match json_rows(&r, Shape::Object) {
                Ok(mut one) => rows.append(&mut one),
                Err(d) => return Check::new(name, prefixed(d, &at)),
            },
            Err(d) => return Check::new(name, prefixed(d, &at)),
        }
    }
    let mut diffs = compare_with_table(&rows, world, "read");
    diffs.extend(spread(&rows));
    Check::new(name, diffs)
}

/// `/queries?queries=20` (N rows of the table, random ids), then each clamping case.
pub fn check_queries(addr: SocketAddr, world: &World) -> Vec<Check> {
    let mut out = Vec::new();
    let path = format!("/queries?queries={N}");
    let name = format!("GET {path}: {N} rows of the table, random ids");
    out.push(Check::new(
        name,
        match fetch_rows(addr, &path, N) {
            Ok(rows) => {
                let mut d = compare_with_table(&rows, world, "read");
                d.extend(spread(&rows));
                d
            }
            Err(d) => d,
        },
    ));
    for (q, n) in clamp_cases() {
        let path = format!("/queries{q}");
        let diffs = match fetch_rows(addr, &path, n) {
            Ok(rows) => compare_with_table(&rows, world, "read"),
            Err(d) => d,
        };
        out.push(Check::new(clamp_name(&path, n), diffs));
    }
    out
}

/// `/updates?queries=20` with the table read before and after (the returned numbers are in the
/// table now, and most of them changed), then the clamping cases `0`, `foo`, `501` and
/// `99999999999`.
pub fn check_updates(addr: SocketAddr, referee: &mut dyn Referee) -> Vec<Check> {
    let path = format!("/updates?queries={N}");
    let name = format!("GET {path}: {N} rows written to the table");
    let mut out = vec![Check::new(
        name,
        update_diffs(addr, &path, N, referee, true),
    )];
    for (q, n) in clamp_cases() {
        if [
            "?queries=0",
            "?queries=foo",
            "?queries=501",
            "?queries=99999999999",
        ]
        .contains(&q)
        {
            let path = format!("/updates{q}");
            let diffs = update_diffs(addr, &path, n, referee, false);
            out.push(Check::new(clamp_name(&path, n), diffs));
        }
    }
    out
}

fn clamp_name(path: &str, n: usize) -> String {
    let rows = if n == 1 { "row" } else { "rows" };
    format!("GET {path} -> {n} {rows}")
}

/// One update request with the table read around it; `changed` also asks that most numbers
/// changed (more than half of the rows: a new random number equals the old one once in 10,000),
/// so a server that writes one row of 20 and returns the others as read fails.
fn update_diffs(
    addr: SocketAddr,
    path: &str,
    n: usize,
    referee: &mut dyn Referee,
    changed: bool,
) -> Vec<Diff> {
    let table = |r: &mut dyn Referee, when: &str| {
        r.world().map_err(|e| {
            vec![Diff::new(
                "database",
                format!("the world table {when}"),
                e.to_string(),
            )]
        })
    };
    let before = match table(referee, "before the request") {
        Ok(w) => w,
        Err(d) => return d,
    };
    let rows = match fetch_rows(addr, path, n) {
        Ok(rows) => rows,
        Err(d) => return d,
    };
    let after = match table(referee, "after the request") {
        Ok(w) => w,
        Err(d) => return d,
    };
    let mut diffs = compare_with_table(&rows, &after, "written");
    let kept = rows
        .iter()
        .filter(|r| before.get(&r.id) == Some(&r.number))
        .count();
    if changed && diffs.is_empty() && kept * 2 >= rows.len() && rows.len() > 1 {
        diffs.push(Diff::new(
            "randomNumber",
            format!(
                "new random numbers written (most of the {} rows change)",
                rows.len()
            ),
            format!(
                "{kept} of {} rows kept the number they had (rows not updated?)",
                rows.len()
            ),
        ));
    }
    diffs
}

/// GET `path` on a new connection; its rows when the status, type, shape and count are right.
pub fn fetch_rows(addr: SocketAddr, path: &str, n: usize) -> Result<Vec<Row>, Vec<Diff>> {
    let r = get(Dial::tcp(addr), path)
        .map_err(|e| vec![Diff::error("response", format!("200 {path}"), &e)])?;
    let rows = json_rows(&r, Shape::Array)?;
    if rows.len() != n {
        return Err(vec![Diff::new(
            "rows",
            format!("{n} (queries clamped to 1–{MAX_QUERIES})"),
            rows.len().to_string(),
        )]);
    }
    Ok(rows)
}

/// What the body must be: one row object (`/db`) or an array of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{"id":…,"randomNumber":…}`.
    Object,
    /// `[{"id":…,"randomNumber":…}, …]`.
    Array,
}

/// Status 200, `application/json`, and the rows of the body in `shape`.
pub fn json_rows(r: &Response, shape: Shape) -> Result<Vec<Row>, Vec<Diff>> {
    let mut diffs = Vec::new();
    if r.status != 200 {
        diffs.push(Diff::new("status", "200", r.status.to_string()));
    }
    match r.media_type() {
        Some(m) if m == "application/json" => {}
        got => diffs.push(Diff::new(
            "Content-Type",
            "application/json",
            got.unwrap_or_else(|| "no Content-Type header".into()),
        )),
    }
    if !diffs.is_empty() {
        return Err(diffs);
    }
    let v: Value = serde_json::from_slice(&r.body).map_err(|e| {
        let start = quote(&r.body[..r.body.len().min(60)]);
        vec![Diff::new(
            "JSON body",
            "JSON",
            format!("{start} (not JSON: {e})"),
        )]
    })?;
    let one = |v: &Value, at: &str| row(v).map_err(|got| Diff::new(format!("{at}shape"), ROW, got));
    match (shape, &v) {
        (Shape::Object, Value::Object(_)) => one(&v, "").map(|r| vec![r]).map_err(|d| vec![d]),
        (Shape::Array, Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| one(item, &format!("row {}: ", i + 1)))
            .collect::<Result<Vec<Row>, Diff>>()
            .map_err(|d| vec![d]),
        (Shape::Object, _) => Err(vec![Diff::new("shape", ROW, excerpt(&v))]),
        (Shape::Array, _) => Err(vec![Diff::new("shape", format!("[{ROW}, …]"), excerpt(&v))]),
    }
}

const ROW: &str = r#"{"id":<integer>,"randomNumber":<integer>}"#;

fn excerpt(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// One row object: exactly the keys `id` and `randomNumber`, both integers.
fn row(v: &Value) -> Result<Row, String> {
    let Value::Object(m) = v else {
        return Err(excerpt(v));
    };
    let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
    keys.sort_unstable();
    if keys != ["id", "randomNumber"] {
        return Err(format!("keys {keys:?} in {}", excerpt(v)));
    }
    let int = |k: &str| {
        m[k].as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| format!("{k} is {} (not an integer)", m[k]))
    };
    Ok(Row {
        id: int("id")?,
        number: int("randomNumber")?,
    })
}

/// Every row as the table has it (a row's id repeated in one response may carry any of the
/// numbers the response gives it: the last write wins).
pub fn compare_with_table(rows: &[Row], world: &World, verb: &str) -> Vec<Diff> {
    let mut given: BTreeMap<i32, BTreeSet<i32>> = BTreeMap::new();
    for r in rows {
        given.entry(r.id).or_default().insert(r.number);
    }
    let mut wrong = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let at = format!("row {} (id {})", i + 1, r.id);
        if !WORLD_IDS.contains(&r.id) {
            wrong.push(Diff::new(at, "an id in 1–10,000", r.id.to_string()));
        } else if !NUMBERS.contains(&r.number) {
            wrong.push(Diff::new(
                at,
                "randomNumber in 1–10,000",
                r.number.to_string(),
            ));
        } else if !given[&r.id].contains(&world[&r.id]) {
            let hint = match verb {
                "read" => "made up?",
                "changed" => "stale: answered from a cache?",
                _ => "not written?",
            };
            wrong.push(Diff::new(
                format!("{at}: randomNumber"),
                format!("{} (the table's, {verb} by verify)", world[&r.id]),
                format!("{} ({hint})", r.number),
            ));
        }
    }
    let more = wrong.len().saturating_sub(SHOWN);
    wrong.truncate(SHOWN);
    if more > 0 {
        wrong.push(Diff::new(
            "rows",
            "every row as in the table",
            format!("{more} more differ"),
        ));
    }
    wrong
}

/// Random ids: at least half of the rows have distinct ids (uniform draws from 10,000 repeat
/// rarely; the same id every time is not random).
pub fn spread(rows: &[Row]) -> Option<Diff> {
    let distinct = rows.iter().map(|r| r.id).collect::<BTreeSet<_>>().len();
    (rows.len() > 1 && distinct * 2 < rows.len()).then(|| {
        Diff::new(
            "ids",
            format!(
                "random ids (at least {} distinct of {})",
                rows.len().div_ceil(2),
                rows.len()
            ),
            format!("{distinct} distinct"),
        )
    })
}

fn prefixed(diffs: Vec<Diff>, at: &str) -> Vec<Diff> {
    crate::shapes::prefixed(diffs, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(ctype: &str, body: &str) -> Response {
        Response {
            version: "HTTP/1.1".into(),
            status: 200,
            headers: vec![("Content-Type".into(), ctype.into())],
            body: body.as_bytes().to_vec(),
            close_delimited: false,
        }
    }

    fn world() -> World {
        (1..=10_000).map(|i| (i, (i * 7) % 10_000 + 1)).collect()
    }

    #[test]
    fn a_row_object_with_exact_keys_and_integers_parses() {
        let r = resp("application/json", r#"{"id":3,"randomNumber":22}"#);
        assert_eq!(
            json_rows(&r, Shape::Object).unwrap(),
            vec![Row { id: 3, number: 22 }]
        );
    }

    #[test]
    fn wrong_keys_strings_and_floats_are_shape_errors() {
        for body in [
            r#"{"id":3,"randomnumber":22}"#,
            r#"{"id":"3","randomNumber":22}"#,
            r#"{"id":3,"randomNumber":22.5}"#,
            r#"{"id":3,"randomNumber":22,"extra":1}"#,
            r#"[{"id":3,"randomNumber":22}]"#,
        ] {
            let d = json_rows(&resp("application/json", body), Shape::Object).unwrap_err();
            assert_eq!(d[0].what, "shape", "{body}");
        }
    }

    #[test]
    fn a_queries_answer_must_be_an_array_even_for_one_row() {
        let r = resp("application/json", r#"{"id":3,"randomNumber":22}"#);
        assert_eq!(json_rows(&r, Shape::Array).unwrap_err()[0].what, "shape");
    }

    #[test]
    fn the_wrong_media_type_is_reported() {
        let r = resp("text/plain", r#"{"id":3,"randomNumber":22}"#);
        assert_eq!(
            json_rows(&r, Shape::Object).unwrap_err()[0].what,
            "Content-Type"
        );
    }

    #[test]
    fn a_made_up_number_differs_from_the_table() {
        let w = world();
        let rows = [
            Row {
                id: 5,
                number: w[&5],
            },
            Row {
                id: 6,
                number: w[&6] + 1,
            },
        ];
        let d = compare_with_table(&rows, &w, "read");
        assert_eq!(d.len(), 1);
        assert!(d[0].render().contains("made up?"), "{}", d[0].render());
    }

    #[test]
    fn many_wrong_rows_are_summarised_after_three() {
        let w = world();
        let rows: Vec<Row> = (1..=10)
            .map(|id| Row {
                id,
                number: w[&id] % 10_000 + 1,
            })
            .collect();
        let d = compare_with_table(&rows, &w, "read");
        assert_eq!(d.len(), 4);
        assert_eq!(d[3].got, "7 more differ");
    }

    #[test]
    fn an_id_out_of_range_is_reported() {
        let d = compare_with_table(&[Row { id: 0, number: 1 }], &world(), "read");
        assert_eq!(d[0].expected, "an id in 1–10,000");
    }

    #[test]
    fn the_same_id_every_time_is_not_random() {
        let same = vec![Row { id: 1, number: 1 }; 20];
        assert!(spread(&same).is_some());
        let varied: Vec<Row> = (1..=20).map(|id| Row { id, number: 1 }).collect();
        assert!(spread(&varied).is_none());
    }

    #[test]
    fn the_clamping_cases_cover_zero_text_empty_missing_too_many_and_negative() {
        let cases = clamp_cases();
        assert_eq!(cases.iter().filter(|(_, n)| *n == 1).count(), 5);
        assert!(cases.contains(&("?queries=501", 500)));
        assert!(cases.contains(&("?queries=99999999999", 500)));
        assert_eq!(
            clamp_name("/queries?queries=501", 500),
            "GET /queries?queries=501 -> 500 rows"
        );
    }
}
