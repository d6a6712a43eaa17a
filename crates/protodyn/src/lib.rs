//! Messages of any gRPC service, as a ghz user describes them: a `.proto` file (`--proto`, with
//! `-I` include paths) compiled once at startup, the method called (`--call
//! package.Service/Method`) and its request message written as JSON (`--data`), with
//! `{rand:A-B}` placeholders drawn per call.
//!
//! Why these crates: `protox` is a protobuf compiler in pure Rust (no `protoc` to install, its
//! errors name the file, line and column), and `prost-reflect` gives the compiled descriptors
//! (`FileDescriptorSet`), dynamic messages and the canonical JSON mapping of protobuf, so any
//! field type, nested message, enum, `oneof`, map or well-known type reads as protoc's JSON
//! does. Both are used at startup only: [`Proto::compile`] on the machine where the load is
//! described, [`Proto::from_descriptors`] where it runs (the descriptors travel in the load's
//! spec, so a client host needs no file), and [`Method::template`] once per load. The per-call
//! work is [`Template::encode`], hand-written in `template.rs`: copies of pre-encoded bytes with
//! the drawn fields encoded between them, never a JSON parse nor a reflection walk.
//!
//! This crate owns no sockets, no gRPC framing and no flags: the engine frames and sends what
//! it encodes, the CLI names the flags in its errors.

mod compile;
mod template;

pub use compile::{Method, Proto, Streaming};
/// Protobuf's base-128 varint, as prost writes it (the engine encodes the benchmark service's
/// messages with it).
pub use prost::encoding::encode_varint;
pub use template::{Part, Template};

/// What is wrong with a `.proto`, a call or its JSON: one line, naming the file and line, the
/// method or the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// The `.proto` does not compile: `file:line:column: message`, as protox reports it.
    #[error("{0}")]
    Compile(String),
    /// Descriptors that do not decode (a spec edited by hand).
    #[error("the compiled descriptors do not decode: {0}")]
    Descriptors(String),
    /// `--call` is not `package.Service/Method`.
    #[error("`{0}`: expected package.Service/Method")]
    BadCall(String),
    /// No such service in the compiled files.
    #[error("no service `{service}` in the .proto (services: {})", list(.services))]
    NoService {
        service: String,
        services: Vec<String>,
    },
    /// No such method in the service.
    #[error("`{service}` has no method `{method}` (its methods: {})", list(.methods))]
    NoMethod {
        service: String,
        method: String,
        methods: Vec<String>,
    },
    /// A streaming method: only unary calls are made.
    #[error("`{method}` is a {kind} method: only unary methods can be called yet")]
    Streaming { method: String, kind: Streaming },
    /// `--data` is not JSON, or not an object.
    #[error("not a JSON object for {message}: {why}")]
    Json { message: String, why: String },
    /// A field the message does not have.
    #[error("no field `{path}` in {message} (its fields: {})", list(.fields))]
    UnknownField {
        path: String,
        message: String,
        fields: Vec<String>,
    },
    /// A field whose JSON value does not fit its type.
    #[error("field `{path}` ({kind}): {why}")]
    Field {
        path: String,
        kind: String,
        why: String,
    },
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}
