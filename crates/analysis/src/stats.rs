//! Statistics over laps: descriptive statistics, a bootstrap interval of the median, outlier
//! detection and a ranking that does not separate servers whose intervals overlap.
//!
//! References:
//! - Quantiles use the linear interpolation of Hyndman & Fan (1996), "Sample quantiles in
//!   statistical packages", The American Statistician 50(4), definition 7 (the default of R,
//!   NumPy and Excel's `PERCENTILE`).
//! - The interval of the median is the percentile bootstrap of Efron & Tibshirani (1993),
//!   "An Introduction to the Bootstrap", chapter 13.
//! - Outliers use Tukey's fences (Tukey 1977, "Exploratory Data Analysis"): below
//!   Q1 - 1.5 IQR or above Q3 + 1.5 IQR. They are reported, never removed.
//!
//! Every function takes plain `f64` samples (one per lap) and guards against empty input, a
//! single lap and zeros: it returns `None` instead of inventing a number.

use serde::{Deserialize, Serialize};
use std::hash::Hasher;

/// A result whose coefficient of variation is above this is marked noisy (5%).
pub const NOISY_CV: f64 = 0.05;
/// Confidence level of the intervals we report.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;
/// Bootstrap resamples: 10,000 keeps the Monte Carlo error of a 95% bound well under 1%.
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// Seed of the bootstrap generator, so a report is the same every time it is rendered.
pub const DEFAULT_SEED: u64 = 0x5EB0_0757_2A9D_1C3B;
/// Below this many laps the bootstrap is meaningless; the interval is the min..max range.
pub const MIN_LAPS_FOR_BOOTSTRAP: usize = 3;
/// Tukey's fence multiplier.
pub const TUKEY_K: f64 = 1.5;
/// Tukey's fences cannot flag anything with three samples (the fences always enclose them), so
/// outlier detection starts at four laps.
pub const MIN_LAPS_FOR_OUTLIERS: usize = 4;

/// Descriptive statistics of one set of samples (one sample per lap).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (divisor n - 1); 0 for a single sample.
    pub stdev: f64,
    /// Coefficient of variation `stdev / mean`; 0 when the mean is 0.
    pub cv: f64,
}

impl Stats {
    /// Statistics of `samples`; `None` when there are none or any is not finite.
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let sorted = sorted(samples);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let stdev = if n > 1 {
            let ss: f64 = sorted.iter().map(|x| (x - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let cv = if mean != 0.0 { stdev / mean.abs() } else { 0.0 };
        Some(Stats {
            n,
            median: quantile_sorted(&sorted, 0.5),
            min: sorted[0],
            max: sorted[n - 1],
            mean,
            stdev,
            cv,
        })
    }

    /// True when the coefficient of variation is above [`NOISY_CV`].
    pub fn is_noisy(&self) -> bool {
        self.cv > NOISY_CV
    }
}

/// How an interval was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Percentile bootstrap (Efron & Tibshirani 1993).
    Bootstrap,
    /// Fewer than [`MIN_LAPS_FOR_BOOTSTRAP`] laps: the plain min..max range of the laps.
    Range,
}

/// A two-sided interval around an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub method: IntervalMethod,
}

impl Interval {
    /// True when the two intervals share at least one point.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.low <= other.high && other.low <= self.high
    }

    /// True when `x` lies inside the interval (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// The type-7 quantile (Hyndman & Fan 1996) of already sorted, non-empty samples; `p` in 0..=1.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The median of `samples`; `None` when empty.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    Some(quantile_sorted(&sorted(samples), 0.5))
}

/// The best lap: the maximum, for throughput (higher is better). `None` when empty.
pub fn best(samples: &[f64]) -> Option<f64> {
    samples.iter().copied().reduce(f64::max)
}

