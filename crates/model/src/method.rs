//! The HTTP methods a load may send: a suite scenario's (`method = "POST"`), as the mix's
//! entries allow them, and `serverbench load -X`'s, which may also send HEAD (its answers carry
//! no body, so a mix leaves it out).

use serde::{Deserialize, Serialize};
use std::fmt;

/// An HTTP request method, written upper-case in suites and results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
    Patch,
    Options,
    Head,
}

impl Method {
    /// As sent: `GET`, `POST`...
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
            Method::Options => "OPTIONS",
            Method::Head => "HEAD",
        }
    }

    /// Every method, in the order of `-X`'s help.
    pub const ALL: [Method; 7] = [
        Method::Get,
        Method::Post,
        Method::Put,
        Method::Delete,
        Method::Patch,
        Method::Options,
        Method::Head,
    ];
}

/// A method none of GET, POST, PUT, DELETE, PATCH, OPTIONS or HEAD (the text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not an HTTP method the engine sends (GET, POST, PUT, DELETE, PATCH, OPTIONS, HEAD)"
)]
pub struct BadMethod(pub String);

/// Any case: `post` is `POST`.
impl std::str::FromStr for Method {
    type Err = BadMethod;
    fn from_str(s: &str) -> Result<Method, BadMethod> {
        Method::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| BadMethod(s.to_string()))
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_written_as_the_mix_spells_it() {
        for m in [
            Method::Get,
            Method::Post,
            Method::Put,
            Method::Delete,
            Method::Patch,
            Method::Options,
        ] {
            assert!(crate::mix::METHODS.contains(&m.as_str()), "{m}");
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{m}\""));
        }
    }
}
