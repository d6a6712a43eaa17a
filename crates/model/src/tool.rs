//! The load tools a lap can be measured with, as a type: serverbench's own engine and the
//! external tools the original experiments used. Their adapters live in `serverbench-tools`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A load tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// The built-in engine, run as `serverbench load --json`.
    #[default]
    Serverbench,
    /// wrk 4.x (Debian `wrk`).
    Wrk,
    /// ApacheBench (Debian `apache2-utils`).
    Ab,
    /// autocannon (npm).
    Autocannon,
    /// h2load (Debian `nghttp2-client`): HTTP/1.1 (`--h1`), h2 over TLS and h2c.
    H2load,
    /// hey (Debian `hey`).
    Hey,
    /// oha (crates.io, installed into the cache).
    Oha,
}

impl Tool {
    /// Every tool, in the order of `--tool`'s help.
    pub const ALL: [Tool; 7] = [
        Tool::Serverbench,
        Tool::Wrk,
        Tool::Ab,
        Tool::Autocannon,
        Tool::H2load,
        Tool::Hey,
        Tool::Oha,
    ];

    /// The spelling in suites, `--tool` and `LapRecord::tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::Serverbench => "serverbench",
            Tool::Wrk => "wrk",
            Tool::Ab => "ab",
            Tool::Autocannon => "autocannon",
            Tool::H2load => "h2load",
            Tool::Hey => "hey",
            Tool::Oha => "oha",
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool name that is none of [`Tool::ALL`] (the text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{0}` (one of {names})", names = tool_names())]
pub struct BadTool(pub String);

fn tool_names() -> String {
    let all: Vec<&str> = Tool::ALL.iter().map(|t| t.as_str()).collect();
    all.join(", ")
}

impl FromStr for Tool {
    type Err = BadTool;
    fn from_str(s: &str) -> Result<Tool, BadTool> {
        Tool::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| BadTool(s.to_string()))
    }
}
