//! When answers stopped: each thread keeps the gaps of at least a second between its
//! consecutive answers in the measured window (the window's start and end count as answers),
//! and the merge keeps the spans where every thread was silent.
//!
//! Why this and not a coordinator watching a shared "last answer" instant: it is exact (no
//! sampling tick, no lag of a publishing period), it shares nothing (no atomic per answer or per
//! loop turn), and it merges exactly across threads and hosts, as intervals intersect: a silence
//! of all threads is inside a silence of each, so a thread that keeps every gap of at least a
//! second has every global silence of at least a second among its gaps. Its cost per answer is
//! a subtraction, a compare and a plain store; a gap that long is rare and pushes one pair
//! (a window of N seconds holds at most N of them).

use serverbench_model::result::Silence;

/// The shortest gap kept, ns.
const SHORTEST_NS: u64 = (Silence::SHORTEST_S * 1e9) as u64;

/// One thread's (or, merged, all threads') silences, monotonic ns.
#[derive(Debug, Clone, Default)]
pub struct Silences {
    /// The last answer (the window's start before the first).
    last: u64,
    /// `[from, to)` spans without an answer, in order.
    spans: Vec<(u64, u64)>,
}

impl Silences {
    /// Starts over with a window that begins at `start`.
    pub fn reset(&mut self, start: u64) {
        self.last = start;
        self.spans.clear();
    }

    /// An answer in the window at `now`.
    #[inline]
    pub fn answer(&mut self, now: u64) {
        if now.saturating_sub(self.last) >= SHORTEST_NS {
            self.gap(now);
        }
        self.last = now;
    }

    #[cold]
    fn gap(&mut self, now: u64) {
        self.spans.push((self.last, now));
    }

    /// The window ended at `end`: the silence since the last answer, if long enough.
    pub fn finish(&mut self, end: u64) {
        if end.saturating_sub(self.last) >= SHORTEST_NS {
            self.gap(end);
        }
        self.last = end;
    }

    /// Keeps only the spans where `o` was silent too.
    pub fn intersect(&mut self, o: &Silences) {
        let (a, b) = (&self.spans, &o.spans);
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        while i < a.len() && j < b.len() {
            let (from, to) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
            if to.saturating_sub(from) >= SHORTEST_NS {
                out.push((from, to));
            }
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        self.spans = out;
    }

    /// The spans in seconds from `start`.
    pub fn from(&self, start: u64) -> Vec<Silence> {
        let s = |ns: u64| ns.saturating_sub(start) as f64 / 1e9;
        self.spans
            .iter()
            .map(|&(from, to)| Silence {
                from_s: s(from),
                to_s: s(to),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn thread(answers: &[u64], end: u64) -> Silences {
        let mut s = Silences::default();
        s.reset(0);
        for &a in answers {
            s.answer(a);
        }
        s.finish(end);
        s
    }

    #[test]
    fn a_thread_keeps_its_gaps_of_a_second_and_the_silence_up_to_the_end() {
        let t = thread(&[S / 10, S / 2, 2 * S, 2 * S + 1], 5 * S);
        let spans = t.from(0);
        assert_eq!(spans.len(), 2, "{spans:?}");
        assert_eq!((spans[0].from_s, spans[0].to_s), (0.5, 2.0));
        assert_eq!((spans[1].from_s, spans[1].to_s), (2.000000001, 5.0));
    }

    #[test]
    fn threads_merged_are_silent_only_where_all_were() {
        let mut a = thread(&[S / 10, S / 2, S, 3 * S / 2, 3 * S], 4 * S);
        let b = thread(&[S / 5, 7 * S / 10, 6 * S / 5, 2 * S], 4 * S);
        a.intersect(&b);
        let spans: Vec<(f64, f64)> = a.from(0).iter().map(|s| (s.from_s, s.to_s)).collect();
        assert_eq!(spans, vec![(2.0, 3.0), (3.0, 4.0)]);
        let never = thread(&[], 4 * S);
        let mut answered = thread(&(1..40).map(|i| i * S / 10).collect::<Vec<_>>(), 4 * S);
        answered.intersect(&never);
        assert!(answered.from(0).is_empty());
    }

    #[test]
    fn merged_threads_add_their_requests_in_flight_and_keep_their_common_silence() {
        use crate::stats::Stats;
        let (mut a, mut b) = (Stats::new(false), Stats::new(false));
        a.set_window(0, 5 * S);
        b.set_window(0, 5 * S);
        a.record(S / 2, 1_000, 1_000, 200);
        b.record(S, 1_000, 1_000, 200);
        a.finish(6 * S, 40);
        b.finish(6 * S, 24);
        a.close();
        b.close();
        a.merge(&b);
        assert_eq!(a.in_flight_at_end, 64);
        let spans: Vec<(f64, f64)> = a.silences_s().iter().map(|s| (s.from_s, s.to_s)).collect();
        assert_eq!(
            spans,
            vec![(1.0, 5.0)],
            "from the last answer to the window's end"
        );
    }
}
