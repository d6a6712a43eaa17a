//! What QUIC (HTTP/3) needs of the machine: UDP socket buffers large enough for a burst of
//! datagrams (`net.core.rmem_max`, `wmem_max`: quic-go asks for 7 MiB and warns below; quinn
//! servers ask for as much), and UDP GSO and GRO (`UDP_SEGMENT`, `UDP_GRO`), with which quinn
//! and quic-go send and receive many datagrams per system call (quinn measured its loopback
//! throughput 20 times higher with them).
//!
//! Offload is probed the way quinn-udp does it, with `setsockopt` on a UDP socket: what the
//! kernel accepts there it does on every device, loopback included.

use super::checks::{check, warn, with_write};
use super::{Check, CheckKind, Status};
use crate::Source;
use serverbench_model::doctor::Setting;

/// The buffer limit below which QUIC stacks warn (quic-go's 7 MiB, rounded up as its
/// documentation's fix writes it).
pub(super) const UDP_BUFFER: u64 = 7_500_000;

/// `net.core.rmem_max` and `net.core.wmem_max`, both at least [`UDP_BUFFER`].
pub(super) fn udp_buffers(src: &dyn Source) -> Check {
    let kind = CheckKind::UdpBuffers;
    let read = |name: &str| {
        src.read(&format!("/proc/sys/net/core/{name}"))
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    let (Some(rmem), Some(wmem)) = (read("rmem_max"), read("wmem_max")) else {
        return check(kind, Status::Unknown, "not readable");
    };
    let found = format!("rmem_max {}, wmem_max {}", size(rmem), size(wmem));
    if rmem >= UDP_BUFFER && wmem >= UDP_BUFFER {
        return check(kind, Status::Ok, found);
    }
    let fix = format!("sysctl -w net.core.rmem_max={UDP_BUFFER} net.core.wmem_max={UDP_BUFFER}");
    let mut c = warn(
        kind,
        format!("{found}: QUIC's UDP sockets may drop bursts"),
        fix,
    );
    for (setting, now) in [(Setting::RmemMax, rmem), (Setting::WmemMax, wmem)] {
        if now < UDP_BUFFER {
            c = with_write(c, setting, &UDP_BUFFER.to_string());
        }
    }
    c
}

/// A byte count as the doctor's table shows it.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1u32 << 20)),
        b => format!("{} KiB", b / 1024),
    }
}

/// UDP GSO and GRO on this kernel, probed with `setsockopt`.
pub(super) fn udp_offload() -> Check {
    udp_offload_of(probe(libc::UDP_SEGMENT, 1200), probe(libc::UDP_GRO, 1))
}

/// The check from the two probes (an errno when the kernel refused the option).
pub(super) fn udp_offload_of(gso: Result<(), i32>, gro: Result<(), i32>) -> Check {
    let kind = CheckKind::UdpOffload;
    let fix = "a kernel with UDP GSO (4.18) and GRO (5.0); QUIC stacks fall back to one \
               datagram per system call";
    match (gso, gro) {
        (Ok(()), Ok(())) => check(kind, Status::Ok, "GSO (UDP_SEGMENT) and GRO (UDP_GRO)"),
        (Ok(()), Err(e)) => warn(kind, format!("GSO only: UDP_GRO refused (errno {e})"), fix),
        (Err(e), Ok(())) => warn(
            kind,
            format!("GRO only: UDP_SEGMENT refused (errno {e})"),
            fix,
        ),
        (Err(a), Err(b)) => warn(kind, format!("neither (errno {a}, {b})"), fix),
    }
}

/// Sets the `SOL_UDP` option `option` to `value` on a fresh UDP socket.
fn probe(option: libc::c_int, value: libc::c_int) -> Result<(), i32> {
    let socket =
        std::net::UdpSocket::bind("127.0.0.1:0").map_err(|e| e.raw_os_error().unwrap_or(0))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `fd` is open for the call (the socket lives to the end of this function), and the
    // option value is a c_int we own, of the length given.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_UDP,
            option,
            (&value as *const libc::c_int).cast(),
            len,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Files(HashMap<&'static str, &'static str>);

    impl Source for Files {
        fn read(&self, path: &str) -> Option<String> {
            self.0.get(path).map(|s| s.to_string())
        }
        fn list(&self, _: &str) -> Vec<String> {
            Vec::new()
        }
    }

    fn limits(rmem: &'static str, wmem: &'static str) -> Files {
        Files(HashMap::from([
            ("/proc/sys/net/core/rmem_max", rmem),
            ("/proc/sys/net/core/wmem_max", wmem),
        ]))
    }

    #[test]
    fn debian_default_buffers_warn_and_offer_both_writes() {
        let c = udp_buffers(&limits("212992\n", "212992\n"));
        assert_eq!(c.status, Status::Warn);
        assert_eq!(
            c.found,
            "rmem_max 208 KiB, wmem_max 208 KiB: QUIC's UDP sockets may drop bursts"
        );
        let writes: Vec<(Setting, &str)> = c
            .writes
            .iter()
            .map(|w| (w.setting, w.value.as_str()))
            .collect();
        assert_eq!(
            writes,
            vec![(Setting::RmemMax, "7500000"), (Setting::WmemMax, "7500000")]
        );
        assert!(c
            .fix
            .unwrap()
            .starts_with("sysctl -w net.core.rmem_max=7500000"));
    }

    #[test]
    fn only_the_small_buffer_is_written_and_large_ones_pass() {
        let c = udp_buffers(&limits("8388608", "4194304"));
        assert_eq!(c.writes.len(), 1);
        assert_eq!(c.writes[0].setting, Setting::WmemMax);
        let ok = udp_buffers(&limits("7500000", "16777216"));
        assert_eq!(
            (ok.status, ok.found.as_str()),
            (Status::Ok, "rmem_max 7.2 MiB, wmem_max 16.0 MiB")
        );
        assert_eq!(udp_buffers(&limits("x", "1")).status, Status::Unknown);
    }

    #[test]
    fn offload_is_ok_with_both_and_a_warning_names_what_was_refused() {
        assert_eq!(udp_offload_of(Ok(()), Ok(())).status, Status::Ok);
        let c = udp_offload_of(Ok(()), Err(libc::ENOPROTOOPT));
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.found.starts_with("GSO only: UDP_GRO refused"),
            "{}",
            c.found
        );
        assert!(c.writes.is_empty() && c.fix.is_some());
    }

    #[test]
    fn a_kernel_of_5_0_or_later_has_both_offloads() {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut v = release
            .trim()
            .split(['.', '-'])
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (v.next().unwrap_or(0), v.next().unwrap_or(0));
        let c = udp_offload();
        if (major, minor) >= (5, 0) {
            assert_eq!(c.status, Status::Ok, "kernel {release}: {c:?}");
        } else {
            assert_eq!(c.status, Status::Warn, "kernel {release}: {c:?}");
        }
    }
}