/// A percentile-bootstrap `confidence` interval of the median of `samples`.
///
/// With fewer than [`MIN_LAPS_FOR_BOOTSTRAP`] samples the bootstrap cannot say anything useful
/// (with two laps every resample median is one of three values), so the min..max range is
/// returned with [`IntervalMethod::Range`]. `None` when `samples` is empty.
pub fn bootstrap_median_ci(
    samples: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let stats = Stats::of(samples)?;
    if samples.len() < MIN_LAPS_FOR_BOOTSTRAP || resamples == 0 {
        return Some(Interval {
            low: stats.min,
            high: stats.max,
            method: IntervalMethod::Range,
        });
    }
    let mut rng = SplitMix64::new(seed);
    let mut scratch = vec![0.0; samples.len()];
    let estimates: Vec<f64> = (0..resamples)
        .map(|_| resample_median(samples, &mut scratch, &mut rng))
        .collect();
    Some(percentile_interval(estimates, confidence))
}

/// A `confidence` interval of `median(new) / median(old)`, resampling each side's laps
/// independently (percentile bootstrap of the ratio of medians).
///
/// When either side has fewer than [`MIN_LAPS_FOR_BOOTSTRAP`] laps, the interval is the widest
/// ratio the laps allow, `min(new)/max(old) ..= max(new)/min(old)` ([`IntervalMethod::Range`]).
/// `None` when either side is empty or old's laps include zero or less (no ratio exists).
pub fn bootstrap_ratio_ci(
    old: &[f64],
    new: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let (o, n) = (Stats::of(old)?, Stats::of(new)?);
    if o.min <= 0.0 {
        return None;
    }
    let few = old.len().min(new.len()) < MIN_LAPS_FOR_BOOTSTRAP;
    if few || resamples == 0 {
        return Some(Interval {
            low: n.min / o.max,
            high: n.max / o.min,
            method: IntervalMethod::Range,
        });
    }
    let mut rng = SplitMix64::new(seed);
    let (mut s_old, mut s_new) = (vec![0.0; old.len()], vec![0.0; new.len()]);
    let estimates: Vec<f64> = (0..resamples)
        .map(|_| {
            let m_old = resample_median(old, &mut s_old, &mut rng);
            resample_median(new, &mut s_new, &mut rng) / m_old
        })
        .collect();
    Some(percentile_interval(estimates, confidence))
}

/// Indices of samples outside Tukey's fences (Q1 - 1.5 IQR, Q3 + 1.5 IQR). Empty with fewer than
/// [`MIN_LAPS_FOR_OUTLIERS`] samples. Outliers are for warnings only; never drop them.
pub fn tukey_outliers(samples: &[f64]) -> Vec<usize> {
    if samples.len() < MIN_LAPS_FOR_OUTLIERS {
        return Vec::new();
    }
    let s = sorted(samples);
    let (q1, q3) = (quantile_sorted(&s, 0.25), quantile_sorted(&s, 0.75));
    let iqr = q3 - q1;
    let (low, high) = (q1 - TUKEY_K * iqr, q3 + TUKEY_K * iqr);
    (0..samples.len())
        .filter(|&i| samples[i] < low || samples[i] > high)
        .collect()
}

/// Ranks items by median, higher is better, so that items whose intervals overlap share a rank.
///
/// The rule (standard competition ranking, "1, 1, 3"): sort by median, highest first. The
/// highest unranked item leads a group and gets rank = 1 + the number of items ranked before it;
/// the items after it, in median order, join that group with the same rank for as long as their
/// intervals overlap the *leader's* interval. Then the next unranked item leads the next group. Comparing with the
/// leader (not the previous member) keeps a chain of small overlaps from tying the first and the
/// last of a long list. An item without an interval uses its median as a point interval.
/// Returns the ranks in the order of `items`; NaN medians get rank `None`.
pub fn rank(items: &[(f64, Option<Interval>)]) -> Vec<Option<u32>> {
    let mut order: Vec<usize> = (0..items.len()).filter(|&i| !items[i].0.is_nan()).collect();
    order.sort_by(|&a, &b| items[b].0.total_cmp(&items[a].0).then(a.cmp(&b)));
    let span = |i: usize| {
        items[i].1.unwrap_or(Interval {
            low: items[i].0,
            high: items[i].0,
            method: IntervalMethod::Range,
        })
    };
    let mut ranks = vec![None; items.len()];
    let mut pos = 0;
    while pos < order.len() {
        let leader = span(order[pos]);
        let group_rank = pos as u32 + 1;
        let mut end = pos;
        while end < order.len() && (end == pos || span(order[end]).overlaps(&leader)) {
            ranks[order[end]] = Some(group_rank);
            end += 1;
        }
        pos = end;
    }
    ranks
}

