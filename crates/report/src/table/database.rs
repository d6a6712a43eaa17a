//! The database table: for each load profile of database laps, one row per server x scenario
//! with req/s, p99 latency, rows/s, the server's and the database's CPU per request, the
//! statements per request `pg_stat_statements` counted, and the pool size. And its CSV form,
//! every profile in one grid.

use super::{Align, Cell, Grid};
use crate::text::grouped;
use serverbench_analysis::database::DatabaseRow;
use serverbench_analysis::summary::Summary;

/// (machine name, heading, alignment) of each column; `profile` and `floor` only in the CSV,
/// `db on` in the tables only when the database ran on another host.
const COLUMNS: [(&str, &str, Align); 14] = [
    ("server", "server", Align::Left),
    ("scenario", "scenario", Align::Left),
    ("profile", "profile", Align::Left),
    ("pool", "pool", Align::Right),
    ("rps", "req/s", Align::Right),
    ("floor_selects_per_s", "floor/s", Align::Right),
    ("of_floor", "of floor", Align::Right),
    ("p99_ms", "p99 ms", Align::Right),
    ("rows_per_s", "rows/s", Align::Right),
    ("server_cpu_us_per_req", "srv µs", Align::Right),
    ("db_cpu_us_per_req", "db µs", Align::Right),
    ("db_cpu_share", "db CPU", Align::Right),
    ("statements_per_req", "stmt/req", Align::Right),
    ("db_host", "db on", Align::Left),
];

/// Columns of the CSV only.
const CSV_ONLY: [&str; 2] = ["profile", "floor_selects_per_s"];

fn cells(r: &DatabaseRow) -> [Cell; 14] {
    let one = |v: Option<f64>| Cell::number(v, |v| format!("{v:.1}"));
    let int = |v: Option<f64>| Cell::number(v, grouped);
    [
        Cell::plain(&r.server),
        Cell::plain(&r.scenario),
        Cell::plain(&r.profile),
        Cell::number(r.pool.map(f64::from), grouped),
        int(r.rps),
        int(r.floor_selects_per_s),
        Cell::number(r.of_floor, |v| format!("{v:.2}x")),
        Cell::number(r.p99_us.map(|us| us / 1000.0), |v| format!("{v:.2}")),
        int(r.rows_per_s),
        one(r.server_cpu_us_per_request),
        one(r.database_cpu_us_per_request),
        Cell::number(r.db_cpu_share.map(|f| f * 100.0), |v| format!("{v:.0}%")),
        Cell::number(r.statements_per_request, |v| format!("{v:.2}")),
        Cell::plain(r.db_host.clone().unwrap_or_default()),
    ]
}

/// CSV columns that came after the others: appended there, so the earlier ones keep their places.
const CSV_APPENDED: [&str; 3] = ["floor_selects_per_s", "of_floor", "db_cpu_share"];

fn grid(rows: &[&DatabaseRow], keep: impl Fn(&str) -> bool) -> Grid {
    grid_of(rows, super::kept(&COLUMNS, keep))
}

fn grid_of(rows: &[&DatabaseRow], shown: Vec<usize>) -> Grid {
    super::listed_grid(&COLUMNS, &shown, rows, |r| cells(r), |_| None)
}

/// One table per load profile of database laps, with its heading; none without them.
pub fn database_tables(summary: &Summary) -> Vec<(String, Grid)> {
    let mut profiles: Vec<&str> = Vec::new();
    for r in &summary.database {
        if !profiles.contains(&r.profile.as_str()) {
            profiles.push(&r.profile);
        }
    }
    profiles
        .into_iter()
        .map(|p| {
            let rows: Vec<&DatabaseRow> =
                summary.database.iter().filter(|r| r.profile == p).collect();
            let heading = format!("Database · {p}: each request's queries, per server");
            // `db on` says something only when the database ran elsewhere (`--db-host`).
            let local = rows
                .iter()
                .all(|r| r.db_host.as_deref().is_none_or(|h| h == "local"));
            let hidden = |k: &str| CSV_ONLY.contains(&k) || (local && k == "db_host");
            (heading, grid(&rows, |k| !hidden(k)))
        })
        .collect()
}

/// Every database row for CSV; `None` without database laps.
pub fn database_csv(summary: &Summary) -> Option<Grid> {
    let rows: Vec<&DatabaseRow> = summary.database.iter().collect();
    let appended = |i: &usize| CSV_APPENDED.contains(&COLUMNS[*i].0);
    let (last, first): (Vec<usize>, Vec<usize>) = (0..COLUMNS.len()).partition(appended);
    (!rows.is_empty()).then(|| grid_of(&rows, first.into_iter().chain(last).collect()))
}

