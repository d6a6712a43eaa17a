//! `--io`: which kernel interface the load generator's threads drive their sockets with.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What `--io` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Io {
    /// The engine's choice (see the engine's `uring` module for which and why).
    #[default]
    Auto,
    Epoll,
    Uring,
}

/// The backend a load ran on (the result's `io`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoBackend {
    /// Readiness (`epoll`) and `recv`/`send` system calls.
    #[default]
    Epoll,
    /// One io_uring per thread: multishot receives into a provided buffer ring, queued sends.
    Uring,
}

impl Io {
    pub fn as_str(self) -> &'static str {
        match self {
            Io::Auto => "auto",
            Io::Epoll => "epoll",
            Io::Uring => "uring",
        }
    }
}

impl IoBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            IoBackend::Epoll => "epoll",
            IoBackend::Uring => "uring",
        }
    }
}

impl fmt::Display for Io {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for IoBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An `--io` value that is none of the choices (the text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: expected auto, epoll or uring")]
pub struct BadIo(pub String);

impl FromStr for Io {
    type Err = BadIo;
    fn from_str(s: &str) -> Result<Io, BadIo> {
        match s {
            "auto" => Ok(Io::Auto),
            "epoll" => Ok(Io::Epoll),
            "uring" | "io_uring" | "io-uring" => Ok(Io::Uring),
            _ => Err(BadIo(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_choices_parse_from_their_flag_spelling_and_print_it_back() {
        for io in [Io::Auto, Io::Epoll, Io::Uring] {
            assert_eq!(io.to_string().parse::<Io>(), Ok(io));
        }
        assert_eq!("io_uring".parse::<Io>(), Ok(Io::Uring));
        assert!("kqueue"
            .parse::<Io>()
            .unwrap_err()
            .to_string()
            .contains("epoll"));
    }
}
