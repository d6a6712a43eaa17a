//! The contract's endpoints, shared by every transport: `/hello`, `/json` (serialized per
//! request), `/payload` (1 MiB built once) and 404 `Not Found` for anything else.

use bytes::Bytes;
use http::StatusCode;
use serde::Serialize;

const PAYLOAD_LEN: usize = 1 << 20;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// One answer: status, media type, body.
pub struct Answer {
    pub status: StatusCode,
    pub media: &'static str,
    pub body: Bytes,
}

/// The 1 MiB body: byte i is `'a' + i mod 26`.
pub fn build_payload() -> Bytes {
    (0..PAYLOAD_LEN)
        .map(|i| b'a' + (i % 26) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// The answer to `GET path` (the method is not looked at: every route is a GET).
pub fn route(path: &str, payload: &Bytes) -> Answer {
    let ok = |media, body| Answer {
        status: StatusCode::OK,
        media,
        body,
    };
    match path {
        "/hello" => ok("text/plain", Bytes::from_static(b"Hello World!")),
        "/json" => {
            let body = serde_json::to_vec(&Message {
                message: "Hello, World!",
            })
            .expect("a static struct serializes");
            ok("application/json", body.into())
        }
        "/payload" => ok("application/octet-stream", payload.clone()),
        _ => Answer {
            status: StatusCode::NOT_FOUND,
            media: "text/plain",
            body: Bytes::from_static(b"Not Found"),
        },
    }
}
