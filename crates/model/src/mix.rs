//! A weighted mix of requests: `serverbench load --mix FILE` and a suite scenario's `mix`.
//!
//! The file (TOML, or JSON by its `.json` extension) lists `[[request]]` entries, each a
//! method, a path, headers, a body (`body`, `body_file` relative to the mix file, or
//! `body_size` bytes made once) and a weight; every request of the load is drawn by weight.
//! The file is read once, by the CLI (or the suite loader): the [`Mix`] travels as data in the
//! [`crate::LoadSpec`], so client hosts never read it.

use crate::toml_pos::{field_in_message, line_of, line_of_key};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The methods a mix entry may use. HEAD is left out: its answers carry no body, which the
/// engine knows per load, not per request.
pub const METHODS: [&str; 6] = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];

/// The most entries a mix may have (each costs every thread a latency histogram).
pub const MAX_ENTRIES: usize = 64;

/// A mix file that cannot be used, naming the file and the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MixError {
    /// The file (or a body file it names) could not be read.
    #[error("{}: {why}", file.display())]
    Io { file: PathBuf, why: String },
    /// Bad TOML/JSON, an unknown key, or a value that cannot be used.
    #[error("{}:{line}: {message}", file.display())]
    Invalid {
        file: PathBuf,
        line: usize,
        message: String,
    },
}

/// One request of a mix, resolved (method upper-case, headers as `Name: value`, body bytes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixEntry {
    /// Its label in results: `name`, or the method and path.
    pub name: String,
    pub method: String,
    /// Starts with `/` (the query string included).
    pub path: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// The body, base64 in JSON (`body_file` and `body_size` are read into it).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "body_b64")]
    pub body: Option<Vec<u8>>,
    /// Relative weight (the share of requests is weight / total).
    pub weight: f64,
}

/// A whole mix: where it came from and its entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    /// The file's name (for summaries), e.g. `api-4.toml`.
    pub file: String,
    pub entries: Vec<MixEntry>,
}

impl Mix {
    /// Each entry's share of the requests (its weight over the total).
    pub fn shares(&self) -> Vec<f64> {
        let total: f64 = self.entries.iter().map(|e| e.weight).sum();
        self.entries.iter().map(|e| e.weight / total).collect()
    }

    /// Reads and checks a mix file (TOML, or JSON when its name ends in `.json`); body files
    /// are read relative to it.
    pub fn load(path: &Path) -> Result<Mix, MixError> {
        let text = std::fs::read_to_string(path).map_err(|e| MixError::Io {
            file: path.to_path_buf(),
            why: e.to_string(),
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let read = |p: &Path| std::fs::read(dir.join(p));
        Mix::parse(&text, path, &read)
    }

    /// Parses mix text; `file` names it in errors (and says JSON by its extension),
    /// `read_body` reads a `body_file`.
    pub fn parse(
        text: &str,
        file: &Path,
        read_body: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
    ) -> Result<Mix, MixError> {
        let json = file.extension().is_some_and(|e| e == "json");
        let invalid = |line: usize, message: String| MixError::Invalid {
            file: file.to_path_buf(),
            line,
            message,
        };
        let raw: RawFile = if json {
            serde_json::from_str(text).map_err(|e| invalid(e.line(), strip_position(&e)))?
        } else {
            toml::from_str(text).map_err(|e| {
                let msg = e.message().trim().lines().collect::<Vec<_>>().join(": ");
                let line = match (e.span(), field_in_message(&msg)) {
                    (Some(s), _) => line_of(text, s.start),
                    (None, Some(f)) => line_of_key(text, &f),
                    (None, None) => 1,
                };
                invalid(line, msg)
            })?
        };
        let line = |i: usize, key: &str| match json {
            true => json_entry_line(text, i),
            false if key.is_empty() => line_of_key(text, &format!("request[{}]", i + 1)),
            false => line_of_key(text, &format!("request[{}].{key}", i + 1)),
        };
        let entries = raw
            .request
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.resolve(read_body)
                    .map_err(|(k, m)| invalid(line(i, k), m))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mix = Mix {
            file: file.file_name().map_or_else(
                || file.display().to_string(),
                |n| n.to_string_lossy().into(),
            ),
            entries,
        };
        mix.check().map_err(|(i, m)| match i {
            Some(i) => invalid(line(i, ""), m),
            None => invalid(1, m),
        })?;
        Ok(mix)
    }

    /// What serde cannot check across entries: some entries, at most [`MAX_ENTRIES`], a total
    /// weight above zero, names given once. Returns the entry and the message.
    fn check(&self) -> Result<(), (Option<usize>, String)> {
        if self.entries.is_empty() {
            return Err((None, "no [[request]] entry".into()));
        }
        if self.entries.len() > MAX_ENTRIES {
            let n = self.entries.len();
            return Err((None, format!("{n} entries; at most {MAX_ENTRIES}")));
        }
        if self.entries.iter().map(|e| e.weight).sum::<f64>() <= 0.0 {
            return Err((
                None,
                "the weights add up to 0: give some entry a weight".into(),
            ));
        }
        for (i, e) in self.entries.iter().enumerate() {
            if self.entries[..i].iter().any(|o| o.name == e.name) {
                let why = format!("the name `{}` is given twice (set `name`)", e.name);
                return Err((Some(i), why));
            }
        }
        Ok(())
    }
}

/// serde_json's message without its ` at line L column C` (the error names the line).
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(at) => s[..at].to_string(),
        None => s,
    }
}

