//! The request templates' tests: what goes on the wire for each kind of request.

use super::*;

fn draw(random_len: usize) -> Draw {
    Draw::new(7, random_len, false)
}

/// One request written out, splices joined in, as the server would receive it.
fn wire(t: &RequestTemplate, d: &mut Draw) -> Vec<u8> {
    let (mut out, mut splices) = (Vec::new(), Splices::default());
    t.write(&mut out, &mut splices, d);
    let (mut pos, mut got) = (0, Vec::new());
    while let Some(p) = splices.piece(&out, pos) {
        got.extend_from_slice(p);
        let n = p.len();
        splices.advance(out.len(), &mut pos, n);
    }
    got
}

fn template(path: &str, body: Body, chunk: Option<usize>) -> RequestTemplate {
    RequestTemplate::new("POST", path, "h:1", &[], body, chunk).unwrap()
}

#[test]
fn a_request_without_placeholders_or_drawn_body_is_constant_bytes() {
    let t = RequestTemplate::new("GET", "/x", "h:1", &["X-A: 1".into()], Body::None, None).unwrap();
    assert!(t.is_constant());
    assert_eq!(
        t.constant(),
        b"GET /x HTTP/1.1\r\nHost: h:1\r\nX-A: 1\r\n\r\n"
    );
    let small = template("/x", Body::Fixed(b"hi".to_vec()), None);
    assert!(small.is_constant());
    assert_eq!(small.constant_body_len(), 2);
    assert!(small.constant().ends_with(b"Content-Length: 2\r\n\r\nhi"));
}

#[test]
fn rand_placeholders_get_a_fresh_value_in_range_per_request() {
    let t = template("/baseline?a={rand:1-100}&b={rand:5-5}", Body::None, None);
    assert!(!t.is_constant());
    let mut d = draw(0);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let req = String::from_utf8(wire(&t, &mut d)).unwrap();
        let line = req.lines().next().unwrap();
        let q = line.strip_prefix("POST /baseline?a=").unwrap();
        let (a, rest) = q.split_once("&b=").unwrap();
        let a: u64 = a.parse().unwrap();
        assert!((1..=100).contains(&a), "{line}");
        assert!(rest.starts_with("5 HTTP/1.1"), "{line}");
        seen.insert(a);
    }
    assert!(seen.len() > 50, "only {} values", seen.len());
}

#[test]
fn a_bad_placeholder_names_the_path() {
    let e = RequestTemplate::new("GET", "/a?x={rand:9-1}", "h", &[], Body::None, None).unwrap_err();
    assert!(e.to_string().contains("/a?x={rand:9-1}") && e.to_string().contains("backwards"));
    let e = RequestTemplate::new("GET", "/a?x={rand:x}", "h", &[], Body::None, None).unwrap_err();
    assert!(e.to_string().contains("{rand:A-B}"), "{e}");
    assert_eq!(
        split_placeholders("/{x}").unwrap(),
        [LinePart::Text("/{x}".into())]
    );
}

#[test]
fn drawn_bodies_have_sizes_in_range_and_a_matching_content_length() {
    let t = template(
        "/upload",
        Body::Random {
            min: 100,
            max: 40_000,
        },
        None,
    );
    let mut d = draw(t.random_len());
    let mut sizes = std::collections::BTreeSet::new();
    for _ in 0..50 {
        let req = wire(&t, &mut d);
        let head_end = req.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let head = String::from_utf8_lossy(&req[..head_end]).to_string();
        let len: usize = head
            .split("Content-Length: ")
            .nth(1)
            .unwrap()
            .split("\r\n")
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((100..=40_000).contains(&len), "{len}");
        assert_eq!(req.len() - head_end, len);
        sizes.insert(len);
    }
    assert!(sizes.len() > 40);
}

#[test]
fn large_bodies_are_spliced_not_copied_unless_asked() {
    let t = template(
        "/u",
        Body::Random {
            min: 100_000,
            max: 100_000,
        },
        None,
    );
    let mut d = draw(t.random_len());
    let (mut out, mut splices) = (Vec::new(), Splices::default());
    assert_eq!(t.write(&mut out, &mut splices, &mut d), 100_000);
    assert!(out.len() < 200 && !splices.is_empty());
    d.copy = true;
    let (mut out, mut splices) = (Vec::new(), Splices::default());
    t.write(&mut out, &mut splices, &mut d);
    assert!(out.len() > 100_000 && splices.is_empty());
}

/// Decodes a chunked body; panics on bad framing. Returns the chunk sizes and the body.
fn dechunk(mut b: &[u8]) -> (Vec<usize>, Vec<u8>) {
    let (mut sizes, mut body) = (Vec::new(), Vec::new());
    loop {
        let nl = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..nl]).unwrap(), 16).unwrap();
        b = &b[nl + 2..];
        if n == 0 {
            assert_eq!(b, b"\r\n");
            return (sizes, body);
        }
        sizes.push(n);
        body.extend_from_slice(&b[..n]);
        assert_eq!(&b[n..n + 2], b"\r\n");
        b = &b[n + 2..];
    }
}

#[test]
fn a_chunked_body_comes_in_chunks_of_the_size_asked_and_ends_with_a_zero_chunk() {
    let body: Vec<u8> = (0..50_000u32).map(|i| i as u8).collect();
    let t = template("/u", Body::Fixed(body.clone()), Some(16_384));
    let req = wire(&t, &mut draw(0));
    let head_end = req.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&req[..head_end]);
    assert!(head.contains("Transfer-Encoding: chunked\r\n") && !head.contains("Content-Length"));
    let (sizes, got) = dechunk(&req[head_end..]);
    assert_eq!(sizes, [16_384, 16_384, 16_384, 848]);
    assert_eq!(got, body);
}

#[test]
fn framing_headers_given_with_drawn_or_chunked_bodies_are_refused() {
    let h = ["Content-Length: 5".to_string()];
    let e = RequestTemplate::new("POST", "/", "h", &h, Body::Fixed(b"x".to_vec()), Some(4));
    assert!(e.unwrap_err().to_string().contains("--chunked"));
    let e = RequestTemplate::new("POST", "/", "h", &h, Body::Random { min: 1, max: 2 }, None);
    assert!(e.unwrap_err().to_string().contains("--body-size"));
}
