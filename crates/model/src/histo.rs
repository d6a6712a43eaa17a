//! Latency histograms on the wire: HdrHistogram's standard V2 compressed encoding (the one of
//! HdrHistogram log files, read by the Java, C, Go, Python and JavaScript ports), in base64.
//!
//! They travel in the JSON result so that results from several threads, processes or machines
//! merge exactly: percentiles are read from the merged histogram, never averaged.
//!
//! Also what every crate shares about them: their bounds, the percentiles read from one, and the
//! log-linear buckets of the timeline's seconds.

use crate::result::Latency;
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

/// 1 µs to 60 s, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds")
}

/// Percentiles and moments of a histogram, in microseconds.
pub fn latency_of(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    let q = |x: f64| h.value_at_quantile(x) as f64;
    Latency {
        p50: q(0.5),
        p75: q(0.75),
        p90: q(0.9),
        p99: q(0.99),
        p999: q(0.999),
        p9999: q(0.9999),
        max: h.max() as f64,
        mean: h.mean(),
        stdev: h.stdev(),
    }
}

/// Log-linear buckets (8 per power of two) for the per-second p99: fixed size, no samples kept.
pub const SUB: u32 = 8;
pub const BUCKETS: usize = 8 + 34 * SUB as usize;

/// The middle of latency bucket `b`, in µs. Buckets 0..8 hold 0..8 µs exactly; above, each
/// power of two `[2^e, 2^(e+1))` (e >= 3) is split in 8 equal buckets: bucket
/// `8 + (e - 3) * 8 + k` starts at `(8 + k) << (e - 3)`.
pub fn bucket_mid(b: usize) -> f64 {
    if b < 8 {
        return b as f64;
    }
    let e = (b - 8) as u32 / SUB + 3;
    let sub = (b - 8) as u64 % SUB as u64 + 8;
    let lo = sub << (e - 3);
    lo as f64 + (1u64 << (e - 3)) as f64 / 2.0
}

/// The 99th percentile (a bucket's middle, µs) of sparse `(bucket, count)` pairs; 0 if empty.
pub fn p99_of_buckets(buckets: &[(u16, u32)]) -> f64 {
    let count: u64 = buckets.iter().map(|&(_, c)| c as u64).sum();
    if count == 0 {
        return 0.0;
    }
    let want = (count as f64 * 0.99).ceil() as u64;
    let mut acc = 0u64;
    for &(b, c) in buckets {
        acc += c as u64;
        if acc >= want {
            return bucket_mid(b as usize);
        }
    }
    0.0
}

/// The sum of two sparse bucket lists (both sorted by bucket).
pub fn merge_sparse(a: &[(u16, u32)], b: &[(u16, u32)]) -> Vec<(u16, u32)> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(&(x, c)), Some(&(y, d))) if x == y => {
                out.push((x, c + d));
                i += 1;
                j += 1;
            }
            (Some(&(x, c)), Some(&(y, _))) if x < y => {
                out.push((x, c));
                i += 1;
            }
            (Some(&(x, c)), None) => {
                out.push((x, c));
                i += 1;
            }
            (_, Some(&(y, d))) => {
                out.push((y, d));
                j += 1;
            }
            (None, None) => unreachable!("the loop condition"),
        }
    }
    out
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
