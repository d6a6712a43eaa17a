//! `ws://` and `wss://`: the WebSocket load, prepared once. Each connection upgrades with its
//! own key (checked against the server's `Sec-WebSocket-Accept`), then sends the one message,
//! masked afresh per frame, and waits for its echo (or a ping and its pong).

use super::{resolve, ConfigError, HttpTarget, Protocol, Url};
use crate::tls::TlsSpec;
use serverbench_model::spec::Work;
use serverbench_model::LoadSpec;
use serverbench_wire::ws::{self, Rng};

/// The message when neither `--message` nor `--message-size` is given.
pub const DEFAULT_MESSAGE: &str = serverbench_model::spec::DEFAULT_WS_MESSAGE;

/// What each message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsKind {
    /// Text frames (the payload is UTF-8).
    Text,
    /// Binary frames (`--binary`).
    Binary,
    /// Ping frames, each answered by a pong with the same payload (`--ws-ping`).
    Ping,
}

impl WsKind {
    /// The spelling in the result: `text`, `binary`, `ping`.
    pub fn as_str(self) -> &'static str {
        match self {
            WsKind::Text => "text",
            WsKind::Binary => "binary",
            WsKind::Ping => "ping",
        }
    }

    /// The opcode of the frames sent.
    pub fn opcode(self) -> ws::Opcode {
        match self {
            WsKind::Text => ws::Opcode::Text,
            WsKind::Binary => ws::Opcode::Binary,
            WsKind::Ping => ws::Opcode::Ping,
        }
    }
}

/// The prepared WebSocket load.
#[derive(Debug, Clone)]
pub struct WsSpec {
    /// The `Host` header and the request target of the upgrade.
    pub host: String,
    pub path: String,
    /// Every message's payload, made once.
    pub payload: Vec<u8>,
    pub kind: WsKind,
}

impl WsSpec {
    /// The fewest bytes the server's answer to one message takes: one unfragmented frame with
    /// the payload (server frames are unmasked). A lower bound for the receive low-water mark.
    pub fn echo_frame_len(&self) -> usize {
        ws::Head::server(self.kind.opcode(), true).len(self.payload.len()) + self.payload.len()
    }
}

/// Parses the spec's one `ws[s]://` URL, resolves it, builds TLS for `wss://` and makes the
/// payload from its work (the message or its size, binary frames) or its pings.
pub fn ws_target(spec: &LoadSpec) -> Result<HttpTarget, ConfigError> {
    let urls = spec.urls();
    let [raw] = urls.as_slice() else {
        return Err(ConfigError::flag(
            "URL",
            "give one ws:// or wss:// URL (a WebSocket load does not rotate URLs)",
        ));
    };
    let url = Url::parse(raw)?;
    if !url.ws {
        return Err(ConfigError::flag(
            "URL",
            format!("`{raw}` is not ws:// or wss://"),
        ));
    }
    let payload = payload(&spec.work);
    let kind = match (spec.ws_ping, spec.work.binary) {
        (true, _) => WsKind::Ping,
        (false, true) => WsKind::Binary,
        (false, false) => WsKind::Text,
    };
    let tls = if url.tls {
        Some(TlsSpec::new(
            &super::spec::tls_options(spec),
            &url.host,
            &[b"http/1.1"],
        )?)
    } else {
        None
    };
    let addr = resolve(&url.host, url.port)?;
    let ws = WsSpec {
        host: url.host_header(),
        path: url.path.clone(),
        payload,
        kind,
    };
    Ok(HttpTarget {
        addr,
        protocol: Protocol::WebSocket(ws),
        tls,
    })
}

/// `--message TEXT`, or `--message-size N` random bytes (text: printable ASCII, so it is UTF-8),
/// made once with a fixed seed. Their rules (one of the two, at most 16 MiB, a ping's at most 125
/// bytes) are [`serverbench_model::LoadSpec::validate`]'s.
fn payload(work: &Work) -> Vec<u8> {
    if let Some(m) = &work.message {
        return m.clone().into_bytes();
    }
    let Some(size) = work.size.map(|n| n as usize) else {
        return DEFAULT_MESSAGE.as_bytes().to_vec();
    };
    let mut rng = Rng::new(0x5eed);
    let mut out = Vec::with_capacity(size);
    while out.len() < size {
        for b in rng.next_u64().to_le_bytes() {
            out.push(if work.binary { b } else { b' ' + b % 95 });
        }
    }
    out.truncate(size);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(urls: &[&str]) -> LoadSpec {
        let mut spec = LoadSpec::default();
        let urls: Vec<String> = urls.iter().map(|u| u.to_string()).collect();
        spec.at_urls(&urls).unwrap();
        spec
    }

    fn target(spec: &LoadSpec) -> Result<WsSpec, ConfigError> {
        ws_target(spec).map(|t| match t.protocol {
            Protocol::WebSocket(w) => w,
            _ => unreachable!(),
        })
    }

    #[test]
    fn a_ws_url_makes_a_text_load_of_hello_world_by_default() {
        let w = target(&spec(&["ws://127.0.0.1:9/ws"])).unwrap();
        assert_eq!(
            (w.kind, w.payload.as_slice()),
            (WsKind::Text, &b"hello world"[..])
        );
        assert_eq!((w.host.as_str(), w.path.as_str()), ("127.0.0.1:9", "/ws"));
        assert_eq!(w.echo_frame_len(), 13);
    }

    #[test]
    fn a_random_text_message_is_printable_and_a_binary_one_is_not_only_that() {
        let mut text = spec(&["ws://127.0.0.1:9/ws"]);
        text.work.size = Some(4096);
        let w = target(&text).unwrap();
        assert_eq!(w.payload.len(), 4096);
        assert!(w.payload.iter().all(|b| (b' '..=b'~').contains(b)));
        let mut bin = text.clone();
        bin.work.binary = true;
        let w = target(&bin).unwrap();
        assert_eq!(w.kind, WsKind::Binary);
        assert!(w.payload.iter().any(|b| *b > b'~'));
        assert_eq!(w.echo_frame_len(), 4 + 4096);
    }

    #[test]
    fn two_urls_or_an_http_url_are_refused_and_the_limits_are_the_wire_codecs() {
        let two = ws_target(&spec(&["ws://127.0.0.1:9/a", "ws://127.0.0.1:9/b"])).unwrap_err();
        assert!(two.to_string().contains("one ws://"), "{two}");
        let http = target(&spec(&["http://127.0.0.1:9/ws"])).unwrap_err();
        assert!(http.to_string().contains("is not ws://"), "{http}");
        assert_eq!(serverbench_model::spec::MAX_WS_MESSAGE, ws::MAX_MESSAGE);
        assert_eq!(
            serverbench_model::spec::MAX_WS_PING,
            ws::MAX_CONTROL_PAYLOAD
        );
    }
}
