//! Where the load goes: `http[s]://host[:port]/path` URLs and `host:port` pairs, parsed and
//! resolved once before the run.

use super::ConfigError;
use std::net::{SocketAddr, ToSocketAddrs};

/// A parsed `http[s]://host[:port]/path` or `ws[s]://host[:port]/path` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// `https://` or `wss://`.
    pub tls: bool,
    /// `ws://` or `wss://`: a WebSocket upgrade on the connection.
    pub ws: bool,
    pub host: String,
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
}

impl Url {
    pub fn parse(url: &str) -> Result<Url, ConfigError> {
        let bad = |why: &str| ConfigError::BadUrl {
            url: url.to_string(),
            why: why.to_string(),
        };
        let scheme_end = url.find("://").unwrap_or(0);
        let (tls, ws) = match url[..scheme_end].to_ascii_lowercase().as_str() {
            "http" => (false, false),
            "https" => (true, false),
            "ws" => (false, true),
            "wss" => (true, true),
            _ => return Err(bad("expected http[s]://HOST[:PORT]/PATH or ws[s]://…")),
        };
        let rest = &url[scheme_end + 3..];
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if authority.contains('@') {
            return Err(bad("user info is not supported"));
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) =
            split_host_port(authority, default_port).map_err(|why| bad(&why.to_string()))?;
        if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(bad("the path contains spaces or control characters"));
        }
        Ok(Url {
            tls,
            ws,
            host,
            port,
            path,
        })
    }

    /// `host:port` as sent in the Host header (port omitted when it is the scheme's default).
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.tls { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// Why `host[:port]` does not split ([`split_host_port`]), naming the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostPortError {
    #[error("unclosed `[` in the host")]
    UnclosedBracket,
    #[error("junk after `]`")]
    JunkAfterBracket,
    #[error("the host is empty")]
    EmptyHost,
    #[error("invalid character in host `{0}`")]
    BadHost(String),
    #[error("invalid port `{0}`")]
    BadPort(String),
}

/// Splits `host[:port]` or `[v6][:port]`.
pub fn split_host_port(s: &str, default_port: u16) -> Result<(String, u16), HostPortError> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let end = rest.find(']').ok_or(HostPortError::UnclosedBracket)?;
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(HostPortError::JunkAfterBracket),
        };
        (rest[..end].to_string(), port)
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (s.to_string(), None),
        }
    };
    if host.is_empty() {
        return Err(HostPortError::EmptyHost);
    }
    if host
        .bytes()
        .any(|b| !(b.is_ascii_alphanumeric() || b"-._:%".contains(&b)))
    {
        return Err(HostPortError::BadHost(host));
    }
    let port = match port {
        None => default_port,
        Some(p) => match p.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => return Err(HostPortError::BadPort(p.to_string())),
        },
    };
    Ok((host, port))
}

/// Resolves `host:port`, preferring IPv4.
pub fn resolve(host: &str, port: u16) -> Result<SocketAddr, ConfigError> {
    let unresolvable = || ConfigError::Unresolvable {
        host: host.to_string(),
    };
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|_| unresolvable())?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(unresolvable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_with_port_and_query_parses() {
        let u = Url::parse("http://127.0.0.1:8080/a/b?x=1").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 8080, "/a/b?x=1")
        );
    }

    #[test]
    fn url_without_path_gets_slash_and_port_80() {
        let u = Url::parse("http://localhost").unwrap();
        assert_eq!((u.port, u.path.as_str()), (80, "/"));
    }

    #[test]
    fn https_url_defaults_to_port_443_and_omits_it_from_host() {
        let u = Url::parse("HTTPS://example.com/x").unwrap();
        assert!(u.tls);
        assert_eq!((u.port, u.host_header()), (443, "example.com".to_string()));
        let u = Url::parse("https://example.com:80/").unwrap();
        assert_eq!(u.host_header(), "example.com:80");
    }

    #[test]
    fn ws_urls_parse_with_the_http_default_ports() {
        let u = Url::parse("ws://127.0.0.1:9000/ws").unwrap();
        assert!(u.ws && !u.tls);
        assert_eq!((u.port, u.path.as_str()), (9000, "/ws"));
        let u = Url::parse("WSS://example.com/ws").unwrap();
        assert!(u.ws && u.tls && u.port == 443);
        assert_eq!(u.host_header(), "example.com");
    }

    #[test]
    fn url_without_scheme_is_malformed() {
        assert!(matches!(
            Url::parse("localhost:80/"),
            Err(ConfigError::BadUrl { .. })
        ));
        assert!(matches!(
            Url::parse("http://:80/"),
            Err(ConfigError::BadUrl { .. })
        ));
        assert!(matches!(
            Url::parse("http://h:99999/"),
            Err(ConfigError::BadUrl { .. })
        ));
    }

    #[test]
    fn ipv6_host_port_splits() {
        assert_eq!(
            split_host_port("[::1]:9000", 80).unwrap(),
            ("::1".to_string(), 9000)
        );
    }
}
