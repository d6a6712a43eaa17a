//! `--mix`: the entries of a weighted mix, the alias table each request is drawn from (one
//! random number, one multiply and one compare per request, whatever the number of entries),
//! and the requests to prepare (one per URL, or one per mix entry).

use super::{ConfigError, Url};
use serverbench_model::MixEntry;

/// Walker's alias table (Vose's construction) over the entries' weights.
#[derive(Debug, Clone)]
pub struct Picker {
    /// Per column: the threshold (out of 2^32) under which the column itself is drawn.
    keep: Vec<u64>,
    /// Per column: the entry drawn above the threshold.
    alias: Vec<u32>,
}

impl Picker {
    /// A table for `weights` (each finite and >= 0, some > 0).
    pub fn new(weights: &[f64]) -> Picker {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        let mut keep = vec![1u64 << 32; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            keep[s] = (scaled[s] * (1u64 << 32) as f64) as u64;
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // What is left (rounding) keeps its own column whole.
        Picker { keep, alias }
    }

    /// The entry for 64 random bits: the high half picks a column, the low half the side.
    #[inline]
    pub fn pick(&self, bits: u64) -> usize {
        let col = (((bits >> 32) * self.keep.len() as u64) >> 32) as usize;
        if (bits & 0xffff_ffff) < self.keep[col] {
            col
        } else {
            self.alias[col] as usize
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.keep.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keep.is_empty()
    }
}

/// A mix as the engine runs it: the entries (their requests are the protocol's, in the same
/// order) and the table they are drawn from.
#[derive(Debug, Clone)]
pub struct MixPlan {
    pub entries: Vec<MixEntry>,
    pub picker: Picker,
}

impl MixPlan {
    pub fn new(entries: &[MixEntry]) -> MixPlan {
        let weights: Vec<f64> = entries.iter().map(|e| e.weight).collect();
        MixPlan {
            entries: entries.to_vec(),
            picker: Picker::new(&weights),
        }
    }
}

/// One request to prepare: what a URL (with the flags) or a mix entry asks for.
pub(super) struct Wanted<'a> {
    pub(super) method: &'a str,
    pub(super) path: &'a str,
    pub(super) headers: Vec<String>,
    pub(super) body: Option<&'a [u8]>,
}

/// The requests to prepare: one per URL with the flags, or with `--mix` one per entry (then
/// one URL, without a path, gives where to send them).
pub(super) fn wanted<'a>(
    method: &'a str,
    urls: &'a [Url],
    headers: &'a [String],
    body: Option<&'a [u8]>,
    mix: Option<&'a serverbench_model::Mix>,
) -> Result<Vec<Wanted<'a>>, ConfigError> {
    let Some(mix) = mix else {
        return Ok(urls
            .iter()
            .map(|u| Wanted {
                method,
                path: &u.path,
                headers: headers.to_vec(),
                body,
            })
            .collect());
    };
    if urls.len() > 1 || urls[0].path != "/" {
        return Err(ConfigError::flag(
            "--mix",
            "give one URL without a path (the mix names the paths), e.g. http://127.0.0.1:8080",
        ));
    }
    for e in &mix.entries {
        if let Some(h) = e.headers.iter().find(|h| h.contains(['\r', '\n'])) {
            return Err(ConfigError::flag(
                "--mix",
                format!("`{h}` is not `Name: value`"),
            ));
        }
    }
    Ok(mix
        .entries
        .iter()
        .map(|e| Wanted {
            method: &e.method,
            path: &e.path,
            headers: headers.iter().chain(&e.headers).cloned().collect(),
            body: e.body.as_deref(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_wire::ws::Rng;

    fn shares(weights: &[f64], draws: usize) -> Vec<f64> {
        let p = Picker::new(weights);
        let mut rng = Rng::new(7);
        let mut counts = vec![0usize; weights.len()];
        for _ in 0..draws {
            counts[p.pick(rng.next_u64())] += 1;
        }
        counts.iter().map(|&c| c as f64 / draws as f64).collect()
    }

    #[test]
    fn draws_follow_the_weights() {
        let weights = [3.0, 1.0, 0.5, 0.0, 5.5];
        let total: f64 = weights.iter().sum();
        for (got, w) in shares(&weights, 200_000).iter().zip(weights) {
            assert!((got - w / total).abs() < 0.005, "{got} vs {}", w / total);
        }
    }

    #[test]
    fn an_entry_of_weight_zero_is_never_drawn_and_one_entry_always_is() {
        assert_eq!(shares(&[0.0, 1.0, 0.0], 10_000)[1], 1.0);
        assert_eq!(shares(&[2.0], 1000), [1.0]);
    }
}
