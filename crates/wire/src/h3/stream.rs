//! What the client reads on HTTP/3 streams: a response on its request stream
//! ([`ResponseReader`]) and the server's unidirectional streams ([`UniReader`]).

use super::frame::{self, Frames, Piece, CANCEL_PUSH, GOAWAY, HEADERS, PUSH_PROMISE, SETTINGS};
use super::{qpack, setting, stream_type, varint, Code};
use crate::h2::Strings;
use crate::http::{fnv, Encoding, Response, FNV_OFFSET};

/// One response, read from its request stream's bytes as they arrive: HEADERS (after any
/// interim 1xx ones), DATA, optional trailers, then the stream's FIN ([`Self::finish`]).
/// A reader is reused from stream to stream ([`Self::reset`]), so a response allocates
/// nothing once a connection's readers are warm.
#[derive(Debug, Default)]
pub struct ResponseReader {
    frames: Frames,
    /// The final status (0: none yet).
    status: u16,
    trailers: bool,
    body_len: u64,
    body_hash: u64,
    wire_len: u64,
    /// `--verify`: DATA hashed.
    verify: bool,
}

impl ResponseReader {
    pub fn new(verify: bool) -> Self {
        ResponseReader {
            verify,
            body_hash: FNV_OFFSET,
            ..ResponseReader::default()
        }
    }

    /// Ready for the next response.
    pub fn reset(&mut self) {
        self.frames.reset();
        self.status = 0;
        self.trailers = false;
        self.body_len = 0;
        self.body_hash = FNV_OFFSET;
        self.wire_len = 0;
    }

    /// The final status, once its HEADERS came (0 before).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Reads bytes of the stream. An error is the code to end the stream with (H3_MESSAGE_ERROR)
    /// or to close the connection with (the others: see [`Code::is_stream_error`]).
    pub fn feed(&mut self, data: &[u8], strings: &mut Strings) -> Result<(), Code> {
        self.wire_len += data.len() as u64;
        let ResponseReader {
            frames,
            status,
            trailers,
            body_len,
            body_hash,
            verify,
            ..
        } = self;
        frames.feed(data, |piece| match piece {
            Piece::Data(d) => {
                if *status == 0 || *trailers {
                    return Err(Code::FRAME_UNEXPECTED);
                }
                *body_len += d.len() as u64;
                if *verify {
                    *body_hash = fnv(*body_hash, d);
                }
                Ok(())
            }
            Piece::Whole(HEADERS, block) => {
                if *trailers {
                    return Err(Code::FRAME_UNEXPECTED);
                }
                let s = qpack::decode_status(block, strings)?;
                if *status != 0 {
                    *trailers = true; // trailers: decoded (a dynamic reference fails), not read
                    return Ok(());
                }
                match s {
                    None => Err(Code::MESSAGE_ERROR),
                    Some(100..=199) => Ok(()), // interim: the final HEADERS follow
                    Some(s) => {
                        *status = s;
                        Ok(())
                    }
                }
            }
            Piece::Whole(PUSH_PROMISE, _) => Err(Code::ID_ERROR), // no MAX_PUSH_ID was sent
            Piece::Whole(..) => Err(Code::FRAME_UNEXPECTED),
        })
    }

    /// The stream's FIN came: the whole response, or why it is not one.
    pub fn finish(&self) -> Result<Response, Code> {
        if !self.frames.at_boundary() {
            return Err(Code::FRAME_ERROR);
        }
        if self.status == 0 {
            return Err(Code::MESSAGE_ERROR);
        }
        Ok(Response {
            status: self.status,
            close: false,
            body_len: self.body_len,
            body_hash: if self.verify { self.body_hash } else { 0 },
            wire_len: self.wire_len,
            encoding: Encoding::Identity,
            undecodable: false,
        })
    }
}

/// What the server's SETTINGS said that the client keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeerSettings {
    pub qpack_max_table_capacity: u64,
    pub qpack_blocked_streams: u64,
    pub max_field_section_size: Option<u64>,
}

