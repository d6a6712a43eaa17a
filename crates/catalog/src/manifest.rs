//! `server.toml`: the strict manifest format of spec/manifest.md.

use crate::toml_pos::{field_in_message, line_of};
use crate::{CatalogError, Feature};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Default for `ready_timeout_s`.
pub const DEFAULT_READY_TIMEOUT_S: u64 = 30;

/// A parsed `server.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `<language>/<name>`, equal to the folder.
    pub name: String,
    /// Display name of the language.
    pub language: String,
    /// Display name of the server/framework.
    pub framework: String,
    /// The pinned version (free text).
    pub framework_version: String,
    /// One line.
    pub description: String,
    /// The contract features implemented.
    pub implements: Vec<Feature>,
    /// How WORKERS is used and any tuning.
    pub tuning: String,
    /// How long the harness waits for the ports, in seconds.
    #[serde(default = "default_ready_timeout")]
    pub ready_timeout_s: u64,
    /// The shortest warm-up before each lap, in seconds, whatever the suite says: JIT runtimes
    /// (the JVM) are still compiling after a short suite warm-up. 0 (the default) defers to
    /// the suite.
    #[serde(default)]
    pub min_warmup_s: u64,
    /// Known deviations from the contract, each with the reason it cannot be fixed in the
    /// server (e.g. `http10 = "uWebSockets answers 505 to HTTP/1.0 in its C++ parser"`).
    /// `verify` still runs those checks and shows what differs, but does not fail on them.
    #[serde(default)]
    pub deviations: std::collections::BTreeMap<Deviation, String>,
    /// The database client, for servers that implement `db`, `queries`, `fortunes` or
    /// `updates`: shown beside their rows in reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseClient>,
    /// The libraries behind the HTTP shapes of issue 32 (`compression`, `static`): shown beside
    /// their rows in reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shapes: Option<ShapeLibraries>,
    /// Tools and dependencies needed.
    pub requires: Requires,
    /// Shell commands.
    pub commands: Commands,
}

/// A part of the contract a server is known not to honour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Deviation {
    /// HTTP/1.0 requests are not answered as the contract says.
    Http10,
    /// HTTP/1.0 requests that ask for keep-alive are answered, then the connection is closed.
    Http10KeepAlive,
    /// A request whose request line arrives in several segments is refused (shown by the
    /// checks that split requests: 3 bytes at a time, and deep pipelining with cut writes).
    SplitRequestLine,
    /// Deep pipelining on many connections loses answers (e.g. closes without draining).
    DeepPipelining,
    /// `ws-echo`: an unmasked client frame is not refused with close 1002 (the WebSocket
    /// library never reads the mask bit).
    WsUnmasked,
    /// `grpc`: a request message that does not decode is not answered with 13 INTERNAL or 3
    /// INVALID_ARGUMENT (the gRPC library decodes it before any handler runs).
    GrpcMalformed,
    /// `grpc`: a request message above the receive limit is not answered with 8
    /// RESOURCE_EXHAUSTED (the gRPC library picks another code).
    GrpcMessageLimit,
    /// `h3`: a request with a malformed header section (no `:path`) is not refused with
    /// `H3_MESSAGE_ERROR` or a 400 (the HTTP/3 library answers or closes otherwise).
    H3Malformed,
    /// `h3`: on SIGTERM the server sends neither a GOAWAY nor a CONNECTION_CLOSE with
    /// `H3_NO_ERROR` (the framework has no graceful HTTP/3 shutdown).
    H3Shutdown,
}

