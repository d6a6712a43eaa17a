//! The io_uring backend's ring: one per worker thread (`SINGLE_ISSUER | DEFER_TASKRUN` where the
//! kernel has them), a provided buffer ring for multishot receives, and one `io_uring_enter`
//! per turn of the loop that both submits the turn's sends and waits for completions.
//!
//! Hand-written over the `io-uring` crate's raw queues rather than on a runtime (tokio-uring,
//! monoio, glommio): those own the sockets and their own event loop, and the engine needs its
//! one share-nothing worker loop (schedules, timers, stats) to stay the same on both backends.
//!
//! `--io auto` picks epoll (see [`choose`]): measured on this project's 2-core machine the ring
//! did not make the closed loop cheaper per request (docs/results/engine-vs-wrk.md).

mod bufs;

use bufs::BufRing;
use io_uring::{cqueue, squeue, types, IoUring};
use serverbench_model::{Io, IoBackend};
use std::io;

/// Set to 1, the engine behaves as if the kernel refused io_uring (seccomp,
/// `kernel.io_uring_disabled`): the fallback to epoll can be tested and demonstrated.
pub const REFUSE_ENV: &str = "SERVERBENCH_IO_URING_REFUSE";

const BGID: u16 = 0;

/// What a completion answers: the operation, and the connection and its generation (a
/// connection closed and reopened takes a new one, so late completions of the old socket
/// are recognised).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Recv,
    Send,
    Connect,
    Timer,
    Cancel,
}

impl Op {
    pub fn pack(self, conn: usize, gen: u32) -> u64 {
        (u64::from(gen) << 32) | ((conn as u64) << 3) | self as u64
    }

    pub fn unpack(user_data: u64) -> (Op, usize, u32) {
        let op = match user_data & 7 {
            0 => Op::Recv,
            1 => Op::Send,
            2 => Op::Connect,
            3 => Op::Timer,
            _ => Op::Cancel,
        };
        (
            op,
            ((user_data & 0xffff_ffff) >> 3) as usize,
            (user_data >> 32) as u32,
        )
    }
}

/// One completion, copied out of the queue so the worker can act on it freely.
#[derive(Debug, Clone, Copy)]
pub struct Cqe {
    pub user_data: u64,
    pub res: i32,
    pub flags: u32,
}

impl Cqe {
    /// The provided buffer the completion filled, if any.
    pub fn buffer(&self) -> Option<u16> {
        cqueue::buffer_select(self.flags)
    }

    /// Whether a multishot request stays armed.
    pub fn more(&self) -> bool {
        cqueue::more(self.flags)
    }
}

/// The backend `io` asks for, given what this kernel allows; with the reason for a fallback.
pub fn choose(io: Io) -> (IoBackend, Option<String>) {
    match io {
        Io::Epoll | Io::Auto => (IoBackend::Epoll, None),
        Io::Uring => match Ring::new(1) {
            Ok(_) => (IoBackend::Uring, None),
            Err(e) => (IoBackend::Epoll, Some(refused_note(&e))),
        },
    }
}

/// The one line a result carries when a ring was refused.
pub fn refused_note(e: &io::Error) -> String {
    format!("io_uring refused ({e}): ran on epoll")
}

pub struct Ring {
    // Declared first: dropped before the buffers it reads from.
    ring: IoUring,
    bufs: BufRing,
    batch: Vec<Cqe>,
    /// A registered file table, one slot per connection (sends and receives then skip the
    /// kernel's descriptor lookup and reference count).
    fixed: bool,
}

/// Which file a request names: a registered slot, or a plain descriptor.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    Fixed(u32),
    Fd(i32),
}

/// What a registered slot holds once its connection closes (a static: the update may read it
/// after the call that queued it).
static NO_FD: i32 = -1;

