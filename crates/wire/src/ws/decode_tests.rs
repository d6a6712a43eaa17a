use super::*;
use crate::ws::{encode, encode_close, Head};

/// Decodes every whole frame of `buf` as a client, returning (opcode, fin, payload).
fn frames(
    dec: &mut Decoder,
    buf: &mut [u8],
) -> Result<Vec<(Opcode, bool, Vec<u8>)>, ProtocolError> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Decoded::Frame(f) = dec.decode(&mut buf[at..])? {
        out.push((f.opcode, f.fin, f.payload(&buf[at..]).to_vec()));
        at += f.len();
    }
    Ok(out)
}

fn client() -> Decoder {
    Decoder::new(Role::Client)
}

fn server_frame(op: Opcode, fin: bool, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode(&mut out, Head::server(op, fin), payload);
    out
}

#[test]
fn the_rfc_examples_decode_unmasked_as_a_client_and_masked_as_a_server() {
    let mut unmasked = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
    let got = frames(&mut client(), &mut unmasked).unwrap();
    assert_eq!(got, vec![(Opcode::Text, true, b"Hello".to_vec())]);
    let mut masked = [
        0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];
    let Decoded::Frame(f) = Decoder::new(Role::Server).decode(&mut masked).unwrap() else {
        panic!("incomplete")
    };
    assert_eq!(f.mask, Some([0x37, 0xfa, 0x21, 0x3d]));
    assert_eq!(f.payload(&masked), b"Hello");
    let mut fragmented = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f];
    let got = frames(&mut client(), &mut fragmented).unwrap();
    let want = vec![
        (Opcode::Text, false, b"Hel".to_vec()),
        (Opcode::Continuation, true, b"lo".to_vec()),
    ];
    assert_eq!(got, want);
    // Ping "Hello", unmasked (§5.7).
    let mut ping = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
    assert_eq!(frames(&mut client(), &mut ping).unwrap()[0].0, Opcode::Ping);
}

#[test]
fn a_frame_split_at_every_byte_is_incomplete_until_its_last_byte_then_whole() {
    for len in [5usize, 200, 70_000] {
        let whole = server_frame(Opcode::Binary, true, &vec![7u8; len]);
        let mut dec = client();
        for cut in 0..whole.len() {
            if len > 200 && cut > 20 && cut < whole.len() - 2 {
                continue; // the header's cuts and the end are what matter
            }
            let mut part = whole[..cut].to_vec();
            match dec.decode(&mut part).unwrap() {
                Decoded::Incomplete { needed } => assert!(needed > cut, "{len} {cut}"),
                Decoded::Frame(_) => panic!("a frame from {cut} of {} bytes", whole.len()),
            }
        }
        let mut all = whole.clone();
        let Decoded::Frame(f) = dec.decode(&mut all).unwrap() else {
            panic!("incomplete")
        };
        assert_eq!((f.len(), f.payload.len()), (whole.len(), len));
    }
}

#[test]
fn incomplete_says_the_whole_frames_size_once_the_header_is_in() {
    let whole = server_frame(Opcode::Binary, true, &[1; 300]);
    let mut head = whole[..4].to_vec();
    let got = client().decode(&mut head).unwrap();
    assert_eq!(got, Decoded::Incomplete { needed: 304 });
    let mut two = whole[..2].to_vec();
    assert_eq!(
        client().decode(&mut two).unwrap(),
        Decoded::Incomplete { needed: 4 }
    );
}

#[test]
fn frames_merged_in_one_read_come_out_one_by_one_in_order() {
    let mut buf = Vec::new();
    for i in 0..5u8 {
        encode(&mut buf, Head::server(Opcode::Text, true), &[b'a' + i; 3]);
    }
    encode(&mut buf, Head::server(Opcode::Pong, true), b"p");
    buf.extend_from_slice(&[0x82]); // the start of the next frame
    let got = frames(&mut client(), &mut buf).unwrap();
    let payloads: Vec<&[u8]> = got.iter().map(|(_, _, p)| p.as_slice()).collect();
    let want: [&[u8]; 6] = [b"aaa", b"bbb", b"ccc", b"ddd", b"eee", b"p"];
    assert_eq!(payloads, want);
}

