use super::*;

#[test]
fn http_and_https_urls_cannot_be_mixed() {
    let urls = [
        "http://127.0.0.1:1/a".into(),
        "https://127.0.0.1:1/b".into(),
    ];
    let err = http_target(&urls, &HttpOptions::default()).unwrap_err();
    assert!(matches!(err, ConfigError::MixedTargets { .. }), "{err}");
}

#[test]
fn tls_flags_with_an_http_url_name_the_flag() {
    let opts = HttpOptions {
        tls: TlsOptions {
            resume: TlsResume::Tickets,
            ..Default::default()
        },
        ..Default::default()
    };
    let err = http_target(&["http://127.0.0.1:1/".into()], &opts).unwrap_err();
    assert!(err.to_string().contains("--tls-resume"), "{err}");
}

#[test]
fn new_conn_asks_the_server_to_close_unless_told_otherwise() {
    let mut opts = HttpOptions {
        close: true,
        ..Default::default()
    };
    let req = |opts: &HttpOptions| match http_target(&["http://127.0.0.1:1/".into()], opts)
        .unwrap()
        .protocol
    {
        Protocol::Http(h) => String::from_utf8(h.requests[0].constant().to_vec()).unwrap(),
        _ => unreachable!(),
    };
    assert!(req(&opts).contains("Connection: close\r\n"));
    opts.headers = vec!["connection: keep-alive".into()];
    assert!(!req(&opts).contains("Connection: close"));
}
