//! Who listens on a port: the socket tables give the inode of each listening socket, and a
//! process's descriptors name the socket inodes it holds (both read by `serverbench_machine::process`).
//! "Ready" means a listener on the server's port belongs to the server's own process group, so
//! a port held by somebody else is never mistaken for our server.

use serverbench_machine::process as proc;

/// Whether one of `pids` holds a socket listening on `port`.
pub fn listens(pids: &[u32], port: u16) -> bool {
    let wanted = proc::listening_inodes(port);
    !wanted.is_empty()
        && pids
            .iter()
            .any(|&p| !proc::socket_inodes(p).is_disjoint(&wanted))
}

/// Whether one of `pids` holds an unconnected UDP socket bound to `port` (a QUIC listener).
pub fn binds_udp(pids: &[u32], port: u16) -> bool {
    let wanted = proc::udp_bound_inodes(port);
    !wanted.is_empty()
        && pids
            .iter()
            .any(|&p| !proc::socket_inodes(p).is_disjoint(&wanted))
}

/// The processes holding a socket that listens on `port`, as `pid (command)`, for an error
/// message (scans every process: only used once something is wrong).
pub fn owners(port: u16) -> Vec<String> {
    let wanted = proc::listening_inodes(port);
    if wanted.is_empty() {
        return Vec::new();
    }
    proc::pids()
        .into_iter()
        .filter(|&pid| !proc::socket_inodes(pid).is_disjoint(&wanted))
        .map(|pid| format!("{pid} ({})", proc::comm(pid)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_listener_of_this_process_is_found_and_named() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let me = std::process::id();
        assert!(listens(&[me], port));
        assert!(owners(port).iter().any(|o| o.starts_with(&me.to_string())));
        drop(l);
        assert!(!listens(&[me], port));
    }

    #[test]
    fn a_udp_socket_of_this_process_is_found_bound() {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = s.local_addr().unwrap().port();
        let me = std::process::id();
        assert!(binds_udp(&[me], port));
        drop(s);
        assert!(!binds_udp(&[me], port));
    }
}
