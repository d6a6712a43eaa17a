//! Latency histograms on the wire: the codec lives in the model
//! ([`serverbench_model::histo`]); the engine adds the histograms of a finished run.

use serverbench_model::histo::encode;

use crate::result::Histograms;
use crate::stats::Second;
use hdrhistogram::Histogram;

/// The histograms of a finished run: the request latency (and `-R`'s uncorrected one), each
/// second's buckets, and the connect and TLS handshake latencies when there were any (the
/// protocol's own, upgrades and `--mix` entries, come from its merge).
pub(crate) fn of_run(
    latency: &Histogram<u64>,
    uncorrected: Option<&Histogram<u64>>,
    seconds: &[Second],
    connect: Option<&Histogram<u64>>,
    handshake: Option<&Histogram<u64>>,
) -> Histograms {
    Histograms {
        latency_us: encode(latency),
        latency_us_uncorrected: uncorrected.map(encode),
        timeline_buckets: seconds.iter().map(|s| s.buckets.clone()).collect(),
        connect_latency_us: connect.map(encode),
        handshake_latency_us: handshake.map(encode),
        ..Histograms::default()
    }
}
