use super::frame::{self, Frames, Piece};
use super::qpack::{self, put_int, Request};
use super::*;
use crate::h2::Strings;
use crate::http::body_hash;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn rfc_9000_varint_examples_decode_and_encode_back() {
    for (bytes, v) in [
        ("c2197c5eff14e88c", 151_288_809_941_952_652u64),
        ("9d7f3e7d", 494_878_333),
        ("7bbd", 15_293),
        ("25", 37),
    ] {
        let b = hex(bytes);
        assert_eq!(varint::get(&b), Some((v, b.len())));
        let mut out = Vec::new();
        varint::put(&mut out, v);
        assert_eq!(out, b);
    }
    assert_eq!(varint::get(&hex("4025")), Some((37, 2)), "two-byte 37");
    assert_eq!(varint::get(&hex("9d7f3e")), None, "cut short");
}

#[test]
fn the_client_control_stream_allows_no_dynamic_table() {
    assert_eq!(client_control_stream(), hex("00 04 04 01 00 07 00"));
}

#[test]
fn a_get_request_is_encoded_from_the_static_table_and_literals() {
    let r = Request::new("GET", "localhost:8080", "/hello", &[], None);
    let mut want = hex("01 1c 0000 d1 d7 50 0e");
    want.extend_from_slice(b"localhost:8080");
    want.extend_from_slice(&hex("51 06"));
    want.extend_from_slice(b"/hello");
    assert_eq!(r.bytes, want);
}

#[test]
fn a_post_with_headers_and_a_body_carries_a_data_frame() {
    let headers = [
        ("User-Agent".to_string(), "sb".to_string()),
        ("x-test".to_string(), "1".to_string()),
    ];
    let r = Request::new("POST", "h", "/", &headers, Some(b"abc"));
    let mut want = hex("01 16 0000 d4 d7 50 01 68 c1 5f50 02 7362 26 782d74657374 01 31");
    want.extend_from_slice(&hex("00 03 616263"));
    assert_eq!(r.bytes, want);
}

#[test]
fn rfc_9204_b1_literal_with_name_reference_decodes_without_a_status() {
    let block = hex("0000 510b 2f69 6e64 6578 2e68 746d 6c");
    let mut s = Strings::default();
    assert_eq!(qpack::decode_status(&block, &mut s), Ok(None));
}

fn status_block(lines: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0];
    b.extend_from_slice(lines);
    b
}

#[test]
fn a_status_is_read_indexed_name_referenced_literal_and_huffman_coded() {
    let mut s = Strings::default();
    let indexed = status_block(&[0xc0 | 25]);
    assert_eq!(qpack::decode_status(&indexed, &mut s), Ok(Some(200)));
    let mut named = vec![0, 0];
    put_int(&mut named, 0x50, 4, 24);
    named.extend_from_slice(&hex("03 343138"));
    assert_eq!(named[2..4], [0x5f, 24 - 15]);
    assert_eq!(qpack::decode_status(&named, &mut s), Ok(Some(418)));
    let mut literal = vec![0, 0, 0x27, 0x00]; // a 7-byte name fills the 3-bit prefix
    literal.extend_from_slice(b":status");
    literal.extend_from_slice(&hex("03 353033"));
    assert_eq!(qpack::decode_status(&literal, &mut s), Ok(Some(503)));
    let mut coded = Vec::new();
    httlib_huffman::encode(b"404", &mut coded).unwrap();
    let mut huff = vec![0, 0];
    put_int(&mut huff, 0x50, 4, 24);
    put_int(&mut huff, 0x80, 7, coded.len() as u64);
    huff.extend_from_slice(&coded);
    assert_eq!(qpack::decode_status(&huff, &mut s), Ok(Some(404)));
}

#[test]
fn every_reference_to_the_dynamic_table_fails_decompression() {
    let mut s = Strings::default();
    let failed = Err(Code::QPACK_DECOMPRESSION_FAILED);
    for block in [
        "0280 10",   // Required Insert Count 2
        "0000 80",   // indexed, T=0
        "0000 10",   // indexed post-base
        "0000 4001", // name reference, T=0
        "0000 0001", // name reference post-base
        "0000 d1 ff",
        "0000 7f",   // a static index cut short
        "0000 5305", // a value cut short
    ] {
        assert_eq!(qpack::decode_status(&hex(block), &mut s), failed, "{block}");
    }
}

/// A response: HEADERS `:status 200` and `content-type text/plain`, a reserved frame type,
/// then the body in two DATA frames.
fn response(body: &[u8]) -> Vec<u8> {
    let mut out = hex("01 04 0000 d9 f5");
    out.extend_from_slice(&hex("21 03 616263"));
    let (a, b) = body.split_at(body.len() / 2);
    for part in [a, b] {
        frame::put_header(&mut out, frame::DATA, part.len() as u64);
        out.extend_from_slice(part);
    }
    out
}

#[test]
fn a_response_reads_the_same_in_any_split() {
    let body = b"Hello World!";
    let bytes = response(body);
    let mut strings = Strings::default();
    let mut r = ResponseReader::new(true);
    for cut in 0..=bytes.len() {
        r.reset();
        r.feed(&bytes[..cut], &mut strings).unwrap();
        r.feed(&bytes[cut..], &mut strings).unwrap();
        let resp = r.finish().unwrap();
        assert_eq!((resp.status, resp.body_len), (200, 12), "cut at {cut}");
        assert_eq!(resp.body_hash, body_hash(body));
        assert_eq!(resp.wire_len, bytes.len() as u64);
    }
    r.reset();
    for b in &bytes {
        r.feed(std::slice::from_ref(b), &mut strings).unwrap();
    }
    assert_eq!(r.finish().unwrap().body_hash, body_hash(body));
}

