//! The versions of the JSON result. Version 3 (`"schema_version": 3`) counts errors by kinds
//! common to every protocol: version 2's `errors.h2` and `errors.ws` are its `errors.protocol`,
//! `errors.grpc` its `errors.verdict` (read by [`super::Errors`]'s deserializer from any
//! version). Version 2 holds what only one protocol measured in `protocol`, tagged by its
//! workload. Version 1, written before (it has no
//! `schema_version`), kept those fields beside the common ones: `mode`, `connection_mode`,
//! `mbps_down`, `mbps_up`, `bytes_per_connection`, `bytes_in_flight`, `http2`, `ws`, `bodies`
//! and `mix`. [`upgrade`] moves them into version 2's place before the result is read, so a
//! version 1 file reads into the same [`super::LoadResult`].

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The schema version this serverbench writes.
pub const CURRENT: u64 = 3;

/// The `schema_version` of a result: always [`CURRENT`] once read (older versions are
/// upgraded on the way in).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchemaVersion;

impl Serialize for SchemaVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(CURRENT)
    }
}

impl<'de> Deserialize<'de> for SchemaVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match u64::deserialize(d)? {
            CURRENT => Ok(SchemaVersion),
            v => Err(serde::de::Error::custom(UpgradeError::Unknown(v))),
        }
    }
}

/// A result whose shape is not one this serverbench reads.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UpgradeError {
    /// Not a JSON object.
    #[error("a load result is a JSON object")]
    NotAnObject,
    /// A version this serverbench does not know (written by a newer one).
    #[error("schema_version {0} is not one this serverbench reads (it reads 1, 2 and 3): is the result from a newer serverbench?")]
    Unknown(u64),
    /// Version 1's `mode` names no mode.
    #[error("mode {0:?} is not http, ws, tcp-stream or tcp-pingpong")]
    Mode(String),
}

/// Brings a result of any known version to the current shape, in place (version 2 differs
/// only in its errors' names, which [`super::Errors`] reads as they are).
pub fn upgrade(v: &mut Value) -> Result<(), UpgradeError> {
    let o = v.as_object_mut().ok_or(UpgradeError::NotAnObject)?;
    match o.get("schema_version").map(|s| s.as_u64()) {
        None | Some(Some(1)) => {}
        Some(Some(2)) => {
            o.insert("schema_version".into(), CURRENT.into());
            return Ok(());
        }
        Some(Some(CURRENT)) => return Ok(()),
        Some(Some(n)) => return Err(UpgradeError::Unknown(n)),
        Some(None) => return Err(UpgradeError::Unknown(0)),
    }
    let protocol = v1_protocol(o)?;
    o.insert("protocol".into(), Value::Object(protocol));
    o.insert("schema_version".into(), CURRENT.into());
    Ok(())
}

/// Version 1's protocol fields taken out of `o`, as version 2's `protocol` block.
fn v1_protocol(o: &mut Map<String, Value>) -> Result<Map<String, Value>, UpgradeError> {
    let mut take = |key: &str| o.remove(key).filter(|v| !v.is_null());
    let mode = take("mode");
    let mode = mode.as_ref().and_then(Value::as_str).unwrap_or("http");
    let (connection_mode, http2, ws, bodies, mix) = (
        take("connection_mode"),
        take("http2"),
        take("ws"),
        take("bodies"),
        take("mix"),
    );
    let throughput = ["mbps_down", "mbps_up", "bytes_per_connection"].map(|k| (k, take(k)));
    let bytes_in_flight = take("bytes_in_flight");
    let object = |v: Option<Value>| match v {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut p = Map::new();
    let put = |p: &mut Map<String, Value>, k: &str, v: Option<Value>| {
        if let Some(v) = v {
            p.insert(k.to_string(), v);
        }
    };
    let workload = match (mode, http2.is_some()) {
        ("http", true) => {
            p = object(http2);
            put(&mut p, "connection_mode", connection_mode);
            put(&mut p, "mix", mix);
            "http2"
        }
        ("http", false) => {
            put(&mut p, "connection_mode", connection_mode);
            put(&mut p, "bodies", bodies);
            put(&mut p, "mix", mix);
            "http1"
        }
        ("ws", _) => {
            p = object(ws);
            "web-socket"
        }
        ("tcp-stream", _) => {
            put(
                &mut p,
                "bytes_in_flight",
                bytes_in_flight.or(Some(0.into())),
            );
            "tcp-stream"
        }
        ("tcp-pingpong", _) => "tcp-ping-pong",
        (other, _) => return Err(UpgradeError::Mode(other.to_string())),
    };
    if workload != "http1" && workload != "http2" {
        for (k, v) in throughput {
            put(&mut p, k, v);
        }
    }
    p.insert("workload".into(), workload.into());
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::LoadResult;

    #[test]
    fn a_result_from_a_newer_serverbench_is_refused_by_its_version() {
        let e = serde_json::from_str::<LoadResult>(r#"{"schema_version": 4}"#).unwrap_err();
        assert!(e.to_string().contains("schema_version 4"), "{e}");
    }

    #[test]
    fn a_version_1_mode_that_names_nothing_is_refused_by_name() {
        let mut v = serde_json::json!({"mode": "quic"});
        assert_eq!(upgrade(&mut v), Err(UpgradeError::Mode("quic".into())));
    }

    #[test]
    fn a_written_result_says_version_3_and_reads_back_the_same() {
        let r = LoadResult {
            requests: 7,
            ..Default::default()
        };
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["schema_version"], 3);
        assert_eq!(json["protocol"]["workload"], "http1");
        assert_eq!(serde_json::from_value::<LoadResult>(json).unwrap(), r);
    }

    #[test]
    fn a_version_2_result_reads_its_protocol_error_kinds_as_protocol_and_verdict() {
        let mut r = serde_json::to_value(LoadResult::default()).unwrap();
        r["schema_version"] = 2.into();
        let e = r["errors"].as_object_mut().unwrap();
        e.remove("protocol");
        e.remove("verdict");
        e.insert("h2".into(), 3.into());
        e.insert("ws".into(), 4.into());
        e.insert("grpc".into(), 5.into());
        upgrade(&mut r).unwrap();
        let read: LoadResult = serde_json::from_value(r).unwrap();
        assert_eq!((read.errors.protocol, read.errors.verdict), (7, 5));
        assert_eq!(read.errors.total(), 12);
        let kinds: Vec<_> = read.errors.by_kind().collect();
        assert_eq!(kinds, [("protocol", 7), ("verdict", 5)]);
    }
}