#[test]
fn a_64_bit_length_decodes_and_one_over_the_maximum_is_refused_from_its_header() {
    let big = server_frame(Opcode::Binary, true, &vec![0u8; 70_000]);
    assert_eq!(big[1], 127);
    assert_eq!(
        frames(&mut client(), &mut big.clone()).unwrap()[0].2.len(),
        70_000
    );
    let mut head = vec![0x82, 127];
    head.extend_from_slice(&((16u64 << 20) + 1).to_be_bytes());
    let err = client().decode(&mut head).unwrap_err();
    assert_eq!(
        err,
        ProtocolError::TooLarge {
            len: (16 << 20) + 1,
            max: 16 << 20
        }
    );
    let mut top = vec![0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0];
    assert!(matches!(
        client().decode(&mut top),
        Err(ProtocolError::TooLarge { .. })
    ));
    let small = client().with_max(10);
    let mut eleven = server_frame(Opcode::Binary, true, &[0; 11]);
    assert!(matches!(
        small.clone().decode(&mut eleven),
        Err(ProtocolError::TooLarge { .. })
    ));
}

#[test]
fn a_fragmented_message_over_the_maximum_is_refused_at_the_fragment_that_crosses_it() {
    let mut buf = server_frame(Opcode::Binary, false, &[0; 6]);
    buf.extend(server_frame(Opcode::Continuation, true, &[0; 6]));
    let err = frames(&mut client().with_max(10), &mut buf).unwrap_err();
    assert_eq!(err, ProtocolError::TooLarge { len: 12, max: 10 });
}

#[test]
fn lengths_in_a_longer_encoding_than_needed_are_refused() {
    let mut short16 = vec![0x82, 126, 0, 5, 0, 0, 0, 0, 0];
    let err = client().decode(&mut short16).unwrap_err();
    assert_eq!(err, ProtocolError::NonMinimalLength(5));
    let mut short64 = vec![0x82, 127, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF];
    let err = client().decode(&mut short64).unwrap_err();
    assert_eq!(err, ProtocolError::NonMinimalLength(0xFFFF));
}

#[test]
fn each_header_violation_is_named_from_the_first_two_bytes() {
    let cases: [(&[u8], ProtocolError); 6] = [
        (&[0x81, 0x85], ProtocolError::MaskedFrame),
        (&[0xC1, 0x00], ProtocolError::ReservedBits(0b100)),
        (&[0x83, 0x00], ProtocolError::ReservedOpcode(3)),
        (&[0x8B, 0x00], ProtocolError::ReservedOpcode(0xB)),
        (
            &[0x09, 0x00],
            ProtocolError::FragmentedControl(Opcode::Ping),
        ),
        (&[0x80, 0x00], ProtocolError::UnexpectedContinuation),
    ];
    for (bytes, want) in cases {
        assert_eq!(
            client().decode(&mut bytes.to_vec()),
            Err(want),
            "{bytes:x?}"
        );
    }
    let mut unmasked = [0x81, 0x00];
    let err = Decoder::new(Role::Server)
        .decode(&mut unmasked)
        .unwrap_err();
    assert_eq!(
        (err, err.close_code()),
        (ProtocolError::UnmaskedFrame, 1002)
    );
}

#[test]
fn rsv1_passes_only_when_an_extension_allows_it() {
    let mut frame = [0xC1, 0x01, b'x'];
    assert!(client().decode(&mut frame.clone()).is_err());
    let Decoded::Frame(f) = client().with_rsv(0b100).decode(&mut frame).unwrap() else {
        panic!("incomplete")
    };
    assert_eq!(f.rsv, 0b100);
}

