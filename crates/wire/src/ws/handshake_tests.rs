use super::*;

/// RFC 6455 §1.3's key and its accept value.
const RFC_KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
const RFC_ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

fn rfc_key() -> Key {
    Key::from_nonce(*b"the sample nonce")
}

fn response(extra: &str) -> String {
    format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{extra}\r\n")
}

fn accepted(extra: &str) -> String {
    response(&format!("Sec-WebSocket-Accept: {RFC_ACCEPT}\r\n{extra}"))
}

fn parse(text: &str) -> Result<Option<Upgraded>, HandshakeError> {
    parse_response(text.as_bytes(), &rfc_key().accept(), false)
}

#[test]
fn the_rfc_example_key_gives_the_rfc_example_accept() {
    assert_eq!(rfc_key().as_str(), RFC_KEY);
    assert_eq!(rfc_key().accept().as_str(), RFC_ACCEPT);
    assert_eq!(Accept::of(RFC_KEY.as_bytes()).as_str(), RFC_ACCEPT);
}

#[test]
fn random_keys_are_24_base64_characters_and_differ() {
    let mut rng = Rng::new(42);
    let (a, b) = (Key::random(&mut rng), Key::random(&mut rng));
    assert_ne!(a, b);
    assert_eq!(a.as_str().len(), 24);
    assert!(a.as_str().ends_with("=="));
    let nonce = STANDARD.decode(a.as_str()).unwrap();
    assert_eq!(nonce.len(), 16);
}

#[test]
fn the_upgrade_request_has_every_header_rfc_6455_requires() {
    let mut out = Vec::new();
    write_upgrade_request(&mut out, "127.0.0.1:8080", "/ws", &rfc_key(), None);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    let mut out = Vec::new();
    write_upgrade_request(&mut out, "h", "/ws", &rfc_key(), Some("permessage-deflate"));
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with("Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n"));
}

#[test]
fn a_correct_101_is_accepted_and_says_where_the_frames_start() {
    let mut bytes = accepted("").into_bytes();
    let head_len = bytes.len();
    bytes.extend_from_slice(&[0x81, 0x00]); // an empty text frame in the same read
    let up = parse_response(&bytes, &rfc_key().accept(), false)
        .unwrap()
        .unwrap();
    assert_eq!(up.head_len, head_len);
    assert_eq!(up.extensions, None);
    // Case and spacing of names and tokens do not matter.
    let loose = format!(
        "HTTP/1.1 101 OK\r\nupgrade:WebSocket\r\nCONNECTION: keep-alive, upgrade\r\n\
         sec-websocket-accept:   {RFC_ACCEPT}  \r\n\r\n"
    );
    assert!(parse(&loose).unwrap().is_some());
}

#[test]
fn an_incomplete_head_is_none_until_its_blank_line() {
    let text = accepted("");
    for cut in 0..text.len() {
        assert_eq!(parse(&text[..cut]), Ok(None), "{cut}");
    }
    let endless = format!("HTTP/1.1 101 OK\r\nX: {}", "a".repeat(MAX_HEAD));
    assert_eq!(parse(&endless), Err(HandshakeError::HeadTooLarge));
}

#[test]
fn each_failure_is_named_by_its_cause() {
    let wrong = "Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n";
    let cases = [
        ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_string(), HandshakeError::Status(200)),
        ("HTTP/1.1 426 Upgrade Required\r\n\r\n".into(), HandshakeError::Status(426)),
        ("garbage\r\n\r\n".into(), HandshakeError::Malformed),
        ("HTTP/1.1 1x1 no\r\n\r\n".into(), HandshakeError::Malformed),
        (response(""), HandshakeError::MissingAccept),
        (response(wrong), HandshakeError::WrongAccept),
        (
            format!("HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {RFC_ACCEPT}\r\n\r\n"),
            HandshakeError::MissingUpgrade,
        ),
        (
            format!("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: {RFC_ACCEPT}\r\n\r\n"),
            HandshakeError::MissingConnection,
        ),
        (accepted("Sec-WebSocket-Extensions: permessage-deflate\r\n"), HandshakeError::UnaskedExtension),
        (accepted("Sec-WebSocket-Protocol: chat\r\n"), HandshakeError::UnaskedProtocol),
    ];
    for (text, want) in cases {
        assert_eq!(parse(&text), Err(want), "{text:?}");
    }
}

#[test]
fn an_accept_for_another_key_is_wrong_even_when_well_formed() {
    let other = Key::from_nonce([9; 16]).accept();
    let text = response(&format!("Sec-WebSocket-Accept: {}\r\n", other.as_str()));
    assert_eq!(parse(&text), Err(HandshakeError::WrongAccept));
}

#[test]
fn an_offered_extension_the_server_accepts_is_returned_as_a_range() {
    let text =
        accepted("Sec-WebSocket-Extensions:  permessage-deflate; client_max_window_bits \r\n");
    let up = parse_response(text.as_bytes(), &rfc_key().accept(), true)
        .unwrap()
        .unwrap();
    let range = up.extensions.unwrap();
    assert_eq!(&text[range], "permessage-deflate; client_max_window_bits");
}
