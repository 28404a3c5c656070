//! The effective partition key (EPK) of a partition key: where the key lies in the container's
//! hash space, as the upper-case hex text the partition key range feed's `minInclusive` /
//! `maxExclusive` bounds use. A range holds a key when `min <= epk < max`, compared as text, with
//! `"FF"` the end of the space.
//!
//! Two hashings, chosen by the container's `partitionKey.version` ([`HashVersion`]):
//! - version 2: MurmurHash3 x64-128 of the components written for hashing (strings end in 0xFF),
//!   rendered as 32 hex digits (one hash per component for a hierarchical key);
//! - version 1, the service's older hash (`Hash` with one path): MurmurHash3 x86-32 of the
//!   components written for hashing (strings cut to 100 characters and ended by 0x00), and the EPK
//!   is the order-preserving binary encoding of that hash, as a number, followed by the encoding
//!   of the cut components (see [`encode_v1`]). Its length varies.

use super::partition_key::{PartitionKey, PartitionKeyValue};

/// The component markers of the hashing encoding.
const MARK_NULL: u8 = 0x01;
const MARK_FALSE: u8 = 0x02;
const MARK_TRUE: u8 = 0x03;
const MARK_NUMBER: u8 = 0x05;
const MARK_STRING: u8 = 0x08;
/// Ends a string in the version-2 encoding.
const STRING_END: u8 = 0xFF;
/// Ends a string in the version-1 hashing.
const STRING_END_V1: u8 = 0x00;
/// Characters of a string component that hash V1 hashes and encodes.
const V1_MAX_STRING_CHARS: usize = 100;
/// UTF-8 bytes of a string the V1 encoding writes in full (a longer one is cut after 101).
const V1_MAX_STRING_BYTES: usize = 100;

/// How a container hashes its partition keys (`partitionKey.version`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HashVersion {
    /// The service's older hash: `"version": 1`, or no version (containers from before V2).
    V1,
    /// The current hash, what containers get by default.
    #[default]
    V2,
}

impl HashVersion {
    /// The hashing a container's `partitionKey.version` names: 1 or absent is V1, 2 is V2;
    /// None for any other value.
    pub fn from_definition(version: Option<u64>) -> Option<Self> {
        match version {
            None | Some(1) => Some(HashVersion::V1),
            Some(2) => Some(HashVersion::V2),
            Some(_) => None,
        }
    }
}

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

/// The effective partition key of `key` in a container of `path_count` paths hashed with
/// `version` (V1 containers have one path: every component is hashed together).
pub fn effective_partition_key_for(
    key: &PartitionKey,
    path_count: usize,
    version: HashVersion,
) -> String {
    match version {
        HashVersion::V2 => effective_partition_key(key, path_count),
        HashVersion::V1 => effective_partition_key_v1(&key.values()),
    }
}

/// A string component as hash V1 hashes and encodes it: its first 100 characters.
fn cut_v1(s: &str) -> &str {
    s.char_indices()
        .nth(V1_MAX_STRING_CHARS)
        .map_or(s, |(end, _)| &s[..end])
}

fn write_for_hashing_v1(value: &PartitionKeyValue, out: &mut Vec<u8>) {
    match value {
        PartitionKeyValue::String(s) => {
            out.push(MARK_STRING);
            out.extend_from_slice(cut_v1(s).as_bytes());
            out.push(STRING_END_V1);
        }
        other => encode_component(other, out),
    }
}

