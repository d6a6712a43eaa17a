//! What a worker does when its poll has nothing for it: block until the kernel wakes it, or
//! nap on a short timer of its own and poll again without blocking.
//!
//! Blocking is exact (a response is timed the moment it can be read), but the wake-up is paid
//! by the sender: the server's CPU, writing a response to a client that sleeps in `epoll_wait`,
//! runs the wake-up of the client's thread, and on a VM waking an idle vCPU costs more than the
//! request itself. A client cheaper than its server idles between responses, so it is woken
//! often and the saturated server it measures answers it more slowly than a client that never
//! idles. Against nginx (one worker) serving h2c with 50 connections x 10 streams on this
//! project's 2-vCPU VM: blocking costs the client ~480 wake-ups per 1,000 requests and nginx
//! ~11.5 µs per request; h2load, busy all the time, ~15 wake-ups and ~10.3 µs; napping, ~50
//! wake-ups (its own timer's) and ~8.8 µs (docs/results/h2.md).
//!
//! A nap delays noticing a response by at most its span, so the span follows what is measured:
//! [`Idle::Auto`] naps 1/[`DIVISOR`] of this thread's *fast* latencies (at most [`MAX_NAP`]), so
//! the delay stays under ~3% of nearly every latency; below [`MIN_NAP`] (a fast server, few
//! requests in flight) napping saves nothing and the worker blocks. "Fast" is a floor that
//! drops to any faster response and rises by 1/[`FLOOR_RISE`] with each slower one: it settles
//! near the few-percent quantile, so a mean pulled up by a slow tail (most responses in 100 µs,
//! a few in 100 ms) does not make naps that would double the fast ones.
//!
//! Naps only pay when the kernel would wake the thread more often than they do: with `-p 16`
//! and receive low-water marks the thread blocks ~2 ms at a time, and naps of 100 µs would
//! wake it 20x as often for nothing (0.74 → 1.46 µs of client CPU per request against nginx).
//! So `auto` starts blocking and measures how long its blocking polls sleep; when they sleep
//! less than half a nap (the server wakes it more often than a nap would), it naps; when more
//! than half of its naps are followed by a poll that finds nothing (events come less often
//! than naps), it blocks again. For events arriving at random at rate r and naps of span S,
//! the first happens at rS > 2 and the second at rS < ln 2, so it does not flap in between.
//!
//! Only the closed loop naps: an `-R` schedule wakes on its own timer, and a TCP stream writes
//! whenever it can. The thread's timer slack is set to 1 µs so a nap is not stretched by the kernel's default
//! 50 µs. The result records the policy and the naps taken.

use crate::result::{IdlePolicy, IdleResult};
use std::str::FromStr;
use std::time::Duration;

/// A nap is at most this share of the fast latencies.
pub const DIVISOR: u64 = 32;
/// Shorter naps than this block instead.
pub const MIN_NAP: Duration = Duration::from_micros(10);
/// The longest nap.
pub const MAX_NAP: Duration = Duration::from_micros(200);
/// The floor rises by 1/2^this of itself with each response slower than it.
const FLOOR_RISE: u32 = 7;
/// Weight (1/2^this) of a new sample in the running means of sleeps and wasted naps.
const EWMA_SHIFT: u32 = 4;
/// The wasted-nap fraction in 1/1024ths above which `auto` goes back to blocking.
const WASTED_MAX: u64 = 512;

/// `--idle`: what a worker does when it has nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Idle {
    /// Nap 1/32 of the fast latencies (10–200 µs) in the closed loop, else block.
    #[default]
    Auto,
    /// Always block until an event (the kernel wakes the thread).
    Block,
    /// Nap this long in the closed loop, whatever the latency.
    Nap(Duration),
}

/// `--idle` that is none of `auto`, `block` or a duration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{0}` is not auto, block or a nap like 20us")]
pub struct BadIdle(pub String);

impl FromStr for Idle {
    type Err = BadIdle;

    fn from_str(s: &str) -> Result<Self, BadIdle> {
        match s {
            "auto" => Ok(Idle::Auto),
            "block" => Ok(Idle::Block),
            other => match serverbench_model::parse_duration(other) {
                Ok(d) if !d.is_zero() && d <= Duration::from_millis(10) => Ok(Idle::Nap(d)),
                _ => Err(BadIdle(other.to_string())),
            },
        }
    }
}

impl std::fmt::Display for Idle {
    /// What `--idle` reads back: `auto`, `block` or a nap like `20us`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Idle::Auto => f.write_str("auto"),
            Idle::Block => f.write_str("block"),
            Idle::Nap(d) => write!(f, "{}", humantime::format_duration(*d)),
        }
    }
}