/// A small deterministic generator (splitmix64, Steele, Lea & Flood 2014): good enough to draw
/// bootstrap indices, and the same sequence on every machine.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index in `0..n` (Lemire's multiply-shift; the bias is below 2^-50 for n < 2^14).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// A stable 64-bit FNV-1a hash of a string, to derive a per-row bootstrap seed.
pub fn seed_for(key: &str) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(key.as_bytes());
    h.finish() ^ DEFAULT_SEED
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Draws `samples.len()` values with replacement into `scratch` and returns their median.
fn resample_median(samples: &[f64], scratch: &mut [f64], rng: &mut SplitMix64) -> f64 {
    for slot in scratch.iter_mut() {
        *slot = samples[rng.below(samples.len())];
    }
    scratch.sort_by(f64::total_cmp);
    quantile_sorted(scratch, 0.5)
}

/// The `(1 - confidence) / 2` and `(1 + confidence) / 2` type-7 quantiles of the estimates.
fn percentile_interval(mut estimates: Vec<f64>, confidence: f64) -> Interval {
    estimates.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    Interval {
        low: quantile_sorted(&estimates, alpha),
        high: quantile_sorted(&estimates, 1.0 - alpha),
        method: IntervalMethod::Bootstrap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    fn iv(low: f64, high: f64) -> Option<Interval> {
        Some(Interval {
            low,
            high,
            method: IntervalMethod::Bootstrap,
        })
    }

    #[test]
    fn stats_match_numpy_for_five_laps() {
        // numpy: median([2,4,4,5,9]) = 4, mean = 4.8, std(ddof=1) = sqrt(6.7) = 2.588435...
        let s = Stats::of(&[9.0, 4.0, 2.0, 5.0, 4.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (5, 4.0, 2.0, 9.0));
        assert!(close(s.mean, 4.8));
        assert!(close(s.stdev, 6.7_f64.sqrt()));
        assert!(close(s.cv, 6.7_f64.sqrt() / 4.8));
        assert!(s.is_noisy());
    }

    #[test]
    fn median_of_an_even_count_interpolates() {
        // numpy.median([1, 2, 3, 10]) = 2.5
        assert_eq!(median(&[10.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn type7_quantiles_match_numpy_percentile() {
        // numpy.percentile([1,2,3,4,5,6,7,8,9,10], [25, 90]) = [3.25, 9.1]
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!(close(quantile_sorted(&v, 0.25), 3.25));
        assert!(close(quantile_sorted(&v, 0.90), 9.1));
    }

    #[test]
    fn one_lap_has_zero_stdev_and_is_not_noisy() {
        let s = Stats::of(&[1234.0]).unwrap();
        assert_eq!((s.median, s.stdev, s.cv), (1234.0, 0.0, 0.0));
        assert!(!s.is_noisy());
    }

    #[test]
    fn empty_or_non_finite_input_gives_no_statistics() {
        assert_eq!(Stats::of(&[]), None);
        assert_eq!(Stats::of(&[1.0, f64::NAN]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(best(&[]), None);
        assert_eq!(bootstrap_median_ci(&[], 0.95, 100, 1), None);
    }

    #[test]
    fn all_zero_laps_have_zero_cv_instead_of_nan() {
        let s = Stats::of(&[0.0, 0.0, 0.0]).unwrap();
        assert_eq!((s.mean, s.cv), (0.0, 0.0));
    }

    #[test]
    fn best_is_the_fastest_lap() {
        assert_eq!(best(&[3.0, 7.0, 5.0]), Some(7.0));
    }

    #[test]
    fn two_laps_give_the_range_not_a_bootstrap() {
        let ci = bootstrap_median_ci(&[100.0, 90.0], 0.95, 10_000, 7).unwrap();
        assert_eq!(
            (ci.low, ci.high, ci.method),
            (90.0, 100.0, IntervalMethod::Range)
        );
    }

    #[test]
    fn bootstrap_interval_is_deterministic_and_brackets_the_median() {
        let laps = [100.0, 102.0, 98.0, 101.0, 99.0, 103.0];
        let a = bootstrap_median_ci(&laps, 0.95, 10_000, 42).unwrap();
        let b = bootstrap_median_ci(&laps, 0.95, 10_000, 42).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.method, IntervalMethod::Bootstrap);
        assert!(a.contains(100.5), "{a:?}");
        assert!(a.low >= 98.0 && a.high <= 103.0, "{a:?}");
    }

    #[test]
    fn bootstrap_of_identical_laps_is_a_point() {
        let ci = bootstrap_median_ci(&[5.0, 5.0, 5.0], 0.95, 1000, 1).unwrap();
        assert_eq!((ci.low, ci.high), (5.0, 5.0));
    }

    #[test]
    fn ratio_interval_excludes_one_for_a_clear_regression() {
        let old = [100.0, 101.0, 102.0];
        let new = [80.0, 81.0, 82.0];
        let ci = bootstrap_ratio_ci(&old, &new, 0.95, 10_000, 3).unwrap();
        // Resampled medians stay within each side's range: 80/102 .. 82/100.
        assert!(
            ci.low >= 80.0 / 102.0 - 1e-12 && ci.high <= 0.82 + 1e-12,
            "{ci:?}"
        );
        assert!(!ci.contains(1.0));
    }

    #[test]
    fn ratio_with_few_laps_is_the_widest_range_and_zero_old_has_none() {
        let ci = bootstrap_ratio_ci(&[100.0, 50.0], &[100.0], 0.95, 100, 1).unwrap();
        assert_eq!(
            (ci.low, ci.high, ci.method),
            (1.0, 2.0, IntervalMethod::Range)
        );
        assert_eq!(
            bootstrap_ratio_ci(&[0.0, 1.0, 2.0], &[1.0; 3], 0.95, 100, 1),
            None
        );
    }

    #[test]
    fn tukey_flags_a_far_lap_but_never_with_three_laps() {
        // Sorted 100, 101, 101, 102, 150: Q1 = 101, Q3 = 102, fences 99.5 and 103.5; 150 is out.
        assert_eq!(
            tukey_outliers(&[100.0, 101.0, 102.0, 150.0, 101.0]),
            vec![3]
        );
        assert!(tukey_outliers(&[1.0, 2.0, 1000.0]).is_empty());
    }

    #[test]
    fn overlapping_intervals_share_a_rank_with_competition_numbering() {
        let items = [
            (90.0, iv(85.0, 95.0)),
            (100.0, iv(95.0, 105.0)),
            (50.0, iv(45.0, 55.0)),
            (94.0, iv(93.0, 96.0)),
        ];
        assert_eq!(rank(&items), vec![Some(1), Some(1), Some(4), Some(1)]);
    }

    #[test]
    fn a_chain_of_overlaps_does_not_tie_the_ends() {
        // B overlaps A, C overlaps B but not A: C starts a new group at its position.
        let items = [
            (100.0, iv(95.0, 105.0)),
            (94.0, iv(89.0, 96.0)),
            (88.0, iv(84.0, 90.0)),
        ];
        assert_eq!(rank(&items), vec![Some(1), Some(1), Some(3)]);
    }

    #[test]
    fn separate_intervals_rank_in_order_and_nan_is_unranked() {
        let items = [(10.0, None), (30.0, None), (f64::NAN, None), (20.0, None)];
        assert_eq!(rank(&items), vec![Some(3), Some(1), None, Some(2)]);
    }

    #[test]
    fn seeds_differ_between_keys_and_are_stable() {
        assert_eq!(seed_for("a"), seed_for("a"));
        assert_ne!(seed_for("a"), seed_for("b"));
        // FNV-1a of "a", as every recorded bootstrap interval was drawn with.
        assert_eq!(seed_for("a"), 0xaf63_dc4c_8601_ec8c ^ DEFAULT_SEED);
    }
}
