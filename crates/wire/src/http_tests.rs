//! The response parser's tests.

use super::*;

fn parse_all(p: &mut ResponseParser, mut buf: &[u8]) -> Vec<Response> {
    let mut out = Vec::new();
    while let Some((r, n)) = p.feed(buf).unwrap() {
        out.push(r);
        buf = &buf[n..];
    }
    out
}

#[test]
fn content_length_response_completes_with_its_body() {
    let mut p = ResponseParser::new(false, true);
    let r = parse_all(&mut p, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].status, r[0].body_len, r[0].close), (200, 5, false));
}

#[test]
fn a_pipelined_pair_split_at_any_byte_parses_like_the_whole() {
    let wire: &[u8] = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Type: text/plain\r\n\
        Content-Length: 5\r\nConnection: keep-alive\r\n\r\nhello\
        HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\nconnection: close\r\n\r\nno";
    let whole = parse_all(&mut ResponseParser::new(false, true), wire);
    assert_eq!(whole.len(), 2);
    assert_eq!(
        (whole[0].status, whole[0].body_len, whole[0].close),
        (200, 5, false)
    );
    assert_eq!(
        (whole[1].status, whole[1].body_len, whole[1].close),
        (404, 2, true)
    );
    for at in 1..wire.len() {
        let mut p = ResponseParser::new(false, true);
        let mut got = parse_all(&mut p, &wire[..at]);
        got.extend(parse_all(&mut p, &wire[at..]));
        assert_eq!(got, whole, "split at byte {at}");
    }
}

#[test]
fn a_head_ends_only_at_crlf_crlf() {
    // A bare LF before the CRLF is not the end of the head: the next line still counts.
    let wire = b"HTTP/1.1 200 OK\nX: y\n\r\nContent-Length: 2\r\n\r\nok";
    let r = parse_all(&mut ResponseParser::new(false, true), wire);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].body_len, 2);
}

#[test]
fn chunked_response_split_byte_by_byte_completes_once() {
    let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    let mut p = ResponseParser::new(false, true);
    let mut got = Vec::new();
    for b in wire.iter() {
        got.extend(parse_all(&mut p, std::slice::from_ref(b)));
    }
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body_len, 11);
    let mut whole = ResponseParser::new(false, true);
    assert_eq!(
        parse_all(
            &mut whole,
            b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world"
        )[0]
        .body_hash,
        got[0].body_hash
    );
}

#[test]
fn pipelined_responses_come_out_in_order() {
    let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 404 NF\r\nContent-Length: 0\r\n\r\nHTTP/1.1 204 NC\r\n\r\n";
    let mut p = ResponseParser::new(false, false);
    let codes: Vec<u16> = parse_all(&mut p, wire).iter().map(|r| r.status).collect();
    assert_eq!(codes, vec![200, 404, 204]);
}

#[test]
fn close_delimited_body_completes_at_eof() {
    let mut p = ResponseParser::new(false, false);
    assert!(parse_all(&mut p, b"HTTP/1.1 200 OK\r\n\r\nabc").is_empty());
    let r = p.eof().unwrap();
    assert_eq!((r.body_len, r.close), (3, true));
}

#[test]
fn connection_close_header_is_reported() {
    let mut p = ResponseParser::new(false, false);
    let r = parse_all(
        &mut p,
        b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n",
    );
    assert!(r[0].close);
}

#[test]
fn garbage_is_a_parse_error() {
    let mut p = ResponseParser::new(false, false);
    assert_eq!(p.feed(b"SSH-2.0-OpenSSH\r\n\r\n"), Err(ParseError));
}

#[test]
fn head_response_has_no_body_despite_content_length() {
    let mut p = ResponseParser::new(true, false);
    let r = parse_all(&mut p, b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n");
    assert_eq!(r[0].body_len, 0);
}

fn gzip(body: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(body).unwrap();
    e.finish().unwrap()
}

#[test]
fn with_checksums_an_encoded_body_is_decoded_and_its_wire_size_kept() {
    let z = gzip(&b"hello ".repeat(100));
    let mut wire = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        z.len()
    )
    .into_bytes();
    wire.extend_from_slice(&z);
    let r = parse_all(&mut ResponseParser::new(false, true), &wire);
    assert_eq!(r[0].encoding, Encoding::One(Coding::Gzip));
    assert_eq!((r[0].body_len, r[0].wire_len), (600, z.len() as u64));
    let plain = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: 600\r\n\r\n{}",
        "hello ".repeat(100)
    );
    let p = parse_all(&mut ResponseParser::new(false, true), plain.as_bytes());
    assert_eq!(p[0].body_hash, r[0].body_hash);
    assert!(!r[0].undecodable);
}

#[test]
fn a_body_not_in_its_coding_is_undecodable_and_an_unknown_coding_is_other() {
    let wire = b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 5\r\n\r\nhello\
        HTTP/1.1 200 OK\r\ncontent-encoding: gzip, br\r\nContent-Length: 1\r\n\r\nx";
    let r = parse_all(&mut ResponseParser::new(false, true), wire);
    assert!(r[0].undecodable);
    assert_eq!(r[1].encoding, Encoding::Other);
    assert_eq!(r[1].wire_len, 1);
}

#[test]
fn an_eof_inside_a_known_length_body_truncates_it() {
    let mut p = ResponseParser::new(false, false);
    assert!(parse_all(&mut p, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc").is_empty());
    assert!(p.in_body());
    assert_eq!(p.eof(), None);
    let mut idle = ResponseParser::new(false, false);
    assert!(!idle.in_body());
    assert!(parse_all(&mut idle, b"HTTP/1.1 200 OK\r\n\r\nab").is_empty());
    assert!(!idle.in_body(), "close-delimited bodies end at EOF");
}
