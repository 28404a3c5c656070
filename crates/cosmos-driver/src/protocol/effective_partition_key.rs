//! The effective partition key (EPK) of a partition key: where the key lies in the container's
//! hash space (hash partitioning version 2), as the upper-case hex text the partition key range
//! feed's `minInclusive` / `maxExclusive` bounds use. A range holds a key when
//! `min <= epk < max`, compared as text, with `"FF"` the end of the space.

use super::partition_key::{PartitionKey, PartitionKeyValue};

/// The component markers of the hashing encoding.
const MARK_NULL: u8 = 0x01;
const MARK_FALSE: u8 = 0x02;
const MARK_TRUE: u8 = 0x03;
const MARK_NUMBER: u8 = 0x05;
const MARK_STRING: u8 = 0x08;
/// Ends a string in the version-2 encoding.
const STRING_END: u8 = 0xFF;

/// The end of the effective partition key space (exclusive), as the range feed writes it.
pub const EPK_MAX: &str = "FF";

fn encode_component(value: &PartitionKeyValue, out: &mut Vec<u8>) {
    match value {
        PartitionKeyValue::Null => out.push(MARK_NULL),
        PartitionKeyValue::Bool(false) => out.push(MARK_FALSE),
        PartitionKeyValue::Bool(true) => out.push(MARK_TRUE),
        PartitionKeyValue::Number(n) => {
            out.push(MARK_NUMBER);
            out.extend_from_slice(&n.to_le_bytes());
        }
        PartitionKeyValue::String(s) => {
            out.push(MARK_STRING);
            out.extend_from_slice(s.as_bytes());
            out.push(STRING_END);
        }
    }
}

/// The 128-bit hash of `bytes` as 32 upper-case hex digits, most significant byte first, with the
/// top two bits cleared (so every key sorts below `"FF"`).
fn hash_hex(bytes: &[u8]) -> String {
    // The crate packs the reference's 16 output bytes (h1 then h2, each little-endian) in native
    // order; reversed they are the number the service renders, most significant byte first.
    let mut be = fastmurmur3::murmur3_x64_128(bytes, 0).to_ne_bytes();
    be.reverse();
    be[0] &= 0x3F;
    be.iter().map(|b| format!("{b:02X}")).collect()
}

/// The effective partition key of `key`: one hash over every component for a single-path key,
/// one hash per component (concatenated) for a hierarchical key of `path_count` paths.
pub fn effective_partition_key(key: &PartitionKey, path_count: usize) -> String {
    let values = key.values();
    if path_count > 1 {
        return values
            .iter()
            .map(|v| {
                let mut buf = Vec::with_capacity(16);
                encode_component(v, &mut buf);
                hash_hex(&buf)
            })
            .collect();
    }
    let mut buf = Vec::with_capacity(32);
    for v in &values {
        encode_component(v, &mut buf);
    }
    hash_hex(&buf)
}

/// Whether `epk` lies in `[min, max)` (bounds as the range feed writes them).
pub fn epk_in_range(epk: &str, min: &str, max: &str) -> bool {
    epk >= min && (max == EPK_MAX || epk < max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoding_marks_each_type() {
        let table: [(PartitionKeyValue, Vec<u8>); 5] = [
            (PartitionKeyValue::Null, vec![0x01]),
            (PartitionKeyValue::Bool(false), vec![0x02]),
            (PartitionKeyValue::Bool(true), vec![0x03]),
            (
                PartitionKeyValue::Number(1.0),
                [vec![0x05], 1.0f64.to_le_bytes().to_vec()].concat(),
            ),
            (PartitionKeyValue::from("ab"), vec![0x08, b'a', b'b', 0xFF]),
        ];
        for (value, bytes) in table {
            let mut out = Vec::new();
            encode_component(&value, &mut out);
            assert_eq!(out, bytes, "{value:?}");
        }
    }

    #[test]
    fn keys_hash_to_32_hex_digits_below_the_end_of_the_space() {
        for key in ["a", "b", "", "a longer partition key value"] {
            let epk = effective_partition_key(&PartitionKey::from(key), 1);
            assert_eq!(epk.len(), 32, "{key}");
            assert!(epk
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase()));
            assert!(epk.as_str() < EPK_MAX);
        }
        let a = effective_partition_key(&PartitionKey::from("a"), 1);
        assert_ne!(a, effective_partition_key(&PartitionKey::from("b"), 1));
        let two = PartitionKey::hierarchical(["a".into(), "b".into()]).unwrap();
        assert_eq!(effective_partition_key(&two, 2).len(), 64);
    }

    /// Published hash-V2 vectors (the official SDKs' partition key hashing tests).
    #[test]
    fn matches_published_v2_vectors() {
        let cases = [
            (
                PartitionKeyValue::from(""),
                "32E9366E637A71B4E710384B2F4970A0",
            ),
            (
                PartitionKeyValue::from("partitionKey"),
                "013AEFCF77FA271571CF665A58C933F1",
            ),
            (
                PartitionKeyValue::from("a".repeat(1024).as_str()),
                "332BDF5512AE49615F32C7D98C2DB86C",
            ),
            (PartitionKeyValue::Null, "378867E4430E67857ACE5C908374FE16"),
            (
                PartitionKeyValue::Bool(true),
                "0E711127C5B5A8E4726AC6DD306A3E59",
            ),
            (
                PartitionKeyValue::Bool(false),
                "2FE1BE91E90A3439635E0E9E37361EF2",
            ),
            (
                PartitionKeyValue::Number(-128.0),
                "01DAEDABF913540367FE219B2AD06148",
            ),
            (
                PartitionKeyValue::Number(127.0),
                "0C507ACAC853ECA7977BF4CEFB562A25",
            ),
        ];
        for (value, expected) in cases {
            let key = PartitionKey::hierarchical([value.clone()]).unwrap();
            assert_eq!(effective_partition_key(&key, 1), expected, "{value:?}");
        }
    }

    #[test]
    fn ranges_hold_their_lower_bound_and_not_their_upper() {
        assert!(epk_in_range("00", "", "80"));
        assert!(epk_in_range("80", "80", "FF"));
        assert!(!epk_in_range("80", "", "80"));
        assert!(epk_in_range("3FFF", "3F", EPK_MAX));
    }
}