impl Ring {
    /// A ring sized for `connections` sockets.
    pub fn new(connections: usize) -> io::Result<Ring> {
        if std::env::var(REFUSE_ENV).is_ok_and(|v| v == "1") {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{REFUSE_ENV}=1"),
            ));
        }
        let entries = (connections * 2 + 16).next_power_of_two().clamp(64, 4096) as u32;
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_taskrun_flag()
            .setup_cqsize(entries * 4)
            .build(entries)
            .or_else(|_| IoUring::builder().setup_cqsize(entries * 4).build(entries))?;
        let (count, size) = buffers_for(connections);
        let bufs = BufRing::new(&ring, count, size, BGID)?;
        let fixed = ring
            .submitter()
            .register_files_sparse(connections as u32)
            .is_ok();
        Ok(Ring {
            ring,
            bufs,
            batch: Vec::with_capacity(1024),
            fixed,
        })
    }

    /// Whether connections get registered slots.
    pub fn fixed(&self) -> bool {
        self.fixed
    }

    /// Puts `*fd` in registered slot `slot` (None: empties it, releasing the socket). `fd`
    /// must stay put and unchanged until the next turn has submitted the update.
    pub fn install(&mut self, slot: usize, fd: Option<&i32>) {
        let fd: *const i32 = fd.unwrap_or(&NO_FD);
        let e = io_uring::opcode::FilesUpdate::new(fd, 1)
            .offset(slot as i32)
            .build()
            .user_data(Op::Cancel.pack(0, 0));
        self.push(e);
    }

    /// Queues a submission (submitting what is queued if the queue is full).
    pub fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: every entry the worker builds points at memory it keeps alive until the
            // completion (its send buffers, the pattern, the timer descriptor).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            let _ = self.ring.submit();
        }
    }

    /// A multishot receive on `to` into the provided buffers.
    pub fn recv(&mut self, to: Target, user_data: u64) {
        let e = match to {
            Target::Fixed(i) => io_uring::opcode::RecvMulti::new(types::Fixed(i), BGID).build(),
            Target::Fd(fd) => io_uring::opcode::RecvMulti::new(types::Fd(fd), BGID).build(),
        };
        self.push(e.user_data(user_data));
    }

    /// A send of `len` bytes at `buf`, which must stay put until its completion.
    pub fn send(&mut self, to: Target, buf: *const u8, len: usize, user_data: u64) {
        let e = match to {
            Target::Fixed(i) => io_uring::opcode::Send::new(types::Fixed(i), buf, len as u32),
            Target::Fd(fd) => io_uring::opcode::Send::new(types::Fd(fd), buf, len as u32),
        };
        self.push(e.flags(libc::MSG_NOSIGNAL).build().user_data(user_data));
    }

    /// A poll for `events` on `fd` (multishot: until cancelled).
    pub fn poll(&mut self, fd: i32, events: u32, multi: bool, user_data: u64) {
        let e = io_uring::opcode::PollAdd::new(types::Fd(fd), events)
            .multi(multi)
            .build()
            .user_data(user_data);
        self.push(e);
    }

    /// Cancels the request with `target` user data (its completion comes with `-ECANCELED`).
    pub fn cancel(&mut self, target: u64) {
        let e = io_uring::opcode::AsyncCancel::new(target)
            .build()
            .user_data(Op::Cancel.pack(0, 0));
        self.push(e);
    }

    /// Submits what is queued and waits up to `wait_ns` (0: not at all) for a completion; the
    /// completions are then in [`Ring::take_batch`].
    pub fn turn(&mut self, wait_ns: u64) -> io::Result<()> {
        self.bufs.publish();
        let done = if wait_ns == 0 {
            self.ring.submit()
        } else {
            let ts = types::Timespec::new()
                .sec(wait_ns / 1_000_000_000)
                .nsec((wait_ns % 1_000_000_000) as u32);
            let args = types::SubmitArgs::new().timespec(&ts);
            self.ring.submitter().submit_with_args(1, &args)
        };
        match done {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        self.batch.extend(self.ring.completion().map(|c| Cqe {
            user_data: c.user_data(),
            res: c.result(),
            flags: c.flags(),
        }));
        Ok(())
    }

    /// Submissions queued and not submitted yet.
    pub fn queued(&mut self) -> usize {
        self.ring.submission().len()
    }

    /// Submits what is queued without waiting.
    pub fn submit(&mut self) -> io::Result<()> {
        self.ring.submit().map(drop)
    }

    /// The completions of the last turn (hand the vector back with [`Ring::put_batch`]).
    pub fn take_batch(&mut self) -> Vec<Cqe> {
        std::mem::take(&mut self.batch)
    }

    pub fn put_batch(&mut self, mut batch: Vec<Cqe>) {
        batch.clear();
        self.batch = batch;
    }

    /// The bytes a receive completion delivered (see [`BufRing::bytes`]).
    pub fn bytes<'a>(&self, bid: u16, len: usize) -> &'a [u8] {
        self.bufs.bytes(bid, len)
    }

    /// Returns a buffer to the kernel (published at the next turn).
    pub fn give_back(&mut self, bid: u16) {
        self.bufs.give_back(bid);
    }
}

/// Buffer count (a power of two) and size: big buffers for a few connections (an echo stream
/// delivers 64 KiB per completion), more and smaller ones for many; at most 16 MiB a thread.
fn buffers_for(connections: usize) -> (u16, usize) {
    let size = if connections <= 64 {
        64 * 1024
    } else {
        16 * 1024
    };
    let count = (connections * 4).next_power_of_two().clamp(64, 1024);
    (count as u16, size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_carries_the_operation_the_connection_and_its_generation() {
        for op in [Op::Recv, Op::Send, Op::Connect, Op::Timer, Op::Cancel] {
            let ud = op.pack(123_456, 0xdead_beef);
            assert_eq!(Op::unpack(ud), (op, 123_456, 0xdead_beef));
        }
    }

    #[test]
    fn buffers_stay_within_sixteen_mebibytes_a_thread() {
        for conns in [1, 64, 65, 1000, 100_000] {
            let (count, size) = buffers_for(conns);
            assert!(count.is_power_of_two());
            assert!(
                usize::from(count) * size <= 16 << 20,
                "{conns}: {count} x {size}"
            );
        }
    }
}