impl Deviation {
    /// The key in `[deviations]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Deviation::Http10 => "http10",
            Deviation::Http10KeepAlive => "http10_keep_alive",
            Deviation::SplitRequestLine => "split_request_line",
            Deviation::DeepPipelining => "deep_pipelining",
            Deviation::WsUnmasked => "ws_unmasked",
            Deviation::GrpcMalformed => "grpc_malformed",
            Deviation::GrpcMessageLimit => "grpc_message_limit",
            Deviation::H3Malformed => "h3_malformed",
            Deviation::H3Shutdown => "h3_shutdown",
        }
    }

    /// True when the verify check named `check` is about this deviation, on `PORT` or over TLS
    /// (the TLS checks keep the names of their `PORT` twins, with ` over TLS` appended).
    pub fn covers(self, check: &str) -> bool {
        match self {
            Deviation::Http10 => check.starts_with("HTTP/1.0"),
            Deviation::Http10KeepAlive => {
                check.starts_with("HTTP/1.0") && check.contains("keep-alive")
            }
            Deviation::SplitRequestLine => {
                check.contains("bytes at a time") || check.contains("writes cut anywhere")
            }
            Deviation::DeepPipelining => check.contains("pipelined on each of"),
            Deviation::WsUnmasked => check.contains("unmasked"),
            Deviation::GrpcMalformed => check.starts_with("grpc malformed"),
            Deviation::GrpcMessageLimit => {
                check.starts_with("grpc ") && check.contains("above the 4 MiB limit")
            }
            Deviation::H3Malformed => {
                check.starts_with("request without :path") && check.ends_with(" over h3")
            }
            Deviation::H3Shutdown => {
                check.starts_with("GOAWAY or CONNECTION_CLOSE") && check.ends_with(" over h3")
            }
        }
    }
}

/// `[database]`: how a server reaches PostgreSQL (free text, shown in reports).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseClient {
    /// The driver and its pinned version, e.g. `pgx v5.7.2`.
    pub driver: String,
    /// The pool and how `DATABASE_POOL` sizes it, e.g. `pgxpool, DATABASE_POOL connections`.
    pub pool: String,
    /// The HTML template engine `/fortunes` renders through, e.g. `html/template`.
    #[serde(default)]
    pub templates: String,
}

/// `[shapes]`: what serves the shapes of issue 32 (free text, shown in reports).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeLibraries {
    /// What compresses `/json` (`compression`), e.g. `compression 1.8.1, threshold 0`.
    #[serde(default)]
    pub compression: String,
    /// What serves `/static/` (`static`), e.g. `express.static (serve-static 2.2.0)`.
    #[serde(default, rename = "static")]
    pub static_files: String,
}

/// `[requires]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    /// Executables that must be on PATH.
    pub commands: Vec<String>,
    /// Debian packages that provide missing commands.
    #[serde(default)]
    pub apt: Vec<String>,
    /// Files (relative to the server folder) that pin dependencies.
    #[serde(default)]
    pub lockfiles: Vec<String>,
    /// When non-empty, the server cannot run on this kind of machine and this says why.
    #[serde(default)]
    pub unavailable: String,
}

/// `[commands]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commands {
    /// Installs dependencies.
    #[serde(default)]
    pub setup: String,
    /// Compiles.
    #[serde(default)]
    pub build: String,
    /// Starts the server in the foreground.
    pub run: String,
    /// Prints the version recorded in env.json.
    pub version: String,
}

fn default_ready_timeout() -> u64 {
    DEFAULT_READY_TIMEOUT_S
}

impl Manifest {
    /// Parses manifest text; `file` only names the source in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Manifest, CatalogError> {
        toml::from_str(text).map_err(|e| parse_error(text, file, &e))
    }

    /// Reads and parses `file`.
    pub fn read(file: &Path) -> Result<Manifest, CatalogError> {
        let text = std::fs::read_to_string(file).map_err(|source| CatalogError::Io {
            path: file.to_path_buf(),
            source,
        })?;
        Manifest::parse(&text, file)
    }

    /// True when the server implements `feature`.
    pub fn implements(&self, feature: Feature) -> bool {
        self.implements.contains(&feature)
    }
}

/// Turns a toml error into a `CatalogError::Manifest` naming the line and the key.
fn parse_error(text: &str, file: &Path, err: &toml::de::Error) -> CatalogError {
    let message = err.message().trim().to_string();
    let (line, key) = match err.span() {
        Some(span) => {
            let line = line_of(text, span.start);
            let key = field_in_message(&message)
                .map(|k| qualify(text, span.start, &k, &message))
                .or_else(|| key_at(text, span.start));
            (line, key)
        }
        None => (1, field_in_message(&message)),
    };
    CatalogError::Manifest {
        file: file.to_path_buf(),
        line,
        key: key.unwrap_or_else(|| "?".to_string()),
        message,
    }
}

/// The `[table]` header in effect at `offset`, if any.
fn table_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    text[..offset].lines().rev().find_map(|l| {
        let l = l.trim();
        (l.starts_with('[') && l.ends_with(']') && !l.starts_with("[["))
            .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
    })
}