/// The line of the `i`th entry of a JSON mix: its `"path"` key (every entry has one).
fn json_entry_line(text: &str, i: usize) -> usize {
    text.match_indices("\"path\"")
        .nth(i)
        .map_or(1, |(at, _)| line_of(text, at))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    request: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: Option<String>,
    method: Option<String>,
    path: String,
    headers: Option<RawHeaders>,
    body: Option<String>,
    body_file: Option<PathBuf>,
    body_size: Option<usize>,
    weight: Option<f64>,
}

/// `headers = ["Name: value"]` or `headers = { Name = "value" }`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawHeaders {
    List(Vec<String>),
    Table(BTreeMap<String, String>),
}

impl RawEntry {
    /// The entry checked and resolved; an error names its key.
    fn resolve(
        self,
        read_body: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
    ) -> Result<MixEntry, (&'static str, String)> {
        let method = self.method.as_deref().unwrap_or("GET").to_ascii_uppercase();
        if method == "HEAD" {
            return Err((
                "method",
                "HEAD cannot be mixed (its answers have no body)".into(),
            ));
        }
        if !METHODS.contains(&method.as_str()) {
            let known = METHODS.join(", ");
            return Err(("method", format!("unknown method `{method}` ({known})")));
        }
        if !self.path.starts_with('/') || self.path.contains(char::is_whitespace) {
            let why = format!("path `{}` must start with / and hold no spaces", self.path);
            return Err(("path", why));
        }
        let headers = match self.headers {
            None => Vec::new(),
            Some(RawHeaders::List(l)) => l,
            Some(RawHeaders::Table(t)) => t.into_iter().map(|(n, v)| format!("{n}: {v}")).collect(),
        };
        if let Some(h) = headers
            .iter()
            .find(|h| !h.contains(':') || h.contains(['\r', '\n']))
        {
            return Err(("headers", format!("`{h}` is not `Name: value`")));
        }
        let body = match (self.body, self.body_file, self.body_size) {
            (None, None, None) => None,
            (Some(b), None, None) => Some(b.into_bytes()),
            (None, Some(f), None) => {
                Some(read_body(&f).map_err(|e| ("body_file", format!("{}: {e}", f.display())))?)
            }
            (None, None, Some(n)) => Some(filler(n)),
            _ => return Err(("body", "give one of body, body_file and body_size".into())),
        };
        let weight = self.weight.unwrap_or(1.0);
        if !(weight >= 0.0 && weight.is_finite()) {
            return Err(("weight", format!("{weight} is not a weight (0 or more)")));
        }
        let name = self.name.unwrap_or_else(|| match method.as_str() {
            "GET" => self.path.clone(),
            m => format!("{m} {}", self.path),
        });
        Ok(MixEntry {
            name,
            method,
            path: self.path,
            headers,
            body,
            weight,
        })
    }
}

/// `body_size = N`: N bytes of a fixed printable pattern, the same on every run.
pub fn filler(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

/// A body as base64 text in JSON.
mod body_b64 {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

    pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(&B64.encode(b)),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| B64.decode(t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests;
