//! A `.proto` compiled (protox) or its descriptors decoded, and a method of one of its
//! services looked up by name.

use crate::ProtoError;
use miette::Diagnostic;
use prost::Message;
use prost_reflect::{DescriptorPool, MethodDescriptor};
use std::fmt;
use std::path::{Path, PathBuf};

/// The compiled files: their descriptors (imports included) and the pool built from them.
#[derive(Debug, Clone)]
pub struct Proto {
    pool: DescriptorPool,
    descriptors: Vec<u8>,
}

impl Proto {
    /// Compiles `file` and its imports, looked up in `includes` and then in `file`'s folder
    /// (as ghz does); the well-known types (`google/protobuf/*.proto`) are built in. An error
    /// names the file, line and column.
    pub fn compile(file: &Path, includes: &[PathBuf]) -> Result<Proto, ProtoError> {
        let mut dirs = includes.to_vec();
        let parent = file.parent().filter(|p| !p.as_os_str().is_empty());
        dirs.push(parent.map_or_else(|| PathBuf::from("."), Path::to_path_buf));
        let set =
            protox::compile([file], &dirs).map_err(|e| ProtoError::Compile(compile_error(&e)))?;
        Proto::from_descriptors(&set.encode_to_vec())
    }

    /// The files from their encoded `FileDescriptorSet` (what [`Proto::descriptors`] gives).
    pub fn from_descriptors(bytes: &[u8]) -> Result<Proto, ProtoError> {
        let pool =
            DescriptorPool::decode(bytes).map_err(|e| ProtoError::Descriptors(e.to_string()))?;
        Ok(Proto {
            pool,
            descriptors: bytes.to_vec(),
        })
    }

    /// The encoded `FileDescriptorSet`, imports included: what a client host is handed.
    pub fn descriptors(&self) -> &[u8] {
        &self.descriptors
    }

    /// [`Proto::descriptors`] in base64, as a load's spec carries them.
    pub fn descriptors_base64(&self) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(&self.descriptors)
    }

    /// The files from [`Proto::descriptors_base64`]'s text.
    pub fn from_base64(text: &str) -> Result<Proto, ProtoError> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| ProtoError::Descriptors(e.to_string()))?;
        Proto::from_descriptors(&bytes)
    }

    /// The method `call` names: `package.Service/Method`, with or without a leading `/` (or
    /// `package.Service.Method`, as ghz takes it too).
    pub fn method(&self, call: &str) -> Result<Method, ProtoError> {
        let bad = || ProtoError::BadCall(call.to_string());
        let name = call.strip_prefix('/').unwrap_or(call);
        let (service, method) = name
            .rsplit_once('/')
            .or_else(|| name.rsplit_once('.'))
            .filter(|(s, m)| !s.is_empty() && !m.is_empty() && !m.contains('/'))
            .ok_or_else(bad)?;
        let Some(svc) = self.pool.get_service_by_name(service) else {
            return Err(ProtoError::NoService {
                service: service.to_string(),
                services: self.pool.services().map(|s| s.full_name().into()).collect(),
            });
        };
        let found = svc.methods().find(|m| m.name() == method);
        let desc = found.ok_or_else(|| ProtoError::NoMethod {
            service: service.to_string(),
            method: method.to_string(),
            methods: svc.methods().map(|m| m.name().to_string()).collect(),
        })?;
        Ok(Method { desc })
    }
}

/// A protox error as one line: `file:line:column: message` when it points into a file.
fn compile_error(e: &protox::Error) -> String {
    let at = e.labels().and_then(|mut l| l.next()).and_then(|label| {
        let source = e.source_code()?;
        let span = source.read_span(label.inner(), 0, 0).ok()?;
        Some((span.line() + 1, span.column() + 1))
    });
    let what = e.to_string();
    match (e.file(), at) {
        (Some(file), Some((line, col))) => format!("{file}:{line}:{col}: {what}"),
        (Some(file), None) if !what.contains(file) => format!("{file}: {what}"),
        _ => what,
    }
}

/// How a method streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streaming {
    Unary,
    Server,
    Client,
    Bidi,
}

impl fmt::Display for Streaming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Streaming::Unary => "unary",
            Streaming::Server => "server-streaming",
            Streaming::Client => "client-streaming",
            Streaming::Bidi => "bidirectional-streaming",
        })
    }
}

/// A method of a compiled service.
#[derive(Debug, Clone)]
pub struct Method {
    pub(crate) desc: MethodDescriptor,
}

impl Method {
    /// Its HTTP/2 path: `/package.Service/Method`.
    pub fn path(&self) -> String {
        format!(
            "/{}/{}",
            self.desc.parent_service().full_name(),
            self.desc.name()
        )
    }

    /// Whether it streams requests, replies or both.
    pub fn streaming(&self) -> Streaming {
        match (
            self.desc.is_client_streaming(),
            self.desc.is_server_streaming(),
        ) {
            (false, false) => Streaming::Unary,
            (false, true) => Streaming::Server,
            (true, false) => Streaming::Client,
            (true, true) => Streaming::Bidi,
        }
    }

    /// The method, refused unless unary (one line naming it and how it streams).
    pub fn unary(self) -> Result<Method, ProtoError> {
        match self.streaming() {
            Streaming::Unary => Ok(self),
            kind => Err(ProtoError::Streaming {
                method: self.path(),
                kind,
            }),
        }
    }

    /// The full name of its request message.
    pub fn input(&self) -> String {
        self.desc.input().full_name().to_string()
    }

    /// Decodes a reply (its message without the gRPC prefix) as JSON: for tests and checks.
    pub fn reply_json(&self, bytes: &[u8]) -> Option<String> {
        let m = prost_reflect::DynamicMessage::decode(self.desc.output(), bytes).ok()?;
        serde_json::to_string(&m).ok()
    }

    /// Decodes a request message as JSON (what [`Template::encode`](crate::Template) made).
    pub fn request_json(&self, bytes: &[u8]) -> Option<String> {
        let m = prost_reflect::DynamicMessage::decode(self.desc.input(), bytes).ok()?;
        serde_json::to_string(&m).ok()
    }
}
