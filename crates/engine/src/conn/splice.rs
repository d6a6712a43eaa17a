//! A connection's output when it carries large bodies: its own bytes (`out`: heads, chunk
//! lines) with slices of shared body bytes spliced in between, written with `writev` (epoll) or
//! one send per piece (io_uring) and never copied per request.

use std::io::IoSlice;
use std::sync::Arc;

/// Pieces given to one `writev`.
pub const IOV: usize = 16;

/// `bytes[start..start + len]`, written after the connection's own bytes up to `at`.
#[derive(Debug, Clone)]
struct Splice {
    at: usize,
    bytes: Arc<[u8]>,
    start: usize,
    len: usize,
}

/// The slices spliced into one output, and how far the one being written has gone.
#[derive(Debug, Default)]
pub struct Splices {
    list: Vec<Splice>,
    next: usize,
    pos: usize,
}

impl Splices {
    /// Nothing spliced: the output is its own bytes alone.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Splices `bytes[start..start + len]` after the own bytes up to `at` (the output's length
    /// now: splices come in order).
    pub fn push(&mut self, at: usize, bytes: Arc<[u8]>, start: usize, len: usize) {
        if len > 0 {
            self.list.push(Splice {
                at,
                bytes,
                start,
                len,
            });
        }
    }

    pub fn clear(&mut self) {
        self.list.clear();
        (self.next, self.pos) = (0, 0);
    }

    /// Where the own bytes end before the next splice.
    fn own_end(&self, k: usize, own_len: usize) -> usize {
        self.list.get(k).map_or(own_len, |s| s.at)
    }

    /// The next piece to write once `own[..own_pos]` and the splices before it are written:
    /// own bytes up to the next splice, or what is left of that splice; `None` when all is.
    pub fn piece<'a>(&'a self, own: &'a [u8], own_pos: usize) -> Option<&'a [u8]> {
        let end = self.own_end(self.next, own.len());
        if own_pos < end {
            return Some(&own[own_pos..end]);
        }
        let s = self.list.get(self.next)?;
        Some(&s.bytes[s.start + self.pos..s.start + s.len])
    }

    /// Fills `iov` with the pieces still to write, in order; returns how many.
    pub fn pieces<'a>(&'a self, own: &'a [u8], own_pos: usize, iov: &mut [IoSlice<'a>]) -> usize {
        let (mut o, mut k, mut kp, mut n) = (own_pos, self.next, self.pos, 0);
        while n < iov.len() {
            let end = self.own_end(k, own.len());
            if o < end {
                iov[n] = IoSlice::new(&own[o..end]);
                (n, o) = (n + 1, end);
                continue;
            }
            let Some(s) = self.list.get(k) else { break };
            iov[n] = IoSlice::new(&s.bytes[s.start + kp..s.start + s.len]);
            (n, k, kp) = (n + 1, k + 1, 0);
        }
        n
    }

    /// `n` more bytes were written: moves `own_pos` and the splices past them.
    pub fn advance(&mut self, own_len: usize, own_pos: &mut usize, mut n: usize) {
        while n > 0 {
            let end = self.own_end(self.next, own_len);
            if *own_pos < end {
                let t = n.min(end - *own_pos);
                (*own_pos, n) = (*own_pos + t, n - t);
                continue;
            }
            let Some(s) = self.list.get(self.next) else {
                break;
            };
            let t = n.min(s.len - self.pos);
            (self.pos, n) = (self.pos + t, n - t);
            if self.pos == s.len {
                (self.next, self.pos) = (self.next + 1, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes everything `max` bytes at a time through `piece`/`advance`; returns the stream.
    fn drain(s: &mut Splices, own: &[u8], max: usize) -> Vec<u8> {
        let (mut pos, mut got) = (0, Vec::new());
        while let Some(p) = s.piece(own, pos) {
            let n = p.len().min(max);
            got.extend_from_slice(&p[..n]);
            s.advance(own.len(), &mut pos, n);
        }
        got
    }

    #[test]
    fn spliced_bytes_come_between_own_bytes_in_order_whatever_the_write_sizes() {
        let shared: Arc<[u8]> = b"0123456789".to_vec().into();
        let own = b"HEADmidTAIL".to_vec();
        for max in [1, 2, 3, 7, 100] {
            let mut s = Splices::default();
            s.push(4, shared.clone(), 2, 5);
            s.push(7, shared.clone(), 0, 3);
            s.push(11, shared.clone(), 9, 1);
            assert_eq!(drain(&mut s, &own, max), b"HEAD23456mid012TAIL9", "{max}");
        }
    }

    #[test]
    fn the_pieces_of_a_writev_cover_the_rest_of_the_output() {
        let shared: Arc<[u8]> = vec![7u8; 100].into();
        let own = b"ab".to_vec();
        let mut s = Splices::default();
        s.push(1, shared.clone(), 0, 100);
        let mut pos = 0;
        s.advance(own.len(), &mut pos, 30);
        let mut iov = [IoSlice::new(&[]); IOV];
        let n = s.pieces(&own, pos, &mut iov);
        let lens: Vec<usize> = iov[..n].iter().map(|v| v.len()).collect();
        assert_eq!(lens, [71, 1]);
    }

    #[test]
    fn an_empty_slice_is_not_spliced() {
        let mut s = Splices::default();
        s.push(0, vec![1u8].into(), 0, 0);
        assert!(s.is_empty());
    }
}
