//! The frames other than DATA as they arrive whole: HEADERS and CONTINUATION (the header block
//! decoded for `:status`), SETTINGS, PING, RST_STREAM, GOAWAY and WINDOW_UPDATE.

use super::H2Conn;
use crate::h2::frame::{self, Head};
use crate::h2::{Ctx, Event};

impl H2Conn {
    /// A whole non-DATA frame.
    pub(super) fn frame(
        &mut self,
        head: Head,
        payload: &[u8],
        cx: &mut Ctx<'_>,
    ) -> Result<Option<Event>, u32> {
        let len = payload.len();
        let need = |ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(frame::FRAME_SIZE_ERROR)
            }
        };
        match head.kind {
            frame::HEADERS => self.headers(head, payload, cx),
            frame::CONTINUATION => {
                self.reader.block.extend_from_slice(payload);
                if head.flags & frame::END_HEADERS == 0 {
                    return Ok(None);
                }
                self.reader.block_stream = 0;
                let block = std::mem::take(&mut self.reader.block);
                let ev = self.header_block(head.stream, self.reader.block_end, &block, cx);
                self.reader.block = block;
                self.reader.block.clear();
                ev
            }
            frame::RST_STREAM => {
                need(len == 4)?;
                let code = frame::be32(payload, 0);
                Ok(self.remove(head.stream).map(|s| Event::Reset(s.req, code)))
            }
            frame::SETTINGS => self.settings(head, payload, cx),
            frame::PUSH_PROMISE => Err(frame::PROTOCOL_ERROR), // we disabled push
            frame::PING => {
                need(len == 8)?;
                if head.flags & frame::ACK == 0 {
                    frame::put_ping_ack(cx.out, payload);
                }
                Ok(None)
            }
            frame::GOAWAY => {
                need(len >= 8)?;
                let last = frame::be32(payload, 0) & frame::MAX_WINDOW;
                let code = frame::be32(payload, 4);
                self.draining = true;
                let (open_by_url, received) = (&mut self.open_by_url, &mut self.received);
                let lost = self.streams.remove_above(last, |s| {
                    open_by_url[s.req.url as usize] -= 1;
                    *received -= s.wire as u64;
                });
                Ok(Some(Event::GoAway { code, lost }))
            }
            frame::WINDOW_UPDATE => {
                need(len == 4)?;
                let inc = (frame::be32(payload, 0) & frame::MAX_WINDOW) as i64;
                if inc == 0 {
                    return Err(frame::PROTOCOL_ERROR);
                }
                if head.stream == 0 {
                    self.send_window += inc;
                    if self.send_window > frame::MAX_WINDOW as i64 {
                        return Err(frame::FLOW_CONTROL_ERROR);
                    }
                } else if let Some(s) = self.streams.get_mut(head.stream) {
                    s.send_window += inc;
                }
                self.unblock(cx);
                Ok(None)
            }
            _ => Ok(None), // PRIORITY and unknown frame types are ignored
        }
    }

    /// HEADERS: strips padding and priority; decodes the block now or after CONTINUATION.
    pub(super) fn headers(
        &mut self,
        head: Head,
        payload: &[u8],
        cx: &mut Ctx<'_>,
    ) -> Result<Option<Event>, u32> {
        if head.stream == 0 {
            return Err(frame::PROTOCOL_ERROR);
        }
        let mut p = payload;
        if head.flags & frame::PADDED != 0 {
            let (&pad, rest) = p.split_first().ok_or(frame::PROTOCOL_ERROR)?;
            let keep = rest
                .len()
                .checked_sub(pad as usize)
                .ok_or(frame::PROTOCOL_ERROR)?;
            p = &rest[..keep];
        }
        if head.flags & frame::PRIORITY_FLAG != 0 {
            p = p.get(5..).ok_or(frame::PROTOCOL_ERROR)?;
        }
        let end_stream = head.flags & frame::END_STREAM != 0;
        if head.flags & frame::END_HEADERS != 0 {
            return self.header_block(head.stream, end_stream, p, cx);
        }
        self.reader.block.clear();
        self.reader.block.extend_from_slice(p);
        self.reader.block_stream = head.stream;
        self.reader.block_end = end_stream;
        Ok(None)
    }

    /// A complete header block for stream `id`: the response's status, or its trailers.
    pub(super) fn header_block(
        &mut self,
        id: u32,
        end_stream: bool,
        block: &[u8],
        cx: &mut Ctx<'_>,
    ) -> Result<Option<Event>, u32> {
        // Every block is decoded, even for a closed stream: the table must see it.
        if self.grpc {
            return self.grpc_block(id, end_stream, block, cx);
        }
        let status = self
            .decoder
            .decode(block, cx.strings)
            .map_err(|_| frame::COMPRESSION_ERROR)?;
        let Some(s) = self.streams.get_mut(id) else {
            return Ok(None);
        };
        if s.status == 0 {
            match status {
                Some(code) if (100..200).contains(&code) && !end_stream => return Ok(None),
                Some(code) if code >= 200 => s.status = code,
                _ => return Ok(Some(self.malformed(id, cx))),
            }
        }
        Ok(if end_stream { self.finish(id) } else { None })
    }

    /// Malformed: no final status. The stream is reset; the error counted.
    fn malformed(&mut self, id: u32, cx: &mut Ctx<'_>) -> Event {
        frame::put_rst_stream(cx.out, id, frame::PROTOCOL_ERROR);
        let s = self.remove(id).expect("open");
        Event::Reset(s.req, frame::PROTOCOL_ERROR)
    }

    /// A gRPC call's header block: the response headers (`:status`, `content-type`), the
    /// trailers (`grpc-status`), or both at once (a trailers-only response).
    fn grpc_block(
        &mut self,
        id: u32,
        end_stream: bool,
        block: &[u8],
        cx: &mut Ctx<'_>,
    ) -> Result<Option<Event>, u32> {
        let f = self
            .decoder
            .decode_grpc(block, cx.strings)
            .map_err(|_| frame::COMPRESSION_ERROR)?;
        let Some(s) = self.streams.get_mut(id) else {
            return Ok(None);
        };
        if s.status == 0 {
            match f.status {
                Some(code) if (100..200).contains(&code) && !end_stream => return Ok(None),
                Some(code) if code >= 200 => s.status = code,
                _ => return Ok(Some(self.malformed(id, cx))),
            }
            s.call.content_type = f.content_type;
        }
        if end_stream {
            s.call.trailers = true;
            s.call.grpc_status = f.grpc_status;
            return Ok(self.finish(id));
        }
        Ok(None)
    }

    /// SETTINGS: applies the server's, acknowledges them; the first ones make us ready.
    pub(super) fn settings(
        &mut self,
        head: Head,
        payload: &[u8],
        cx: &mut Ctx<'_>,
    ) -> Result<Option<Event>, u32> {
        if head.stream != 0 {
            return Err(frame::PROTOCOL_ERROR);
        }
        if head.flags & frame::ACK != 0 {
            return if payload.is_empty() {
                Ok(None)
            } else {
                Err(frame::FRAME_SIZE_ERROR)
            };
        }
        let pairs = payload.chunks_exact(6);
        if !pairs.remainder().is_empty() {
            return Err(frame::FRAME_SIZE_ERROR);
        }
        for s in pairs {
            let id = u16::from_be_bytes([s[0], s[1]]);
            let value = frame::be32(s, 2);
            match id {
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                    self.peer.max_concurrent_streams = Some(value)
                }
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    if value > frame::MAX_WINDOW {
                        return Err(frame::FLOW_CONTROL_ERROR);
                    }
                    let delta = value as i64 - self.peer.initial_window_size as i64;
                    for st in self.streams.iter_mut() {
                        st.send_window += delta;
                    }
                    self.peer.initial_window_size = value;
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME..=0x00ff_ffff).contains(&value) {
                        return Err(frame::PROTOCOL_ERROR);
                    }
                    self.peer.max_frame_size = value;
                }
                _ => {} // the header table size is for our encoder, which uses no table
            }
        }
        frame::put_settings_ack(cx.out);
        self.unblock(cx);
        if self.ready {
            return Ok(None);
        }
        self.ready = true;
        Ok(Some(Event::Ready))
    }
}
