use crate::{Proto, ProtoError};
use std::path::{Path, PathBuf};

const API: &str = r#"syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Address { string city = 1; uint32 zip = 2; }
message Order {
  string name = 1;
  int32 n = 2;
  sint64 delta = 3;
  fixed32 code = 4;
  Address to = 5;
  repeated string tags = 6;
  bool gift = 7;
  google.protobuf.Timestamp at = 8;
  repeated Address stops = 9;
}
message Receipt { string id = 1; }
service Shop {
  rpc Place(Order) returns (Receipt);
  rpc Watch(Order) returns (stream Receipt);
}
"#;

fn shop() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shop.proto");
    std::fs::write(&file, API).unwrap();
    (dir, file)
}

fn compiled() -> Proto {
    let (_dir, file) = shop();
    Proto::compile(&file, &[]).unwrap()
}

/// A fixed sequence of "random" numbers.
fn counter() -> impl FnMut() -> u64 {
    let mut n = 0u64;
    move || {
        n += 1;
        n * 7919
    }
}

#[test]
fn a_proto_compiles_with_its_imports_and_its_descriptors_rebuild_it_elsewhere() {
    let p = compiled();
    let again = Proto::from_descriptors(p.descriptors()).unwrap();
    let m = again.method("shop.Shop/Place").unwrap();
    assert_eq!(m.path(), "/shop.Shop/Place");
    assert_eq!(m.input(), "shop.Order");
    assert_eq!(
        again.method("/shop.Shop/Place").unwrap().path(),
        "/shop.Shop/Place"
    );
    assert!(Proto::from_descriptors(b"\xff\xff").is_err());
    let text = p.descriptors_base64();
    assert_eq!(
        Proto::from_base64(&text).unwrap().descriptors(),
        p.descriptors()
    );
    assert!(Proto::from_base64("not base64!").is_err());
}

#[test]
fn a_proto_that_does_not_compile_is_named_with_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.proto");
    std::fs::write(
        &file,
        "syntax = \"proto3\";\nmessage A {\n  int32 x = 1\n}\n",
    )
    .unwrap();
    let e = Proto::compile(&file, &[]).unwrap_err().to_string();
    assert!(e.starts_with("bad.proto:4:1: "), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let gone = Proto::compile(Path::new("/nonexistent/x.proto"), &[]).unwrap_err();
    assert!(gone.to_string().contains("x.proto"), "{gone}");
    std::fs::write(&file, "syntax = \"proto3\";\nimport \"missing.proto\";\n").unwrap();
    let e = Proto::compile(&file, &[]).unwrap_err().to_string();
    assert!(
        e.starts_with("bad.proto:2:1: import 'missing.proto' not found"),
        "{e}"
    );
}

#[test]
fn an_unknown_service_or_method_names_what_the_proto_has_and_streaming_is_refused() {
    let p = compiled();
    let e = p.method("shop.Shop/Nope").unwrap_err().to_string();
    assert_eq!(
        e,
        "`shop.Shop` has no method `Nope` (its methods: Place, Watch)"
    );
    let e = p.method("shop.Store/Place").unwrap_err().to_string();
    assert_eq!(
        e,
        "no service `shop.Store` in the .proto (services: shop.Shop)"
    );
    assert!(matches!(p.method("Place"), Err(ProtoError::BadCall(_))));
    let e = p
        .method("shop.Shop/Watch")
        .unwrap()
        .unary()
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "`/shop.Shop/Watch` is a server-streaming method: only unary methods can be called yet"
    );
}

