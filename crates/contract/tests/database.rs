//! verify's database checks against small servers of our own on a real PostgreSQL (a private
//! cluster started for this test on a port of its own, logging its statements as verify's
//! does): a correct server passes; each deliberately wrong one fails naming its cause: a cache,
//! an `IN (…)` batch, fortunes not escaped, updates skipped, rows made up, and the cheats a
//! referee that only counted statements let through: a write-through cache with decoy selects,
//! a fortunes page rendered once with a decoy read, verify's old comment, more connections
//! than the pool, several statements in one string, reads in one transaction, one row of 20
//! updated.
//!
//! PostgreSQL 15 must be installed (Debian's postgresql-15); without it the test fails and says
//! why, unless SERVERBENCH_SKIP_DB=1 is set (then it says it was skipped by that switch).

mod db_servers;

use db_servers::{database, start, Flaw, POOL};
use serverbench_contract::database::{check_all, pg::PgReferee};
use serverbench_contract::Check;
use serverbench_database::RunningDb;
use serverbench_model::Feature;

const FEATURES: [Feature; 4] = [
    Feature::Db,
    Feature::Queries,
    Feature::Fortunes,
    Feature::Updates,
];

/// The failed checks as `name: what: expected X, got Y` lines.
fn failures(checks: &[Check]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| !c.passed())
        .flat_map(|c| {
            c.diffs
                .iter()
                .map(move |d| format!("{}: {}", c.name, d.render()))
        })
        .collect()
}

fn verify(db: &RunningDb, flaw: Flaw) -> Vec<String> {
    let server = start(&db.url(), flaw);
    let addr = server.addr;
    let mut referee = PgReferee::connect(&db.referee_url())
        .expect("verify connects to the database")
        .with_log(db.log_file())
        .with_pool(POOL as u32);
    let checks = check_all(addr, &FEATURES, &mut referee);
    assert_eq!(checks.len(), 27, "{flaw:?}: the checks that ran");
    failures(&checks)
}

/// True when one failure line starts with `check` and contains `says`.
fn fails_with(lines: &[String], check: &str, says: &str) -> bool {
    lines
        .iter()
        .any(|l| l.starts_with(check) && l.contains(says))
}

#[test]
fn a_correct_server_passes_and_each_deliberately_wrong_one_fails_with_its_own_message() {
    let Some((_cache, db)) = database() else {
        return;
    };
    let tables = |db: &RunningDb| {
        use serverbench_contract::database::Referee;
        let mut r = PgReferee::connect(&db.referee_url()).expect("a reader");
        (r.world().unwrap(), r.fortunes().unwrap())
    };
    let before = tables(&db);
    let correct = verify(&db, Flaw::None);
    assert!(
        tables(&db) == before,
        "verify puts world and fortune back as it found them"
    );
    assert!(
        correct.is_empty(),
        "the correct server failed:\n{}",
        correct.join("\n")
    );

    let cases: [(Flaw, &str, &str); 13] = [
        (
            Flaw::Cache,
            "query audit: 50 × GET /db",
            "single-row SELECTs on world (top level): expected 50 (±2), got PostgreSQL ran 0 \
             (a cache?)",
        ),
        (
            Flaw::InList,
            "query audit: 20 × GET /queries?queries=20",
            "multi-row SELECTs on world: expected 0 (one SELECT per row), got PostgreSQL ran 20",
        ),
        (Flaw::NoEscape, "GET /fortunes", "an unescaped <script>"),
        (
            Flaw::SkipUpdates,
            "GET /updates?queries=20",
            "(not written?)",
        ),
        (
            Flaw::SkipUpdates,
            "query audit: 20 × GET /updates?queries=20",
            "(updates skipped?)",
        ),
        (Flaw::MadeUp, "GET /db, 20 times", "(made up?)"),
        (
            Flaw::DecoyCache,
            "GET /db, /queries?queries=20 after verify changed every world row",
            "(stale: answered from a cache?)",
        ),
        (
            Flaw::FortunesOnce,
            "GET /fortunes after verify added a fortune and changed one",
            "rows (14 expected, 13 found)",
        ),
        (
            Flaw::Comment,
            "query audit: 20 × GET /queries?queries=20",
            "multi-row SELECTs on world: expected 0 (one SELECT per row), got PostgreSQL ran 20",
        ),
        (
            Flaw::ConnectionPerRequest,
            "query audit: 50 × GET /db",
            "connections to the database (pg_stat_activity): expected at most DATABASE_POOL = 4",
        ),
        (
            Flaw::SeveralInOne,
            "query audit: 20 × GET /queries?queries=20",
            "query strings (the statement log): expected one statement each, got 20 held several",
        ),
        (
            Flaw::OneTransaction,
            "query audit: 20 × GET /queries?queries=20",
            "transactions of the reads of world (the statement log): expected one per read",
        ),
        (
            Flaw::OneOfTwenty,
            "GET /updates?queries=20: 20 rows written",
            "19 of 20 rows kept the number they had (rows not updated?)",
        ),
    ];
    let mut seen = std::collections::HashMap::new();
    for (flaw, check, says) in cases {
        let lines = seen.entry(flaw).or_insert_with(|| verify(&db, flaw));
        assert!(
            fails_with(lines, check, says),
            "{flaw:?}: no failure of {check:?} saying {says:?} in:\n{}",
            lines.join("\n")
        );
    }
    db.stop().expect("the private cluster stopped");
}
