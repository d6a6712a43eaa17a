use super::*;

#[test]
fn a_framed_message_has_its_flag_and_big_endian_length_first() {
    assert_eq!(framed(b"abc", false), [0, 0, 0, 0, 3, b'a', b'b', b'c']);
    assert_eq!(framed(b"", true), [1, 0, 0, 0, 0]);
}

#[test]
fn the_deframer_takes_messages_split_across_and_packed_into_reads() {
    let mut wire = framed(b"first", false);
    wire.extend(framed(b"", false));
    wire.extend(framed(&[7; 300], true));
    let mut d = Deframer::new(1 << 20);
    let mut got = Vec::new();
    for piece in wire.chunks(3) {
        got.extend(d.push(piece).unwrap());
    }
    d.finish().unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].data, b"first");
    assert!(got[1].data.is_empty() && !got[1].compressed);
    assert!(got[2].compressed && got[2].data == [7; 300]);
    assert_eq!(d.count(), 3);
}

#[test]
fn the_deframer_names_a_bad_flag_a_prefix_above_the_limit_and_a_truncated_message() {
    let mut d = Deframer::new(10);
    assert_eq!(
        d.push(&[2, 0, 0, 0, 1, 0]),
        Err(FramingError::Flag { index: 0, flag: 2 })
    );
    let mut d = Deframer::new(10);
    assert_eq!(
        d.push(&[0, 0, 0, 0, 11]),
        Err(FramingError::TooLong {
            index: 0,
            len: 11,
            limit: 10
        })
    );
    let mut d = Deframer::new(10);
    d.push(&framed(b"ok", false)).unwrap();
    assert!(d.push(&[0, 0, 0, 0, 4, b'x']).unwrap().is_empty());
    assert_eq!(
        d.finish(),
        Err(FramingError::Truncated {
            index: 1,
            have: 6,
            want: 9
        })
    );
}

#[test]
fn a_status_is_read_from_its_headers_with_the_message_percent_decoded() {
    let headers = [
        ("grpc-status", &b"13"[..]),
        ("grpc-message", b"bad%20thing%3A%20%E2%9C%93 100%"),
    ];
    let find = |n: &str| headers.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
    let s = Status::from_headers(find).unwrap();
    assert_eq!(s.code, 13);
    assert_eq!(s.message, "bad thing: \u{2713} 100%");
    assert_eq!(s.to_string(), "13 INTERNAL: bad thing: \u{2713} 100%");
    assert_eq!(Status::from_headers(|_| None), Err(StatusError::Missing));
    let odd = |n: &str| (n == "grpc-status").then_some(&b"-1"[..]);
    assert_eq!(
        Status::from_headers(odd),
        Err(StatusError::NotANumber("-1".into()))
    );
    let undefined = |n: &str| (n == "grpc-status").then_some(&b"99"[..]);
    assert_eq!(
        Status::from_headers(undefined).unwrap().to_string(),
        "99 (undefined)"
    );
}

#[test]
fn codes_have_their_numbers_and_names() {
    for (n, c) in Code::ALL.into_iter().enumerate() {
        assert_eq!(c.number() as usize, n);
        assert_eq!(Code::from_u32(n as u32), Some(c));
    }
    assert_eq!(Code::DeadlineExceeded.to_string(), "4 DEADLINE_EXCEEDED");
    assert_eq!(Code::from_u32(17), None);
}

#[test]
fn a_timeout_takes_the_coarsest_exact_unit_or_rounds_up_in_eight_digits() {
    assert_eq!(timeout(Duration::from_millis(1)), "1m");
    assert_eq!(timeout(Duration::from_secs(2)), "2S");
    assert_eq!(timeout(Duration::from_nanos(1500)), "1500n");
    assert_eq!(timeout(Duration::from_secs(3600 * 1000)), "1000H");
    assert_eq!(timeout(Duration::from_secs(120)), "2M");
    assert_eq!(timeout(Duration::from_nanos(123_456_789_123)), "123457m");
}
