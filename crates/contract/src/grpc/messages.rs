//! The messages of spec/serverbench.proto, derived by hand with prost (the file is short and
//! stable; a build script would need `protoc`). A test compares the field numbers with the file.

/// `serverbench.SumRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SumRequest {
    #[prost(int32, tag = "1")]
    pub a: i32,
    #[prost(int32, tag = "2")]
    pub b: i32,
}

/// `serverbench.SumReply`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SumReply {
    #[prost(int32, tag = "1")]
    pub result: i32,
}

/// `serverbench.Payload`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Payload {
    #[prost(bytes = "vec", tag = "1")]
    pub data: Vec<u8>,
}

/// `serverbench.Count`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Count {
    #[prost(int32, tag = "1")]
    pub n: i32,
    #[prost(int32, tag = "2")]
    pub size: i32,
    #[prost(int32, tag = "3")]
    pub delay_ms: i32,
}

/// `serverbench.Chunk`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Chunk {
    #[prost(int32, tag = "1")]
    pub seq: i32,
    #[prost(bytes = "vec", tag = "2")]
    pub data: Vec<u8>,
}

/// The methods' paths.
pub mod path {
    pub const SUM: &str = "/serverbench.Bench/Sum";
    pub const ECHO: &str = "/serverbench.Bench/Echo";
    pub const SERVER_STREAM: &str = "/serverbench.Bench/ServerStream";
    pub const CLIENT_STREAM: &str = "/serverbench.Bench/ClientStream";
    pub const BIDI_ECHO: &str = "/serverbench.Bench/BidiEcho";
    /// A method the service does not have.
    pub const UNKNOWN: &str = "/serverbench.Bench/Nope";
}

/// Chunk `i` of a `ServerStream(Count{n, size})`: seq `i`, `size` bytes of value `i % 256`.
pub fn chunk(i: i32, size: usize) -> Chunk {
    Chunk {
        seq: i,
        data: vec![(i & 0xff) as u8; size],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// `name = number;` pairs of a message of spec/serverbench.proto.
    fn fields(message: &str) -> Vec<(String, u32)> {
        let proto = include_str!("../../../../spec/serverbench.proto");
        let start = proto.find(&format!("message {message} {{")).unwrap();
        let body = &proto[start..start + proto[start..].find('}').unwrap()];
        body.lines()
            .filter_map(|l| {
                let (left, right) = l.trim().trim_end_matches(';').split_once(" = ")?;
                Some((
                    left.split_whitespace().last()?.to_owned(),
                    right.parse().ok()?,
                ))
            })
            .collect()
    }

    #[test]
    fn the_messages_have_the_field_numbers_of_the_proto_file() {
        let pairs = |v: &[(&str, u32)]| -> Vec<(String, u32)> {
            v.iter().map(|(n, t)| (n.to_string(), *t)).collect()
        };
        assert_eq!(fields("SumRequest"), pairs(&[("a", 1), ("b", 2)]));
        assert_eq!(fields("SumReply"), pairs(&[("result", 1)]));
        assert_eq!(fields("Payload"), pairs(&[("data", 1)]));
        assert_eq!(
            fields("Count"),
            pairs(&[("n", 1), ("size", 2), ("delay_ms", 3)])
        );
        assert_eq!(fields("Chunk"), pairs(&[("seq", 1), ("data", 2)]));
        let proto = include_str!("../../../../spec/serverbench.proto");
        let paths = [
            path::SUM,
            path::ECHO,
            path::SERVER_STREAM,
            path::CLIENT_STREAM,
            path::BIDI_ECHO,
        ];
        for p in paths {
            let method = p.rsplit('/').next().unwrap();
            assert!(proto.contains(&format!("rpc {method} (")), "{method}");
        }
    }

    #[test]
    fn a_sum_request_encodes_as_httparenas_does() {
        let bytes = SumRequest { a: 13, b: 42 }.encode_to_vec();
        assert_eq!(bytes, [0x08, 13, 0x10, 42]);
        assert_eq!(SumReply::decode(&[0x08, 55][..]).unwrap().result, 55);
    }
}
