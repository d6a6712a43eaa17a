//! A request message built once from its JSON, and re-encoded per call only where it holds
//! `{rand:A-B}`: a [`Template`] is pieces of pre-encoded protobuf (every field without a
//! placeholder, encoded once by prost-reflect) and the drawn fields, each with its key (field
//! number and wire type) encoded ahead of time. [`Template::encode`] is the per-call work and
//! is hand-written: it copies the bytes, encodes each drawn integer (varint, zigzag or fixed)
//! or string, and the length of each message holding one; no JSON, no reflection, no
//! allocation once `out` has grown. Protobuf allows a message's fields in any order, so the
//! drawn fields follow the constant ones.

use crate::{Method, ProtoError};
use prost::Message;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};
use serde_json::{Map, Value};

/// A request message, encoded once where it is constant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

/// A piece of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Fields encoded once.
    Bytes(Vec<u8>),
    /// An integer field drawn per call from `lo..=hi`.
    Int {
        key: Vec<u8>,
        wire: IntWire,
        lo: u64,
        hi: u64,
    },
    /// A string field with placeholders.
    Str { key: Vec<u8>, parts: Vec<Part> },
    /// A message field holding drawn fields.
    Nested { key: Vec<u8>, pieces: Vec<Piece> },
}

/// How an integer is written on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IntWire {
    /// int32, int64, uint32, uint64.
    Varint,
    /// sint32, sint64 (the draws are never negative: zigzag is twice the value).
    ZigZag,
    Fixed32,
    Fixed64,
}

/// A piece of a string: text, or `{rand:A-B}` (a fresh integer per call, in decimal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Rand { lo: u64, hi: u64 },
}

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

impl Method {
    /// The request message `json` describes (`{}`: every field at its default). A field the
    /// message lacks, a value that does not fit its field (named by its path, `user.age`), or
    /// a placeholder where none can go is an error.
    pub fn template(&self, json: &str) -> Result<Template, ProtoError> {
        let desc = self.desc.input();
        let json = if json.trim().is_empty() { "{}" } else { json };
        let value: Value = serde_json::from_str(json).map_err(|e| ProtoError::Json {
            message: desc.full_name().to_string(),
            why: e.to_string(),
        })?;
        let Value::Object(obj) = value else {
            return Err(ProtoError::Json {
                message: desc.full_name().to_string(),
                why: "expected an object, {\"field\": value, …}".into(),
            });
        };
        Ok(Template {
            pieces: build(&desc, obj, "")?,
        })
    }
}

impl Template {
    /// The whole message when nothing in it is drawn: encoded once, sent as is every call.
    pub fn fixed(&self) -> Option<&[u8]> {
        match self.pieces.as_slice() {
            [] => Some(&[]),
            [Piece::Bytes(b)] => Some(b),
            _ => None,
        }
    }

    /// Appends one call's message to `out`, each placeholder drawn from `next`'s random
    /// 64-bit numbers.
    #[inline]
    pub fn encode(&self, next: &mut impl FnMut() -> u64, out: &mut Vec<u8>) {
        encode(&self.pieces, next, out);
    }
}

fn encode(pieces: &[Piece], next: &mut impl FnMut() -> u64, out: &mut Vec<u8>) {
    for p in pieces {
        match p {
            Piece::Bytes(b) => out.extend_from_slice(b),
            Piece::Int { key, wire, lo, hi } => {
                out.extend_from_slice(key);
                let v = draw(*lo, *hi, next);
                match wire {
                    IntWire::Varint => varint(out, v),
                    IntWire::ZigZag => varint(out, v << 1),
                    IntWire::Fixed32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
                    IntWire::Fixed64 => out.extend_from_slice(&v.to_le_bytes()),
                }
            }
            Piece::Str { key, parts } => {
                out.extend_from_slice(key);
                let at = out.len();
                for part in parts {
                    match part {
                        Part::Text(t) => out.extend_from_slice(t.as_bytes()),
                        Part::Rand { lo, hi } => decimal(out, draw(*lo, *hi, next)),
                    }
                }
                prefix_len(out, at);
            }
            Piece::Nested { key, pieces } => {
                out.extend_from_slice(key);
                let at = out.len();
                encode(pieces, next, out);
                prefix_len(out, at);
            }
        }
    }
}

/// A number in `lo..=hi`.
#[inline]
fn draw(lo: u64, hi: u64, next: &mut impl FnMut() -> u64) -> u64 {
    match (hi - lo).checked_add(1) {
        Some(span) => lo + next() % span,
        None => next(),
    }
}

