//! The [`LoadResult`] of a finished run: the common figures from the threads' merged
//! [`Stats`], and the protocol's block from each thread's, joined by the model's exact merge
//! ([`ProtocolResult::merge`], the one `--hosts` uses too).

use super::{latency_of, Stats};
use crate::config::{Config, Lifetime, Schedule};
use crate::histo;
use crate::tls;
use serverbench_model::result::{
    self, ConnectionMode, Histograms, LoadResult, ProtocolPart, ProtocolResult,
};
use std::time::Duration;

/// One thread's protocol block, and the histograms only it has (WebSocket upgrades, `--mix`
/// entries). Its rates and Mbps are left at 0: the merge recomputes them over the run.
pub(crate) fn protocol_part(config: &Config, s: &Stats) -> (ProtocolResult, Histograms) {
    let mut h = Histograms::default();
    let (mix, mix_latency_us) = match &config.mix {
        Some(plan) => super::mix_results(plan, &s.mix),
        None => Default::default(),
    };
    h.mix_latency_us = mix_latency_us;
    let connection_mode = match config.lifetime {
        Lifetime::KeepAlive => ConnectionMode::KeepAlive,
        Lifetime::PerRequest => ConnectionMode::NewConn,
    };
    let p = crate::proto::protocol_part(config, s, (connection_mode, mix), &mut h);
    (p, h)
}

/// The run's result: `s` the threads' merged statistics, `parts` each thread's
/// [`protocol_part`].
pub(crate) fn load_result(
    config: &Config,
    threads: usize,
    (s, parts): (&Stats, &[(ProtocolResult, Histograms)]),
    duration: Duration,
    (cpu_s, waited_s): (f64, f64),
) -> LoadResult {
    let secs = duration.as_secs_f64().max(1e-9);
    let stream_message = crate::proto::stream_message_len(config);
    let message_len = stream_message.unwrap_or(0) as u64;
    let requests = s.bytes_read.checked_div(message_len).unwrap_or(s.requests);
    let rate = matches!(config.schedule, Schedule::Rate { .. });
    let seconds = duration.as_secs_f64().ceil() as usize;
    let connects = s.conn.connects;
    let mut histograms = histo::of_run(
        &s.latency,
        s.uncorrected.as_ref(),
        &s.seconds[..seconds.min(s.seconds.len())],
        (connects > 0).then_some(&s.conn.connect),
        config.tls.is_some().then_some(&s.conn.handshake),
    );
    let stream = stream_message.is_some();
    let mut r = LoadResult {
        target: config.target.clone(),
        connections: config.spec.connections,
        threads: threads as u32,
        requests,
        duration_s: secs,
        rps: requests as f64 / secs,
        bytes_read: s.bytes_read,
        bytes_written: s.bytes_written,
        latency_us: latency_of(&s.latency),
        errors: s.errors.clone(),
        status: (s.status.iter().enumerate())
            .filter(|&(code, &n)| code > 0 && n > 0)
            .map(|(code, &n)| (code.to_string(), n))
            .collect(),
        client_cpu_s: cpu_s,
        client_cpu_us_per_request: (requests > 0).then(|| cpu_s * 1e6 / requests as f64),
        // Busy, or runnable and waiting for a CPU (a client sharing its cores falls behind
        // the schedule without ever showing 90% of CPU).
        client_saturated: (cpu_s + waited_s) / (secs * ran_on(config, threads) as f64) >= 0.9,
        timeline: s.timeline(seconds),
        rate_target: match config.schedule {
            Schedule::Rate { per_second } => Some(per_second),
            Schedule::ClosedLoop { .. } => None,
        },
        rate_achieved: rate.then(|| s.sent as f64 / secs),
        late: rate.then_some(s.late),
        latency_us_uncorrected: s.uncorrected.as_ref().map(latency_of),
        connects: Some(connects),
        connects_per_s: Some(connects as f64 / secs),
        connect_latency_us: (connects > 0).then(|| latency_of(&s.conn.connect)),
        tls: (config.tls.as_ref()).map(|t| tls_result(config, t, s, secs, cpu_s)),
        idle: Some(config.idle.result(&s.naps)),
        in_flight_at_end: s.in_flight_at_end,
        // A stream has no answers to time: it would read as silent throughout.
        silences: if stream { Vec::new() } else { s.silences_s() },
        ..LoadResult::default()
    };
    let empty;
    let parts = match parts.is_empty() {
        true => {
            empty = [protocol_part(config, s)];
            &empty[..]
        }
        false => parts,
    };
    let parts: Vec<ProtocolPart> = (parts.iter())
        .map(|(protocol, histograms)| ProtocolPart {
            protocol,
            histograms: Some(histograms),
        })
        .collect();
    r.protocol = ProtocolResult::merge(&parts, &r, &mut histograms)
        .expect("the threads ran one workload and encoded their own histograms");
    r.histograms = Some(histograms);
    r
}

/// The CPUs the threads ran on (at least 1).
fn ran_on(config: &Config, threads: usize) -> usize {
    if config.spec.cpus.is_empty() {
        threads.min(serverbench_machine::affinity::affinity_cpus().len())
    } else {
        let mut used: Vec<usize> = (0..threads)
            .map(|i| config.spec.cpus[i % config.spec.cpus.len()])
            .collect();
        used.sort_unstable();
        used.dedup();
        used.len()
    }
    .max(1)
}

fn tls_result(
    config: &Config,
    spec: &tls::TlsSpec,
    s: &Stats,
    secs: f64,
    cpu_s: f64,
) -> result::TlsResult {
    let c = &s.conn;
    let n = c.negotiated;
    let handshakes = c.handshakes();
    let per_request = config.lifetime == Lifetime::PerRequest;
    result::TlsResult {
        version: n.map(|n| n.version.to_string()),
        cipher_suite: n.and_then(|n| n.cipher_suite).map(|c| c.to_string()),
        key_exchange_group: n.map(|n| n.key_exchange_group.to_string()),
        alpn: n.and_then(|n| n.alpn).map(str::to_string),
        mixed: c.mixed,
        resume: spec.resume.as_str().to_string(),
        handshakes,
        handshakes_full: c.handshakes_full,
        handshakes_resumed: c.handshakes_resumed,
        handshakes_per_s: handshakes as f64 / secs,
        handshake_latency_us: latency_of(&c.handshake),
        client_cpu_us_per_handshake: (per_request && handshakes > 0)
            .then(|| cpu_s * 1e6 / handshakes as f64),
        errors: (c.tls_errors.iter())
            .map(|(cause, n)| (cause.to_string(), *n))
            .collect(),
    }
}