/// What the database table's columns mean (shown under it), and the floors the `/db` rows
/// are read against.
pub fn database_legend(summary: &Summary) -> Vec<String> {
    if summary.database.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![
        "Database: medians over the laps; rows/s read or written by the server's statements; \
         srv µs and db µs: CPU of the server's and the database's process trees per request; \
         db CPU: the database's share of the server-side CPU (db / (server + db)); \
         stmt/req: statements pg_stat_statements counted per request (1 for db, N for \
         queries-N); pool: DATABASE_POOL given to the server."
            .to_string(),
    ];
    let mut floors: Vec<&DatabaseRow> = Vec::new();
    for r in summary
        .database
        .iter()
        .filter(|r| r.floor_selects_per_s.is_some())
    {
        if !floors.iter().any(|f| f.floor_sessions == r.floor_sessions) {
            floors.push(r);
        }
    }
    floors.sort_by_key(|f| f.floor_sessions);
    if !floors.is_empty() {
        let each: Vec<String> = floors.iter().map(|r| floor_text(r)).collect();
        lines.push(format!(
            "of floor: a db row's req/s as a share of a reference rate, not a ceiling: the \
             database's own, pgbench asking /db's select alone, one per round trip, with as many \
             sessions as the pool lets the server use, after each round of laps (the median of \
             each lap against its round's floor); a driver that pipelines its queries can pass \
             1.00x, and pgbench's pipeline mode (20 selects sent before their answers) is given \
             beside it: {}.",
            each.join(", ")
        ));
    }
    lines
}

/// `27,525 selects/s at 16 sessions (median of 5 rounds, 25,100–28,010)`, then
/// `; pipelined 96,300 selects/s` when it was measured.
fn floor_text(r: &DatabaseRow) -> String {
    let plain = plain_floor_text(r);
    match r.floor_pipelined_selects_per_s {
        Some(p) => format!("{plain}; pipelined {} selects/s", grouped(p)),
        None => plain,
    }
}

fn plain_floor_text(r: &DatabaseRow) -> String {
    let rate = grouped(r.floor_selects_per_s.unwrap_or_default());
    let sessions = r.floor_sessions.unwrap_or_default();
    match r.floor_range.filter(|_| r.floor_rounds > 1) {
        Some((low, high)) => format!(
            "{rate} selects/s at {sessions} sessions (median of {} rounds, {}–{})",
            r.floor_rounds,
            grouped(low),
            grouped(high)
        ),
        None => format!("{rate} selects/s at {sessions} sessions"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(server: &str, profile: &str) -> DatabaseRow {
        DatabaseRow {
            server: server.into(),
            scenario: "db".into(),
            profile: profile.into(),
            connections: 16,
            queries: None,
            pool: Some(16),
            db_host: Some("local".into()),
            rps: Some(12_345.0),
            p99_us: Some(2_500.0),
            rows_per_s: Some(12_345.0),
            server_cpu_us_per_request: Some(40.0),
            database_cpu_us_per_request: Some(60.0),
            statements_per_request: Some(1.0),
            db_cpu_share: Some(0.6),
            floor_selects_per_s: Some(18_600.0),
            floor_sessions: Some(16),
            floor_rounds: 3,
            floor_range: Some((17_000.0, 19_000.0)),
            floor_pipelined_selects_per_s: Some(96_300.0),
            of_floor: Some(0.66),
            laps: 3,
        }
    }

    #[test]
    fn the_floor_note_gives_the_pipelined_rate_beside_the_plain_one() {
        assert_eq!(
            floor_text(&row("a", "c16")),
            "18,600 selects/s at 16 sessions (median of 3 rounds, 17,000–19,000); pipelined \
             96,300 selects/s"
        );
        let mut old = row("a", "c16");
        old.floor_pipelined_selects_per_s = None;
        assert!(!floor_text(&old).contains("pipelined"));
    }

    #[test]
    fn each_profile_of_database_laps_gets_a_table_with_statements_per_request() {
        let mut summary = serverbench_analysis::summary::summarize(&[], None);
        summary.database = vec![row("a", "c16"), row("b", "c16"), row("a", "c64")];
        let tables = database_tables(&summary);
        assert_eq!(tables.len(), 2);
        let (heading, g) = &tables[0];
        assert!(heading.contains("c16"), "{heading}");
        assert_eq!(g.rows.len(), 2);
        let labels: Vec<&str> = g.columns.iter().map(|c| c.label.as_str()).collect();
        assert!(
            labels.contains(&"stmt/req") && labels.contains(&"db µs"),
            "{labels:?}"
        );
        assert!(labels.contains(&"of floor") && labels.contains(&"db CPU"));
        assert!(!labels.contains(&"profile") && !labels.contains(&"floor/s"));
        let legend = database_legend(&summary).join("\n");
        assert!(
            legend.contains("18,600 selects/s at 16 sessions"),
            "{legend}"
        );
        assert_eq!(database_csv(&summary).unwrap().rows.len(), 3);
    }

    #[test]
    fn a_run_without_database_laps_has_no_database_table() {
        let summary = serverbench_analysis::summary::summarize(&[], None);
        assert!(database_tables(&summary).is_empty() && database_csv(&summary).is_none());
    }
}
