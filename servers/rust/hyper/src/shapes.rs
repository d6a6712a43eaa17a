//! The HTTP shapes of issue 32 (spec/contract.md) on bare hyper: the body read frame by frame
//! with `http-body-util` (the upload counted, never held; hyper answers
//! `Expect: 100-continue` when the body is first polled), `/json` compressed by hand with
//! flate2 (gzip, deflate: what a hyper service without tower-http does; br and zstd are
//! answered identity, which the contract allows).

use std::io::Write;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ACCEPT_ENCODING, CONTENT_ENCODING, VARY};
use hyper::{Method, Request, Response, StatusCode};

use crate::Message;

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    crate::reply(status, crate::TEXT, body.into())
}

fn param(query: Option<&str>, name: &str) -> i64 {
    query
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

async fn baseline(req: Request<Incoming>) -> Response<Full<Bytes>> {
    let q = req.uri().query();
    let mut sum = param(q, "a") + param(q, "b");
    if req.method() == Method::POST {
        match req.into_body().collect().await {
            Ok(body) => {
                let body = body.to_bytes();
                sum += std::str::from_utf8(&body)
                    .ok()
                    .and_then(|s| s.trim().parse::<i64>().ok())
                    .unwrap_or(0);
            }
            Err(e) => return text(StatusCode::BAD_REQUEST, e.to_string()),
        }
    }
    text(StatusCode::OK, sum.to_string())
}

async fn upload(req: Request<Incoming>) -> Response<Full<Bytes>> {
    let mut body = req.into_body();
    let mut n = 0usize;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => n += f.data_ref().map_or(0, Bytes::len),
            Err(e) => return text(StatusCode::BAD_REQUEST, e.to_string()),
        }
    }
    text(StatusCode::OK, n.to_string())
}

/// The first coding of `Accept-Encoding` this server makes.
fn coding(accept: &str) -> Option<&'static str> {
    accept
        .split(',')
        .map(|t| t.split(';').next().unwrap_or("").trim())
        .find_map(|t| match t {
            "gzip" => Some("gzip"),
            "deflate" => Some("deflate"),
            _ => None,
        })
}

fn compress(coding: &str, body: &[u8]) -> std::io::Result<Vec<u8>> {
    let level = flate2::Compression::default();
    if coding == "gzip" {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
        e.write_all(body)?;
        e.finish()
    } else {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
        e.write_all(body)?;
        e.finish()
    }
}

fn json(accept: &str) -> Response<Full<Bytes>> {
    let body = serde_json::to_vec(&Message {
        message: "Hello, World!",
    })
    .expect("a static struct serializes");
    let Some(coding) = coding(accept) else {
        let mut res = crate::reply(StatusCode::OK, crate::JSON, body.into());
        res.headers_mut()
            .insert(VARY, HeaderValue::from_static("Accept-Encoding"));
        return res;
    };
    match compress(coding, &body) {
        Ok(packed) => {
            let mut res = crate::reply(StatusCode::OK, crate::JSON, packed.into());
            let h = res.headers_mut();
            h.insert(CONTENT_ENCODING, HeaderValue::from_static(coding));
            h.insert(VARY, HeaderValue::from_static("Accept-Encoding"));
            res
        }
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// The answer to a shape, or the request back when it is not one.
pub async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Request<Incoming>> {
    match req.uri().path() {
        "/baseline" => Ok(baseline(req).await),
        "/upload" if req.method() == Method::POST => Ok(upload(req).await),
        "/json" if req.headers().contains_key(ACCEPT_ENCODING) => {
            let accept = req.headers()[ACCEPT_ENCODING].to_str().unwrap_or("");
            Ok(json(accept))
        }
        _ => Err(req),
    }
}
