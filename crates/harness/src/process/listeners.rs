//! Who listens on a port: the kernel's socket tables (`/proc/net/tcp`, `/proc/net/tcp6`) give
//! the inode of each listening socket, and a process's `/proc/<pid>/fd` links name the socket
//! inodes it holds. "Ready" means a listener on the server's port belongs to the server's own
//! process group, so a port held by somebody else is never mistaken for our server.

use std::collections::HashSet;

/// TCP state `LISTEN` in the socket tables.
const LISTEN: &str = "0A";

/// Inodes of the sockets listening on `port` (any address, IPv4 and IPv6).
pub fn listening_inodes(port: u16) -> HashSet<u64> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| parse_listeners(&text, port))
        .collect()
}

/// The listening inodes on `port` in one socket table's text.
fn parse_listeners(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local_port = cols.get(1)?.rsplit(':').next()?;
            let listening = *cols.get(3)? == LISTEN;
            let ours = u16::from_str_radix(local_port, 16).ok()? == port;
            (listening && ours).then(|| cols.get(9)?.parse().ok())?
        })
        .collect()
}

/// Socket inodes held open by `pid`.
pub fn socket_inodes(pid: u32) -> HashSet<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|link| {
            let s = link.to_str()?;
            s.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

/// Whether one of `pids` holds a socket listening on `port`.
pub fn listens(pids: &[u32], port: u16) -> bool {
    let wanted = listening_inodes(port);
    !wanted.is_empty() && pids.iter().any(|&p| !socket_inodes(p).is_disjoint(&wanted))
}

/// The processes holding a socket that listens on `port`, as `pid (command)`, for an error
/// message (scans every process: only used once something is wrong).
pub fn owners(port: u16) -> Vec<String> {
    let wanted = listening_inodes(port);
    if wanted.is_empty() {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| !socket_inodes(pid).is_disjoint(&wanted))
        .map(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            format!("{pid} ({})", comm.trim())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn the_socket_table_parser_keeps_listeners_on_the_port_only() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 4343 1
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1";
        assert_eq!(parse_listeners(text, 8080), vec![4242]);
    }

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
}
