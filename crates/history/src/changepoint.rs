//! Change points over a series: persistent shifts of the mean, found by E-divisive means and
//! kept only when a t-test says the segments around them differ.
//!
//! The method is the one of Hunter and Apache Otava:
//! 1. E-divisive means (Matteson & James 2014, "A nonparametric approach for multiple change
//!    point analysis of multivariate data", JASA 109(505)): within a segment, the split that
//!    maximizes the energy-distance statistic Q̂ (α = 1) is the candidate.
//! 2. Instead of E-divisive's permutation test, the split is accepted when Student's t-test of the
//!    two sides gives p below `max_pvalue` (Daly et al. 2020, "Change Point Detection in
//!    Software Performance Testing", ICPE; Fleming et al. 2023, "Hunter: Using Change Point
//!    Detection to Hunt for Performance Regressions", ICPE), recursing into both sides.
//! 3. The series is searched in overlapping windows of `window` points (half a window apart,
//!    the last one ending at the newest point) so a long history costs O(n · window²), then
//!    every candidate is re-tested between its neighbours over the whole series and the weakest
//!    failing one dropped until all pass `max_pvalue` and `min_magnitude`.

use crate::ttest::student;
use std::collections::BTreeSet;

/// Fewest points on either side of a change point (the t-test needs two).
const MIN_SIDE: usize = 2;

/// The detector's options (Otava's defaults: window 30, p 0.001).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Points per search window.
    pub window: usize,
    /// A change point must have a t-test p-value below this.
    pub max_pvalue: f64,
    /// And a relative change of the mean at least this large (0.05 for 5%).
    pub min_magnitude: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            window: 30,
            max_pvalue: 0.001,
            min_magnitude: 0.0,
        }
    }
}

/// A persistent shift: the series' mean changes at `index` (the first point after the shift).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    /// The mean of the segment before and after (up to the neighbouring change points).
    pub mean_before: f64,
    pub mean_after: f64,
    /// Student's t-test of the two segments.
    pub p: f64,
}

impl ChangePoint {
    /// `mean_after / mean_before - 1`.
    pub fn magnitude(&self) -> f64 {
        self.mean_after / self.mean_before - 1.0
    }
}

/// Every change point of `x`, in order.
pub fn detect(x: &[f64], opts: &Options) -> Vec<ChangePoint> {
    let n = x.len();
    let window = opts.window.max(2 * MIN_SIDE);
    let mut found = BTreeSet::new();
    let mut starts: Vec<usize> = (0..n.saturating_sub(window))
        .step_by((window / 2).max(1))
        .collect();
    starts.push(n.saturating_sub(window));
    starts.dedup();
    for s in starts {
        split(x, s, (s + window).min(n), opts, &mut found);
    }
    prune(x, found.into_iter().collect(), opts)
}

/// E-divisive's Q̂ for the split of `seg` at `tau` (α = 1).
fn q_hat(seg: &[f64], tau: usize) -> f64 {
    let (a, b) = seg.split_at(tau);
    let (m, k) = (a.len() as f64, b.len() as f64);
    let between: f64 = a
        .iter()
        .map(|x| b.iter().map(|y| (x - y).abs()).sum::<f64>())
        .sum();
    let within = |s: &[f64]| -> f64 {
        let n = s.len() as f64;
        let mut sum = 0.0;
        for i in 0..s.len() {
            for j in i + 1..s.len() {
                sum += (s[i] - s[j]).abs();
            }
        }
        sum / (n * (n - 1.0) / 2.0)
    };
    let e = 2.0 * between / (m * k) - within(a) - within(b);
    m * k / (m + k) * e
}