/// Puts the length of `out[at..]` before it, as a varint.
#[inline]
fn prefix_len(out: &mut Vec<u8>, at: usize) {
    let len = out.len() - at;
    let mut buf = [0u8; 10];
    let (mut v, mut n) = (len as u64, 0);
    while v >= 0x80 {
        buf[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    n += 1;
    out.extend_from_slice(&buf[..n]);
    out.copy_within(at..at + len, at + n);
    out[at..at + n].copy_from_slice(&buf[..n]);
}

#[inline]
fn varint(out: &mut Vec<u8>, v: u64) {
    prost::encoding::encode_varint(v, out);
}

#[inline]
fn decimal(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn key(field: &FieldDescriptor, wire: u32) -> Vec<u8> {
    let mut k = Vec::new();
    varint(&mut k, (u64::from(field.number()) << 3) | u64::from(wire));
    k
}

/// The pieces of message `desc` from its JSON object: the constant fields encoded once, the
/// drawn ones as pieces after them.
fn build(
    desc: &MessageDescriptor,
    obj: Map<String, Value>,
    at: &str,
) -> Result<Vec<Piece>, ProtoError> {
    let mut rest = Map::new();
    let mut drawn = Vec::new();
    for (name, value) in obj {
        let field = field_of(desc, &name, at)?;
        let path = format!("{at}{name}");
        if has_rand(&value) {
            drawn.push(rand_piece(&field, value, &path)?);
        } else {
            check(desc, &field, &name, &value, &path)?;
            rest.insert(name, value);
        }
    }
    let message = DynamicMessage::deserialize(desc.clone(), Value::Object(rest)).map_err(|e| {
        ProtoError::Json {
            message: desc.full_name().to_string(),
            why: clean(&e),
        }
    })?;
    let bytes = message.encode_to_vec();
    let mut pieces = Vec::with_capacity(drawn.len() + 1);
    if !bytes.is_empty() || drawn.is_empty() {
        pieces.push(Piece::Bytes(bytes));
    }
    pieces.extend(drawn);
    Ok(pieces)
}

/// The field `name` (its JSON name or its proto name) of `desc`.
fn field_of(desc: &MessageDescriptor, name: &str, at: &str) -> Result<FieldDescriptor, ProtoError> {
    desc.get_field_by_json_name(name)
        .or_else(|| desc.get_field_by_name(name))
        .ok_or_else(|| ProtoError::UnknownField {
            path: format!("{at}{name}"),
            message: desc.full_name().to_string(),
            fields: desc.fields().map(|f| f.name().to_string()).collect(),
        })
}

/// Checks one constant field's value against its type, going into nested messages so that
/// an error names the innermost field.
fn check(
    desc: &MessageDescriptor,
    field: &FieldDescriptor,
    name: &str,
    value: &Value,
    path: &str,
) -> Result<(), ProtoError> {
    let own = match field.kind() {
        Kind::Message(m) if !m.full_name().starts_with("google.protobuf.") && !field.is_map() => {
            Some(m)
        }
        _ => None,
    };
    match (own, value) {
        (Some(m), Value::Object(obj)) if !field.is_list() => return check_all(&m, obj, path),
        (Some(m), Value::Array(items)) if field.is_list() => {
            for (i, item) in items.iter().enumerate() {
                if let Value::Object(obj) = item {
                    check_all(&m, obj, &format!("{path}[{i}]"))?;
                }
            }
        }
        _ => {}
    }
    let mut one = Map::new();
    one.insert(name.to_string(), value.clone());
    DynamicMessage::deserialize(desc.clone(), Value::Object(one))
        .map(|_| ())
        .map_err(|e| ProtoError::Field {
            path: path.to_string(),
            kind: kind_name(field),
            why: clean(&e),
        })
}

fn check_all(
    m: &MessageDescriptor,
    obj: &Map<String, Value>,
    path: &str,
) -> Result<(), ProtoError> {
    let at = format!("{path}.");
    for (name, value) in obj {
        let field = field_of(m, name, &at)?;
        check(m, &field, name, value, &format!("{at}{name}"))?;
    }
    Ok(())
}

/// A serde error without its position in the JSON we made for the check.
fn clean(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Whether a value holds `{rand:` anywhere.
fn has_rand(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("{rand:"),
        Value::Array(a) => a.iter().any(has_rand),
        Value::Object(o) => o.values().any(has_rand),
        _ => false,
    }
}

/// The piece of a field whose value holds a placeholder.
fn rand_piece(field: &FieldDescriptor, value: Value, path: &str) -> Result<Piece, ProtoError> {
    let bad = |why: String| ProtoError::Field {
        path: path.to_string(),
        kind: kind_name(field),
        why,
    };
    if field.is_list() || field.is_map() {
        return Err(bad(
            "{rand:A-B} goes in a single field, not a repeated or map one".into(),
        ));
    }
    let range = |hi_max: u64| -> Result<(u64, u64), ProtoError> {
        let text = value.as_str().unwrap_or_default();
        match parts(text).map_err(&bad)?.as_slice() {
            [Part::Rand { lo, hi }] if *hi <= hi_max => Ok((*lo, *hi)),
            [Part::Rand { hi, .. }] => Err(bad(format!(
                "{hi} is over the field's largest value, {hi_max}"
            ))),
            _ => Err(bad(format!(
                "an integer field takes a whole \"{{rand:A-B}}\", not `{text}`"
            ))),
        }
    };
    let int = |wire: IntWire, w: u32, hi_max: u64| -> Result<Piece, ProtoError> {
        let (lo, hi) = range(hi_max)?;
        Ok(Piece::Int {
            key: key(field, w),
            wire,
            lo,
            hi,
        })
    };
    let (i32max, u32max, i64max) = (i32::MAX as u64, u32::MAX as u64, i64::MAX as u64);
    match field.kind() {
        Kind::Int32 => int(IntWire::Varint, VARINT, i32max),
        Kind::Int64 => int(IntWire::Varint, VARINT, i64max),
        Kind::Uint32 => int(IntWire::Varint, VARINT, u32max),
        Kind::Uint64 => int(IntWire::Varint, VARINT, u64::MAX),
        Kind::Sint32 => int(IntWire::ZigZag, VARINT, i32max),
        Kind::Sint64 => int(IntWire::ZigZag, VARINT, i64max),
        Kind::Fixed32 => int(IntWire::Fixed32, FIXED32, u32max),
        Kind::Sfixed32 => int(IntWire::Fixed32, FIXED32, i32max),
        Kind::Fixed64 => int(IntWire::Fixed64, FIXED64, u64::MAX),
        Kind::Sfixed64 => int(IntWire::Fixed64, FIXED64, i64max),
        Kind::String => match value {
            Value::String(s) => Ok(Piece::Str {
                key: key(field, LEN),
                parts: parts(&s).map_err(bad)?,
            }),
            _ => Err(bad("expected a string".into())),
        },
        Kind::Message(m) => match value {
            Value::Object(obj) => Ok(Piece::Nested {
                key: key(field, LEN),
                pieces: build(&m, obj, &format!("{path}."))?,
            }),
            _ => Err(bad("expected an object".into())),
        },
        _ => Err(bad(
            "{rand:A-B} goes in integer and string fields (and messages holding them)".into(),
        )),
    }
}

/// Splits a string at its `{rand:A-B}` placeholders.
pub(crate) fn parts(text: &str) -> Result<Vec<Part>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("{rand:") {
        let end = rest[at..].find('}').ok_or("`{rand:` without its `}`")?;
        let spec = &rest[at + 6..at + end];
        let range = spec.split_once('-').and_then(|(a, b)| {
            Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?))
        });
        let (lo, hi) = range
            .ok_or_else(|| format!("`{{rand:{spec}}}`: give {{rand:A-B}}, e.g. {{rand:1-100}}"))?;
        if lo > hi {
            return Err(format!("`{{rand:{spec}}}`: the range is backwards"));
        }
        if at > 0 {
            out.push(Part::Text(rest[..at].to_string()));
        }
        out.push(Part::Rand { lo, hi });
        rest = &rest[at + end + 1..];
    }
    if !rest.is_empty() {
        out.push(Part::Text(rest.to_string()));
    }
    Ok(out)
}

