//! The receive low-water mark (`SO_RCVLOWAT`, socket(7)). A closed-loop connection knows what
//! it waits for, so it asks the kernel not to wake it before those bytes can be there: the rest
//! of a response whose Content-Length says how much is missing (exact), and with `-p N` the
//! whole window of responses, each counted at the smallest size its URL has answered with so
//! far (a prediction, and a lower bound while sizes do not shrink). A pipelined window then
//! costs one wake-up, one `recv` and one ACK instead of one of each per segment: against nginx
//! with `-p 16` that is 4x less client CPU per request (docs/results/engine-vs-wrk.md).
//!
//! A response smaller than every earlier one for its URL can leave a predicted mark unmet. The
//! FIN or an error still wakes us, and housekeeping watches a predicted mark that has gone
//! [`STALL_NS`] without a wake-up: once the bytes queued on the socket stop growing from one
//! tick to the next while some are there, the server has sent what it will and the mark is
//! dropped for that window (a slow server, still sending, keeps its mark). Each shrink lowers
//! the URL's size for next time; after [`MAX_SHRINKS`] of them a thread stops predicting for
//! the rest of the run, since its server's sizes vary (exact marks stay).
//!
//! HTTP/2 (h2c) with `-m` > 1 works the same way with streams for the window: each stream's
//! frames are counted as they arrive, so a connection's mark is the smallest response seen per
//! URL times its open streams, minus what has already arrived for them. A server that writes
//! every response apart (nginx) would otherwise wake us once per response, and we would send
//! the next requests one or two at a time; with the mark, ten streams cost one wake-up instead
//! of five and a quarter of the client CPU. Each connection reads eagerly for its first reads
//! (`WARM_READS` in `h2::conn`), while its congestion window is small. A reset stream (its
//! bytes will not come) and a mark the guard had to drop count as shrinks.
//!
//! A WebSocket connection's mark is its window of echoes, each at least its unfragmented frame;
//! the server may send a smaller frame instead (a close, a ping), so the guard watches it too.
//!
//! TLS connections keep the kernel's default. Their bytes arrive as records that rustls reads
//! a few kilobytes at a time and may hold half-decrypted, so a mark counted in plaintext bytes
//! can exceed what is left on the socket (the rest of a record already read), and an exact
//! mark, which the guard does not watch, would then never be met.

use super::Worker;
use crate::config::Reads;
use crate::conn::Conn;
use crate::proto::Driver;
use std::os::fd::AsRawFd;

/// Largest mark asked for: up to half the default receive buffer (`tcp_rmem[1]`, 128 KiB) the
/// kernel neither grows the buffer nor clamps the window to fit the mark.
const MAX_LOWAT: usize = 32 * 1024;
/// How long a predicted mark may go unmet before the guard looks at the socket's queue.
const STALL_NS: u64 = 20_000_000;
/// Responses smaller than their URL's earlier ones a thread tolerates before it stops predicting.
const MAX_SHRINKS: u32 = 3;

impl<D: Driver> Worker<'_, D> {
    /// A response of `size` bytes completed on connection `i`: its URL's smallest size so far.
    pub(crate) fn learn_size(&mut self, i: usize, size: usize) {
        if let Some(req) = self.conns[i].inflight.front() {
            self.learn(req.url, size);
        }
    }

    /// A response to `url` took `size` bytes: the URL's smallest size so far.
    pub(crate) fn learn(&mut self, url: u32, size: usize) {
        let seen = &mut self.expect[url as usize];
        if *seen != 0 && size < *seen {
            self.unexpected_end();
        }
        let seen = &mut self.expect[url as usize];
        if *seen == 0 || size < *seen {
            *seen = size;
        }
    }

    /// A response ended short of its prediction (smaller, or reset): after a few, this thread
    /// stops predicting.
    pub(crate) fn unexpected_end(&mut self) {
        self.shrinks += 1;
        self.predicting &= self.shrinks < MAX_SHRINKS;
    }

    /// Sets connection `i`'s mark to what it now waits for, if that changed. Called in the
    /// closed loop only: the `-R` schedule and the echo stream keep the kernel's default.
    pub(super) fn arm_lowat(&mut self, i: usize) {
        if self.tls.is_some() {
            return;
        }
        let window = self.cfg.reads == Reads::Window && self.predicting;
        let (want, predicted) = D::lowat(self, i, window);
        let c = &mut self.conns[i];
        c.lowat_predicted = predicted;
        set_lowat(c, want.clamp(1, MAX_LOWAT));
    }

    /// The mark of a window of requests answered in order: the rest of the head response
    /// (`exact` where its framing says, else its URL's smallest size less the `partial` bytes
    /// read) and, with `-p N` and `window`, each further response at its URL's smallest size.
    /// Returns the mark and whether it counts on predicted sizes.
    pub(crate) fn window_lowat(
        &self,
        i: usize,
        window: bool,
        exact: Option<usize>,
        partial: usize,
    ) -> (usize, bool) {
        let predict = self.depth > 1 && window;
        let c = &self.conns[i];
        let mut want = 0;
        let mut predicted = false;
        for (n, req) in c.inflight.iter().enumerate() {
            let expect = self.expect[req.url as usize];
            let bytes = match (n, exact) {
                (0, Some(rest)) => rest,
                _ if !predict || expect == 0 => break,
                (0, None) => expect.saturating_sub(partial).max(1),
                _ => expect,
            };
            predicted |= n > 0 || exact.is_none();
            want += bytes;
            if want >= MAX_LOWAT {
                break;
            }
        }
        (want, predicted)
    }

    /// Housekeeping: drops a predicted mark that the server has stopped sending towards.
    pub(super) fn check_lowat(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        if c.lowat <= 1 || !c.lowat_predicted || now.saturating_sub(c.last_read) <= STALL_NS {
            return;
        }
        let Some(queued) = c.sock.as_ref().and_then(|s| queued_bytes(s.as_raw_fd())) else {
            return;
        };
        if queued > 0 && queued == c.guard_queued {
            set_lowat(c, 1);
            c.lowat_predicted = false;
            D::mark_dropped(self);
        } else {
            c.guard_queued = queued;
        }
    }
}

/// Bytes received and not read yet (`FIONREAD`, tcp(7)).
fn queued_bytes(fd: std::os::fd::RawFd) -> Option<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: a valid socket descriptor and a c_int out-parameter, as FIONREAD expects.
    let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
    (rc == 0).then_some(n.max(0) as usize)
}

fn set_lowat(c: &mut Conn, want: usize) {
    if want == c.lowat {
        return;
    }
    let Some(sock) = c.sock.as_ref() else { return };
    let v = want as libc::c_int;
    // SAFETY: a valid socket descriptor and a c_int option value of the stated size.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVLOWAT,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        c.lowat = want;
    }
}
