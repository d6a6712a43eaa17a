//! In-process rustls servers on loopback, with certificates generated for the test (rcgen): a
//! CA, a leaf it signs for `localhost` and 127.0.0.1, and leaves that must be refused.

use super::{base_config, Reply};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{NoServerSessionStorage, ServerSessionMemoryCache};
use rustls::{ServerConfig, ServerConnection, StreamOwned, SupportedProtocolVersion};
use serverbench_engine::config::http_target;
use serverbench_engine::{Config, Lifetime};
use serverbench_model::{TlsResume, TlsVersion};
use serverbench_wire::tls::Trust;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A CA (written as PEM for `--cacert`) and the certificates it signs.
pub struct Pki {
    _dir: tempfile::TempDir,
    pub ca_file: PathBuf,
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

impl Pki {
    pub fn new() -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        static N: AtomicU64 = AtomicU64::new(0);
        let name = format!("serverbench test CA {}", N.fetch_add(1, Ordering::SeqCst));
        params.distinguished_name.push(DnType::CommonName, name);
        let ca = params.self_signed(&ca_key).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ca_file = dir.path().join("ca.pem");
        std::fs::write(&ca_file, ca.pem()).unwrap();
        Pki {
            _dir: dir,
            ca_file,
            ca,
            ca_key,
        }
    }

    /// A leaf for these names (DNS names or IP addresses), signed by this CA.
    pub fn leaf(&self, names: &[&str]) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &self.ca, &self.ca_key)
            .unwrap();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        (vec![cert.der().clone()], key)
    }

    /// The usual server certificate: `localhost` and 127.0.0.1.
    pub fn localhost(&self) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        self.leaf(&["localhost", "127.0.0.1"])
    }
}

/// How the test server does TLS.
pub struct ServerTls {
    pub versions: Vec<&'static SupportedProtocolVersion>,
    /// Stateless tickets (TLS 1.2 and 1.3).
    pub tickets: bool,
    /// A session cache: TLS 1.2 session ids, and TLS 1.3 stateful tickets.
    pub cache: bool,
    /// The first this many connections are closed once the ClientHello is in.
    pub drop_first: u64,
}

impl Default for ServerTls {
    fn default() -> Self {
        ServerTls {
            versions: rustls::DEFAULT_VERSIONS.to_vec(),
            tickets: false,
            cache: true,
            drop_first: 0,
        }
    }
}

/// What the server saw.
#[derive(Default)]
pub struct Seen {
    pub accepted: AtomicU64,
    pub handshakes: AtomicU64,
    pub resumed: AtomicU64,
    /// The most requests any one connection carried.
    pub max_requests_per_conn: AtomicU64,
    pub sni: Mutex<Option<String>>,
}

fn server_config(
    tls: &ServerTls,
    cert: (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>),
) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut c = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&tls.versions)
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(cert.0, cert.1)
        .unwrap();
    c.alpn_protocols = vec![b"http/1.1".to_vec()];
    if tls.tickets {
        c.ticketer = rustls::crypto::ring::Ticketer::new().unwrap();
    }
    if tls.cache {
        c.session_storage = ServerSessionMemoryCache::new(1024);
    } else {
        c.session_storage = Arc::new(NoServerSessionStorage {});
        if !tls.tickets {
            c.send_tls13_tickets = 0;
        }
    }
    Arc::new(c)
}

/// Starts an HTTPS server; `handler(n, path)` answers the n-th request as `http_server` does.
pub fn https_server<F>(
    tls: ServerTls,
    cert: (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>),
    handler: F,
) -> (SocketAddr, Arc<Seen>)
where
    F: Fn(u64, &str) -> Reply + Send + Sync + 'static,
{
    let config = server_config(&tls, cert);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let handler = Arc::new(handler);
    let counter = Arc::new(AtomicU64::new(0));
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let n = seen2.accepted.fetch_add(1, Ordering::SeqCst);
            if n < tls.drop_first {
                let _ = stream.read(&mut [0u8; 4096]); // the ClientHello, then close
                continue;
            }
            let (config, handler, counter, seen) = (
                config.clone(),
                handler.clone(),
                counter.clone(),
                seen2.clone(),
            );
            std::thread::spawn(move || serve(stream, config, &*handler, &counter, &seen));
        }
    });
    (addr, seen)
}

fn serve(
    tcp: TcpStream,
    config: Arc<ServerConfig>,
    handler: &dyn Fn(u64, &str) -> Reply,
    counter: &AtomicU64,
    seen: &Seen,
) {
    tcp.set_nodelay(true).unwrap();
    let mut s = StreamOwned::new(ServerConnection::new(config).unwrap(), tcp);
    let mut pending = Vec::new();
    let mut buf = [0u8; 16384];
    let mut served = 0u64;
    while s.conn.is_handshaking() {
        if s.conn.complete_io(&mut s.sock).is_err() {
            return;
        }
    }
    seen.handshakes.fetch_add(1, Ordering::SeqCst);
    if s.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
        seen.resumed.fetch_add(1, Ordering::SeqCst);
    }
    *seen.sni.lock().unwrap() = s.conn.server_name().map(str::to_string);
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        let mut out = Vec::new();
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).to_string();
            pending.drain(..end + 4);
            served += 1;
            seen.max_requests_per_conn
                .fetch_max(served, Ordering::SeqCst);
            let path = head.split(' ').nth(1).unwrap_or("/").to_string();
            match handler(counter.fetch_add(1, Ordering::SeqCst), &path) {
                Reply::Send(b) => out.extend_from_slice(&b),
                Reply::SendClose(b) => {
                    out.extend_from_slice(&b);
                    let _ = s.write_all(&out);
                    s.conn.send_close_notify();
                    let _ = s.flush();
                    return;
                }
                Reply::After(d, b) => {
                    let _ = s.write_all(&out);
                    out.clear();
                    std::thread::sleep(d);
                    out.extend_from_slice(&b);
                }
                Reply::Reset => return,
            }
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

/// The client side of a test: trust, version and resumption.
pub struct ClientTls {
    pub trust: Trust,
    pub version: Option<TlsVersion>,
    pub resume: TlsResume,
    pub new_conn: bool,
}

impl ClientTls {
    pub fn trusting(pki: &Pki) -> ClientTls {
        ClientTls {
            trust: Trust::CaFile(pki.ca_file.clone()),
            version: None,
            resume: TlsResume::Off,
            new_conn: false,
        }
    }
}

/// An HTTPS config for `url` (1 thread, 2 connections, 300 ms, closed loop).
pub fn https_config(url: &str, client: ClientTls, verify: bool) -> Config {
    let mut spec = serverbench_model::LoadSpec::default();
    spec.at_urls(&[url.to_string()]).unwrap();
    spec.http.verify = verify;
    spec.transport.new_conn = client.new_conn;
    spec.transport.tls_resume = Some(client.resume);
    spec.http.tls_version = client.version;
    match client.trust {
        Trust::CaFile(file) => spec.http.cacert = Some(file),
        Trust::Insecure => spec.http.insecure = true,
        Trust::WebPkiRoots => {}
    }
    let target = http_target(&spec).unwrap();
    let mut cfg = base_config(target.addr, vec![url.to_string()], target.protocol);
    cfg.tls = target.tls;
    if client.new_conn {
        cfg.lifetime = Lifetime::PerRequest;
    }
    cfg
}
