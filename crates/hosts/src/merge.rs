//! Exact merging of load results from several client hosts.
//!
//! Latency percentiles are read from the sum of the hosts' HdrHistograms (never averaged),
//! the connect and TLS handshake latencies too; counters, errors, status codes and CPU add up;
//! the timeline adds up second by second, its per-second p99 read from the summed latency
//! buckets and its mean weighted by sample counts; requests in flight at the end add up and the
//! silences are those of every host at once. TLS and each protocol's own block are merged by
//! the model's exact merges ([`TlsResult::merge`], [`ProtocolResult::merge`]), the ones the
//! engine's threads use too.

use serverbench_model::histo::{
    self, latency_of, merge_sparse, new_histogram, p99_of_buckets, HistogramError,
};
use serverbench_model::result::{
    self, Histograms, IdleResult, LoadResult, ProtocolPart, ProtocolResult, Silence, TimelinePoint,
    TlsResult,
};

/// A result that cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no result to merge")]
    Empty,
    /// A host's result carries no histograms (an older serverbench).
    #[error("{host}: its result has no histograms (is serverbench the same version there?)")]
    NoHistograms {
        /// The host.
        host: String,
    },
    /// A host's histogram does not decode.
    #[error("{host}: {source}")]
    Histogram {
        /// The host.
        host: String,
        /// The cause.
        source: HistogramError,
    },
    /// A host's protocol block cannot join the first host's (another workload, other `--mix`
    /// entries, a histogram that does not decode).
    #[error("{host}: {source}")]
    Protocol {
        /// The host.
        host: String,
        /// The cause.
        source: result::MergeError,
    },
}

/// Merges `(host, result)` pairs into one result.
pub fn merge(parts: &[(String, LoadResult)]) -> Result<LoadResult, MergeError> {
    let (_, first) = parts.first().ok_or(MergeError::Empty)?;
    let mut latency = new_histogram();
    let mut uncorrected = first.latency_us_uncorrected.is_some().then(new_histogram);
    let mut buckets: Vec<Vec<(u16, u32)>> = Vec::new();
    let (mut connect, mut handshake) = (new_histogram(), new_histogram());
    for (host, r) in parts {
        let h = r
            .histograms
            .as_ref()
            .ok_or_else(|| MergeError::NoHistograms { host: host.clone() })?;
        let bad = |source| MergeError::Histogram {
            host: host.clone(),
            source,
        };
        histo::add_encoded(&mut latency, &h.latency_us).map_err(bad)?;
        if let (Some(acc), Some(text)) = (&mut uncorrected, &h.latency_us_uncorrected) {
            histo::add_encoded(acc, text).map_err(bad)?;
        }
        for (acc, text) in [
            (&mut connect, &h.connect_latency_us),
            (&mut handshake, &h.handshake_latency_us),
        ] {
            if let Some(text) = text {
                histo::add_encoded(acc, text).map_err(bad)?;
            }
        }
        if buckets.len() < h.timeline_buckets.len() {
            buckets.resize(h.timeline_buckets.len(), Vec::new());
        }
        for (acc, b) in buckets.iter_mut().zip(&h.timeline_buckets) {
            *acc = merge_sparse(acc, b);
        }
    }
    let results: Vec<&LoadResult> = parts.iter().map(|(_, r)| r).collect();
    let mut m = sum_counters(&results);
    m.latency_us = latency_of(&latency);
    m.latency_us_uncorrected = uncorrected.as_ref().map(latency_of);
    m.timeline = merge_timeline(&results, &buckets);
    let connected = !connect.is_empty();
    m.connects = results.iter().map(|r| r.connects).sum::<Option<u64>>();
    m.connects_per_s = m.connects.map(|n| n as f64 / m.duration_s.max(1e-9));
    m.connect_latency_us = connected.then(|| latency_of(&connect));
    let tls: Vec<&TlsResult> = results.iter().filter_map(|r| r.tls.as_ref()).collect();
    m.tls = TlsResult::merge(&tls, m.duration_s, m.client_cpu_s, latency_of(&handshake));
    let mut histograms = Histograms {
        latency_us: histo::encode(&latency),
        latency_us_uncorrected: uncorrected.as_ref().map(histo::encode),
        timeline_buckets: buckets,
        connect_latency_us: connected.then(|| histo::encode(&connect)),
        handshake_latency_us: m.tls.as_ref().map(|_| histo::encode(&handshake)),
        ..Histograms::default()
    };
    let protocol: Vec<ProtocolPart> = results.iter().map(|r| ProtocolPart::from(*r)).collect();
    m.protocol = ProtocolResult::merge(&protocol, &m, &mut histograms).map_err(|source| {
        MergeError::Protocol {
            host: parts[source.part()].0.clone(),
            source,
        }
    })?;
    m.histograms = Some(histograms);
    Ok(m)
}

