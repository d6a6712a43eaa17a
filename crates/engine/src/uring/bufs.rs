//! A provided buffer ring (io_uring_register_buf_ring(3)): the buffers multishot receives land
//! in. Hand-written because the `io-uring` crate exposes only the registration call and the
//! entry layout; the ring memory, the buffer ids and the tail are ours to keep.

use io_uring::types::BufRingEntry;
use io_uring::IoUring;
use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

pub struct BufRing {
    /// Page-aligned (mmap) entries the kernel reads buffers from.
    entries: *mut BufRingEntry,
    count: u16,
    /// The buffers, `size` bytes each, buffer id `i` at `i * size`.
    mem: Vec<u8>,
    size: usize,
    tail: u16,
}

impl BufRing {
    /// Registers `count` (a power of two) buffers of `size` bytes as group `bgid` of `ring`.
    pub fn new(ring: &IoUring, count: u16, size: usize, bgid: u16) -> io::Result<BufRing> {
        let bytes = usize::from(count) * std::mem::size_of::<BufRingEntry>();
        // SAFETY: an anonymous private mapping; checked for failure below.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut bufs = BufRing {
            entries: addr.cast(),
            count,
            mem: vec![0; usize::from(count) * size],
            size,
            tail: 0,
        };
        // SAFETY: the entries stay mapped until `bufs` drops, after the ring that uses them
        // (the worker's backend drops the ring first); the kernel pins the pages anyway.
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(addr as u64, count, bgid, 0)?
        };
        for bid in 0..count {
            bufs.give_back(bid);
        }
        bufs.publish();
        Ok(bufs)
    }

    /// The first `len` bytes of buffer `bid`, which a completion handed to us.
    ///
    /// The slice is detached from `self` so that the worker can hand it on while it updates
    /// its own state: it stays valid until [`BufRing::give_back`] returns the buffer to the
    /// kernel, which the caller does only once it is done with the bytes.
    pub fn bytes<'a>(&self, bid: u16, len: usize) -> &'a [u8] {
        let start = usize::from(bid) * self.size;
        let len = len.min(self.size);
        assert!(
            start + len <= self.mem.len(),
            "buffer id {bid} out of range"
        );
        // SAFETY: in bounds (checked above); `mem` is never resized and the kernel does not
        // write into a buffer between its completion and its return to the ring.
        unsafe { std::slice::from_raw_parts(self.mem.as_ptr().add(start), len) }
    }

    /// Queues buffer `bid` for the kernel again (visible at the next [`BufRing::publish`]).
    pub fn give_back(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (self.count - 1));
        let addr = self.mem.as_ptr() as u64 + (usize::from(bid) * self.size) as u64;
        // SAFETY: `slot` < count, inside the mapping.
        let e = unsafe { &mut *self.entries.add(slot) };
        e.set_addr(addr);
        e.set_len(self.size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes the buffers given back visible to the kernel (one release store per batch).
    pub fn publish(&self) {
        // SAFETY: the tail field lives in the first entry, inside the mapping, and is only
        // read by the kernel: an atomic store is the documented protocol.
        unsafe {
            let tail = BufRingEntry::tail(self.entries) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        let bytes = usize::from(self.count) * std::mem::size_of::<BufRingEntry>();
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.entries.cast(), bytes) };
    }
}
