//! Student's and Welch's two-sample t-tests (Welch 1947, "The generalization of Student's problem when several
//! different population variances are involved", Biometrika 34), the significance check that
//! Hunter and Apache Otava apply to each change point found by E-divisive means.
//!
//! The two-sided p-value of Student's t with `df` degrees of freedom is the regularized
//! incomplete beta `I_x(df/2, 1/2)` at `x = df / (df + t^2)`, evaluated by the continued
//! fraction of Numerical Recipes (Press et al. 2007, §6.4) with Lentz's method, and ln Γ by
//! Lanczos's approximation (g = 7, n = 9).

/// The outcome of a two-sample test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    /// Welch's t statistic (mean of `b` minus mean of `a`, scaled).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// The mean and the sample variance (0 for a single value).
fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if x.len() < 2 {
        return (mean, 0.0);
    }
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Welch's t-test of `a` against `b`; `None` with fewer than two values on a side. Two
/// constant samples give p = 0 when their means differ and p = 1 when they do not.
pub fn welch(a: &[f64], b: &[f64]) -> Option<TTest> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    if se2 <= 0.0 {
        let p = if ma == mb { 1.0 } else { 0.0 };
        return Some(TTest {
            t: if ma == mb { 0.0 } else { f64::INFINITY },
            df: (a.len() + b.len() - 2) as f64,
            p,
        });
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (a.len() as f64 - 1.0) + sb * sb / (b.len() as f64 - 1.0));
    Some(TTest {
        t,
        df,
        p: student_two_sided(t, df),
    })
}

/// Student's two-sample t-test with pooled variance (what Hunter and Otava apply, through
/// SciPy's `ttest_ind_from_stats` with equal variances): steadier than Welch's on the short
/// segments near a change point, where one side's variance can be tiny by chance. A side may
/// hold a single value (a lone outlier) when the other has two or more; `None` otherwise.
pub fn student(a: &[f64], b: &[f64]) -> Option<TTest> {
    if a.is_empty() || b.is_empty() || a.len() + b.len() < 3 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let df = na + nb - 2.0;
    let pooled = ((na - 1.0) * va + (nb - 1.0) * vb) / df;
    let se2 = pooled * (1.0 / na + 1.0 / nb);
    if se2 <= 0.0 {
        let same = ma == mb;
        return Some(TTest {
            t: if same { 0.0 } else { f64::INFINITY },
            df,
            p: if same { 1.0 } else { 0.0 },
        });
    }
    let t = (mb - ma) / se2.sqrt();
    Some(TTest {
        t,
        df,
        p: student_two_sided(t, df),
    })
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom.
pub fn student_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    incomplete_beta(x, df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// ln Γ(x) for x > 0 (Lanczos).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta I_x(a, b).
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of I_x(a, b) (Lentz).
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p_values_match_published_t_tables() {
        // Two-sided critical values: t(0.975, 10) = 2.228, t(0.995, 30) = 2.750,
        // t(0.975, 1) = 12.706.
        assert!((student_two_sided(2.228, 10.0) - 0.05).abs() < 1e-3);
        assert!((student_two_sided(2.750, 30.0) - 0.01).abs() < 1e-3);
        assert!((student_two_sided(12.706, 1.0) - 0.05).abs() < 1e-3);
        assert!((student_two_sided(0.0, 5.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn welch_separates_shifted_samples_and_not_equal_ones() {
        let a = [10.0, 10.2, 9.9, 10.1, 9.8, 10.0];
        let b = [11.0, 11.1, 10.9, 11.2, 10.8, 11.0];
        assert!(welch(&a, &b).unwrap().p < 1e-6);
        let c = [10.1, 9.9, 10.0, 10.2, 9.8, 10.0];
        assert!(welch(&a, &c).unwrap().p > 0.5);
        assert!(welch(&a[..1], &b).is_none());
        assert!(student(&a, &b).unwrap().p < 1e-6);
        assert!(student(&a, &c).unwrap().p > 0.5);
    }
}
