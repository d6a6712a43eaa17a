//! `--mix`: each entry's requests, errors and latency histogram, per thread (a fixed-size
//! histogram per entry, allocated before the run), merged exactly.

use super::{count_error, latency_of, new_histogram, ErrorKind};
use crate::config::MixPlan;
use crate::result::{Errors, MixEntryResult};
use hdrhistogram::Histogram;
use serverbench_model::histo::encode;

/// One entry's figures.
pub struct EntryStats {
    pub requests: u64,
    pub errors: Errors,
    pub latency: Histogram<u64>,
}

impl EntryStats {
    pub fn new() -> EntryStats {
        EntryStats {
            requests: 0,
            errors: Errors::default(),
            latency: new_histogram(),
        }
    }

    #[inline]
    pub fn record(&mut self, us: u64) {
        self.requests += 1;
        self.latency.saturating_record(us);
    }

    #[inline]
    pub fn error(&mut self, kind: ErrorKind) {
        count_error(&mut self.errors, kind);
    }
}

impl Default for EntryStats {
    fn default() -> Self {
        EntryStats::new()
    }
}

/// The entries' results and their encoded histograms, in the mix's order.
pub fn results(plan: &MixPlan, stats: &[EntryStats]) -> (Vec<MixEntryResult>, Vec<String>) {
    plan.entries
        .iter()
        .zip(stats)
        .map(|(e, s)| {
            let r = MixEntryResult {
                name: e.name.clone(),
                method: e.method.clone(),
                path: e.path.clone(),
                weight: e.weight,
                requests: s.requests,
                errors: s.errors.clone(),
                latency_us: latency_of(&s.latency),
            };
            (r, encode(&s.latency))
        })
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_counts_its_requests_errors_and_latencies() {
        let mut a = EntryStats::new();
        a.record(100);
        a.record(300);
        a.error(ErrorKind::Status);
        assert_eq!((a.requests, a.errors.status), (2, 1));
        assert_eq!(a.latency.max(), 300);
        assert_eq!(a.latency.len(), 2);
    }
}
