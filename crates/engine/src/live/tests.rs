use super::*;

/// A thread's statistics with a measured window from `start` on, and `lat_us` latencies
/// recorded at `at` (ns).
fn stats_with(start: u64, at: u64, lat_us: &[u64]) -> Stats {
    let mut s = Stats::new(false);
    s.set_window(start, u64::MAX);
    for &us in lat_us {
        s.record(at, us * 1000, us * 1000, 200);
    }
    s
}

fn asked(board: &Board) -> Merger {
    let mut m = Merger::new(board.slots.len(), 0);
    m.ask(board);
    m
}

#[test]
fn merged_percentiles_are_those_of_all_requests_not_an_average_of_each_threads() {
    let board = Board::new(2);
    // Thread 0: 90 fast requests; thread 1: 10 slow ones. Averaging each thread's p50 would
    // give ~5 ms; the p50 of all 100 requests is the fast one.
    let fast = stats_with(0, 10, &[100; 90]);
    let slow = stats_with(0, 10, &[10_000; 10]);
    let mut m = asked(&board);
    let e0 = board.publish(0, 0, false, &fast, 1_000, 4);
    let e1 = board.publish(1, 0, false, &slow, 1_000, 6);
    assert_eq!((e0, e1), (1, 1));
    let snap = m.collect(&board, Phase::Measuring).expect("both answered");
    assert_eq!(snap.requests, 100);
    assert_eq!(snap.in_flight, 10);
    assert_eq!(snap.p50_us, Some(100.0));
    let p99 = snap.p99_us.unwrap();
    assert!((p99 - 10_000.0).abs() <= 10.0, "{p99}");
}

#[test]
fn a_thread_still_in_the_warm_up_is_left_out_of_the_measured_counts() {
    let board = Board::new(2);
    let measuring = stats_with(0, 10, &[100; 5]);
    // Its window starts at 1 s: at 500 ms it is warming up (its requests count as warm-up).
    let warming = stats_with(1_000_000_000, 10, &[100; 7]);
    assert_eq!(warming.warm.requests, 7);
    let mut m = asked(&board);
    board.publish(0, 0, false, &measuring, 500_000_000, 0);
    board.publish(1, 0, false, &warming, 500_000_000, 0);
    let snap = m.collect(&board, Phase::Measuring).unwrap();
    assert_eq!(snap.requests, 5);
    m.ask(&board);
    board.publish(0, 1, false, &measuring, 600_000_000, 0);
    board.publish(1, 1, false, &warming, 600_000_000, 0);
    let snap = m.collect(&board, Phase::WarmUp).unwrap();
    assert_eq!(snap.requests, 7);
}

#[test]
fn warm_up_errors_are_counted_by_kind_apart_from_the_measured_ones() {
    let mut s = stats_with(1_000, 10, &[]);
    s.error(10, crate::stats::ErrorKind::Read);
    s.error(2_000, crate::stats::ErrorKind::Timeout);
    assert_eq!((s.warm.errors.read, s.warm.errors.timeout), (1, 0));
    assert_eq!((s.errors.read, s.errors.timeout), (0, 1));
    let kinds: Vec<_> = s.errors.by_kind().collect();
    assert_eq!(kinds, vec![("timeout", 1)]);
}

#[test]
fn the_rate_over_the_last_second_uses_each_threads_own_interval() {
    let board = Board::new(2);
    let mut m = asked(&board);
    board.publish(0, 0, false, &stats_with(0, 1, &[50; 100]), 1_000_000_000, 0);
    board.publish(1, 0, false, &stats_with(0, 1, &[50; 100]), 1_000_000_000, 0);
    let first = m.collect(&board, Phase::Measuring).unwrap();
    assert!(
        (first.rate_now - 200.0).abs() < 1e-6,
        "from the start: {}",
        first.rate_now
    );
    m.ask(&board);
    // Thread 0 answered after 1 s with 1000 more; thread 1 after 0.5 s with 250 more.
    board.publish(
        0,
        1,
        false,
        &stats_with(0, 1, &[50; 1100]),
        2_000_000_000,
        0,
    );
    board.publish(1, 1, false, &stats_with(0, 1, &[50; 350]), 1_500_000_000, 0);
    let snap = m.collect(&board, Phase::Measuring).unwrap();
    assert!((snap.rate_now - 1500.0).abs() < 1e-6, "{}", snap.rate_now);
    assert_eq!(snap.requests, 1450);
}

#[test]
fn the_coordinator_waits_for_every_thread_but_not_for_ever() {
    let board = Board::new(2);
    let mut m = asked(&board);
    board.publish(0, 0, false, &stats_with(0, 1, &[50; 3]), 1_000, 0);
    assert!(
        m.collect(&board, Phase::Measuring).is_none(),
        "thread 1 not yet"
    );
    std::thread::sleep(ANSWER_WITHIN + Duration::from_millis(5));
    let snap = m
        .collect(&board, Phase::Measuring)
        .expect("gave up waiting");
    assert_eq!(snap.requests, 3);
    assert!(!m.pending());
}

#[test]
fn a_busy_slot_is_skipped_and_the_question_stays_open() {
    let board = Board::new(1);
    let _m = asked(&board);
    let held = board.lock(0);
    let s = stats_with(0, 1, &[50]);
    assert_eq!(board.publish(0, 0, false, &s, 1_000, 0), 0, "not answered");
    assert!(board.wanted(0));
    drop(held);
    assert_eq!(board.publish(0, 0, false, &s, 1_000, 0), 1);
    assert!(!board.wanted(1));
}
