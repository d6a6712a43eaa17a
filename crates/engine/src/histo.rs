//! Latency histograms on the wire: HdrHistogram's standard V2 compressed encoding (the one of
//! HdrHistogram log files, read by the Java, C, Go, Python and JavaScript ports), in base64.
//!
//! They travel in the JSON result so that results from several threads, processes or machines
//! merge exactly: percentiles are read from the merged histogram, never averaged.

use crate::result::Histograms;
use crate::stats::{new_histogram, Second};
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// A histogram that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("not an HdrHistogram V2 encoding: {0:?}")]
    Decode(hdrhistogram::serialization::DeserializeError),
    #[error("values beyond serverbench's range (1 µs to 60 s): {0:?}")]
    Range(hdrhistogram::AdditionError),
}

/// V2 compressed, base64 (standard alphabet, padded).
pub fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Reads [`encode`]'s output (or any V2 / V2 compressed histogram) into serverbench's bounds.
pub fn decode(text: &str) -> Result<Histogram<u64>, HistogramError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(HistogramError::Decode)?;
    let mut out = new_histogram();
    out.add(&h).map_err(HistogramError::Range)?;
    Ok(out)
}

/// Adds the encoded histogram `text` into `acc`: the exact merge every caller shares (hosts of a
/// distributed run, laps of a cell), never an average of percentiles.
pub fn add_encoded(acc: &mut Histogram<u64>, text: &str) -> Result<(), HistogramError> {
    let decoded = decode(text)?;
    acc.add(&decoded).map_err(HistogramError::Range)
}

/// The exact merge of encoded histograms (an empty histogram for none).
pub fn merge<'a>(
    texts: impl IntoIterator<Item = &'a str>,
) -> Result<Histogram<u64>, HistogramError> {
    let mut acc = new_histogram();
    for text in texts {
        add_encoded(&mut acc, text)?;
    }
    Ok(acc)
}

/// The histograms of a finished run: the request latency (and `-R`'s uncorrected one), each
/// second's buckets, and the connect and TLS handshake latencies when there were any.
pub(crate) fn of_run(
    latency: &Histogram<u64>,
    uncorrected: Option<&Histogram<u64>>,
    seconds: &[Second],
    connect: Option<&Histogram<u64>>,
    handshake: Option<&Histogram<u64>>,
) -> Histograms {
    Histograms {
        latency_us: encode(latency),
        latency_us_uncorrected: uncorrected.map(encode),
        timeline_buckets: seconds.iter().map(|s| s.buckets.clone()).collect(),
        connect_latency_us: connect.map(encode),
        handshake_latency_us: handshake.map(encode),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_survives_the_round_trip_exactly() {
        let mut h = new_histogram();
        for v in [1u64, 17, 250, 250, 9_999, 1_234_567, 59_000_000] {
            h.record(v).unwrap();
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
    }

    #[test]
    fn the_encoding_is_the_standard_compressed_v2_one() {
        let text = encode(&new_histogram());
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&text)
            .unwrap();
        // The cookie Java's HdrHistogram writes (0x1c849304 | word size 8): `HISTF...` in base64.
        assert_eq!(&bytes[..4], &0x1c84_9314u32.to_be_bytes());
        assert!(text.starts_with("HISTF"), "{text}");
    }

    #[test]
    fn merging_encoded_histograms_equals_recording_every_sample_in_one() {
        let (mut a, mut b, mut all) = (new_histogram(), new_histogram(), new_histogram());
        for v in 1..=900u64 {
            a.record(100 + v % 50).unwrap();
            all.record(100 + v % 50).unwrap();
        }
        for v in 1..=100u64 {
            b.record(5_000 + 37 * v).unwrap();
            all.record(5_000 + 37 * v).unwrap();
        }
        let merged = merge([encode(&a).as_str(), encode(&b).as_str()]).unwrap();
        assert_eq!(merged, all);
        assert!(merge(["%%%"]).is_err());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(decode("%%%"), Err(HistogramError::Base64(_))));
        assert!(matches!(decode("AAAA"), Err(HistogramError::Decode(_))));
    }
}
