//! A tiny in-process HTTP/3 server (quinn + h3) for the tests of the `h3` checks, with the
//! HTTPS listener of `TLS_PORT` beside it (the `Alt-Svc` answer): correct by default, with each
//! way a server can break a rule switchable on, so every check is shown to fail by name.

use super::raw::{self, Field};
use super::H3Target;
use crate::checks::payload;
use crate::tls_fixture::TestCert;
use bytes::{Buf, Bytes};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the fixture gets wrong (nothing by default).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flaws {
    /// Offers ALPN `h3-29` (a draft), not `h3`.
    pub(crate) no_h3_alpn: bool,
    /// Answers `/hello` with `Hello World?`.
    pub(crate) wrong_body: bool,
    /// `TLS_PORT` answers without `Alt-Svc`.
    pub(crate) no_alt_svc: bool,
    /// Answers every request stream by hand with 200 `Hello World!`, a malformed one too.
    pub(crate) lenient: bool,
    /// Stops by closing with code 0 and no GOAWAY.
    pub(crate) close_code_0: bool,
    /// Stops without a word (its socket closed, nothing sent).
    pub(crate) silent_stop: bool,
    /// Serves the static tree's files one byte short.
    pub(crate) short_static: bool,
}

/// A running fixture: where it serves, and how to stop it.
pub(crate) struct Fixture {
    pub(crate) target: H3Target,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Fixture {
    /// Stops the server as its flaws say and waits until it is gone.
    pub(crate) fn stop(mut self) {
        self.stop.store(true, SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stop.store(true, SeqCst);
    }
}

/// Starts the fixture with `flaws`, serving `cert` on a UDP and a TCP port of 127.0.0.1.
pub(crate) fn serve(cert: &TestCert, flaws: Flaws) -> Fixture {
    let alpn: &[&[u8]] = if flaws.no_h3_alpn {
        &[b"h3-29"]
    } else {
        &[b"h3"]
    };
    let tls13 = &[&rustls::version::TLS13];
    let quic_tls = (*cert.server_config(alpn, tls13)).clone();
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from(quic_tls).unwrap();
    let config = quinn::ServerConfig::with_crypto(Arc::new(quic));
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let h3_addr = udp.local_addr().unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let tls_addr = tcp.local_addr().unwrap();
    let https = cert.server_config(&[b"http/1.1"], rustls::ALL_VERSIONS);
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let tcp = tokio::net::TcpListener::from_std(tcp).unwrap();
            tokio::spawn(alt_svc(tcp, https, flaws, h3_addr.port()));
            let runtime = quinn::default_runtime().unwrap();
            let endpoint =
                quinn::Endpoint::new(Default::default(), Some(config), udp, runtime).unwrap();
            accept(&endpoint, flaws, &stopping).await;
            match (flaws.silent_stop, flaws.close_code_0) {
                (true, _) => return,
                (false, true) => endpoint.close(0u32.into(), b"bye"),
                (false, false) => {
                    // The connections send their GOAWAY first (they watch `stopping` too).
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    endpoint.close(quinn::VarInt::from_u32(0x100), b"");
                }
            }
            endpoint.wait_idle().await;
        });
    });
    Fixture {
        target: H3Target {
            addr: h3_addr,
            tls: cert.target(tls_addr),
        },
        stop,
        thread: Some(thread),
    }
}

/// Accepts connections until `stop` is set.
async fn accept(endpoint: &quinn::Endpoint, flaws: Flaws, stop: &Arc<AtomicBool>) {
    loop {
        let incoming = tokio::select! {
            i = endpoint.accept() => i,
            () = stopped(stop) => return,
        };
        let Some(incoming) = incoming else { return };
        let stop = stop.clone();
        tokio::spawn(async move {
            let Ok(conn) = incoming.await else { return };
            if flaws.lenient {
                lenient(conn).await;
            } else {
                connection(conn, flaws, stop).await;
            }
        });
    }
}

