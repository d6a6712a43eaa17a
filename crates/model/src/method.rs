//! The HTTP methods a suite scenario may ask for (`method = "POST"`), as the mix's entries allow
//! them: HEAD is left out, its answers carry no body.

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
        }
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
