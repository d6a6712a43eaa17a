//! HTTP/3 bytes written and read by hand on quinn streams, for what the h3 crate will not do:
//! send a malformed request (its client builds requests from `http::Request`, which always has
//! a path, and validates field names), and show the frames of the control stream (it reads a
//! GOAWAY without telling its user). Hand-written because those checks must see or make exact
//! bytes: QUIC variable-length integers, frame headers, and QPACK field lines from the static
//! table and literals only (no dynamic table: verify's SETTINGS allow none, so a server may not
//! use one), with Huffman-coded values decoded by the workspace's `httlib-huffman`.

use std::time::Duration;

/// `HEADERS`.
const HEADERS: u64 = 0x01;
/// `SETTINGS`.
const SETTINGS: u64 = 0x04;
/// `GOAWAY`.
const GOAWAY: u64 = 0x07;
/// The control stream's type.
const CONTROL: u64 = 0x00;
/// `H3_MESSAGE_ERROR`: a malformed request or response.
pub(crate) const H3_MESSAGE_ERROR: u64 = 0x10e;
/// `H3_NO_ERROR`: a graceful close.
pub(crate) const H3_NO_ERROR: u64 = 0x100;

/// Appends a QUIC variable-length integer (RFC 9000 §16).
pub(crate) fn varint(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=63 => out.push(v as u8),
        64..=16_383 => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        16_384..=1_073_741_823 => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// Reads a QUIC variable-length integer at `*at`, advancing it.
pub(crate) fn read_varint(buf: &[u8], at: &mut usize) -> Option<u64> {
    let first = *buf.get(*at)?;
    let len = 1usize << (first >> 6);
    let bytes = buf.get(*at..*at + len)?;
    let mut v = u64::from(first & 0x3f);
    for b in &bytes[1..] {
        v = (v << 8) | u64::from(*b);
    }
    *at += len;
    Some(v)
}

/// Appends an HPACK/QPACK integer with an `n`-bit prefix whose high bits are `flags`.
fn prefixed_int(out: &mut Vec<u8>, flags: u8, n: u32, v: u64) {
    let max = (1u64 << n) - 1;
    if v < max {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = v - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// Reads an integer with an `n`-bit prefix at `*at`, advancing it.
fn read_prefixed_int(buf: &[u8], at: &mut usize, n: u32) -> Option<u64> {
    let max = (1u64 << n) - 1;
    let mut v = u64::from(*buf.get(*at)?) & max;
    *at += 1;
    if v < max {
        return Some(v);
    }
    let mut shift = 0;
    loop {
        let b = *buf.get(*at)?;
        *at += 1;
        v += u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
        if shift > 56 {
            return None;
        }
    }
}

/// One field line of a request to encode.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Field<'a> {
    /// An entry of the QPACK static table, name and value (e.g. 17, `:method: GET`).
    Static(u64),
    /// A static table name (e.g. 0, `:authority`) with this value.
    StaticName(u64, &'a str),
    /// A literal name and value, bytes as given (so an uppercase name goes as it is).
    Literal(&'a str, &'a str),
}

/// QPACK static table indices used here (RFC 9204 appendix A).
pub(crate) mod table {
    /// `:authority` (name only).
    pub const AUTHORITY: u64 = 0;
    /// `:method: GET`.
    pub const METHOD_GET: u64 = 17;
    /// `:scheme: https`.
    pub const SCHEME_HTTPS: u64 = 23;
    /// `:status` (name; its value 103).
    pub const STATUS: u64 = 24;
}

/// A HEADERS frame carrying `fields`, encoded with no dynamic table reference.
pub(crate) fn headers_frame(fields: &[Field<'_>]) -> Vec<u8> {
    let mut block = vec![0x00, 0x00]; // Required Insert Count 0, Delta Base 0
    for f in fields {
        match *f {
            Field::Static(i) => prefixed_int(&mut block, 0xc0, 6, i),
            Field::StaticName(i, v) => {
                prefixed_int(&mut block, 0x50, 4, i);
                string(&mut block, v);
            }
            Field::Literal(n, v) => {
                prefixed_int(&mut block, 0x20, 3, n.len() as u64);
                block.extend_from_slice(n.as_bytes());
                string(&mut block, v);
            }
        }
    }
    let mut frame = Vec::new();
    varint(&mut frame, HEADERS);
    varint(&mut frame, block.len() as u64);
    frame.extend_from_slice(&block);
    frame
}

/// A string literal, not Huffman-coded.
fn string(out: &mut Vec<u8>, s: &str) {
    prefixed_int(out, 0, 7, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// The status of the static table's `:status` entries, by index.
fn static_status(index: u64) -> Option<u16> {
    let s = match index {
        table::STATUS => 103,
        25 => 200,
        26 => 304,
        27 => 404,
        28 => 503,
        63 => 100,
        64 => 204,
        65 => 206,
        66 => 302,
        67 => 400,
        68 => 403,
        69 => 421,
        70 => 425,
        71 => 500,
        _ => return None,
    };
    Some(s)
}

/// The `:status` of a HEADERS frame's field section (its first field line), or why not.
pub(crate) fn status_of(block: &[u8]) -> Result<u16, String> {
    let mut at = 0;
    let bad = || "a field section too short".to_string();
    let required = read_prefixed_int(block, &mut at, 8).ok_or_else(bad)?;
    read_prefixed_int(block, &mut at, 7).ok_or_else(bad)?;
    if required != 0 {
        return Err("a dynamic table reference (verify allows no dynamic table)".into());
    }
    let first = *block.get(at).ok_or_else(bad)?;
    let value = if first & 0xc0 == 0xc0 {
        let i = read_prefixed_int(block, &mut at, 6).ok_or_else(bad)?;
        return static_status(i).ok_or_else(|| format!("static entry {i} first, not :status"));
    } else if first & 0xd0 == 0x50 {
        let i = read_prefixed_int(block, &mut at, 4).ok_or_else(bad)?;
        if static_status(i).is_none() {
            return Err(format!("static name {i} first, not :status"));
        }
        read_string(block, &mut at).ok_or_else(bad)?
    } else if first & 0xe0 == 0x20 {
        let huffman = first & 0x08 != 0;
        let len = read_prefixed_int(block, &mut at, 3).ok_or_else(bad)? as usize;
        let name = block.get(at..at + len).ok_or_else(bad)?;
        at += len;
        let name = if huffman {
            huffman_decode(name)?
        } else {
            name.to_vec()
        };
        if name != b":status" {
            return Err(format!(
                "{} first, not :status",
                String::from_utf8_lossy(&name)
            ));
        }
        read_string(block, &mut at).ok_or_else(bad)?
    } else {
        return Err(format!(
            "a field line 0x{first:02x} that refers to the dynamic table"
        ));
    };
    let text = String::from_utf8_lossy(&value).into_owned();
    text.parse().map_err(|_| format!(":status {text:?}"))
}

/// A string literal (Huffman-coded or not) at `*at`.
fn read_string(buf: &[u8], at: &mut usize) -> Option<Vec<u8>> {
    let huffman = *buf.get(*at)? & 0x80 != 0;
    let len = read_prefixed_int(buf, at, 7)? as usize;
    let raw = buf.get(*at..*at + len)?;
    *at += len;
    match huffman {
        true => huffman_decode(raw).ok(),
        false => Some(raw.to_vec()),
    }
}

fn huffman_decode(raw: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    httlib_huffman::decode(raw, &mut out, httlib_huffman::DecoderSpeed::FourBits)
        .map_err(|e| format!("a bad Huffman string ({e:?})"))?;
    Ok(out)
}

/// How a request stream ended, as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The server reset its side (RESET_STREAM) or stopped ours (STOP_SENDING) with this code.
    Reset(u64),
    /// A HEADERS frame with this status.
    Status(u16),
    /// Something else (no HEADERS, an undecodable one, a lost connection), said.
    Other(String),
}

/// Sends `frame` on a new request stream of `conn` (then ends the stream) and waits, up to
/// `wait`, for how the server ends it.
pub(crate) async fn exchange(conn: &quinn::Connection, frame: &[u8], wait: Duration) -> Ending {
    let (mut send, mut recv) = match conn.open_bi().await {
        Ok(s) => s,
        Err(e) => return Ending::Other(format!("no stream: {e}")),
    };
    if let Err(e) = send.write_all(frame).await {
        return match send.stopped().await {
            Ok(Some(code)) => Ending::Reset(code.into_inner()),
            _ => Ending::Other(format!("writing the request: {e}")),
        };
    }
    let _ = send.finish();
    let read = async {
        match recv.read_to_end(1 << 20).await {
            Ok(bytes) => first_status(&bytes),
            Err(quinn::ReadToEndError::Read(quinn::ReadError::Reset(code))) => {
                Ending::Reset(code.into_inner())
            }
            Err(e) => Ending::Other(format!("reading the answer: {e}")),
        }
    };
    let stopped = async {
        match send.stopped().await {
            Ok(Some(code)) => Ending::Reset(code.into_inner()),
            // Our side was acknowledged whole: wait for the answer instead.
            _ => std::future::pending().await,
        }
    };
    let both = async {
        tokio::select! {
            e = read => e,
            e = stopped => e,
        }
    };
    tokio::time::timeout(wait, both)
        .await
        .unwrap_or_else(|_| Ending::Other(format!("nothing within {} s", wait.as_secs())))
}

/// The status of the first HEADERS frame in a stream's bytes.
fn first_status(bytes: &[u8]) -> Ending {
    let mut at = 0;
    while at < bytes.len() {
        let (Some(kind), Some(len)) = (read_varint(bytes, &mut at), read_varint(bytes, &mut at))
        else {
            break;
        };
        let Some(payload) = bytes.get(at..at + len as usize) else {
            break;
        };
        at += len as usize;
        if kind == HEADERS {
            return match status_of(payload) {
                Ok(s) => Ending::Status(s),
                Err(e) => Ending::Other(format!("a HEADERS frame with {e}")),
            };
        }
    }
    Ending::Other(format!(
        "the stream ended after {} bytes with no HEADERS frame",
        bytes.len()
    ))
}

/// What a client watching a connection saw when the server stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The stream id of a GOAWAY on the server's control stream.
    pub(crate) goaway: Option<u64>,
    /// How the connection ended (`None`: still open when the watch ended).
    pub(crate) close: Option<String>,
    /// The application (HTTP/3) error code of a CONNECTION_CLOSE, if it was one.
    pub(crate) app_code: Option<u64>,
}

/// Opens this client's control stream (SETTINGS, empty) on `conn`, so the server sees an
/// HTTP/3 client.
pub(crate) async fn open_control(conn: &quinn::Connection) -> Result<quinn::SendStream, String> {
    let mut send = conn.open_uni().await.map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    varint(&mut bytes, CONTROL);
    varint(&mut bytes, SETTINGS);
    varint(&mut bytes, 0);
    send.write_all(&bytes).await.map_err(|e| e.to_string())?;
    Ok(send)
}

/// Reads the server's unidirectional streams until the connection ends, reporting a GOAWAY on
/// its control stream to `seen` as soon as it comes.
pub(crate) async fn watch(conn: quinn::Connection, seen: std::sync::mpsc::Sender<Seen>) {
    let mut state = Seen::default();
    loop {
        let stream = tokio::select! {
            s = conn.accept_uni() => s,
            e = conn.closed() => Err(e),
        };
        match stream {
            Ok(mut recv) => {
                if let Some(id) = control_goaway(&mut recv).await {
                    state.goaway = Some(id);
                    let _ = seen.send(state.clone());
                }
            }
            Err(e) => {
                if let quinn::ConnectionError::ApplicationClosed(c) = &e {
                    state.app_code = Some(c.error_code.into_inner());
                }
                state.close = Some(e.to_string());
                let _ = seen.send(state);
                return;
            }
        }
    }
}

/// The GOAWAY's stream id when `recv` is the control stream and one comes before it ends;
/// other streams (QPACK's) are left alone.
async fn control_goaway(recv: &mut quinn::RecvStream) -> Option<u64> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = recv.read(&mut chunk).await.ok()??;
        buf.extend_from_slice(&chunk[..n]);
        let mut at = 0;
        let Some(kind) = read_varint(&buf, &mut at) else {
            continue;
        };
        if kind != CONTROL {
            return None;
        }
        while let (Some(t), Some(len)) = (read_varint(&buf, &mut at), read_varint(&buf, &mut at)) {
            let Some(payload) = buf.get(at..at + len as usize) else {
                break;
            };
            if t == GOAWAY {
                return read_varint(payload, &mut 0);
            }
            at += len as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_in_every_length() {
        for v in [0, 63, 64, 16_383, 16_384, 1_073_741_823, 1_073_741_824] {
            let mut b = Vec::new();
            varint(&mut b, v);
            assert_eq!(read_varint(&b, &mut 0), Some(v), "{v}");
        }
    }

    #[test]
    fn a_headers_frame_of_static_entries_and_literals_reads_back_its_status() {
        let f = headers_frame(&[Field::Static(25)]);
        assert_eq!(&f[..2], &[0x01, 3]);
        assert_eq!(status_of(&f[2..]), Ok(200));
        let f = headers_frame(&[Field::StaticName(table::STATUS, "400")]);
        assert_eq!(status_of(&f[2..]), Ok(400));
        let f = headers_frame(&[Field::Literal(":status", "418")]);
        assert_eq!(status_of(&f[2..]), Ok(418));
        let f = headers_frame(&[Field::Static(table::METHOD_GET)]);
        assert!(status_of(&f[2..]).unwrap_err().contains("not :status"));
    }

    #[test]
    fn a_huffman_coded_status_value_is_decoded() {
        let mut coded = Vec::new();
        httlib_huffman::encode(b"400", &mut coded).unwrap();
        let mut block = vec![0, 0];
        prefixed_int(&mut block, 0x50, 4, table::STATUS);
        prefixed_int(&mut block, 0x80, 7, coded.len() as u64);
        block.extend_from_slice(&coded);
        assert_eq!(status_of(&block), Ok(400));
    }

    #[test]
    fn long_integers_take_continuation_bytes() {
        let mut b = Vec::new();
        prefixed_int(&mut b, 0xc0, 6, 99);
        assert_eq!(b, vec![0xff, 36]);
        assert_eq!(read_prefixed_int(&b, &mut 0, 6), Some(99));
    }
}
