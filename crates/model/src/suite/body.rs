//! A scenario's own request (`method`, `body`, `body_size`, `chunked`, `chunk_size`): what each
//! key may be combined with, and the method and chunk size a lap is given.

use super::{Mode, Scenario};
use crate::spec::{DEFAULT_CHUNK_SIZE, MAX_BODY_SIZE};
use crate::Method;

impl Scenario {
    /// Whether its requests carry a body (`body` or `body_size`).
    pub fn has_body(&self) -> bool {
        self.body.is_some() || self.body_size.is_some()
    }

    /// The method of its requests when not GET: `method`, else POST when they carry a body.
    pub fn request_method(&self) -> Option<Method> {
        let default = match self.has_body() {
            true => Method::Post,
            false => Method::Get,
        };
        Some(self.method.unwrap_or(default)).filter(|m| *m != Method::Get)
    }

    /// With `chunked`: bytes per chunk (`chunk_size`, else the engine's default).
    pub fn chunk(&self) -> Option<u64> {
        self.chunked
            .then(|| self.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE))
    }

    /// The first request key given, if any.
    fn request_key(&self) -> Option<&'static str> {
        [
            (self.method.is_some(), "method"),
            (self.body.is_some(), "body"),
            (self.body_size.is_some(), "body_size"),
            (self.chunked, "chunked"),
            (self.chunk_size.is_some(), "chunk_size"),
        ]
        .into_iter()
        .find_map(|(given, key)| given.then_some(key))
    }

    /// Checks the request keys; returns the key (within the scenario) and the message.
    pub(super) fn validate_body(&self) -> Result<(), (&'static str, String)> {
        let bad = |key: &'static str, message: &str| Err((key, message.to_string()));
        let Some(first) = self.request_key() else {
            return Ok(());
        };
        if self.mode != Mode::Http {
            return bad(
                first,
                "applies to http only (ws and tcp scenarios send no request)",
            );
        }
        if self.mix.is_some() {
            return bad(
                first,
                "a mix entry has its own method and body: give them in the mix file",
            );
        }
        if self.body.is_some() && self.body_size.is_some() {
            return bad("body_size", "give body or body_size, not both");
        }
        if self.body.as_deref() == Some("") {
            return bad(
                "body",
                "is empty (leave it out for requests without a body)",
            );
        }
        if let Some(r) = self.body_size.filter(|r| r.max > MAX_BODY_SIZE) {
            let why = format!("{r}: at most 1GiB (each load thread holds the largest body)");
            return bad("body_size", &why);
        }
        if self.chunked && !self.has_body() {
            return bad("chunked", "needs a body (body or body_size)");
        }
        match self.chunk_size {
            Some(_) if !self.chunked => return bad("chunk_size", "applies with chunked = true"),
            Some(0) => return bad("chunk_size", "must be at least 1 byte"),
            _ => {}
        }
        if self.transport.protocol.is_h2() && (self.body_size.is_some() || self.chunked) {
            let key = if self.chunked { "chunked" } else { "body_size" };
            return bad(
                key,
                "applies to HTTP/1.1 only: the engine sends no drawn or chunked body over HTTP/2",
            );
        }
        Ok(())
    }
}