/// Everything that adds up (or is the same on every host).
fn sum_counters(rs: &[&LoadResult]) -> LoadResult {
    let first = rs[0];
    let sum_u = |f: fn(&LoadResult) -> u64| rs.iter().map(|r| f(r)).sum::<u64>();
    let sum_f = |f: fn(&LoadResult) -> f64| rs.iter().map(|r| f(r)).sum::<f64>();
    let sum_opt = |f: fn(&LoadResult) -> Option<f64>| rs.iter().map(|r| f(r)).sum::<Option<f64>>();
    let requests = sum_u(|r| r.requests);
    let duration_s = rs.iter().map(|r| r.duration_s).fold(0.0, f64::max);
    let connections: u32 = rs.iter().map(|r| r.connections).sum();
    let cpu = sum_f(|r| r.client_cpu_s);
    let mut errors = first.errors.clone();
    let mut status = first.status.clone();
    for r in &rs[1..] {
        errors.add(&r.errors);
        for (code, n) in &r.status {
            *status.entry(code.clone()).or_insert(0) += n;
        }
    }
    let (bytes_read, bytes_written) = (sum_u(|r| r.bytes_read), sum_u(|r| r.bytes_written));
    LoadResult {
        target: first.target.clone(),
        connections,
        threads: rs.iter().map(|r| r.threads).sum(),
        requests,
        duration_s,
        rps: requests as f64 / duration_s.max(1e-9),
        bytes_read,
        bytes_written,
        errors,
        status,
        client_cpu_s: cpu,
        client_cpu_us_per_request: (requests > 0).then(|| cpu * 1e6 / requests as f64),
        client_saturated: rs.iter().any(|r| r.client_saturated),
        rate_target: sum_opt(|r| r.rate_target),
        rate_achieved: sum_opt(|r| r.rate_achieved),
        late: rs.iter().map(|r| r.late).sum(),
        in_flight_at_end: sum_u(|r| r.in_flight_at_end),
        // Hosts started together (their offsets coincide): silent where every host was.
        silences: Silence::intersect(&rs.iter().map(|r| &r.silences[..]).collect::<Vec<_>>()),
        measure_start_unix_s: rs
            .iter()
            .filter_map(|r| r.measure_start_unix_s)
            .reduce(f64::min),
        idle: merge_idle(rs),
        // Hosts may differ (one kernel refuses io_uring): then each host's record tells.
        io: first.io.filter(|io| rs.iter().all(|r| r.io == Some(*io))),
        notes: rs
            .iter()
            .flat_map(|r| &r.notes)
            .fold(Vec::new(), |mut all, n| {
                if !all.contains(n) {
                    all.push(n.clone());
                }
                all
            }),
        ..LoadResult::default()
    }
}

/// Naps add up (the mean weighted by each host's naps); the longest is the longest anywhere.
/// The policy is the one every host was given.
fn merge_idle(rs: &[&LoadResult]) -> Option<IdleResult> {
    let all: Vec<&IdleResult> = rs.iter().filter_map(|r| r.idle.as_ref()).collect();
    let first = all.first()?;
    let naps: u64 = all.iter().map(|i| i.naps).sum();
    let napped: f64 = all.iter().map(|i| i.nap_us_mean * i.naps as f64).sum();
    Some(IdleResult {
        policy: first.policy,
        naps,
        nap_us_mean: if naps > 0 { napped / naps as f64 } else { 0.0 },
        nap_us_max: all.iter().map(|i| i.nap_us_max).fold(0.0, f64::max),
    })
}

/// The timelines added second by second (hosts started together: their second 0 coincide).
/// Means are weighted by each host's latency samples in that second (its bucket counts).
fn merge_timeline(rs: &[&LoadResult], buckets: &[Vec<(u16, u32)>]) -> Vec<TimelinePoint> {
    let len = rs.iter().map(|r| r.timeline.len()).max().unwrap_or(0);
    let samples = |r: &LoadResult, i: usize| -> f64 {
        r.histograms
            .as_ref()
            .and_then(|h| h.timeline_buckets.get(i))
            .map_or(0.0, |b| b.iter().map(|&(_, c)| f64::from(c)).sum())
    };
    (0..len)
        .map(|i| {
            let points: Vec<(&LoadResult, &TimelinePoint)> = rs
                .iter()
                .filter_map(|r| Some((*r, r.timeline.get(i)?)))
                .collect();
            let weight: f64 = points.iter().map(|(r, _)| samples(r, i)).sum();
            let weighted: f64 = points
                .iter()
                .map(|(r, p)| p.latency_mean_us * samples(r, i))
                .sum();
            TimelinePoint {
                second: i as u32,
                requests: points.iter().map(|(_, p)| p.requests).sum(),
                errors: points.iter().map(|(_, p)| p.errors).sum(),
                latency_mean_us: if weight > 0.0 { weighted / weight } else { 0.0 },
                latency_p99_us: buckets.get(i).map_or(0.0, |b| p99_of_buckets(b)),
                bytes_read: points.iter().map(|(_, p)| p.bytes_read).sum(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
