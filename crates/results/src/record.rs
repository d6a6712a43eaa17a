//! One line of `results.jsonl`: everything measured in one lap of one server x scenario x profile.
//!
//! Fields a tool does not report stay `None` (JSON `null`); nothing is invented.

use crate::{Role, Tool, Transport};
use serde::{Deserialize, Serialize};
use serverbench_model::disturbance::Disturbance;
use serverbench_model::failure::LapFailure;
use serverbench_model::spec::{lap_duration, Pace, Work};
use serverbench_model::Workload;
use std::collections::BTreeMap;

mod measurement;
pub use measurement::{LatencySummary, Measurement};

/// Whether the lap produced a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LapStatus {
    Ok,
    Failed,
}

/// The load parameters of a lap, exactly as given to the load tool: the scenario's [`Work`] and
/// [`Transport`] (the keys a suite's scenario has), the profile's pace and what only a lap has
/// (its warm-up, the server's CPUs in a sweep, the pool, a capacity search). The keys sit side by
/// side, as before the types existed; [`LoadParams::settings_json`] is their canonical text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadParams {
    /// What each connection does: `mode`, `paths`, `message` and `size` (TCP stream message or
    /// ping-pong size; WebSocket: the message or its size), `binary`, `reconnect_every`, `mix`,
    /// and the scenario's `method` when not GET, `body` and `body_size`.
    #[serde(flatten)]
    pub work: Work,
    /// How the lap travelled (`protocol`, `tls`, `new_conn`, `tls_resume`, `streams`, each
    /// absent when plain).
    #[serde(flatten)]
    pub transport: Transport,
    pub connections: u32,
    /// Client threads (0: the tool's default).
    pub threads: u32,
    pub duration_s: Option<f64>,
    pub requests: Option<u64>,
    pub pipeline: u32,
    pub rate: Option<f64>,
    pub warmup_s: f64,
    /// The server's CPU count in a core sweep (`WORKERS` followed it); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<u32>,
    /// Database laps: the pool size given to the server (`DATABASE_POOL`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<u32>,
    /// A capacity search (`find_max` profile): the lap is a whole search, `duration_s` each
    /// step's length; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max: Option<serverbench_model::capacity::FindMax>,
    /// The body sent chunked, in chunks of this many bytes; absent otherwise.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serverbench_model::size::opt_text"
    )]
    pub chunked: Option<u64>,
}

impl LoadParams {
    /// How hard the lap loads, as [`serverbench_model::LoadSpec::lap`] takes it: the duration
    /// in whole milliseconds, threads 0 as the engine's default.
    pub fn pace(&self) -> Pace {
        Pace {
            connections: self.connections,
            threads: (self.threads > 0).then_some(self.threads),
            duration: self.duration_s.map(lap_duration),
            requests: self.requests,
            pipeline: self.pipeline,
            rate: self.rate,
            chunked: self.chunked,
        }
    }

    /// The requests a closed-loop load had in flight when it stopped: one per connection, times
    /// its pipeline (HTTP/1.1) or its streams (HTTP/2, HTTP/3). `None` for a load at a fixed rate (open
    /// loop: unknown) or over TCP.
    pub fn in_flight_at_end(&self) -> Option<u64> {
        let depth = match self.workload() {
            _ if self.rate.is_some() => return None,
            Workload::Http1 => self.pipeline,
            Workload::Http2 | Workload::Http3 | Workload::Grpc => {
                self.transport.streams.unwrap_or(1)
            }
            Workload::WebSocket | Workload::TcpStream | Workload::TcpPingPong => return None,
        };
        Some(u64::from(self.connections) * u64::from(depth.max(1)))
    }

    /// The driver the lap ran: its `mode` over its `protocol`.
    pub fn workload(&self) -> Workload {
        Workload::of(self.work.mode, self.transport.protocol)
    }

    /// The protocol label of the lap ([`Transport::label`]): `h1`, `https`, `h2`, `h2c`, with
    /// ` new-conn`, ` resume=tickets` and ` m16` as they apply. Empty for plain HTTP/1.1
    /// keep-alive. A gRPC lap's is its URL scheme, `grpc` (h2c) or `grpcs` (h2 over TLS), with
    /// its streams (`grpcs m16`).
    pub fn transport_label(&self) -> String {
        if self.work.mode != serverbench_model::Mode::Grpc {
            return self.transport.label();
        }
        let scheme = match self.transport.tls {
            true => "grpcs",
            false => "grpc",
        };
        match self.transport.streams {
            Some(m) => format!("{scheme} m{m}"),
            None => scheme.to_string(),
        }
    }