/// A field's type as a .proto spells it: `int32`, `repeated string`, `pkg.User`.
fn kind_name(field: &FieldDescriptor) -> String {
    let base = match field.kind() {
        Kind::Double => "double".to_string(),
        Kind::Float => "float".into(),
        Kind::Int32 => "int32".into(),
        Kind::Int64 => "int64".into(),
        Kind::Uint32 => "uint32".into(),
        Kind::Uint64 => "uint64".into(),
        Kind::Sint32 => "sint32".into(),
        Kind::Sint64 => "sint64".into(),
        Kind::Fixed32 => "fixed32".into(),
        Kind::Fixed64 => "fixed64".into(),
        Kind::Sfixed32 => "sfixed32".into(),
        Kind::Sfixed64 => "sfixed64".into(),
        Kind::Bool => "bool".into(),
        Kind::String => "string".into(),
        Kind::Bytes => "bytes".into(),
        Kind::Message(m) if field.is_map() => return format!("map of {}", m.full_name()),
        Kind::Message(m) => m.full_name().to_string(),
        Kind::Enum(e) => e.full_name().to_string(),
    };
    if field.is_list() {
        format!("repeated {base}")
    } else {
        base
    }
}

#[cfg(test)]
#[path = "template_tests.rs"]
mod tests;
