//! The one conversion between URLs and a spec's target: [`LoadSpec::urls`] writes the URLs a
//! spec loads (its scheme from the mode and TLS, its `host:port`, each of `work.paths`), and
//! [`LoadSpec::at_urls`] reads `serverbench load`'s URL arguments into the target, the paths,
//! TLS and WebSocket.

use super::LoadSpec;
use crate::Mode;

/// URLs that do not make one target: the messages the engine gave before them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("malformed URL `{0}`: expected http[s]://HOST[:PORT]/PATH, ws[s]://… or grpc[s]://…")]
    Scheme(String),
    #[error("all URLs must share one scheme and host:port (`{first}` vs `{other}`)")]
    Mixed { first: String, other: String },
}

/// One URL: TLS, the mode its scheme names (WebSocket, gRPC; None: HTTP), `host:port` and the
/// path (with its query; empty when none).
fn split(url: &str) -> Result<(bool, Option<Mode>, &str, &str), UrlError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| UrlError::Scheme(url.to_string()))?;
    let (tls, ws) = match scheme.to_ascii_lowercase().as_str() {
        "http" => (false, None),
        "https" => (true, None),
        "ws" => (false, Some(Mode::Ws)),
        "wss" => (true, Some(Mode::Ws)),
        "grpc" => (false, Some(Mode::Grpc)),
        "grpcs" => (true, Some(Mode::Grpc)),
        _ => return Err(UrlError::Scheme(url.to_string())),
    };
    let at = rest.find(['/', '?']).unwrap_or(rest.len());
    Ok((tls, ws, &rest[..at], &rest[at..]))
}

impl LoadSpec {
    /// The URLs of an HTTP or WebSocket load, one per path (one without a path when there are
    /// none, as a mix has); none for TCP echo or with no target.
    pub fn urls(&self) -> Vec<String> {
        if self.target.is_empty() || self.work.mode.is_tcp() {
            return Vec::new();
        }
        let scheme = match (self.work.mode, self.transport.tls) {
            (Mode::Ws, false) => "ws",
            (Mode::Ws, true) => "wss",
            (Mode::Grpc, false) => "grpc",
            (Mode::Grpc, true) => "grpcs",
            (_, false) => "http",
            (_, true) => "https",
        };
        let base = format!("{scheme}://{}", self.target);
        match self.work.paths.is_empty() {
            true => vec![base],
            false => self
                .work
                .paths
                .iter()
                .map(|p| format!("{base}{p}"))
                .collect(),
        }
    }

    /// The target and paths of `urls` (all on one scheme and `host:port`): TLS for
    /// `https://`/`wss://`/`grpcs://`, the WebSocket mode for `ws://`/`wss://`, gRPC's for
    /// `grpc://`/`grpcs://`. No URLs: no change.
    pub fn at_urls(&mut self, urls: &[String]) -> Result<(), UrlError> {
        let Some(first) = urls.first() else {
            return Ok(());
        };
        let (tls, ws, target, _) = split(first)?;
        let mut paths = Vec::new();
        for url in urls {
            let (t, w, authority, path) = split(url)?;
            if (t, w) != (tls, ws) || !authority.eq_ignore_ascii_case(target) {
                return Err(UrlError::Mixed {
                    first: first.clone(),
                    other: url.clone(),
                });
            }
            paths.push(path.to_string());
        }
        self.target = target.to_string();
        self.transport.tls = tls;
        if let Some(mode) = ws {
            self.work.mode = mode;
        }
        // A lone URL without a path is the host alone (a mix's); otherwise each is a path.
        self.work.paths = match paths.as_slice() {
            [p] if p.is_empty() => Vec::new(),
            _ => paths,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_read_into_a_target_and_paths_are_written_back_the_same() {
        let urls = [
            "https://127.0.0.1:8443/a".to_string(),
            "https://127.0.0.1:8443/b?x=1".into(),
        ];
        let mut spec = LoadSpec::default();
        spec.at_urls(&urls).unwrap();
        assert_eq!(spec.target, "127.0.0.1:8443");
        assert_eq!(spec.work.paths, ["/a", "/b?x=1"]);
        assert!(spec.transport.tls);
        assert_eq!(spec.urls(), urls);
    }

    #[test]
    fn a_ws_url_is_the_websocket_mode_and_a_bare_host_has_no_path() {
        let mut spec = LoadSpec::default();
        spec.at_urls(&["ws://h:1/ws".into()]).unwrap();
        assert_eq!(
            (spec.work.mode, spec.urls()),
            (Mode::Ws, vec!["ws://h:1/ws".into()])
        );
        let mut bare = LoadSpec::default();
        bare.at_urls(&["http://h:1".into()]).unwrap();
        assert!(bare.work.paths.is_empty());
        assert_eq!(bare.urls(), ["http://h:1"]);
    }

    #[test]
    fn a_grpcs_url_is_the_grpc_mode_over_tls_with_its_method_as_the_path() {
        let url = "grpcs://h:1/serverbench.Bench/Sum".to_string();
        let mut spec = LoadSpec::default();
        spec.at_urls(std::slice::from_ref(&url)).unwrap();
        assert_eq!((spec.work.mode, spec.transport.tls), (Mode::Grpc, true));
        assert_eq!(spec.work.paths, ["/serverbench.Bench/Sum"]);
        assert_eq!(spec.urls(), [url]);
    }

    #[test]
    fn urls_on_two_hosts_or_without_a_scheme_are_refused_as_before() {
        let mut spec = LoadSpec::default();
        let err = spec
            .at_urls(&["http://a:1/".into(), "http://b:1/".into()])
            .unwrap_err();
        assert!(
            err.to_string().contains("one scheme and host:port"),
            "{err}"
        );
        let err = spec.at_urls(&["localhost:8080/x".into()]).unwrap_err();
        assert!(err.to_string().starts_with("malformed URL"), "{err}");
    }
}
