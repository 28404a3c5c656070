//! The effective partition key (EPK) of a single-path partition key under hash partitioning
//! version 2: where the key lies in the container's key space, and so which partition key range
//! holds it.
//!
//! The value is written in the service's binary form for hashing (a type marker byte; a number as
//! its IEEE-754 double, little-endian; a string as its UTF-8 bytes and a 0xFF terminator), hashed
//! with MurmurHash3 x64-128 (seed 0); the 16 result bytes (the first 64-bit half, then the second,
//! each little-endian) are reversed, the two top bits cleared, and the result written as 32
//! upper-case hex digits. Range boundaries are written the same way, so a key's range is the one
//! whose `[minInclusive, maxExclusive)` holds its EPK in string order.

use std::fmt::Write as _;

use super::partition_key::{PartitionKey, PartitionKeyValue};

const NULL: u8 = 0x01;
const FALSE: u8 = 0x02;
const TRUE: u8 = 0x03;
const NUMBER: u8 = 0x05;
const STRING: u8 = 0x08;
const STRING_END: u8 = 0xFF;

fn write_for_hashing(value: &PartitionKeyValue, out: &mut Vec<u8>) {
    match value {
        PartitionKeyValue::Null => out.push(NULL),
        PartitionKeyValue::Bool(false) => out.push(FALSE),
        PartitionKeyValue::Bool(true) => out.push(TRUE),
        PartitionKeyValue::Number(n) => {
            out.push(NUMBER);
            out.extend_from_slice(&n.to_le_bytes());
        }
        PartitionKeyValue::String(s) => {
            out.push(STRING);
            out.extend_from_slice(s.as_bytes());
            out.push(STRING_END);
        }
    }
}

/// The 32-hex-digit EPK of `value` under hash version 2.
pub fn effective_partition_key_v2(value: &PartitionKeyValue) -> String {
    let mut buffer = Vec::with_capacity(32);
    write_for_hashing(value, &mut buffer);
    let packed = fastmurmur3::murmur3_x64_128(&buffer, 0).to_ne_bytes();
    // The crate packs the reference's two 64-bit words (h1, h2) in native byte order.
    let mut h1 = [0u8; 8];
    let mut h2 = [0u8; 8];
    h1.copy_from_slice(&packed[..8]);
    h2.copy_from_slice(&packed[8..]);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&u64::from_ne_bytes(h1).to_le_bytes());
    bytes[8..].copy_from_slice(&u64::from_ne_bytes(h2).to_le_bytes());
    bytes.reverse();
    bytes[0] &= 0x3F;
    let mut hex = String::with_capacity(32);
    for b in bytes {
        let _ = write!(hex, "{b:02X}");
    }
    hex
}

/// The EPK of a single-value `key` under hash version 2; `None` for a hierarchical key (its EPK is
/// not one hash).
pub fn single_key_epk_v2(key: &PartitionKey) -> Option<String> {
    match key.values().as_slice() {
        [value] => Some(effective_partition_key_v2(value)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// Published hash-V2 vectors (the official SDKs' partition key hashing tests).
    #[test]
    fn matches_published_v2_vectors() {
        let s = |v: &str| PartitionKeyValue::String(Arc::from(v));
        let cases = [
            (s(""), "32E9366E637A71B4E710384B2F4970A0"),
            (s("partitionKey"), "013AEFCF77FA271571CF665A58C933F1"),
            (
                PartitionKeyValue::String(Arc::from("a".repeat(1024))),
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
            assert_eq!(effective_partition_key_v2(&value), expected, "{value:?}");
        }
    }

    #[test]
    fn only_single_value_keys_have_a_v2_epk() {
        assert_eq!(
            single_key_epk_v2(&PartitionKey::from("partitionKey")).as_deref(),
            Some("013AEFCF77FA271571CF665A58C933F1")
        );
        let h = PartitionKey::hierarchical([
            PartitionKeyValue::String(Arc::from("a")),
            PartitionKeyValue::Number(1.0),
        ])
        .unwrap();
        assert_eq!(single_key_epk_v2(&h), None);
    }
}
