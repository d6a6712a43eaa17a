//! verify's database for a server of the database workloads: serverbench's private cluster
//! started in the cache on a port of its own, the server's environment, and the contract's
//! database checks run against a small server of the contract's tests on it.

#[allow(dead_code)] // the flaws this file does not use
#[path = "../../contract/tests/db_servers/mod.rs"]
mod db_servers;

use serverbench_catalog::paths::Paths;
use serverbench_harness::verify_db::{self, VERIFY_POOL};
use serverbench_model::Feature;

#[test]
fn verify_starts_a_private_database_hands_its_url_and_pool_and_runs_the_database_checks() {
    if db_servers::skip_without_postgres() {
        return;
    }
    let cache = tempfile::tempdir().expect("a cache folder");
    db_servers::make_reachable(cache.path());
    let paths = Paths::new(cache.path(), cache.path());
    let db = verify_db::start(&paths).unwrap_or_else(|c| panic!("{c:?}"));
    let env = db.env(VERIFY_POOL);
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("DATABASE_POOL").as_deref(), Some("8"));
    assert_eq!(get("DATABASE_URL"), Some(db.url().expose()));

    assert_ne!(
        db.referee_url().user,
        db.url().user,
        "verify has a role of its own"
    );

    let addr = db_servers::serve(&db.url(), db_servers::Flaw::None);
    let checks = verify_db::check(Some(addr), &[Feature::Db, Feature::Fortunes], &db);
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(checks.len(), 6, "{names:?}");
    assert!(checks.iter().all(|c| c.passed()), "{checks:#?}");
    // The statement log is read: a server that sends several statements in one string fails.
    let several = db_servers::serve(&db.url(), db_servers::Flaw::SeveralInOne);
    let checks = verify_db::check(Some(several), &[Feature::Queries], &db);
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.name.as_str())
        .collect();
    assert!(
        failed.contains(&"query audit: 20 × GET /queries?queries=20"),
        "{failed:?}"
    );
    db.stop().expect("the private cluster stopped");
}
