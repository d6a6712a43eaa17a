//! Axis scales and "nice" tick values.

/// Target number of ticks on an axis.
pub const TARGET_TICKS: usize = 5;

/// Tick values covering `[lo, hi]` at a step of 1, 2 or 5 times a power of ten (Heckbert,
/// "Nice numbers for graph labels", Graphics Gems, 1990). Returns at least two ticks; the first
/// is <= `lo` and the last >= `hi`.
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    let raw = (hi - lo) / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).floor() * step;
    let mut ticks = Vec::new();
    for i in 0.. {
        let v = first + f64::from(i) * step;
        ticks.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        // Until a tick covers `hi` (within rounding), and at least two ticks.
        if i >= 1 && v >= hi - step * 1e-9 {
            break;
        }
    }
    ticks
}

/// Formats a value for an axis or a label: `950`, `12.5k`, `1.25M`, `0.5`.
pub fn format_number(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if scaled.abs() >= 100.0 || scaled == scaled.trunc() {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// Maps a data interval onto a pixel interval.
#[derive(Debug, Clone, Copy)]
pub struct Linear {
    pub d0: f64,
    pub d1: f64,
    pub p0: f64,
    pub p1: f64,
}

impl Linear {
    pub fn map(&self, v: f64) -> f64 {
        if self.d1 == self.d0 {
            return self.p0;
        }
        self.p0 + (v - self.d0) / (self.d1 - self.d0) * (self.p1 - self.p0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks_use_round_steps_that_cover_the_range() {
        assert_eq!(
            nice_ticks(0.0, 97.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(
            nice_ticks(0.0, 1.0, 5),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
    }

    #[test]
    fn the_last_tick_covers_a_maximum_past_the_middle_of_a_step() {
        assert_eq!(
            nice_ticks(0.0, 110_000.0, 5),
            vec![0.0, 50_000.0, 100_000.0, 150_000.0]
        );
    }

    #[test]
    fn nice_ticks_survive_an_empty_range() {
        let t = nice_ticks(5.0, 5.0, 5);
        assert!(t.len() >= 2 && t[0] <= 5.0 && *t.last().unwrap() >= 5.0);
    }

    #[test]
    fn numbers_are_shortened_with_si_suffixes() {
        assert_eq!(format_number(950.0), "950");
        assert_eq!(format_number(12_500.0), "12.5k");
        assert_eq!(format_number(1_250_000.0), "1.25M");
        assert_eq!(format_number(0.5), "0.5");
    }

    #[test]
    fn linear_scale_maps_ends_onto_ends() {
        let s = Linear {
            d0: 0.0,
            d1: 10.0,
            p0: 100.0,
            p1: 200.0,
        };
        assert_eq!(s.map(0.0), 100.0);
        assert_eq!(s.map(10.0), 200.0);
        assert_eq!(s.map(5.0), 150.0);
    }
}