    /// What the scenario's own requests send, empty when they are bodiless GETs: `POST`,
    /// `POST 500KB..20MB`, `POST 2 bytes chunked (16KiB chunks)`.
    pub fn body_label(&self) -> String {
        let size = match (&self.work.body, self.work.body_size) {
            (Some(b), _) => Some(b.len().to_string()),
            (None, Some(r)) => Some(r.to_string()),
            (None, None) => None,
        };
        let mut parts: Vec<String> = self.work.method.iter().map(|m| m.to_string()).collect();
        if let Some(size) = size {
            let unitless = size.ends_with(|c: char| c.is_ascii_digit());
            parts.push(if unitless {
                format!("{size} bytes")
            } else {
                size
            });
        }
        if let Some(c) = self.chunked {
            let chunk = serverbench_model::size::format_size(c);
            let unitless = chunk.ends_with(|c: char| c.is_ascii_digit());
            parts.push(match unitless {
                true => format!("chunked ({chunk}-byte chunks)"),
                false => format!("chunked ({chunk} chunks)"),
            });
        }
        parts.join(" ")
    }
}

/// A lap over several machines (`run --hosts`): where it ran and every client host's own
/// result; the lap's `load` is their exact merge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostsLap {
    /// The host the server ran on.
    pub server_host: String,
    /// Spread of the client hosts' measurement starts, in milliseconds (host clocks).
    pub start_skew_ms: Option<f64>,
    /// CPU seconds the controller (this serverbench and its ssh clients) used for the lap.
    pub controller_cpu_s: f64,
    /// Each client host's result, in `--client-hosts` order (those that completed, when the
    /// lap failed).
    pub clients: Vec<ClientLap>,
}

/// One client host's share of a lap.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientLap {
    /// Its inventory name.
    pub host: String,
    /// Its share of the lap's connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    /// When it started measuring, in milliseconds after the earliest client host (host
    /// clocks): the spread of these is the lap's `start_skew_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_offset_ms: Option<f64>,
    /// What it measured.
    pub load: Measurement,
}

/// The server's whole process tree, sampled from `/proc` every 100 ms during the lap.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerStats {
    pub samples: u32,
    pub rss_peak_mb: f64,
    pub rss_mean_mb: f64,
    /// RSS at the first and last sample (MB): growth through the lap hints at a leak.
    pub rss_first_mb: f64,
    pub rss_last_mb: f64,
    pub cpu_s: f64,
    /// `cpu_s` / lap wall time.
    pub cores_used: f64,
    pub cpu_us_per_request: Option<f64>,
    pub threads_peak: u32,
    pub processes_peak: u32,
    pub ctx_switches_voluntary: u64,
    pub ctx_switches_involuntary: u64,
}

/// One lap, one line of `results.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LapRecord {
    /// Suite name (file stem, or `adhoc`).
    pub suite: String,
    /// Catalog id, e.g. `node/http`.
    pub server: String,
    /// Scenario name from the suite, e.g. `hello`, `routes`, `payload`, `echo-stream`.
    pub scenario: String,
    /// Load profile label, e.g. `c100`, `100conn/10s`.
    pub profile: String,
    /// 1-based lap number.
    pub lap: u32,
    pub status: LapStatus,
    /// Why the lap failed: what went wrong, one line, and the server's log tail (one string in
    /// records written before it was typed; they still read).
    pub failure: Option<LapFailure>,
    /// `serverbench`, `wrk`, `ab`, `autocannon`, `h2load`, `hey` or `oha`.
    pub tool: Tool,
    /// RFC 3339 UTC time the lap started.
    pub started_at: String,
    pub wall_s: f64,
    pub params: LoadParams,
    pub load: Option<Measurement>,
    /// The server role's process tree (every record has it here; see [`crate::roles`]).
    pub server_stats: Option<ServerStats>,
    /// The other roles' process trees (the database of a database lap); absent in older records.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<Role, ServerStats>,
    /// Database laps: where the database ran and what it executed; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<crate::database::DatabaseLap>,
    /// `run --hosts`: the server host and each client host's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<HostsLap>,
    /// What else the machine did during the lap (steal, other processes on the pinned CPUs,
    /// memory pressure, throttling) and whether that disturbed it; absent in older records and
    /// over hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
}

