//! gRPC status codes and the status a call ends with (`grpc-status`, `grpc-message`).

use std::fmt;

/// The status codes of gRPC (`grpc/doc/statuscodes.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl Code {
    /// Every code, by number.
    pub const ALL: [Code; 17] = [
        Code::Ok,
        Code::Cancelled,
        Code::Unknown,
        Code::InvalidArgument,
        Code::DeadlineExceeded,
        Code::NotFound,
        Code::AlreadyExists,
        Code::PermissionDenied,
        Code::ResourceExhausted,
        Code::FailedPrecondition,
        Code::Aborted,
        Code::OutOfRange,
        Code::Unimplemented,
        Code::Internal,
        Code::Unavailable,
        Code::DataLoss,
        Code::Unauthenticated,
    ];

    /// The code numbered `n`, if gRPC defines one.
    pub fn from_u32(n: u32) -> Option<Code> {
        Code::ALL.get(n as usize).copied()
    }

    /// Its number.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// Its name as gRPC spells it (`DEADLINE_EXCEEDED`).
    pub fn name(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Cancelled => "CANCELLED",
            Code::Unknown => "UNKNOWN",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Aborted => "ABORTED",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
            Code::Unavailable => "UNAVAILABLE",
            Code::DataLoss => "DATA_LOSS",
            Code::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

impl fmt::Display for Code {
    /// `4 DEADLINE_EXCEEDED`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.number(), self.name())
    }
}

/// The status a call ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// `grpc-status` (a number gRPC does not define is kept as sent).
    pub code: u32,
    /// `grpc-message`, percent-decoded (empty when absent).
    pub message: String,
}

/// Why a response's status could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusError {
    /// No `grpc-status` in the trailers (nor in a trailers-only response).
    #[error("no grpc-status")]
    Missing,
    /// A `grpc-status` that is not a decimal number.
    #[error("grpc-status {0:?} is not a number")]
    NotANumber(String),
}

impl Status {
    /// The status of a header block's `grpc-status` and `grpc-message` (`find` looks a header up
    /// by its lowercase name).
    pub fn from_headers<'a>(
        find: impl Fn(&str) -> Option<&'a [u8]>,
    ) -> Result<Status, StatusError> {
        let raw = find("grpc-status").ok_or(StatusError::Missing)?;
        let text = String::from_utf8_lossy(raw);
        let digits = !raw.is_empty() && raw.len() <= 9 && raw.iter().all(u8::is_ascii_digit);
        let code = match digits.then(|| text.parse::<u32>()) {
            Some(Ok(n)) => n,
            _ => return Err(StatusError::NotANumber(text.into_owned())),
        };
        let message = find("grpc-message").map(percent_decode).unwrap_or_default();
        Ok(Status { code, message })
    }

    /// True for `0 OK`.
    pub fn is_ok(&self) -> bool {
        self.code == 0
    }

    /// The code, if gRPC defines it.
    pub fn known(&self) -> Option<Code> {
        Code::from_u32(self.code)
    }
}

impl fmt::Display for Status {
    /// `13 INTERNAL: the message` (`13 INTERNAL` without one; `99 (undefined)` for a number
    /// gRPC does not define).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.known() {
            Some(c) => write!(f, "{c}")?,
            None => write!(f, "{} (undefined)", self.code)?,
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

/// `grpc-message`'s percent-encoding undone (`%XX` of UTF-8 bytes; a malformed escape is kept
/// as it is, as the protocol asks).
pub fn percent_decode(raw: &[u8]) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let escaped = raw[i] == b'%' && i + 2 < raw.len();
        match escaped.then(|| (hex(raw[i + 1]), hex(raw[i + 2]))) {
            Some((Some(h), Some(l))) => {
                out.push(h << 4 | l);
                i += 3;
            }
            _ => {
                out.push(raw[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