#[test]
fn json_without_placeholders_is_encoded_once_as_protobuf() {
    let m = compiled().method("shop.Shop/Place").unwrap();
    let t = m
        .template(r#"{"name":"x","n":3,"to":{"city":"Oslo"},"at":"2024-01-01T00:00:00Z"}"#)
        .unwrap();
    let bytes = t.fixed().expect("nothing drawn").to_vec();
    assert_eq!(&bytes[..5], &[0x0a, 1, b'x', 0x10, 3]);
    let back = m.request_json(&bytes).unwrap();
    assert!(back.contains(r#""city":"Oslo""#), "{back}");
    assert_eq!(m.template("").unwrap().fixed(), Some(&[][..]));
}

#[test]
fn json_that_does_not_match_the_message_names_the_field_and_its_type() {
    let m = compiled().method("shop.Shop/Place").unwrap();
    let e = m.template(r#"{"n":"three"}"#).unwrap_err().to_string();
    assert!(e.starts_with("field `n` (int32): "), "{e}");
    let e = m.template(r#"{"to":{"zip":"x"}}"#).unwrap_err().to_string();
    assert!(e.starts_with("field `to.zip` (uint32): "), "{e}");
    let e = m
        .template(r#"{"stops":[{"city":1}]}"#)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("field `stops[0].city` (string): "), "{e}");
    let e = m.template(r#"{"nmae":"x"}"#).unwrap_err().to_string();
    assert!(
        e.starts_with("no field `nmae` in shop.Order (its fields: name, n, "),
        "{e}"
    );
    let e = m.template(r#"{"name":"#).unwrap_err().to_string();
    assert!(e.starts_with("not a JSON object for shop.Order: "), "{e}");
    let e = m.template("[1]").unwrap_err().to_string();
    assert!(e.contains("expected an object"), "{e}");
}

#[test]
fn placeholders_are_drawn_per_call_in_their_range_and_the_message_decodes() {
    let m = compiled().method("shop.Shop/Place").unwrap();
    let t = m
        .template(
            r#"{"name":"user-{rand:1-1000}","n":"{rand:1-100}","delta":"{rand:5-5}",
                "code":"{rand:1-9}","to":{"city":"c{rand:0-9}","zip":"{rand:10000-99999}"},
                "tags":["a"],"gift":true}"#,
        )
        .unwrap();
    assert!(t.fixed().is_none());
    let mut next = counter();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..200 {
        let mut out = Vec::new();
        t.encode(&mut next, &mut out);
        let json: serde_json::Value = serde_json::from_str(&m.request_json(&out).unwrap()).unwrap();
        let name = json["name"].as_str().unwrap();
        let k: u64 = name.strip_prefix("user-").unwrap().parse().unwrap();
        assert!((1..=1000).contains(&k), "{json}");
        let n = json["n"].as_i64().unwrap();
        assert!((1..=100).contains(&n), "{json}");
        assert_eq!(json["delta"], "5", "{json}");
        let zip = json["to"]["zip"].as_u64().unwrap();
        assert!((10000..=99999).contains(&zip), "{json}");
        assert_eq!(
            (json["tags"][0].as_str(), json["gift"].as_bool()),
            (Some("a"), Some(true))
        );
        seen.insert(n);
    }
    assert!(seen.len() > 20, "draws vary: {seen:?}");
}

#[test]
fn a_long_drawn_string_gets_a_two_byte_length_in_its_nested_message() {
    let m = compiled().method("shop.Shop/Place").unwrap();
    let long = "x".repeat(200);
    let t = m
        .template(&format!(r#"{{"to":{{"city":"{long}{{rand:1-9}}"}}}}"#))
        .unwrap();
    let mut out = Vec::new();
    t.encode(&mut counter(), &mut out);
    assert_eq!(
        &out[..3],
        &[0x2a, 0xcc, 0x01],
        "field 5, 204 bytes: city (1 + 2 + 201)"
    );
    assert!(m.request_json(&out).unwrap().contains(&long));
}

#[test]
fn a_placeholder_where_none_can_go_is_refused_naming_the_field() {
    let m = compiled().method("shop.Shop/Place").unwrap();
    for (json, want) in [
        (
            r#"{"n":"x{rand:1-9}"}"#,
            "field `n` (int32): an integer field takes a whole",
        ),
        (
            r#"{"n":"{rand:1-3000000000}"}"#,
            "field `n` (int32): 3000000000 is over",
        ),
        (
            r#"{"n":"{rand:9-1}"}"#,
            "field `n` (int32): `{rand:9-1}`: the range is backwards",
        ),
        (
            r#"{"n":"{rand:a-b}"}"#,
            "field `n` (int32): `{rand:a-b}`: give {rand:A-B}",
        ),
        (
            r#"{"tags":["{rand:1-2}"]}"#,
            "field `tags` (repeated string): {rand:A-B} goes in a single",
        ),
        (
            r#"{"gift":"{rand:0-1}"}"#,
            "field `gift` (bool): {rand:A-B} goes in integer and string",
        ),
        (
            r#"{"name":"{rand:1-2"}"#,
            "field `name` (string): `{rand:` without its `}`",
        ),
    ] {
        let e = m.template(json).unwrap_err().to_string();
        assert!(e.starts_with(want), "{json}: {e}");
    }
}
