//! HTTP/3's port: a free UDP `H3_PORT` beside `TLS_PORT` for a server that implements `h3`,
//! refused before the start when a socket is already bound there (it would take the server's
//! datagrams), and waited for (a UDP socket of the server's group bound to it) by `start`.

use super::{resolve, serves_tls, ProcessError, StartOptions, TlsListener};
use crate::catalog::Server;
use serverbench_model::Feature;
use std::net::UdpSocket;

/// The TLS listener of `server` on `port` with `files`, and a free UDP `H3_PORT` (a number
/// other than `port`) when it implements `h3`.
pub fn tls_listener(
    server: &Server,
    host: &str,
    port: u16,
    files: crate::certs::TlsFiles,
) -> std::io::Result<TlsListener> {
    let h3_port = match server.implements(Feature::H3) {
        true => Some(free_udp_port(host, &[port])?),
        false => None,
    };
    Ok(TlsListener {
        port,
        h3_port,
        files,
    })
}

/// `H3_PORT` when the server implements `h3` and the options give one.
pub(super) fn h3_port(server: &Server, opts: &StartOptions) -> Option<u16> {
    let h3 = server.implements(Feature::H3) && serves_tls(server);
    opts.tls.as_ref().and_then(|t| t.h3_port).filter(|_| h3)
}

/// An error when a UDP socket is already bound to the server's `H3_PORT`.
pub(super) fn check_udp_free(server: &Server, opts: &StartOptions) -> Result<(), ProcessError> {
    let Some(port) = h3_port(server, opts) else {
        return Ok(());
    };
    let addr = resolve(&opts.host, port).map_err(|source| ProcessError::Address {
        server: server.id.clone(),
        addr: format!("{}:{port}", opts.host),
        source,
    })?;
    match UdpSocket::bind(addr) {
        Ok(_) => Ok(()),
        Err(_) => Err(ProcessError::PortBusy {
            server: server.id.clone(),
            port,
            owners: "another UDP socket".into(),
        }),
    }
}

/// A UDP port that was free on `host` a moment ago, none of `taken` (bind to port 0 and
/// release it): `H3_PORT`.
pub fn free_udp_port(host: &str, taken: &[u16]) -> std::io::Result<u16> {
    let addr = resolve(host, 0)?;
    loop {
        let port = UdpSocket::bind(addr)?.local_addr()?.port();
        if !taken.contains(&port) {
            return Ok(port);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_udp_port_is_bindable_and_not_taken() {
        let tcp = super::super::free_port("127.0.0.1").unwrap();
        let port = free_udp_port("127.0.0.1", &[tcp]).unwrap();
        assert_ne!(port, tcp);
        assert!(UdpSocket::bind(("127.0.0.1", port)).is_ok());
    }
}
