//! Runs that completed but did not measure what was asked: every TLS handshake failed, or
//! resumption was asked for and the server resumed nothing ([`Shortfall::Tls`]); no request
//! succeeded, at the socket or by status, or none was answered at all
//! ([`Shortfall::NoSuccess`]). `load` prints the result, then this message, and exits by it.

use serverbench_model::answers::{self, Answers};
use serverbench_model::result::LoadResult;
use serverbench_wire::tls::TlsCause;

/// What a completed load fell short of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortfall {
    /// Every TLS handshake failed, or the server resumed none that were to be resumed.
    Tls,
    /// No request succeeded, or none was answered.
    NoSuccess,
}

/// What a completed load fell short of, and why, when it did not measure what was asked.
pub fn of(r: &LoadResult) -> Option<(Shortfall, String)> {
    if let Some(why) = tls_failure(r) {
        return Some((Shortfall::Tls, why));
    }
    if let Some(why) = no_success(r) {
        return Some((Shortfall::NoSuccess, why));
    }
    no_answer(r).map(|why| (Shortfall::NoSuccess, why))
}

/// Why nothing was answered, without an error either (a server that hangs, or is not ready):
/// `no answer in the 1.0 s run: 64 requests in flight`.
pub fn no_answer(r: &LoadResult) -> Option<String> {
    if r.requests > 0 {
        return None;
    }
    answers::judge(&Answers::of(r)).map(|f| f.describe("run"))
}

/// Why no request succeeded ([`LoadResult::no_success`]), with where to look or what to pass,
/// or None.
pub fn no_success(r: &LoadResult) -> Option<String> {
    let why = r.no_success()?;
    Some(match (r.requests, r.errors.total()) {
        (0, 0) => why,
        (0, _) => format!("{why}; see the errors above"),
        _ if r.grpc().is_some() => why,
        _ => format!("{why}; --expect-status accepts others"),
    })
}

/// Why the run failed its TLS purpose, in one line with a hint, or None.
pub fn tls_failure(r: &LoadResult) -> Option<String> {
    let tls = r.tls.as_ref()?;
    if tls.handshakes == 0 && r.errors.tls > 0 {
        let mut causes: Vec<(&String, &u64)> = tls.errors.iter().collect();
        causes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let listed: Vec<String> = causes.iter().map(|(c, n)| format!("{c} ({n})")).collect();
        let hint = causes.first().map_or_else(String::new, |(c, _)| hint(c));
        return Some(format!(
            "every TLS handshake failed: {}{hint}",
            listed.join(", ")
        ));
    }
    // HTTP/3 sees a resumption only when its 0-RTT was accepted (quinn-proto does not say
    // whether a handshake resumed): without --0rtt it cannot tell "none" from "unseen".
    let unseen = r.http3().is_some_and(|h| h.zero_rtt.is_none());
    if tls.resume != "off" && tls.handshakes > 0 && tls.handshakes_resumed == 0 && !unseen {
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

/// What to try for the commonest cause, naming the flag (the causes as wire names them).
fn hint(cause: &str) -> String {
    TlsCause::named(cause)
        .and_then(TlsCause::hint)
        .map_or_else(String::new, |h| format!("; {h}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::result::TlsResult;

    fn result(tls: TlsResult, tls_errors: u64) -> LoadResult {
        let mut r = LoadResult {
            tls: Some(tls),
            ..Default::default()
        };
        r.errors.tls = tls_errors;
        r
    }

    #[test]
    fn a_load_answered_only_by_error_statuses_succeeded_at_nothing() {
        let mut r = LoadResult {
            requests: 4441,
            target: vec!["http://127.0.0.1:8443/".into()],
            ..Default::default()
        };
        r.errors.status = 4441;
        r.status.insert("400".into(), 4441);
        let (short, why) = of(&r).unwrap();
        assert_eq!(short, Shortfall::NoSuccess);
        assert!(
            why.contains("4441 x 400") && why.contains("https://"),
            "{why}"
        );
    }

    #[test]
    fn a_load_with_one_good_answer_exits_ok() {
        let mut r = LoadResult {
            requests: 10,
            ..Default::default()
        };
        r.errors.status = 9;
        assert_eq!(of(&r), None);
    }

    #[test]
    fn a_load_whose_every_request_failed_at_the_socket_succeeded_at_nothing() {
        let mut r = LoadResult::default();
        r.errors.read = 3;
        assert_eq!(of(&r).unwrap().0, Shortfall::NoSuccess);
    }

    #[test]
    fn a_ws_load_whose_upgrades_went_unanswered_fails_without_pointing_at_errors_it_has_not() {
        let r = LoadResult {
            protocol: serverbench_model::result::ProtocolResult::WebSocket(
                serverbench_model::result::WsResult {
                    upgrades_unanswered: 50,
                    ..Default::default()
                },
            ),
            ..Default::default()
        };
        let (short, why) = of(&r).unwrap();
        assert_eq!(short, Shortfall::NoSuccess);
        assert_eq!(
            Some(why.as_str()),
            Some("no WebSocket upgrade succeeded (50 unanswered when the run ended)")
        );
    }

    #[test]
    fn a_load_that_nothing_answered_exits_6_naming_what_was_in_flight() {
        let r = LoadResult {
            duration_s: 1.0,
            in_flight_at_end: 64,
            ..Default::default()
        };
        let (short, why) = of(&r).unwrap();
        assert_eq!(short, Shortfall::NoSuccess);
        assert_eq!(
            Some(why.as_str()),
            Some("no answer in the 1.0 s run: 64 requests in flight")
        );
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

    #[test]
    fn an_http3_load_resuming_without_0rtt_is_not_said_to_have_resumed_none() {
        use serverbench_model::result::{Http3Result, ProtocolResult, TlsResult};
        let mut r = LoadResult {
            requests: 40,
            protocol: ProtocolResult::Http3(Http3Result::default()),
            tls: Some(TlsResult {
                resume: "tickets".into(),
                handshakes: 40,
                handshakes_full: 40,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(tls_failure(&r), None);
        r.protocol = ProtocolResult::Http2(Default::default());
        assert!(tls_failure(&r).is_some_and(|w| w.contains("resumed none of 40")));
    }
}
