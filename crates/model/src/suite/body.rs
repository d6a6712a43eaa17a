//! A scenario's own request (`method`, `body`, `body_size`, `chunked`, `chunk_size`): the chunk
//! size a lap is given, and the one rule about the suite's keys themselves (what a request may
//! be combined with is [`crate::LoadSpec::validate`]'s).

use super::Scenario;
use crate::spec::DEFAULT_CHUNK_SIZE;
use crate::Method;

impl Scenario {
    /// Whether its requests carry a body (`body` or `body_size`).
    pub fn has_body(&self) -> bool {
        self.work.has_body()
    }

    /// The method of its requests when not GET: `method`, else POST when they carry a body.
    pub fn request_method(&self) -> Option<Method> {
        self.work.request_method()
    }

    /// With `chunked`: bytes per chunk (`chunk_size`, else the engine's default).
    pub fn chunk(&self) -> Option<u64> {
        self.chunked
            .then(|| self.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE))
    }

    /// `chunk_size` without `chunked`; returns the key (within the scenario) and the message.
    pub(super) fn validate_body(&self) -> Result<(), (&'static str, String)> {
        match self.chunk_size {
            Some(_) if !self.chunked => Err(("chunk_size", "applies with chunked = true".into())),
            _ => Ok(()),
        }
    }
}