/// Bisects `x[lo..hi]` at the best Q̂ split while the t-test accepts it.
fn split(x: &[f64], lo: usize, hi: usize, opts: &Options, found: &mut BTreeSet<usize>) {
    if hi - lo < 2 * MIN_SIDE {
        return;
    }
    let seg = &x[lo..hi];
    let best = (MIN_SIDE..=seg.len() - MIN_SIDE)
        .map(|t| (t, q_hat(seg, t)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let Some((tau, _)) = best else { return };
    let Some(test) = student(&seg[..tau], &seg[tau..]) else {
        return;
    };
    if test.p >= opts.max_pvalue {
        return;
    }
    found.insert(lo + tau);
    split(x, lo, lo + tau, opts, found);
    split(x, lo + tau, hi, opts, found);
}

fn mean(s: &[f64]) -> f64 {
    s.iter().sum::<f64>() / s.len() as f64
}

/// Re-tests every candidate between its neighbours; drops the weakest failing one until all
/// pass.
fn prune(x: &[f64], mut cands: Vec<usize>, opts: &Options) -> Vec<ChangePoint> {
    loop {
        let points: Vec<Option<ChangePoint>> = (0..cands.len())
            .map(|i| {
                let lo = if i == 0 { 0 } else { cands[i - 1] };
                let hi = cands.get(i + 1).copied().unwrap_or(x.len());
                let (a, b) = (&x[lo..cands[i]], &x[cands[i]..hi]);
                let test = student(a, b)?;
                Some(ChangePoint {
                    index: cands[i],
                    mean_before: mean(a),
                    mean_after: mean(b),
                    p: test.p,
                })
            })
            .collect();
        let failing = |c: &Option<ChangePoint>| match c {
            None => true,
            Some(c) => c.p >= opts.max_pvalue || c.magnitude().abs() < opts.min_magnitude,
        };
        let weakest = points
            .iter()
            .enumerate()
            .filter(|(_, c)| failing(c))
            .max_by(|a, b| {
                let p = |c: &Option<ChangePoint>| c.map_or(f64::INFINITY, |c| c.p);
                p(a.1).total_cmp(&p(b.1))
            })
            .map(|(i, _)| i);
        match weakest {
            Some(i) => {
                cands.remove(i);
            }
            None => return points.into_iter().flatten().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_analysis::stats::SplitMix64;

    /// Normal noise by Box–Muller from the analysis crate's generator.
    pub(crate) fn noise(rng: &mut SplitMix64) -> f64 {
        let u = |r: &mut SplitMix64| (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let (a, b) = (u(rng).max(1e-12), u(rng));
        (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
    }

    fn series(n: usize, shifts: &[(usize, f64)], cv: f64, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|i| {
                let level: f64 = shifts
                    .iter()
                    .filter(|(at, _)| i >= *at)
                    .map(|s| s.1)
                    .product();
                100_000.0 * level * (1.0 + cv * noise(&mut rng))
            })
            .collect()
    }

    #[test]
    fn a_ten_percent_drop_is_found_at_its_run() {
        let mut exact = 0;
        for seed in 0..20 {
            let x = series(60, &[(40, 0.9)], 0.02, seed);
            let cps = detect(&x, &Options::default());
            assert_eq!(cps.len(), 1, "seed {seed}: {cps:?}");
            assert!(cps[0].index.abs_diff(40) <= 1, "seed {seed}: {cps:?}");
            assert!((cps[0].magnitude() + 0.1).abs() < 0.02, "{cps:?}");
            exact += usize::from(cps[0].index == 40);
        }
        assert!(exact >= 18, "{exact} of 20 at the exact run");
    }

    #[test]
    fn several_shifts_are_all_found_with_the_means_around_them() {
        let x = series(150, &[(30, 0.8), (90, 1.3), (120, 0.9)], 0.02, 7);
        let cps = detect(&x, &Options::default());
        let at: Vec<usize> = cps.iter().map(|c| c.index).collect();
        assert_eq!(at, [30, 90, 120]);
        assert!((cps[0].mean_after / cps[0].mean_before - 0.8).abs() < 0.02);
    }

    #[test]
    fn a_drop_in_the_last_runs_is_found() {
        for seed in 0..20 {
            let x = series(40, &[(36, 0.85)], 0.02, 100 + seed);
            let cps = detect(&x, &Options::default());
            assert!(cps.iter().any(|c| c.index == 36), "seed {seed}: {cps:?}");
        }
    }

    #[test]
    fn pure_noise_gives_few_false_alarms() {
        // 50 series of 200 runs at 3% noise: 10,000 runs without a shift.
        let mut alarms = 0;
        for seed in 0..50 {
            let x = series(200, &[], 0.03, 1000 + seed);
            alarms += detect(&x, &Options::default()).len();
        }
        eprintln!("{alarms} false alarms over 10,000 runs of noise");
        assert!(alarms <= 2, "{alarms} false alarms over 10,000 runs");
    }

    #[test]
    fn a_minimum_magnitude_drops_small_shifts() {
        let x = series(60, &[(30, 0.97)], 0.002, 3);
        assert_eq!(detect(&x, &Options::default()).len(), 1);
        let opts = Options {
            min_magnitude: 0.05,
            ..Options::default()
        };
        assert!(detect(&x, &opts).is_empty());
    }

    #[test]
    fn short_series_have_no_change_points() {
        assert!(detect(&[], &Options::default()).is_empty());
        assert!(detect(&[1.0, 2.0, 3.0], &Options::default()).is_empty());
    }
}
