//! Starting and stopping fixture servers: readiness, start-up failures, no orphans.

mod common;

use common::{fixture_paths, server};
use serverbench_harness::process::{self, group_members, ProcessError, StartOptions};
use std::time::Duration;

fn options(srv: &serverbench_catalog::Server, dir: &std::path::Path) -> StartOptions {
    let port = process::free_port("127.0.0.1").unwrap();
    let mut o = StartOptions::new(srv, port, None, dir.join("server.log"));
    o.ready_timeout = Duration::from_secs(10);
    o
}

#[test]
fn a_started_server_accepts_connections_and_stop_leaves_no_process_of_its_group() {
    let (paths, cache) = fixture_paths();
    let srv = server("python/good");
    let mut opts = options(&srv, cache.path());
    opts.echo_port = Some(process::free_port("127.0.0.1").unwrap());
    let mut p = process::start(&srv, &paths, &opts).unwrap();
    assert_eq!(p.pid(), p.pgid());
    assert!(!group_members(p.pgid()).is_empty());
    assert!(std::net::TcpStream::connect(("127.0.0.1", opts.port)).is_ok());
    assert!(p.try_exit().is_none());
    let pgid = p.pgid();
    p.stop();
    assert_eq!(group_members(pgid), Vec::<u32>::new());
    assert!(p.log_tail(5).contains("fixture listening"));
}

#[test]
fn a_server_exiting_at_start_gives_its_status_and_log_tail() {
    let (paths, cache) = fixture_paths();
    let srv = server("python/crash");
    let err = process::start(&srv, &paths, &options(&srv, cache.path())).unwrap_err();
    match &err {
        ProcessError::Exited {
            status, log_tail, ..
        } => {
            assert_eq!(status.code(), Some(3));
            assert!(log_tail.contains("fatal: cannot bind"), "{log_tail}");
        }
        other => panic!("expected Exited, got {other}"),
    }
    assert!(err.to_string().contains("python/crash"));
}

#[test]
fn a_group_ignoring_sigterm_is_killed_with_its_children() {
    let (paths, cache) = fixture_paths();
    let srv = server("python/slow-stop");
    let mut p = process::start(&srv, &paths, &options(&srv, cache.path())).unwrap();
    let pgid = p.pgid();
    assert!(group_members(pgid).len() >= 3, "sh, sleep and python");
    p.stop();
    assert_eq!(group_members(pgid), Vec::<u32>::new());
}

#[test]
fn dropping_a_server_process_stops_it() {
    let (paths, cache) = fixture_paths();
    let srv = server("python/good");
    let p = process::start(&srv, &paths, &options(&srv, cache.path())).unwrap();
    let pgid = p.pgid();
    drop(p);
    assert!(group_members(pgid).is_empty());
}

#[test]
fn pinning_to_one_cpu_is_inherited_by_the_server() {
    let (paths, cache) = fixture_paths();
    let srv = server("python/good");
    let mut opts = options(&srv, cache.path());
    opts.cpus = vec![0];
    let p = process::start(&srv, &paths, &opts).unwrap();
    let status = std::fs::read_to_string(format!("/proc/{}/status", p.pid())).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list"))
        .unwrap();
    assert!(line.ends_with("\t0"), "{line}");
}

#[test]
fn a_server_whose_port_is_taken_is_refused_before_it_starts() {
    let (paths, cache) = fixture_paths();
    let srv = server("python/good");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let log = cache.path().join("busy.log");
    let err = process::start(&srv, &paths, &StartOptions::new(&srv, port, None, log)).unwrap_err();
    assert!(
        matches!(err, ProcessError::PortBusy { port: p, .. } if p == port),
        "{err}"
    );
}

/// A server of `tls` and `h3` in a few lines of Python: TCP on PORT and TLS_PORT at once, the
/// UDP H3_PORT bound only after `udp_after` seconds (never when negative); it logs H3_PORT.
fn h3_server(dir: &std::path::Path, udp_after: f64) -> serverbench_catalog::Server {
    use serverbench_model::Feature;
    let script = format!(
        "import os, socket, time\n\
         print('H3_PORT=' + os.environ['H3_PORT'], flush=True)\n\
         tcp = []\n\
         for var in ('PORT', 'TLS_PORT'):\n\
         \x20   s = socket.socket(); s.bind(('127.0.0.1', int(os.environ[var]))); s.listen(); tcp.append(s)\n\
         if {udp_after} >= 0:\n\
         \x20   time.sleep({udp_after})\n\
         \x20   u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         \x20   u.bind(('127.0.0.1', int(os.environ['H3_PORT'])))\n\
         time.sleep(30)\n"
    );
    std::fs::write(dir.join("h3.py"), script).unwrap();
    let features = [Feature::Hello, Feature::Tls, Feature::H3];
    serverbench_catalog::Server::from_command("h3-fixture", "exec python3 h3.py", dir, &features)
        .unwrap()
}

fn h3_options(srv: &serverbench_catalog::Server, dir: &std::path::Path) -> StartOptions {
    let mut o = options(srv, dir);
    let files = serverbench_harness::certs::generate(dir, "127.0.0.1").unwrap();
    let tls_port = process::free_port("127.0.0.1").unwrap();
    o.tls = Some(process::tls_listener(srv, "127.0.0.1", tls_port, files).unwrap());
    o
}

#[test]
fn an_h3_server_gets_h3_port_and_is_ready_only_once_its_udp_socket_is_bound() {
    let (paths, cache) = fixture_paths();
    let srv = h3_server(cache.path(), 0.5);
    let opts = h3_options(&srv, cache.path());
    let h3_port = opts
        .tls
        .as_ref()
        .unwrap()
        .h3_port
        .expect("an H3_PORT for an h3 server");
    assert_ne!(Some(h3_port), opts.tls.as_ref().map(|t| t.port));
    let mut p = process::start(&srv, &paths, &opts).unwrap();
    let taken = std::net::UdpSocket::bind(("127.0.0.1", h3_port));
    assert!(
        taken.is_err(),
        "start returned before the server bound UDP {h3_port}"
    );
    assert!(p.log_tail(5).contains(&format!("H3_PORT={h3_port}")));
    p.stop();
}

#[test]
fn an_h3_server_that_never_binds_its_udp_port_times_out_naming_h3_port() {
    let (paths, cache) = fixture_paths();
    let srv = h3_server(cache.path(), -1.0);
    let mut opts = h3_options(&srv, cache.path());
    opts.ready_timeout = Duration::from_secs(1);
    let h3_port = opts.tls.as_ref().unwrap().h3_port.unwrap();
    let err = process::start(&srv, &paths, &opts).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!("UDP port {h3_port} (H3_PORT)")),
        "{text}"
    );
}

#[test]
fn an_h3_port_already_bound_is_refused_before_the_server_starts() {
    let (paths, cache) = fixture_paths();
    let srv = h3_server(cache.path(), 0.0);
    let opts = h3_options(&srv, cache.path());
    let h3_port = opts.tls.as_ref().unwrap().h3_port.unwrap();
    let _busy = std::net::UdpSocket::bind(("127.0.0.1", h3_port)).unwrap();
    let err = process::start(&srv, &paths, &opts).unwrap_err();
    assert!(
        matches!(err, ProcessError::PortBusy { port, .. } if port == h3_port),
        "{err}"
    );
}