/// MurmurHash3 x86 32-bit of `data` (seed 0).
fn murmur3_32(data: &[u8]) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h: u32 = 0;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        h = (h ^ mix(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let k = tail
            .iter()
            .rev()
            .fold(0u32, |k, b| (k << 8) | u32::from(*b));
        h ^= mix(k);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Writes one component in the binary encoding hash V1 EPKs are made of, which orders as the
/// values do: a number as its marker, the top byte of its order-preserving 64-bit image (sign bit
/// flipped for positives, two's complement negation for negatives), then seven bits a byte, each
/// byte's low bit 1 but the last's; a string as its marker and its UTF-8 bytes each plus one,
/// ended by 0x00, or cut after 101 bytes without an end.
fn encode_v1(value: &PartitionKeyValue, out: &mut Vec<u8>) {
    match value {
        PartitionKeyValue::Number(n) => {
            out.push(MARK_NUMBER);
            let bits = n.to_bits();
            let mut payload = if bits >> 63 == 0 {
                bits ^ (1 << 63)
            } else {
                bits.wrapping_neg()
            };
            out.push((payload >> 56) as u8);
            payload <<= 8;
            let mut last = 0u8;
            let mut first = true;
            while payload != 0 {
                if !first {
                    out.push(last);
                }
                first = false;
                last = ((payload >> 56) as u8) | 0x01;
                payload <<= 7;
            }
            out.push(last & 0xFE);
        }
        PartitionKeyValue::String(s) => {
            out.push(MARK_STRING);
            let bytes = cut_v1(s).as_bytes();
            let whole = bytes.len() <= V1_MAX_STRING_BYTES;
            let written = if whole {
                bytes
            } else {
                &bytes[..=V1_MAX_STRING_BYTES]
            };
            // UTF-8 never holds 0xFF: every byte plus one fits.
            out.extend(written.iter().map(|b| b.wrapping_add(1)));
            if whole {
                out.push(0x00);
            }
        }
        other => encode_component(other, out),
    }
}

/// The hash V1 effective partition key of `values` (`""` for none).
fn effective_partition_key_v1(values: &[PartitionKeyValue]) -> String {
    if values.is_empty() {
        return String::new();
    }
    let mut hashed = Vec::with_capacity(32);
    for v in values {
        write_for_hashing_v1(v, &mut hashed);
    }
    let hash = murmur3_32(&hashed);
    let mut epk = Vec::with_capacity(48);
    encode_v1(&PartitionKeyValue::Number(f64::from(hash)), &mut epk);
    for v in values {
        encode_v1(v, &mut epk);
    }
    epk.iter().map(|b| format!("{b:02X}")).collect()
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
    fn murmur3_32_matches_reference_vectors() {
        let cases: [(&[u8], u32); 4] = [
            (b"", 0),
            (&[0xff, 0xff, 0xff, 0xff], 0x7629_3B50),
            (&[0x21, 0x43, 0x65, 0x87], 0xF55B_516B),
            (&[0x21, 0x43, 0x65], 0x7E4A_8634),
        ];
        for (data, want) in cases {
            assert_eq!(murmur3_32(data), want, "{data:?}");
        }
    }

    /// Hash V1 EPKs computed with the official Python SDK's V1 function (upper-cased), and the
    /// official Java SDK's published V1 vectors where marked.
    #[test]
    fn matches_official_v1_vectors() {
        use PartitionKeyValue::{Bool, Null, Number};
        let s = |text: &str| PartitionKeyValue::from(text);
        let cases: Vec<(PartitionKeyValue, &str)> = vec![
            (s(""), "05C1CF33970FF80800"),
            (s("a"), "05C1D78593652C086200"),
            (s("partitionKey"), "05C1E1B3D9CD2608716273756A756A706F4C667A00"),
            (s("redmond"), "05C1EFE313830C087366656E706F6500"),
            (s("é€😀"), "05C1E1235DC5DA08C4AAE383ADF1A0998100"),
            (s(&"x".repeat(99)), "05C1D58F8947640879797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797900"),
            (s(&"x".repeat(100)), "05C1DD45A3938C087979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797900"),
            // Cut to 100 characters: the EPK of 100 of them.
            (s(&"x".repeat(101)), "05C1DD45A3938C087979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797900"),
            (s(&"ab".repeat(150)), "05C1E92F919B6E086263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626300"),
            // 100 two-byte characters: 200 bytes, of which 101 are written, without an end.
            (s(&"é".repeat(120)), "05C1D9C91DF1D808C4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4AAC4"),
            // Java: 1024 "a"s.
            (s(&"a".repeat(1024)), "05C1EB5921F706086262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626200"),
            (Number(0.0), "05C1BF6DA11560058000"),
            (Number(1.0), "05C1ED172B6B2605BFF0"),
            (Number(5.0), "05C1D9C1C5517C05C014"),
            (Number(127.0), "05C1DD539DDFCC05C05FE0"),
            (Number(2_147_483_648.0), "05C1DB83B57005C1E0"),
            (Number(4_294_967_295.0), "05C1D7039DA9C405C1EFFFFFFFFE"),
            (Number(1.5), "05C1E9694167A805BFF8"),
            (Number(-128.0), "05C1D73349F54C053FA0"),
            (Number(-0.25), "05C1D3B11D516C054030"),
            (Number(1e300), "05C1AB5FCFAF8005FE37F30F918103D738"),
            // Java: Long.MIN_VALUE and Long.MAX_VALUE, as doubles.
            (Number(-9_223_372_036_854_775_808.0), "05C1DB35F33D1C053C20"),
            (Number(9_223_372_036_854_775_807.0), "05C1B799AB2DD005C3E0"),
            (Bool(true), "05C1D7C5A903D803"),
            (Bool(false), "05C1DB857D857C02"),
            // Java (and the service) end a null key with its marker; the Python SDK writes the
            // hash alone ("05C1ED45D74756"), which lies in the same ranges.
            (Null, "05C1ED45D7475601"),
        ];
        for (value, want) in cases {
            let key = PartitionKey::hierarchical([value.clone()]).unwrap();
            assert_eq!(
                effective_partition_key_for(&key, 1, HashVersion::V1),
                want,
                "{value:?}"
            );
        }
    }

    #[test]
    fn the_container_version_names_the_hashing() {
        let table = [
            (None, Some(HashVersion::V1)),
            (Some(1), Some(HashVersion::V1)),
            (Some(2), Some(HashVersion::V2)),
            (Some(3), None),
        ];
        for (version, want) in table {
            assert_eq!(HashVersion::from_definition(version), want, "{version:?}");
        }
        let key = PartitionKey::from("k");
        assert_eq!(
            effective_partition_key_for(&key, 1, HashVersion::V2),
            effective_partition_key(&key, 1)
        );
    }

    #[test]
    fn ranges_hold_their_lower_bound_and_not_their_upper() {
        assert!(epk_in_range("00", "", "80"));
        assert!(epk_in_range("80", "80", "FF"));
        assert!(!epk_in_range("80", "", "80"));
        assert!(epk_in_range("3FFF", "3F", EPK_MAX));
    }
}