impl Idle {
    /// What the result records of this policy and of the naps taken under it.
    pub fn result(self, naps: &NapStats) -> IdleResult {
        IdleResult {
            policy: match self {
                Idle::Auto => IdlePolicy::Auto,
                Idle::Block => IdlePolicy::Block,
                Idle::Nap(_) => IdlePolicy::Nap,
            },
            naps: naps.naps,
            nap_us_mean: naps.total_ns.checked_div(naps.naps).unwrap_or(0) as f64 / 1e3,
            nap_us_max: naps.max_ns as f64 / 1e3,
        }
    }
}

/// One worker's napping: the policy, the floor of recent latencies and what was napped.
#[derive(Debug, Clone)]
pub struct Napper {
    policy: Idle,
    /// Recent fast latency, ns (`u64::MAX`: none yet).
    floor_ns: u64,
    /// `auto`: napping now (else blocking and measuring its sleeps).
    napping: bool,
    /// `auto`, blocking: running mean of how long a blocking poll slept, ns (`u64::MAX`: none).
    slept_ns: u64,
    /// `auto`, napping: running share of naps followed by an empty poll, in 1/1024ths.
    wasted: u64,
    /// The last thing done was a nap: the next poll says whether it was wasted.
    after_nap: bool,
    pub stats: NapStats,
}

/// Naps taken by one thread (or all, once merged).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NapStats {
    pub naps: u64,
    pub total_ns: u64,
    pub max_ns: u64,
}

impl NapStats {
    /// Adds another thread's naps.
    pub fn merge(&mut self, o: &NapStats) {
        self.naps += o.naps;
        self.total_ns += o.total_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
    }
}

impl Napper {
    /// `closed_loop`: whether this worker runs the closed loop (only it naps).
    pub fn new(policy: Idle, closed_loop: bool) -> Self {
        let policy = if closed_loop { policy } else { Idle::Block };
        if policy != Idle::Block {
            crate::sys::set_timer_slack_ns(1_000);
        }
        Napper {
            policy,
            floor_ns: u64::MAX,
            napping: false,
            slept_ns: u64::MAX,
            wasted: 0,
            after_nap: false,
            stats: NapStats::default(),
        }
    }

    /// Whether `auto` is blocking and learning from how long its waits sleep.
    pub fn measuring(&self) -> bool {
        self.policy == Idle::Auto && !self.napping
    }

    /// A response took `latency_ns`.
    #[inline]
    pub fn observe(&mut self, latency_ns: u64) {
        self.floor_ns = if latency_ns < self.floor_ns {
            latency_ns
        } else {
            self.floor_ns
                .saturating_add((self.floor_ns >> FLOOR_RISE).max(1))
        };
    }

    /// How long to nap when the poll finds nothing (ns), or `None` to block.
    #[inline]
    pub fn span_ns(&self) -> Option<u64> {
        match self.policy {
            Idle::Block => None,
            Idle::Nap(d) => Some(d.as_nanos() as u64),
            Idle::Auto if self.napping => self.auto_span(),
            Idle::Auto => None,
        }
    }

    /// `auto`'s nap: 1/32 of the floor, capped; none below the minimum or before a latency.
    fn auto_span(&self) -> Option<u64> {
        if self.floor_ns == u64::MAX {
            return None;
        }
        let span = (self.floor_ns / DIVISOR).min(MAX_NAP.as_nanos() as u64);
        (span >= MIN_NAP.as_nanos() as u64).then_some(span)
    }

    /// A poll that started at `started_ns` (monotonic) returned, with or without events:
    /// `auto` decides whether to nap or block from here on (the other policies read no clock).
    #[inline]
    pub fn polled(&mut self, started_ns: u64, empty: bool) {
        if self.policy == Idle::Auto {
            self.adapt(crate::sys::now_ns().saturating_sub(started_ns), empty);
        }
    }

    /// `auto`: a poll slept `slept_ns` and found events or none.
    fn adapt(&mut self, slept_ns: u64, empty: bool) {
        let ewma =
            |mean: u64, x: u64| (mean as i64 + ((x as i64 - mean as i64) >> EWMA_SHIFT)) as u64;
        if self.napping {
            if std::mem::take(&mut self.after_nap) {
                self.wasted = ewma(self.wasted, if empty { 1024 } else { 0 });
            }
            if self.wasted > WASTED_MAX || self.auto_span().is_none() {
                self.napping = false;
                self.slept_ns = u64::MAX;
            }
        } else {
            self.slept_ns = match self.slept_ns {
                u64::MAX => slept_ns,
                mean => ewma(mean, slept_ns),
            };
            if self
                .auto_span()
                .is_some_and(|span| self.slept_ns < span / 2)
            {
                self.napping = true;
                self.wasted = 0;
            }
        }
    }

