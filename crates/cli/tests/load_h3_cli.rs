//! `serverbench load --http3`: what the flags refuse, each in one line naming the flag, with exit
//! code 1 and before any datagram or connection (a UDP socket and a TCP listener on the URL's
//! port that are never read from or accepted on see nothing).

use std::net::{TcpListener, UdpSocket};
use std::process::{Command, Output};

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

#[test]
fn http3_with_a_flag_it_cannot_take_is_refused_in_one_line_before_any_datagram() {
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let port = udp.local_addr().unwrap().port();
    let tcp = TcpListener::bind(("127.0.0.1", port)).unwrap();
    tcp.set_nonblocking(true).unwrap();
    let https = format!("https://127.0.0.1:{port}/hello");
    let http = format!("http://127.0.0.1:{port}/hello");
    let echo = format!("127.0.0.1:{port}");
    let cases: [(Vec<&str>, &str); 8] = [
        (
            vec!["--http3", &http],
            "--http3: needs https://: QUIC carries TLS 1.3",
        ),
        (
            vec!["--http3", "-p", "4", &https],
            "-p/--pipeline: does not apply to --http3",
        ),
        (
            vec!["--http3", "--http2", &https],
            "--http3: cannot be combined with --http2",
        ),
        (
            vec!["--http3", "--tcp", &echo],
            "--http3: does not apply to --tcp",
        ),
        (
            vec!["--http3", "--io", "uring", &https],
            "--http3: runs on epoll only",
        ),
        (vec!["--0rtt", "-k", &https], "--0rtt: needs --http3"),
        (
            vec!["--http3", "--0rtt", "--new-conn", &https],
            "--0rtt: needs --tls-resume tickets",
        ),
        (
            vec!["--http3", "--tls-version", "1.2", &https],
            "--tls-version: cannot be combined with --http3 (QUIC carries TLS 1.3 only)",
        ),
    ];
    for (args, want) in cases {
        let out = serverbench(&[&["-n", "1", "-c", "1"][..], &args].concat());
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let mut buf = [0u8; 64];
    assert!(udp.recv_from(&mut buf).is_err(), "no datagram was sent");
    assert!(tcp.accept().is_err(), "no connection was made");
}

#[test]
fn the_help_names_http3_and_0rtt() {
    let out = serverbench(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--http3"), "{help}");
    assert!(help.contains("--0rtt"), "{help}");
    assert!(help.contains("serverbench load --http3 -m 16"), "{help}");
}