/// What a server's unidirectional stream said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniEvent {
    /// The control stream's SETTINGS.
    Settings(PeerSettings),
    /// A GOAWAY: requests on streams from this id on were not processed.
    Goaway(u64),
}

/// What a unidirectional stream is, once its type is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Its type varint is not whole yet.
    Untyped,
    /// The control stream; whether its SETTINGS came.
    Control { settings: bool },
    /// QPACK's encoder or decoder stream, or an unknown (reserved) type: drained unread.
    Drained,
}

/// A server's unidirectional stream: the control stream's frames read, the others drained.
#[derive(Debug)]
pub struct UniReader {
    kind: Kind,
    head: [u8; 8],
    have: usize,
    frames: Frames,
}

impl Default for UniReader {
    fn default() -> Self {
        UniReader {
            kind: Kind::Untyped,
            head: [0; 8],
            have: 0,
            frames: Frames::default(),
        }
    }
}

impl UniReader {
    /// Whether this is the control stream (once its type came).
    pub fn is_control(&self) -> bool {
        matches!(self.kind, Kind::Control { .. })
    }

    /// Reads bytes of the stream; events go to `on`. An error closes the connection.
    pub fn feed(&mut self, mut data: &[u8], mut on: impl FnMut(UniEvent)) -> Result<(), Code> {
        if self.kind == Kind::Untyped {
            let take = (self.head.len() - self.have).min(data.len());
            self.head[self.have..self.have + take].copy_from_slice(&data[..take]);
            let Some((ty, n)) = varint::get(&self.head[..self.have + take]) else {
                self.have += take;
                return Ok(());
            };
            data = &data[n - self.have..];
            self.kind = match ty {
                stream_type::CONTROL => Kind::Control { settings: false },
                stream_type::PUSH => return Err(Code::ID_ERROR), // no MAX_PUSH_ID was sent
                _ => Kind::Drained,
            };
        }
        let Kind::Control { settings } = &mut self.kind else {
            return Ok(());
        };
        self.frames.feed(data, |piece| {
            let Piece::Whole(ty, payload) = piece else {
                return Err(if *settings {
                    Code::FRAME_UNEXPECTED
                } else {
                    Code::MISSING_SETTINGS
                });
            };
            match (ty, *settings) {
                (SETTINGS, false) => {
                    *settings = true;
                    on(UniEvent::Settings(read_settings(payload)?));
                    Ok(())
                }
                (_, false) => Err(Code::MISSING_SETTINGS),
                (GOAWAY, true) => {
                    on(UniEvent::Goaway(frame::one_varint(payload)?));
                    Ok(())
                }
                (CANCEL_PUSH, true) => frame::one_varint(payload).map(drop),
                _ => Err(Code::FRAME_UNEXPECTED),
            }
        })
    }

    /// The stream ended (FIN or reset): closing the control stream is an error.
    pub fn finish(&self) -> Result<(), Code> {
        match self.kind {
            Kind::Control { .. } => Err(Code::CLOSED_CRITICAL_STREAM),
            _ => Ok(()),
        }
    }
}

/// A SETTINGS payload: HTTP/2's own identifiers are H3_SETTINGS_ERROR, unknown ones ignored.
fn read_settings(payload: &[u8]) -> Result<PeerSettings, Code> {
    let mut s = PeerSettings::default();
    let mut bad = false;
    frame::settings(payload, |id, v| match id {
        setting::QPACK_MAX_TABLE_CAPACITY => s.qpack_max_table_capacity = v,
        setting::QPACK_BLOCKED_STREAMS => s.qpack_blocked_streams = v,
        setting::MAX_FIELD_SECTION_SIZE => s.max_field_section_size = Some(v),
        0x02..=0x05 => bad = true,
        _ => {}
    })?;
    if bad {
        return Err(Code::SETTINGS_ERROR);
    }
    Ok(s)
}