    /// Sleeps `ns` and counts it.
    pub fn nap(&mut self, ns: u64) {
        let t = crate::sys::now_ns();
        std::thread::sleep(Duration::from_nanos(ns));
        let slept = crate::sys::now_ns().saturating_sub(t);
        self.stats.naps += 1;
        self.stats.total_ns += slept;
        self.stats.max_ns = self.stats.max_ns.max(slept);
        self.after_nap = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_reads_auto_block_and_a_nap() {
        assert_eq!("auto".parse(), Ok(Idle::Auto));
        assert_eq!("block".parse(), Ok(Idle::Block));
        assert_eq!("20us".parse(), Ok(Idle::Nap(Duration::from_micros(20))));
        assert!("0us".parse::<Idle>().is_err());
        assert!("1s".parse::<Idle>().is_err(), "a nap over 10 ms is refused");
        assert!("sometimes".parse::<Idle>().is_err());
        for idle in [
            Idle::Auto,
            Idle::Block,
            Idle::Nap(Duration::from_micros(20)),
        ] {
            assert_eq!(idle.to_string().parse(), Ok(idle), "{idle}");
        }
    }

    #[test]
    fn auto_has_no_nap_until_a_latency_is_known_then_a_thirty_second_of_it() {
        let mut n = Napper::new(Idle::Auto, true);
        assert_eq!(n.auto_span(), None);
        n.observe(3_200_000); // 3.2 ms
        assert_eq!(n.auto_span(), Some(100_000));
    }

    #[test]
    fn auto_naps_once_blocking_polls_sleep_less_than_half_a_nap() {
        let mut n = Napper::new(Idle::Auto, true);
        n.observe(3_200_000); // naps of 100 µs
        n.adapt(30_000, false);
        assert_eq!(n.span_ns(), Some(100_000), "woken every 30 µs: nap");
    }

    #[test]
    fn auto_keeps_blocking_when_the_kernel_wakes_it_rarely() {
        // Pipelined with low-water marks: a blocking poll sleeps ~2 ms, 20 naps' worth.
        let mut n = Napper::new(Idle::Auto, true);
        n.observe(3_200_000);
        for _ in 0..1_000 {
            n.adapt(2_000_000, false);
        }
        assert_eq!(n.span_ns(), None);
    }

    #[test]
    fn auto_blocks_again_when_most_naps_find_nothing() {
        let mut n = Napper::new(Idle::Auto, true);
        n.observe(3_200_000);
        n.adapt(10_000, false);
        assert!(n.span_ns().is_some());
        // Each nap followed by an empty poll (then another nap): wasted.
        let mut naps = 0;
        while n.span_ns().is_some() {
            n.after_nap = true;
            n.adapt(0, true);
            naps += 1;
            assert!(naps < 100, "still napping after {naps} wasted naps");
        }
        assert!(naps > 5, "one wasted nap is not a trend ({naps})");
        // Naps that find events keep it napping.
        n.adapt(10_000, false);
        for _ in 0..1_000 {
            n.after_nap = true;
            n.adapt(0, false);
        }
        assert!(n.span_ns().is_some());
    }

    #[test]
    fn auto_blocks_for_fast_servers_and_caps_slow_ones() {
        let mut fast = Napper::new(Idle::Auto, true);
        fast.observe(200_000); // 200 µs: a 6 µs nap would save nothing
        fast.adapt(1_000, false);
        assert_eq!(fast.span_ns(), None);
        let mut slow = Napper::new(Idle::Auto, true);
        slow.observe(1_000_000_000);
        assert_eq!(slow.auto_span(), Some(MAX_NAP.as_nanos() as u64));
    }

    #[test]
    fn a_slow_tail_does_not_lengthen_the_naps() {
        // 95% of responses in 100 µs, 5% in 100 ms: the mean is ~5 ms, but a nap of 1/32 of
        // it would add 150% to the fast ones. The floor stays near 100 µs: block.
        let mut n = Napper::new(Idle::Auto, true);
        for i in 0..10_000 {
            n.observe(if i % 20 == 0 { 100_000_000 } else { 100_000 });
        }
        assert_eq!(n.auto_span(), None);
    }

    #[test]
    fn the_floor_rises_when_the_server_slows_down() {
        let mut n = Napper::new(Idle::Auto, true);
        n.observe(1_000_000);
        for _ in 0..1_000 {
            n.observe(3_200_000);
        }
        let span = n.auto_span().unwrap();
        assert!((99_000..=101_000).contains(&span), "{span}");
    }

    #[test]
    fn only_the_closed_loop_naps() {
        let mut n = Napper::new(Idle::Nap(Duration::from_micros(20)), false);
        n.observe(10_000_000);
        assert_eq!(n.span_ns(), None);
    }

    #[test]
    fn naps_are_counted_with_their_longest() {
        let mut n = Napper::new(Idle::Nap(Duration::from_micros(20)), true);
        n.nap(20_000);
        n.nap(20_000);
        assert_eq!(n.stats.naps, 2);
        assert!(n.stats.max_ns >= 20_000 && n.stats.total_ns >= 40_000);
    }
}
