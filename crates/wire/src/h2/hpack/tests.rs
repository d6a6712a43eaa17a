use super::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A dynamic table size update to 256 bytes, the size RFC 7541's examples assume.
const TO_256: &str = "3fe101";

fn decode_all(blocks: &[&str]) -> (Vec<Option<u16>>, (usize, usize)) {
    let mut d = Decoder::default();
    let mut s = Strings::default();
    let statuses = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let prefix = if i == 0 { TO_256 } else { "" };
            d.decode(&hex(&format!("{prefix}{b}")), &mut s).unwrap()
        })
        .collect();
    (statuses, d.table())
}

#[test]
fn rfc_7541_c5_responses_decode_with_eviction() {
    let (statuses, table) = decode_all(&[
        "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
         2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
         6c65 2e63 6f6d",
        "4803 3330 37c1 c0bf",
        "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
         54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
         5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
         3d31",
    ]);
    assert_eq!(statuses, vec![Some(302), Some(307), Some(200)]);
    assert_eq!(table, (3, 215));
}

#[test]
fn rfc_7541_c6_huffman_responses_decode_with_eviction() {
    let (statuses, table) = decode_all(&[
        "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
         2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        "4883 640e ffc1 c0bf",
        "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
         77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
         9587 3160 65c0 03ed 4ee5 b106 3d50 07",
    ]);
    assert_eq!(statuses, vec![Some(302), Some(307), Some(200)]);
    assert_eq!(table, (3, 215));
}

#[test]
fn a_status_indexed_from_the_dynamic_table_is_found() {
    let mut d = Decoder::default();
    let mut s = Strings::default();
    // `:status: 201` with incremental indexing (name: static 8), then the entry by index 62.
    assert_eq!(d.decode(&hex("4803 323031"), &mut s), Ok(Some(201)));
    assert_eq!(d.decode(&hex("be"), &mut s), Ok(Some(201)));
}

#[test]
fn malformed_blocks_are_compression_errors() {
    let mut s = Strings::default();
    for bad in [
        "80",                 // index 0
        "be",                 // a dynamic index into an empty table
        "7f",                 // an integer cut short
        "4803 3230",          // a string cut short
        "88 3fe101",          // a size update after a field
        "3fe21f 88",          // a size update above 4096
        "0085 ffffffffff 00", // a Huffman name that decodes to EOS
    ] {
        let got = Decoder::default().decode(&hex(bad), &mut s);
        assert_eq!(got, Err(CompressionError), "{bad}");
    }
}