#[test]
fn a_control_frame_over_125_bytes_is_refused() {
    let mut ping = server_frame(Opcode::Ping, true, &[0; 126]);
    let err = client().decode(&mut ping).unwrap_err();
    assert_eq!(
        err,
        ProtocolError::ControlTooLong {
            opcode: Opcode::Ping,
            len: 126
        }
    );
}

#[test]
fn a_new_message_inside_a_fragmented_one_is_refused_but_a_ping_between_fragments_passes() {
    let mut buf = server_frame(Opcode::Text, false, b"a");
    buf.extend(server_frame(Opcode::Ping, true, b"p"));
    buf.extend(server_frame(Opcode::Continuation, true, b"b"));
    let mut dec = client();
    assert_eq!(frames(&mut dec, &mut buf).unwrap().len(), 3);
    assert_eq!(dec.in_message(), None);
    let mut buf = server_frame(Opcode::Text, false, b"a");
    buf.extend(server_frame(Opcode::Binary, true, b"b"));
    let err = frames(&mut client(), &mut buf).unwrap_err();
    assert_eq!(err, ProtocolError::ExpectedContinuation(Opcode::Binary));
}

#[test]
fn close_frames_are_checked_for_length_code_and_reason() {
    let close = |code: Option<u16>, reason: &[u8]| {
        let mut out = Vec::new();
        encode_close(&mut out, code, reason, None);
        out
    };
    let mut ok = close(Some(1000), b"bye");
    let Decoded::Frame(f) = client().decode(&mut ok).unwrap() else {
        panic!("incomplete")
    };
    assert_eq!(f.close_code(&ok), Some(1000));
    assert!(client().decode(&mut close(None, b"")).is_ok());
    let mut one = server_frame(Opcode::Close, true, &[3]);
    assert_eq!(client().decode(&mut one), Err(ProtocolError::CloseTooShort));
    let err = client().decode(&mut close(Some(1005), b"")).unwrap_err();
    assert_eq!(err, ProtocolError::BadCloseCode(1005));
    let err = client()
        .decode(&mut close(Some(1000), &[0xFF]))
        .unwrap_err();
    assert_eq!(err, ProtocolError::InvalidUtf8);
}

#[test]
fn text_is_checked_as_utf8_even_when_a_code_point_spans_two_fragments() {
    let euro = "€".as_bytes(); // 3 bytes
    let mut buf = server_frame(Opcode::Text, false, &euro[..1]);
    buf.extend(server_frame(Opcode::Continuation, false, &euro[1..2]));
    buf.extend(server_frame(Opcode::Continuation, true, &euro[2..]));
    assert_eq!(frames(&mut client(), &mut buf).unwrap().len(), 3);
    let mut cut = server_frame(Opcode::Text, true, &euro[..2]);
    assert_eq!(client().decode(&mut cut), Err(ProtocolError::InvalidUtf8));
    let mut bad = server_frame(Opcode::Text, true, &[0xC3, 0x28]);
    assert_eq!(
        client().decode(&mut bad.clone()),
        Err(ProtocolError::InvalidUtf8)
    );
    assert!(client().with_utf8_check(false).decode(&mut bad).is_ok());
    let mut binary = server_frame(Opcode::Binary, true, &[0xFF]);
    assert!(client().decode(&mut binary).is_ok());
}

#[test]
fn the_utf8_validator_accepts_any_split_of_valid_text_and_no_split_of_invalid() {
    let text = "añ€😀z".as_bytes();
    for a in 0..=text.len() {
        for b in a..=text.len() {
            let mut v = Utf8Validator::default();
            v.feed(&text[..a], false).unwrap();
            v.feed(&text[a..b], false).unwrap();
            assert_eq!(v.feed(&text[b..], true), Ok(()), "{a} {b}");
        }
    }
    let mut v = Utf8Validator::default();
    v.feed(&[0xF0, 0x9F], false).unwrap();
    assert_eq!(v.feed(&[0x41], true), Err(ProtocolError::InvalidUtf8));
}