impl LapRecord {
    /// True when something other than the benchmark disturbed this lap.
    pub fn is_disturbed(&self) -> bool {
        self.disturbance.as_ref().is_some_and(|d| d.is_disturbed())
    }
}

/// What identifies a lap in a run: server x scenario x profile x lap number (`--resume` skips
/// the keys already recorded).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LapKey {
    /// Catalog id or the user's server name.
    pub server: String,
    /// Scenario name.
    pub scenario: String,
    /// Profile label.
    pub profile: String,
    /// 1-based lap number.
    pub lap: u32,
}

impl LapRecord {
    /// The key that identifies this lap for `--resume`.
    pub fn key(&self) -> LapKey {
        LapKey {
            server: self.server.clone(),
            scenario: self.scenario.clone(),
            profile: self.profile.clone(),
            lap: self.lap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::disturbance::Cause;
    use serverbench_model::result::LoadResult;

    #[test]
    fn a_closed_loop_load_stops_with_one_request_per_connection_and_pipeline_slot() {
        let mut p = LoadParams {
            connections: 64,
            pipeline: 1,
            ..LoadParams::default()
        };
        assert_eq!(p.in_flight_at_end(), Some(64));
        p.pipeline = 4;
        assert_eq!(p.in_flight_at_end(), Some(256));
        p.rate = Some(1000.0);
        assert_eq!(p.in_flight_at_end(), None, "open loop: unknown");
    }

    use serverbench_model::Protocol;

    #[test]
    fn a_laps_body_is_recorded_with_its_method_and_named_in_its_label() {
        let p = LoadParams {
            work: serverbench_model::spec::Work {
                method: Some(serverbench_model::Method::Post),
                body_size: Some("500KB..20MB".parse().unwrap()),
                ..Default::default()
            },
            chunked: Some(16 << 10),
            ..LoadParams::default()
        };
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains(r#""method":"POST""#), "{json}");
        assert!(json.contains(r#""body_size":"500KB..20MB""#), "{json}");
        assert!(json.contains(r#""chunked":"16KiB""#), "{json}");
        assert_eq!(serde_json::from_str::<LoadParams>(&json).unwrap(), p);
        assert_eq!(p.body_label(), "POST 500KB..20MB chunked (16KiB chunks)");
        let fixed = LoadParams {
            work: serverbench_model::spec::Work {
                method: Some(serverbench_model::Method::Post),
                body: Some("20".into()),
                ..Default::default()
            },
            chunked: Some(100),
            ..LoadParams::default()
        };
        assert_eq!(fixed.body_label(), "POST 2 bytes chunked (100-byte chunks)");
        let plain = serde_json::to_string(&LoadParams::default()).unwrap();
        assert!(!plain.contains("method") && !plain.contains("body") && !plain.contains("chunked"));
        assert_eq!(LoadParams::default().body_label(), "");
    }

    #[test]
    fn params_recorded_before_the_protocol_keys_load_as_plain_http11_and_write_back_unchanged() {
        let old = r#"{"mode":"http","paths":["/hello"],"connections":50,"threads":0,
          "duration_s":3.0,"requests":null,"pipeline":1,"rate":null,"warmup_s":1.0,
          "message":null,"size":null}"#;
        let p: LoadParams = serde_json::from_str(old).unwrap();
        assert_eq!(
            (p.transport.protocol, p.transport.tls, p.transport.new_conn),
            (Protocol::H1, false, false)
        );
        assert_eq!(
            (
                p.transport.tls_resume,
                p.transport.streams,
                p.transport_label()
            ),
            (None, None, String::new())
        );
        let again = serde_json::to_string(&p).unwrap();
        assert!(
            !again.contains("protocol") && !again.contains("tls"),
            "{again}"
        );
    }

    #[test]
    fn protocol_keys_are_written_in_their_spelling() {
        let p = LoadParams {
            transport: Transport {
                protocol: Protocol::H2c,
                streams: Some(16),
                ..Transport::default()
            },
            ..LoadParams::default()
        };
        let json = p.settings_json();
        assert!(
            json.ends_with(r#""protocol":"h2c","streams":16}"#),
            "{json}"
        );
        assert_eq!(p.transport_label(), "h2c m16");
    }

    #[test]
    fn a_grpc_lap_is_labelled_by_its_scheme_and_streams_and_its_settings_keep_the_canonical_order()
    {
        let mut p = LoadParams {
            work: serverbench_model::spec::Work {
                mode: serverbench_model::Mode::Grpc,
                paths: vec!["/serverbench.Bench/Echo".into()],
                size: Some(1024),
                ..Default::default()
            },
            transport: Transport {
                tls: true,
                streams: Some(16),
                ..Transport::default()
            },
            connections: 16,
            pipeline: 1,
            ..LoadParams::default()
        };
        assert_eq!(p.transport_label(), "grpcs m16");
        assert_eq!(p.in_flight_at_end(), Some(256));
        let json = p.settings_json();
        assert!(
            json.starts_with(
                r#"{"mode":"grpc","paths":["/serverbench.Bench/Echo"],"connections":16"#
            ),
            "{json}"
        );
        assert!(
            json.ends_with(r#""size":1024,"tls":true,"streams":16}"#),
            "{json}"
        );
        p.transport.tls = false;
        assert_eq!(p.transport_label(), "grpc m16");
    }

    #[test]
    fn a_grpc_measurement_keeps_its_block_and_reads_back_the_same() {
        let g = serverbench_model::result::GrpcResult {
            method: "/serverbench.Bench/Sum".into(),
            status_codes: [("OK".to_string(), 9), ("INTERNAL".to_string(), 1)].into(),
            ..Default::default()
        };
        let r = LoadResult {
            requests: 10,
            protocol: serverbench_model::result::ProtocolResult::Grpc(g.clone()),
            ..LoadResult::default()
        };
        let m = Measurement::from(&r);
        assert_eq!(m.grpc.as_ref(), Some(&g));
        let line = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<Measurement>(&line).unwrap(), m);
        let plain = serde_json::to_string(&Measurement::default()).unwrap();
        assert!(!plain.contains("grpc"), "{plain}");
    }

    #[test]
    fn an_http3_measurement_keeps_its_block_without_the_mix_and_reads_back_the_same() {
        use serverbench_model::result::{Http3Result, MixEntryResult, ProtocolResult};
        let h = Http3Result {
            streams: 16,
            goaways: 1,
            h3_errors: [("H3_MESSAGE_ERROR".to_string(), 2)].into(),
            mix: vec![MixEntryResult::default()],
            ..Default::default()
        };
        let r = LoadResult {
            requests: 10,
            protocol: ProtocolResult::Http3(h.clone()),
            ..LoadResult::default()
        };
        let m = Measurement::from(&r);
        let kept = m.http3.as_ref().unwrap();
        assert_eq!((kept.streams, kept.goaways), (16, 1));
        assert!(
            kept.mix.is_empty() && m.mix.len() == 1,
            "the mix is kept once"
        );
        let line = serde_json::to_string(&m).unwrap();
        assert!(line.contains(r#""http3":{"streams":16"#), "{line}");
        assert_eq!(serde_json::from_str::<Measurement>(&line).unwrap(), m);
        let plain = serde_json::to_string(&Measurement::default()).unwrap();
        assert!(!plain.contains("http3"), "{plain}");
    }

    /// A line written before disturbance records (no `disturbance`, no `roles`).
    const OLD_LINE: &str = r#"{"suite":"s","server":"a","scenario":"hello","profile":"c1","lap":1,
        "status":"ok","failure":null,"tool":"serverbench","started_at":"2026-11-20T10:00:00Z",
        "wall_s":1.0,"params":{"mode":"http","paths":["/hello"],"connections":1,"threads":1,
        "duration_s":1.0,"requests":null,"pipeline":1,"rate":null,"warmup_s":0.0,
        "message":null,"size":null},"load":null,"server_stats":null}"#;

    #[test]
    fn an_old_line_without_a_disturbance_still_reads() {
        let r: LapRecord = serde_json::from_str(OLD_LINE).unwrap();
        assert_eq!(r.disturbance, None);
        assert!(!r.is_disturbed());
        let again = serde_json::to_string(&r).unwrap();
        assert!(!again.contains("disturbance"), "{again}");
    }

    #[test]
    fn a_disturbance_is_written_and_read_back_with_its_causes() {
        let mut r: LapRecord = serde_json::from_str(OLD_LINE).unwrap();
        r.disturbance = Some(Disturbance {
            steal_pct: 4.0,
            other_processes_pct: 30.0,
            causes: vec![
                Cause::Steal { pct: 4.0 },
                Cause::OtherProcesses { pct: 30.0 },
            ],
            ..Default::default()
        });
        let line = serde_json::to_string(&r).unwrap();
        assert!(line.contains(r#""cause":"other_processes""#), "{line}");
        let back: LapRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
        assert!(back.is_disturbed());
    }
}