#[test]
fn interim_headers_are_skipped_and_trailers_end_the_frames() {
    let mut strings = Strings::default();
    let mut r = ResponseReader::new(false);
    let mut bytes = hex("01 03 0000"); // interim: :status 103
    bytes.push(0xc0 | 24);
    bytes.extend_from_slice(&response(b"ab"));
    bytes.extend_from_slice(&hex("01 03 0000 c6")); // trailers: date
    r.feed(&bytes, &mut strings).unwrap();
    assert_eq!(r.finish().unwrap().status, 200);
    assert_eq!(
        r.feed(&hex("00 01 61"), &mut strings),
        Err(Code::FRAME_UNEXPECTED)
    );
}

#[test]
fn malformed_responses_are_named_by_their_error() {
    let mut strings = Strings::default();
    let mut r = ResponseReader::new(false);
    assert_eq!(
        r.feed(&hex("00 01 61"), &mut strings),
        Err(Code::FRAME_UNEXPECTED)
    );
    r.reset();
    r.feed(&hex("01 04 0000"), &mut strings).unwrap();
    assert_eq!(r.finish(), Err(Code::FRAME_ERROR), "FIN inside a frame");
    r.reset();
    assert_eq!(r.finish(), Err(Code::MESSAGE_ERROR), "no HEADERS");
    r.reset();
    assert_eq!(
        r.feed(&hex("01 03 0000 d1"), &mut strings),
        Err(Code::MESSAGE_ERROR)
    );
    r.reset();
    assert_eq!(
        r.feed(&hex("04 00"), &mut strings),
        Err(Code::FRAME_UNEXPECTED)
    );
    r.reset();
    assert_eq!(
        r.feed(&hex("06 00"), &mut strings),
        Err(Code::FRAME_UNEXPECTED),
        "h2 PING"
    );
    r.reset();
    assert_eq!(r.feed(&hex("05 01 00"), &mut strings), Err(Code::ID_ERROR));
    r.reset();
    assert_eq!(
        r.feed(&hex("01 80020000"), &mut strings),
        Err(Code::EXCESSIVE_LOAD)
    );
}

#[test]
fn frames_hand_on_data_in_parts_and_empty_frames_whole() {
    let mut f = Frames::default();
    let mut seen = Vec::new();
    let mut take = |p: Piece<'_>| {
        seen.push(match p {
            Piece::Data(d) => format!("data {}", d.len()),
            Piece::Whole(t, b) => format!("{t} {}", b.len()),
        });
        Ok(())
    };
    f.feed(&hex("00 05 6162"), &mut take).unwrap();
    f.feed(&hex("636465 00 00 07 00"), &mut take).unwrap();
    assert_eq!(seen, ["data 2", "data 3", "data 0", "7 0"]);
    assert!(f.at_boundary());
}

#[test]
fn the_control_stream_gives_settings_then_goaway() {
    let mut events = Vec::new();
    let mut u = UniReader::default();
    let mut bytes = hex("00 04 07 01 10 06 4400 21 00");
    bytes.extend_from_slice(&hex("07 01 08"));
    for b in &bytes {
        u.feed(std::slice::from_ref(b), |e| events.push(e)).unwrap();
    }
    assert!(u.is_control());
    let want = stream::PeerSettings {
        qpack_max_table_capacity: 16,
        qpack_blocked_streams: 0,
        max_field_section_size: Some(1024),
    };
    assert_eq!(events, [UniEvent::Settings(want), UniEvent::Goaway(8)]);
    assert_eq!(u.finish(), Err(Code::CLOSED_CRITICAL_STREAM));
}

#[test]
fn a_control_stream_without_settings_first_or_with_h2_settings_fails() {
    let mut u = UniReader::default();
    assert_eq!(
        u.feed(&hex("00 07 01 00"), |_| {}),
        Err(Code::MISSING_SETTINGS)
    );
    let mut u = UniReader::default();
    assert_eq!(
        u.feed(&hex("00 04 02 03 05"), |_| {}),
        Err(Code::SETTINGS_ERROR)
    );
    let mut u = UniReader::default();
    assert_eq!(
        u.feed(&hex("01 00"), |_| {}),
        Err(Code::ID_ERROR),
        "a push stream"
    );
    let mut u = UniReader::default();
    u.feed(&hex("02 3fe1 1f"), |_| {
        panic!("the encoder stream is drained")
    })
    .unwrap();
    assert_eq!(u.finish(), Ok(()));
}

#[test]
fn codes_are_named_as_the_rfcs_name_them() {
    assert_eq!(Code::MESSAGE_ERROR.to_string(), "H3_MESSAGE_ERROR");
    assert_eq!(Code(0x100).name(), Some("H3_NO_ERROR"));
    assert_eq!(Code(0x110).name(), Some("H3_VERSION_FALLBACK"));
    assert_eq!(Code(0x200).to_string(), "QPACK_DECOMPRESSION_FAILED");
    assert_eq!(Code(0x21).to_string(), "H3 0x21");
    assert!(Code::MESSAGE_ERROR.is_stream_error());
    assert!(!Code::FRAME_ERROR.is_stream_error());
}
