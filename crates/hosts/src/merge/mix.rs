//! `--mix` across client hosts: each entry's requests and errors add up and its latency is read
//! from the sum of the hosts' histograms for it (never averaged).

use super::MergeError;
use serverbench_model::histo::{self, latency_of, new_histogram};
use serverbench_model::result::{LoadResult, MixEntryResult};

/// The merged entries and their encoded histograms (empty without a mix).
pub(super) fn merge(
    parts: &[(String, LoadResult)],
) -> Result<(Vec<MixEntryResult>, Vec<String>), MergeError> {
    let first = &parts[0].1.mix;
    let mut entries = first.clone();
    let mut hists: Vec<_> = first.iter().map(|_| new_histogram()).collect();
    for e in &mut entries {
        e.requests = 0;
        e.errors = Default::default();
    }
    for (host, r) in parts {
        let texts = r
            .histograms
            .as_ref()
            .map_or(&[][..], |h| &h.mix_latency_us[..]);
        if r.mix.len() != first.len() || texts.len() != first.len() {
            return Err(MergeError::Mix { host: host.clone() });
        }
        for ((acc, e), (h, text)) in entries
            .iter_mut()
            .zip(&r.mix)
            .zip(hists.iter_mut().zip(texts))
        {
            acc.requests += e.requests;
            acc.errors.add(&e.errors);
            histo::add_encoded(h, text).map_err(|source| MergeError::Histogram {
                host: host.clone(),
                source,
            })?;
        }
    }
    for (e, h) in entries.iter_mut().zip(&hists) {
        e.latency_us = latency_of(h);
    }
    Ok((entries, hists.iter().map(histo::encode).collect()))
}
