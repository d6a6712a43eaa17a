use super::*;

fn ran(single: u64, multi: u64, updates: u64, rows: u64, fortunes: u64) -> Statements {
    Statements {
        world_single_reads: single,
        world_single_rows: single,
        world_multi_reads: multi,
        world_updates: updates,
        world_rows_updated: rows,
        fortune_reads: fortunes,
        fortune_rows: fortunes * 12,
        ..Statements::default()
    }
}

fn queries_20() -> Plan {
    plan(Feature::Queries, "/queries?queries=20").unwrap()
}

fn updates_20() -> Plan {
    plan(Feature::Updates, "/updates?queries=20").unwrap()
}

fn fortunes() -> Plan {
    plan(Feature::Fortunes, "/fortunes").unwrap()
}

#[test]
fn the_margin_is_five_percent_and_at_least_one() {
    assert_eq!(
        (margin(400), margin(50), margin(20), margin(0)),
        (20, 2, 1, 1)
    );
}

#[test]
fn one_select_per_row_passes_within_the_margin() {
    let p = queries_20();
    assert!(judge(&p, &ran(400, 0, 0, 0, 0)).is_empty());
    assert!(judge(&p, &ran(381, 0, 0, 0, 0)).is_empty());
    assert_eq!(judge(&p, &ran(379, 0, 0, 0, 0)).len(), 1);
}

#[test]
fn a_cache_fails_with_the_expected_and_measured_counts() {
    let d = judge(&queries_20(), &ran(20, 0, 0, 0, 0));
    assert_eq!(
        d[0].render(),
        "single-row SELECTs on world (top level): expected 400 (±20), got PostgreSQL ran 20 \
         (a cache?)"
    );
}

#[test]
fn batched_reads_fail_twice_with_the_batches_named() {
    let d = judge(&queries_20(), &ran(0, 20, 0, 0, 0));
    assert!(d[0].got.ends_with("(reads batched?)"), "{d:?}");
    assert_eq!(d[1].what, "multi-row SELECTs on world");
}

#[test]
fn a_batched_update_passes_and_skipped_updates_fail() {
    let p = updates_20();
    assert!(judge(&p, &ran(400, 0, 20, 400, 0)).is_empty());
    assert!(judge(&p, &ran(400, 0, 400, 400, 0)).is_empty());
    let d = judge(&p, &ran(400, 0, 0, 0, 0));
    assert!(d[0].got.contains("updates skipped?"), "{d:?}");
}

#[test]
fn the_note_names_the_counts_the_plan_is_judged_on() {
    let u = describe(&updates_20(), &ran(400, 0, 20, 400, 0), None);
    assert_eq!(
        u,
        "PostgreSQL ran 400 single-row SELECTs, 20 UPDATEs (400 rows) on world"
    );
    let mut s = ran(0, 0, 0, 0, 20);
    s.other = 3;
    let f = describe(&fortunes(), &s, Some(4));
    assert_eq!(
        f,
        "PostgreSQL ran 20 SELECTs on fortune; 3 other; at most 4 connections"
    );
}

#[test]
fn every_n_of_the_shipped_suites_is_audited_for_queries_and_updates() {
    let paths = |f| -> Vec<String> { plans(f, 12).into_iter().map(|p| p.path).collect() };
    assert_eq!(
        paths(Feature::Queries),
        [1, 5, 10, 20].map(|n| format!("/queries?queries={n}"))
    );
    assert_eq!(paths(Feature::Updates).len(), 4);
    assert_eq!(
        plan(Feature::Updates, "/updates?queries=5")
            .unwrap()
            .rows_updated,
        100
    );
}