/// Resolves once `stop` is set (polled: the fixture needs no more).
async fn stopped(stop: &AtomicBool) {
    while !stop.load(SeqCst) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One connection on the h3 crate; a GOAWAY when the fixture stops (unless a flaw says not).
async fn connection(conn: quinn::Connection, flaws: Flaws, stop: Arc<AtomicBool>) {
    let Ok(mut h3) = h3::server::builder()
        .build::<_, Bytes>(h3_quinn::Connection::new(conn))
        .await
    else {
        return;
    };
    loop {
        let next = tokio::select! {
            r = h3.accept() => r,
            () = stopped(&stop) => {
                if !flaws.close_code_0 && !flaws.silent_stop {
                    let _ = h3.shutdown(0).await;
                }
                std::future::pending::<()>().await;
                return;
            }
        };
        let Ok(Some(resolver)) = next else { return };
        tokio::spawn(async move {
            if let Ok((req, stream)) = resolver.resolve_request().await {
                answer(req, stream, flaws).await;
            }
        });
    }
}

type Stream = h3::server::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

async fn answer(req: http::Request<()>, mut stream: Stream, flaws: Flaws) {
    let mut received = 0usize;
    while let Ok(Some(chunk)) = stream.recv_data().await {
        received += chunk.remaining();
    }
    let hello: &'static [u8] = if flaws.wrong_body {
        b"Hello World?"
    } else {
        b"Hello World!"
    };
    let (status, kind, body): (u16, &str, Bytes) = match (req.method().as_str(), req.uri().path()) {
        ("GET", "/hello") => (200, "text/plain", Bytes::from_static(hello)),
        ("GET", "/json") => (
            200,
            "application/json",
            r#"{"message":"Hello, World!"}"#.into(),
        ),
        ("GET", "/payload") => (
            200,
            "application/octet-stream",
            Bytes::from_static(payload()),
        ),
        ("POST", "/upload") => (200, "text/plain", received.to_string().into()),
        ("GET", p) if static_file(p).is_some() => {
            let f = static_file(p).expect("matched");
            let mut bytes = f.bytes();
            bytes.truncate(bytes.len() - usize::from(flaws.short_static));
            (200, f.kind().media_types()[0], bytes.into())
        }
        _ => (404, "text/plain", Bytes::from_static(b"Not Found")),
    };
    let resp = http::Response::builder()
        .status(status)
        .header("content-type", kind)
        .header("content-length", body.len())
        .body(())
        .unwrap();
    if stream.send_response(resp).await.is_ok() && stream.send_data(body).await.is_ok() {
        let _ = stream.finish().await;
    }
}

/// The file of the static tree at the URL path `path`.
fn static_file(path: &str) -> Option<&'static crate::static_tree::StaticFile> {
    let rest = path.strip_prefix("/static/")?;
    crate::static_tree::FILES.iter().find(|f| f.path == rest)
}

/// A connection answered by hand: a control stream with empty SETTINGS, then every request
/// stream, whatever its headers, answered 200 `Hello World!`.
async fn lenient(conn: quinn::Connection) {
    let Ok(_control) = raw::open_control(&conn).await else {
        return;
    };
    while let Ok((mut send, mut recv)) = conn.accept_bi().await {
        tokio::spawn(async move {
            let _ = recv.read_to_end(1 << 16).await;
            let mut out =
                raw::headers_frame(&[Field::Static(25), Field::StaticName(44, "text/plain")]);
            raw::varint(&mut out, 0x00);
            raw::varint(&mut out, 12);
            out.extend_from_slice(b"Hello World!");
            let _ = send.write_all(&out).await;
            let _ = send.finish();
            let _ = send.stopped().await;
        });
    }
}

/// `TLS_PORT`: HTTPS answering every request with `Hello World!` and `Alt-Svc` (unless the
/// flaw), then closing.
async fn alt_svc(
    tcp: tokio::net::TcpListener,
    config: Arc<rustls::ServerConfig>,
    flaws: Flaws,
    h3_port: u16,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    while let Ok((sock, _)) = tcp.accept().await {
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(mut tls) = acceptor.accept(sock).await else {
                return;
            };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match tls.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let alt = match flaws.no_alt_svc {
                true => String::new(),
                false => format!("Alt-Svc: h3=\":{h3_port}\"; ma=86400\r\n"),
            };
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n{alt}\
                 Connection: close\r\n\r\nHello World!"
            );
            let _ = tls.write_all(answer.as_bytes()).await;
            let _ = tls.shutdown().await;
        });
    }
}
