//! verify's database checks against small servers of our own on a real PostgreSQL (a private
//! cluster started for this test on a port of its own): a correct server passes; a caching one,
//! an `IN (…)` one, one that does not escape fortunes, one that skips its updates and one that
//! makes rows up each fail with their own message.
//!
//! PostgreSQL 15 must be installed (Debian's postgresql-15); without it the test fails and says
//! why, unless SERVERBENCH_SKIP_DB=1 is set (then it prints that it skipped).

mod db_servers;

use db_servers::{database, serve, Flaw};
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
    let addr = serve(&db.url(), flaw);
    let mut referee = PgReferee::connect(&db.url()).expect("verify connects to the database");
    let checks = check_all(addr, &FEATURES, &mut referee);
    assert_eq!(checks.len(), 17, "{flaw:?}: the checks that ran");
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
    let correct = verify(&db, Flaw::None);
    assert!(
        correct.is_empty(),
        "the correct server failed:\n{}",
        correct.join("\n")
    );

    let cases: [(Flaw, &str, &str); 6] = [
        (
            Flaw::Cache,
            "query audit: 50 × GET /db",
            "single-row SELECTs on world: expected 50 (±2), got PostgreSQL ran 0 (a cache?)",
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
