use super::*;

/// A GET load of `url`, as `serverbench load URL` describes it.
fn at(url: &str) -> LoadSpec {
    let mut spec = LoadSpec::default();
    spec.at_urls(&[url.to_string()]).unwrap();
    spec
}

#[test]
fn tls_flags_with_an_http_url_name_the_flag() {
    let mut spec = at("http://127.0.0.1:1/");
    spec.transport.tls_resume = Some(TlsResume::Tickets);
    let err = http_target(&spec).unwrap_err();
    assert!(err.to_string().contains("--tls-resume"), "{err}");
}

#[test]
fn new_conn_asks_the_server_to_close_unless_told_otherwise() {
    let mut spec = at("http://127.0.0.1:1/");
    spec.transport.new_conn = true;
    let req = |spec: &LoadSpec| match http_target(spec).unwrap().protocol {
        Protocol::Http(h) => String::from_utf8(h.requests[0].constant().to_vec()).unwrap(),
        _ => unreachable!(),
    };
    assert!(req(&spec).contains("Connection: close\r\n"));
    spec.http.headers = vec!["connection: keep-alive".into()];
    assert!(!req(&spec).contains("Connection: close"));
}

#[test]
fn http2_encodes_one_request_per_url_with_the_specs_streams() {
    let mut spec = LoadSpec::default();
    spec.at_urls(&["http://127.0.0.1:1/a".into(), "http://127.0.0.1:1/b".into()])
        .unwrap();
    spec.transport.protocol = serverbench_model::Protocol::H2c;
    spec.transport.streams = Some(8);
    let Protocol::Http2(h) = http_target(&spec).unwrap().protocol else {
        panic!("not HTTP/2")
    };
    assert_eq!((h.requests.len(), h.streams), (2, 8));
}
