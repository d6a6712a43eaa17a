//! Runs that completed but did not measure what was asked: every TLS handshake failed, or
//! resumption was asked for and the server resumed nothing. `load` prints the result, then
//! this message, and exits 5 (`exit::TLS`).

use serverbench_engine::result::LoadResult;

/// Why the run failed its TLS purpose, in one line with a hint, or None.
pub fn tls_failure(r: &LoadResult) -> Option<String> {
    let tls = r.tls.as_ref()?;
    if tls.handshakes == 0 && r.errors.tls > 0 {
        let mut causes: Vec<(&String, &u64)> = tls.errors.iter().collect();
        causes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let listed: Vec<String> = causes.iter().map(|(c, n)| format!("{c} ({n})")).collect();
        let hint = causes.first().map_or("", |(c, _)| hint(c));
        return Some(format!(
            "every TLS handshake failed: {}{hint}",
            listed.join(", ")
        ));
    }
    if tls.resume != "off" && tls.handshakes > 0 && tls.handshakes_resumed == 0 {
        return Some(format!(
            "--tls-resume {}: the server resumed none of {} handshakes (it issues no session \
             tickets{} and keeps no session cache, or refuses to resume)",
            tls.resume,
            tls.handshakes,
            if tls.resume == "ids" {
                " usable as ids"
            } else {
                ""
            },
        ));
    }
    None
}

/// What to try for the commonest cause.
fn hint(cause: &str) -> &'static str {
    match cause {
        "certificate unknown issuer" => {
            "; pass the CA that signed the server's certificate with --cacert FILE, or -k/--insecure"
        }
        "certificate name mismatch" => {
            "; the certificate does not name the URL's host: use a name it was issued for, or -k/--insecure"
        }
        "certificate expired" | "certificate not valid yet" => {
            "; check the server's certificate dates and this machine's clock, or -k/--insecure"
        }
        "handshake eof" => "; the server closed the connection: does this port speak TLS?",
        "no common version, cipher suite or group" | "alert protocol_version" => {
            "; try --tls-version 1.2 or 1.3"
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_engine::result::TlsResult;

    fn result(tls: TlsResult, tls_errors: u64) -> LoadResult {
        let mut r = LoadResult {
            tls: Some(tls),
            ..Default::default()
        };
        r.errors.tls = tls_errors;
        r
    }

    #[test]
    fn failed_handshakes_are_named_with_a_hint() {
        let mut tls = TlsResult::default();
        tls.errors.insert("certificate unknown issuer".into(), 7);
        let why = tls_failure(&result(tls, 7)).unwrap();
        assert!(
            why.contains("certificate unknown issuer (7)") && why.contains("--cacert"),
            "{why}"
        );
    }

    #[test]
    fn resumption_asked_and_none_resumed_fails() {
        let tls = TlsResult {
            resume: "tickets".into(),
            handshakes: 40,
            handshakes_full: 40,
            ..Default::default()
        };
        let why = tls_failure(&result(tls, 0)).unwrap();
        assert!(why.contains("resumed none of 40 handshakes"), "{why}");
    }

    #[test]
    fn resumption_off_or_some_resumed_passes() {
        let off = TlsResult {
            resume: "off".into(),
            handshakes: 40,
            ..Default::default()
        };
        assert_eq!(tls_failure(&result(off, 0)), None);
        let some = TlsResult {
            resume: "tickets".into(),
            handshakes: 40,
            handshakes_resumed: 1,
            ..Default::default()
        };
        assert_eq!(tls_failure(&result(some, 0)), None);
    }
}