/// Qualifies a field name with its table: an unknown field inside the span of `[requires]` is
/// `requires.foo`; a missing field reported on a table header is `<table>.<field>`.
fn qualify(text: &str, offset: usize, field: &str, message: &str) -> String {
    let line_text = text[offset.min(text.len())..].lines().next().unwrap_or("");
    let header = line_text.trim_start().starts_with('[');
    let table = if message.starts_with("missing field") && header {
        Some(
            line_text
                .trim()
                .trim_matches(|c| c == '[' || c == ']')
                .to_string(),
        )
    } else if message.starts_with("missing field") && offset == 0 {
        None
    } else {
        table_at(text, offset + 1)
    };
    match table {
        Some(t) if !t.is_empty() => format!("{t}.{field}"),
        _ => field.to_string(),
    }
}

/// The key of the `key = value` line at `offset`, qualified with its table.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next()?;
    let key = line.split('=').next()?.trim();
    if key.is_empty() || key.starts_with('[') || key.contains(char::is_whitespace) {
        return None;
    }
    Some(match table_at(text, line_start) {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toml_pos::line_of_key;

    pub(crate) const GOOD: &str = r#"name = "node/http"
language = "JavaScript"
framework = "node:http"
framework_version = "20"
description = "Node's built-in http module."
implements = ["hello", "routes", "json"]
tuning = "One process."

[requires]
commands = ["node"]
apt = ["nodejs"]

[commands]
run = "exec node server.js"
version = "node --version"
"#;

    fn err(text: &str) -> (usize, String, String) {
        match Manifest::parse(text, Path::new("servers/node/http/server.toml")).unwrap_err() {
            CatalogError::Manifest {
                line, key, message, ..
            } => (line, key, message),
            other => panic!("unexpected error {other}"),
        }
    }

    #[test]
    fn a_complete_manifest_parses_with_defaults() {
        let m = Manifest::parse(GOOD, Path::new("x")).unwrap();
        assert_eq!((m.ready_timeout_s, m.min_warmup_s), (30, 0));
        assert_eq!(
            m.implements,
            vec![Feature::Hello, Feature::Routes, Feature::Json]
        );
        assert!(m.requires.lockfiles.is_empty());
        assert_eq!(m.commands.setup, "");
    }

    #[test]
    fn unknown_top_level_key_names_its_line_and_key() {
        let text = GOOD.replace("tuning = ", "colour = \"red\"\ntuning = ");
        let (line, key, message) = err(&text);
        assert_eq!((line, key.as_str()), (7, "colour"), "{message}");
    }

    #[test]
    fn unknown_key_in_a_table_is_qualified_with_the_table() {
        let text = GOOD.replace("apt = [\"nodejs\"]", "apt = [\"nodejs\"]\npip = []");
        let (line, key, _) = err(&text);
        assert_eq!((line, key.as_str()), (12, "requires.pip"));
    }

    #[test]
    fn missing_required_key_is_named() {
        let text = GOOD.replace("run = \"exec node server.js\"\n", "");
        let (_, key, message) = err(&text);
        assert_eq!(key, "commands.run", "{message}");
        let text = GOOD.replace("language = \"JavaScript\"\n", "");
        let (line, key, _) = err(&text);
        assert_eq!((line, key.as_str()), (1, "language"));
    }

    #[test]
    fn unknown_feature_names_the_implements_line() {
        let text = GOOD.replace("\"json\"]", "\"jsonp\"]");
        let (line, key, message) = err(&text);
        assert_eq!((line, key.as_str()), (6, "implements"), "{message}");
        assert!(message.contains("jsonp"), "{message}");
    }

    #[test]
    fn wrong_type_names_the_key() {
        let text = GOOD.replace("framework_version = \"20\"", "framework_version = 20");
        let (line, key, _) = err(&text);
        assert_eq!((line, key.as_str()), (4, "framework_version"));
    }

    #[test]
    fn syntax_error_names_the_line() {
        let text = GOOD.replace("tuning = \"One process.\"", "tuning = \"One process.");
        let (line, _, _) = err(&text);
        assert_eq!(line, 7);
    }

    #[test]
    fn line_of_key_finds_keys_inside_tables() {
        assert_eq!(line_of_key(GOOD, "name"), 1);
        assert_eq!(line_of_key(GOOD, "commands.run"), 14);
        assert_eq!(line_of_key(GOOD, "requires.lockfiles"), 1);
    }
}
