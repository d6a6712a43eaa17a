//! Silences: spans of a load's measured window in which no request was answered at all, kept
//! by the engine per thread and merged across threads and client hosts (see
//! `LoadResult::silences`; the engine's `stats::silence` says how they are measured).

use serde::{Deserialize, Serialize};

/// A span of the measured window in which no request was answered on any connection, in
/// seconds from the start of measurement. Only spans of at least [`Silence::SHORTEST_S`] are
/// kept: shorter ones never make a stall.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Silence {
    pub from_s: f64,
    pub to_s: f64,
}

impl Silence {
    /// The shortest silence kept.
    pub const SHORTEST_S: f64 = 1.0;

    /// How long it lasted.
    pub fn seconds(&self) -> f64 {
        self.to_s - self.from_s
    }

    /// The longest of `silences`.
    pub fn longest(silences: &[Silence]) -> Option<Silence> {
        silences
            .iter()
            .copied()
            .max_by(|a, b| a.seconds().total_cmp(&b.seconds()))
    }

    /// The spans in which every one of `parts` was silent (each sorted and disjoint), the
    /// shortest dropped: what several threads' or hosts' silences are as one. Exact for every
    /// silence of at least [`Silence::SHORTEST_S`], since each part kept every such span.
    pub fn intersect(parts: &[&[Silence]]) -> Vec<Silence> {
        let Some((first, rest)) = parts.split_first() else {
            return Vec::new();
        };
        let mut acc = first.to_vec();
        for part in rest {
            acc = intersect_two(&acc, part);
        }
        acc.retain(|s| s.seconds() >= Self::SHORTEST_S);
        acc
    }
}

/// The overlaps of two sorted, disjoint span lists.
fn intersect_two(a: &[Silence], b: &[Silence]) -> Vec<Silence> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let from_s = a[i].from_s.max(b[j].from_s);
        let to_s = a[i].to_s.min(b[j].to_s);
        if from_s < to_s {
            out.push(Silence { from_s, to_s });
        }
        if a[i].to_s < b[j].to_s {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(from_s: f64, to_s: f64) -> Silence {
        Silence { from_s, to_s }
    }

    #[test]
    fn a_silence_of_all_parts_is_where_their_silences_overlap() {
        let a = [s(0.0, 1.5), s(2.0, 5.8)];
        let b = [s(1.0, 4.5), s(5.0, 9.0)];
        let both = Silence::intersect(&[&a, &b]);
        assert_eq!(
            both,
            vec![s(2.0, 4.5)],
            "overlaps under a second are dropped"
        );
        assert_eq!(Silence::longest(&both).map(|l| l.seconds()), Some(2.5));
    }

    #[test]
    fn one_part_that_answered_throughout_leaves_no_silence() {
        assert!(Silence::intersect(&[&[s(0.0, 5.0)], &[]]).is_empty());
        assert_eq!(Silence::intersect(&[&[s(0.0, 5.0)]]), vec![s(0.0, 5.0)]);
        assert!(Silence::intersect(&[]).is_empty());
    }
}