#[test]
fn a_request_block_decodes_to_its_fields() {
    let headers = vec![
        ("Accept".to_string(), "*/*".to_string()),
        ("X-Trace".to_string(), "1".to_string()),
    ];
    let block = encode_request("GET", "http", "127.0.0.1:8080", "/hello", &headers);
    let mut fields = Vec::new();
    loona_hpack::Decoder::new()
        .decode_with_cb(&block, |n, v| fields.push((n.into_owned(), v.into_owned())))
        .unwrap();
    let text: Vec<(String, String)> = fields
        .into_iter()
        .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
        .collect();
    let want = [
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/hello"),
        (":authority", "127.0.0.1:8080"),
        ("accept", "*/*"),
        ("x-trace", "1"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    assert_eq!(text, want);
}

/// A small deterministic generator (64-bit LCG).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn put_string(out: &mut Vec<u8>, s: &[u8], huffman: bool) {
    if huffman {
        let mut enc = Vec::new();
        httlib_huffman::encode(s, &mut enc).unwrap();
        put_int(out, 0x80, 7, enc.len());
        out.extend_from_slice(&enc);
    } else {
        put_int(out, 0, 7, s.len());
        out.extend_from_slice(s);
    }
}

/// One random header block, valid against a table of `dynamic` entries: it refers to the
/// dynamic table only before its first insert (which may evict, or clear a small table).
fn random_block(rng: &mut Rng, mut dynamic: usize) -> Vec<u8> {
    let mut out = Vec::new();
    if rng.next(8) == 0 {
        put_int(
            &mut out,
            0x20,
            5,
            [0, 100, 256, 1000, 4096][rng.next(5) as usize],
        );
        dynamic = 0; // the update may have evicted any entry: refer to the static table only
    }
    for _ in 0..1 + rng.next(6) {
        let huffman = rng.next(2) == 0;
        let value = match rng.next(3) {
            0 => format!("{}", 100 + rng.next(500)),
            1 => "x".repeat(rng.next(300) as usize),
            _ => format!("v{}", rng.next(1000)),
        };
        let name_index = match rng.next(4) {
            0 => 8, // :status
            1 if dynamic > 0 => 62 + rng.next(dynamic as u64) as usize,
            2 => 0,
            _ => 1 + rng.next(61) as usize,
        };
        match rng.next(5) {
            0 if dynamic > 0 => put_int(&mut out, 0x80, 7, 62 + rng.next(dynamic as u64) as usize),
            0 => put_int(&mut out, 0x80, 7, 8 + rng.next(7) as usize),
            kind => {
                let (flags, prefix) = match kind {
                    1 | 2 => (0x40, 6),
                    3 => (0x10, 4),
                    _ => (0x00, 4),
                };
                if flags == 0x40 {
                    dynamic = 0;
                }
                put_int(&mut out, flags, prefix, name_index);
                if name_index == 0 {
                    let names: [&[u8]; 3] = [b":status", b"x-custom", b"set-cookie"];
                    put_string(&mut out, names[rng.next(3) as usize], huffman);
                }
                put_string(&mut out, value.as_bytes(), huffman);
            }
        }
    }
    out
}

/// The first `:status` as `loona-hpack` decodes it, or its error.
fn reference_status(d: &mut loona_hpack::Decoder<'_>, block: &[u8]) -> Result<Option<u16>, ()> {
    let mut status = None;
    d.decode_with_cb(block, |n, v| {
        if &*n == b":status" && status.is_none() {
            let code = std::str::from_utf8(&v)
                .ok()
                .and_then(|s| s.parse::<u16>().ok());
            status = code.filter(|c| (100..1000).contains(c));
        }
    })
    .map_err(|_| ())?;
    Ok(status)
}

#[test]
fn generated_block_sequences_decode_as_loona_hpack_decodes_them() {
    let mut rng = Rng(0x5eed);
    let mut decoded = 0;
    for _ in 0..20 {
        let mut ours = Decoder::default();
        let mut strings = Strings::default();
        let mut reference = loona_hpack::Decoder::new();
        for n in 0..100 {
            let block = random_block(&mut rng, ours.table().0);
            let want = reference_status(&mut reference, &block);
            let got = ours.decode(&block, &mut strings).map_err(|_| ());
            assert_eq!(got, want, "block {n}: {block:02x?}");
            if got.is_err() {
                break;
            }
            decoded += 1;
        }
    }
    assert_eq!(decoded, 2000, "every generated block is valid");
}

/// A literal with incremental indexing and a literal name.
fn indexed_literal(out: &mut Vec<u8>, name: &str, value: &str) {
    out.push(0x40);
    out.push(name.len() as u8);
    out.extend_from_slice(name.as_bytes());
    out.push(value.len() as u8);
    out.extend_from_slice(value.as_bytes());
}

#[test]
fn grpc_fields_are_read_from_literals_and_from_the_entries_they_indexed() {
    let mut d = Decoder::default();
    let mut s = Strings::default();
    // :status 200 (static 8), content-type (static name 31) indexed, grpc-status indexed.
    let mut block = vec![0x88, 0x5f, 0x10];
    block.extend_from_slice(b"application/grpc");
    indexed_literal(&mut block, "grpc-status", "13");
    let f = d.decode_grpc(&block, &mut s).unwrap();
    assert_eq!(f.status, Some(200));
    assert_eq!(f.content_type, Some(CONTENT_GRPC));
    assert_eq!(f.grpc_status, Some(13));
    // The same fields again by their dynamic indexes: grpc-status 62, content-type 63.
    let f = d.decode_grpc(&[0x88, 0xbf, 0xbe], &mut s).unwrap();
    assert_eq!(
        (f.content_type, f.grpc_status),
        (Some(CONTENT_GRPC), Some(13))
    );
    // The HTTP/2 path reads the status only.
    assert_eq!(d.decode(&[0x88, 0xbf, 0xbe], &mut s).unwrap(), Some(200));
}

#[test]
fn a_json_content_type_and_an_unreadable_grpc_status_are_told_apart() {
    let mut d = Decoder::default();
    let mut s = Strings::default();
    let mut block = vec![0x88];
    indexed_literal(&mut block, "content-type", "application/json");
    indexed_literal(&mut block, "grpc-status", "x");
    let f = d.decode_grpc(&block, &mut s).unwrap();
    assert_eq!(f.content_type, Some(CONTENT_OTHER));
    assert_eq!(f.grpc_status, Some(GRPC_STATUS_UNREADABLE));
    let mut ok = vec![0x88];
    indexed_literal(&mut ok, "grpc-status", "0");
    indexed_literal(&mut ok, "content-type", "application/grpc+proto");
    let f = d.decode_grpc(&ok, &mut s).unwrap();
    assert_eq!(
        (f.grpc_status, f.content_type),
        (Some(0), Some(CONTENT_GRPC))
    );
}