#[test]
fn verify_audits_every_n_the_shipped_suites_ask_for() {
    let suites = concat!(env!("CARGO_MANIFEST_DIR"), "/../../suites");
    let mut seen = Vec::new();
    for e in std::fs::read_dir(suites).unwrap() {
        let path = e.unwrap().path();
        if path.extension() != Some("toml".as_ref()) {
            continue; // a suite's folder of mix files, a README
        }
        let text = std::fs::read_to_string(path).unwrap();
        for part in text.split("queries=").skip(1) {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.parse::<u64>() {
                assert!(
                    NS.contains(&n),
                    "a suite asks N = {n}, which verify does not audit"
                );
                seen.push(n);
            }
        }
    }
    assert!(seen.contains(&20), "the suites were read: {seen:?}");
}

#[test]
fn a_lap_is_judged_at_the_n_it_ran() {
    let p = for_lap("/queries?queries=5", 1000, 0).unwrap();
    assert_eq!((p.world_reads, p.rows_updated), (5000, 0));
    assert!(judge(&p, &ran(5000, 0, 0, 0, 0)).is_empty());
    assert_eq!(judge(&p, &ran(1000, 0, 0, 0, 0)).len(), 1);
    let u = for_lap("/updates?queries=99999999999", 10, 0).unwrap();
    assert_eq!((u.world_reads, u.rows_updated), (5000, 5000));
    assert_eq!(for_lap("/fortunes", 7, 0).unwrap().fortune_reads, 7);
    assert!(for_lap("/hello", 7, 0).is_none());
}

#[test]
fn requests_in_flight_at_the_end_may_have_run_their_statements_or_not() {
    // 1,000 requests of 5 rows, 100 of them in flight: 5,000 expected, 4,250 allowed.
    let p = for_lap("/queries?queries=5", 1000, 100).unwrap();
    assert_eq!(p.bounds(5000), (4250, 5250));
    assert!(judge(&p, &ran(4300, 0, 0, 0, 0)).is_empty());
    let d = judge(&p, &ran(4200, 0, 0, 0, 0));
    assert_eq!(
        d[0].expected,
        "5000 (±250; 100 requests in flight at the end)"
    );
}

#[test]
fn decoy_selects_that_return_nothing_fail_on_the_rows() {
    let mut s = ran(400, 0, 0, 0, 0);
    s.world_single_rows = 0;
    let d = judge(&queries_20(), &s);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].got.contains("decoy"), "{d:?}");
    let mut f = ran(0, 0, 0, 0, 20);
    f.fortune_rows = 20;
    assert_eq!(
        judge(&fortunes(), &f)[0].what,
        "rows returned by the SELECTs on fortune"
    );
}

#[test]
fn reads_inside_a_do_block_are_not_round_trips() {
    let mut s = ran(0, 0, 0, 0, 0);
    s.nested_reads = 400;
    let d = judge(&queries_20(), &s);
    assert!(d[0].got.contains("inside a function or DO block"), "{d:?}");
}

#[test]
fn several_statements_in_a_string_and_shared_transactions_fail_from_the_log() {
    let mut s = ran(400, 0, 0, 0, 0);
    s.log = Some(super::super::LogFindings {
        several_in_one: 20,
        example: Some("SELECT 1; SELECT 2".into()),
        shared_transaction: 400,
    });
    let d = judge(&queries_20(), &s);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d[0].got.starts_with("20 held several"), "{d:?}");
    // Updates may share a transaction between a batched UPDATE and its reads.
    s.world_updates = 20;
    s.world_rows_updated = 400;
    assert_eq!(judge(&updates_20(), &s).len(), 1);
}

#[test]
fn more_connections_than_the_pool_is_a_difference() {
    assert!(pool_diff(Some(8), Some(8)).is_none());
    assert!(pool_diff(Some(9), None).is_none());
    let d = pool_diff(Some(9), Some(8)).unwrap();
    assert_eq!(d.expected, "at most DATABASE_POOL = 8");
}

#[test]
fn a_cached_fortune_page_fails() {
    let d = judge(&fortunes(), &ran(0, 0, 0, 0, 1));
    assert_eq!(d[0].what, "SELECTs on fortune (top level)");
}
