//! Hash partitioning version 1, the service's older hash (containers created with
//! `"partitionKey": {"kind": "Hash", "version": 1}`).
//!
//! The V1 effective partition key is a byte string: the key's components are written for hashing
//! (a type marker; numbers as the little-endian IEEE-754 double; strings, cut to their first 100
//! characters, as UTF-8 followed by 0x00), MurmurHash3 x86-32 (seed 0) hashes that buffer, and the
//! EPK is the binary encoding of the hash (as a number) followed by the binary encoding of each cut
//! component. The binary encoding orders as the values do: numbers as a marker, the first byte of
//! an order-preserving 64-bit image of the double, then 7 bits a byte with a low continuation bit;
//! strings as a marker and their UTF-8 bytes each plus one, ended by 0x00 (or cut after 101 bytes).
//!
//! Inside the emulator a V1 key is an [`Epk`] of one 126-bit part that orders by the hash first:
//! the hash in the top 32 bits, and in the 94 below a hash of the encoded components (which keeps
//! two keys of one hash apart). Range boundaries are whole hash values (the low 94 bits zero), so
//! they convert both ways exactly: boundary `h` is the V1 EPK of the hash `h` alone.

use super::key::Epk;
use super::murmur::murmur3_x64_128;
use super::partition_key::{PartitionKeyValue, PkComponent};

const MARKER_UNDEFINED: u8 = 0x00;
const MARKER_NULL: u8 = 0x01;
const MARKER_FALSE: u8 = 0x02;
const MARKER_TRUE: u8 = 0x03;
const MARKER_NUMBER: u8 = 0x05;
const MARKER_STRING: u8 = 0x08;

/// Characters of a string component that are hashed and encoded.
const MAX_STRING_CHARS: usize = 100;
/// UTF-8 bytes of a string written in full before the encoding cuts it (it then writes one more).
const MAX_STRING_BYTES: usize = 100;
/// Bits below the hash in the emulator's image of a V1 key.
const LOW_BITS: u32 = 94;

/// MurmurHash3 x86 32-bit of `data` with `seed`.
pub(super) fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        h = (h ^ mix(k))
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let k = tail
            .iter()
            .enumerate()
            .fold(0u32, |k, (i, b)| k | (u32::from(*b) << (8 * i)));
        h ^= mix(k);
    }
    // The length is taken modulo 2^32, as the reference does.
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// A string component as V1 hashes and encodes it: its first 100 characters.
fn cut(s: &str) -> &str {
    match s.char_indices().nth(MAX_STRING_CHARS) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

fn write_for_hashing(component: &PkComponent, out: &mut Vec<u8>) {
    match component {
        PkComponent::Undefined => out.push(MARKER_UNDEFINED),
        PkComponent::Null => out.push(MARKER_NULL),
        PkComponent::Bool(false) => out.push(MARKER_FALSE),
        PkComponent::Bool(true) => out.push(MARKER_TRUE),
        PkComponent::Number(n) => {
            out.push(MARKER_NUMBER);
            out.extend_from_slice(&n.to_le_bytes());
        }
        PkComponent::String(s) => {
            out.push(MARKER_STRING);
            out.extend_from_slice(cut(s).as_bytes());
            out.push(0x00);
        }
    }
}

/// The order-preserving 64-bit image of a double: positives with the sign bit set, negatives
/// negated (two's complement), so the images order as the numbers do.
fn ordered_bits(n: f64) -> u64 {
    let bits = n.to_bits();
    if bits < 1 << 63 {
        bits ^ (1 << 63)
    } else {
        bits.wrapping_neg()
    }
}

fn encode_number(n: f64, out: &mut Vec<u8>) {
    out.push(MARKER_NUMBER);
    let mut payload = ordered_bits(n);
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

fn encode_component(component: &PkComponent, out: &mut Vec<u8>) {
    match component {
        PkComponent::Undefined => out.push(MARKER_UNDEFINED),
        PkComponent::Null => out.push(MARKER_NULL),
        PkComponent::Bool(false) => out.push(MARKER_FALSE),
        PkComponent::Bool(true) => out.push(MARKER_TRUE),
        PkComponent::Number(n) => encode_number(*n, out),
        PkComponent::String(s) => {
            out.push(MARKER_STRING);
            let bytes = cut(s).as_bytes();
            let short = bytes.len() <= MAX_STRING_BYTES;
            let written = if short {
                bytes
            } else {
                &bytes[..=MAX_STRING_BYTES]
            };
            // UTF-8 never holds 0xFF, so every byte plus one fits.
            out.extend(written.iter().map(|b| b.wrapping_add(1)));
            if short {
                out.push(0x00);
            }
        }
    }
}

/// The V1 hash of a key's components.
fn hash_of(key: &PartitionKeyValue) -> u32 {
    let mut buffer = Vec::with_capacity(32);
    for component in &key.0 {
        write_for_hashing(component, &mut buffer);
    }
    murmur3_32(&buffer, 0)
}

/// The encoded components of a key (its V1 EPK after the hash).
fn encoded_components(key: &PartitionKeyValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    for component in &key.0 {
        encode_component(component, &mut out);
    }
    out
}

/// The V1 effective partition key of `key` as the service renders it (upper-case hex); the
/// "none" key (no components) is `""`, the start of the key space.
pub(super) fn epk_text(key: &PartitionKeyValue) -> String {
    if key.0.is_empty() {
        return String::new();
    }
    let mut bytes = Vec::with_capacity(48);
    encode_number(f64::from(hash_of(key)), &mut bytes);
    bytes.extend(encoded_components(key));
    hex(&bytes)
}

/// The emulator's image of `key`'s V1 EPK (see the module notes).
pub(super) fn epk(key: &PartitionKeyValue) -> Epk {
    if key.0.is_empty() {
        return Epk::single(0);
    }
    image(hash_of(key), &encoded_components(key))
}

fn image(hash: u32, rest: &[u8]) -> Epk {
    let low = if rest.is_empty() {
        0
    } else {
        let (h1, h2) = murmur3_x64_128(rest, 0);
        ((u128::from(h2) << 64) | u128::from(h1)) & ((1u128 << LOW_BITS) - 1)
    };
    Epk::single((u128::from(hash) << LOW_BITS) | low)
}

/// The hash value of a boundary in the emulator's image, or None when `epk` is not on a whole
/// hash value (a key's image, or the end of the space).
fn whole_hash(epk: Epk) -> Option<u32> {
    let value = epk.first();
    let aligned = epk.parts().len() == 1 && value & ((1u128 << LOW_BITS) - 1) == 0;
    aligned
        .then(|| u32::try_from(value >> LOW_BITS).ok())
        .flatten()
}

/// The V1 text of a range boundary (a whole hash value); None for anything else.
pub(super) fn boundary_text(epk: Epk) -> Option<String> {
    if epk == Epk::MIN {
        return Some(String::new());
    }
    let hash = whole_hash(epk)?;
    let mut bytes = Vec::with_capacity(10);
    encode_number(f64::from(hash), &mut bytes);
    Some(hex(&bytes))
}

/// The largest whole hash value at or below `epk` (where a V1 range may be cut).
pub(super) fn floor_to_hash(epk: Epk) -> Epk {
    let hash = (epk.first() >> LOW_BITS).min(u128::from(u32::MAX));
    Epk::single(hash << LOW_BITS)
}

/// The longest V1 EPK text read (a hash, a marker and 101 string bytes fit well within it).
const MAX_TEXT: usize = 512;

fn bytes_of(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2)
        || text.len() > MAX_TEXT
        || !text.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// The hash encoded at the start of `bytes` and the bytes after it.
fn hash_and_rest(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let (&MARKER_NUMBER, rest) = bytes.split_first()? else {
        return None;
    };
    let (number, rest) = decode_number(rest)?;
    let whole = (0.0..=f64::from(u32::MAX)).contains(&number) && number.fract() == 0.0;
    whole.then_some((number as u32, rest))
}

/// Reads a V1 EPK a client sends (`x-ms-start-epk`, a feed range bound): `""` is the start of the
/// space; the encoded hash alone is the start of that hash's keys; the encoded hash and a key's
/// encoded components is that key; the encoded hash with its last byte one higher (what SDKs
/// make of a range that includes the hash's keys, as text order has it) is the start of the next
/// hash. `"FF"` (the end of the space) is for the caller to handle. Anything else answers why.
pub(super) fn parse(text: &str) -> Result<Epk, String> {
    if text.is_empty() {
        return Ok(Epk::MIN);
    }
    let bytes = bytes_of(text).ok_or_else(|| {
        format!(
            "the effective partition key {text:?} is not hex digits in pairs (at most {MAX_TEXT})"
        )
    })?;
    if let Some((hash, rest)) = hash_and_rest(&bytes) {
        return Ok(image(hash, rest));
    }
    let mut below = bytes;
    if let Some(last) = below.last_mut().filter(|b| **b > 0) {
        *last -= 1;
        if let Some((hash, [])) = hash_and_rest(&below) {
            return Ok(Epk::single((u128::from(hash) + 1) << LOW_BITS));
        }
    }
    Err(format!(
        "the effective partition key {text:?} is not a hash V1 key of this container (an encoded 32-bit hash, optionally followed by an encoded key)"
    ))
}

/// Reads a V1 EPK range `[min, max)` a client sends. A `max` that is `min` with its last byte one
/// higher is the range of the one key `min` (how SDKs write a point range; nothing lies between
/// a key's EPK and that text), whatever order the emulator gives the keys of one hash.
pub(super) fn parse_range(min: &str, max: &str) -> Result<(Epk, Epk), String> {
    let start = parse(min)?;
    if let (Some(a), Some(b)) = (bytes_of(min), bytes_of(max)) {
        let successor = a.len() == b.len()
            && a.split_last()
                .zip(b.split_last())
                .is_some_and(|((x, p), (y, q))| p == q && x.checked_add(1) == Some(*y));
        let key = hash_and_rest(&a).is_some_and(|(_, rest)| !rest.is_empty());
        if successor && key {
            return Ok((start, Epk::single(start.first() + 1)));
        }
    }
    Ok((start, parse(max)?))
}

/// Decodes an encoded number's payload (after its marker); returns it and the bytes after it.
fn decode_number(bytes: &[u8]) -> Option<(f64, &[u8])> {
    let (&first, mut rest) = bytes.split_first()?;
    let mut payload = u64::from(first) << 56;
    let mut shift: u32 = 56;
    // Seven bits a byte fill bits 55..0: at most eight bytes, the last with its low bit clear.
    loop {
        if shift == 0 {
            return None;
        }
        let (&byte, after) = rest.split_first()?;
        rest = after;
        shift -= 7;
        payload |= u64::from(byte >> 1) << shift;
        if byte & 0x01 == 0 {
            break;
        }
    }
    let bits = if payload >= 1 << 63 {
        payload ^ (1 << 63)
    } else {
        payload.wrapping_neg()
    };
    Some((f64::from_bits(bits), rest))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_32_matches_the_reference_vectors() {
        let cases: [(&[u8], u32, u32); 6] = [
            (b"", 0, 0),
            (b"", 1, 0x514E_28B7),
            (b"", 0xffff_ffff, 0x81F1_6F39),
            (&[0xff, 0xff, 0xff, 0xff], 0, 0x7629_3B50),
            (b"Hello, world!", 1234, 0xFAF6_CDB3),
            (
                b"The quick brown fox jumps over the lazy dog",
                0x9747_b28c,
                0x2FA8_26CD,
            ),
        ];
        for (data, seed, want) in cases {
            assert_eq!(murmur3_32(data, seed), want, "{data:?} {seed}");
        }
    }

    fn key(component: PkComponent) -> PartitionKeyValue {
        PartitionKeyValue(vec![component])
    }

    /// V1 EPKs computed by the official Python SDK's hash V1 function (upper-cased), and, where
    /// marked, the official Java SDK's published V1 vectors.
    #[test]
    fn matches_the_official_sdks_v1_vectors() {
        use PkComponent::{Bool, Null, Number, String as Str, Undefined};
        let s = |text: &str| Str(text.to_owned());
        let cases: Vec<(PkComponent, &str)> = vec![
            (s(""), "05C1CF33970FF80800"),
            (s("a"), "05C1D78593652C086200"),
            (s("partitionKey"), "05C1E1B3D9CD2608716273756A756A706F4C667A00"),
            (s("redmond"), "05C1EFE313830C087366656E706F6500"),
            (s("é€😀"), "05C1E1235DC5DA08C4AAE383ADF1A0998100"),
            (s(&"x".repeat(99)), "05C1D58F8947640879797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797900"),
            (s(&"x".repeat(100)), "05C1DD45A3938C087979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797900"),
            // Cut to 100 characters: the same EPK as 100 of them.
            (s(&"x".repeat(101)), "05C1DD45A3938C087979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797979797900"),
            (s(&"ab".repeat(150)), "05C1E92F919B6E086263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626362636263626300"),
            // 100 two-byte characters: 200 UTF-8 bytes, of which the encoding writes 101, unended.
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
            // Java (and the service) end a null key with its marker 01; the Python SDK writes the
            // hash alone ("05C1ED45D74756"), which lies in the same range.
            (Null, "05C1ED45D7475601"),
            (Undefined, "05C1D529E345DC00"),
        ];
        for (component, want) in cases {
            let key = key(component);
            assert_eq!(epk_text(&key), want, "{key:?}");
            assert_eq!(parse(want).unwrap(), epk(&key), "{key:?}");
        }
        assert_eq!(epk_text(&PartitionKeyValue(Vec::new())), "");
    }

    #[test]
    fn numbers_encode_in_order_and_decode_back() {
        let values = [
            -1e300,
            -2.5,
            -1.0,
            0.0,
            1.0,
            2.0,
            3.5,
            4_294_967_295.0,
            1e300,
        ];
        let encoded: Vec<Vec<u8>> = values
            .iter()
            .map(|v| {
                let mut out = Vec::new();
                encode_number(*v, &mut out);
                out
            })
            .collect();
        for pair in encoded.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
        for (v, bytes) in values.iter().zip(&encoded) {
            let (back, rest) = decode_number(&bytes[1..]).unwrap();
            assert_eq!(back, *v);
            assert!(rest.is_empty());
        }
    }

    #[test]
    fn boundaries_convert_both_ways_and_keys_parse_to_their_image() {
        for hash in [0u32, 1, 1 << 31, 0x4000_0000, u32::MAX] {
            let epk = Epk::single(u128::from(hash) << LOW_BITS);
            let text = boundary_text(epk).unwrap();
            assert_eq!(parse(&text).unwrap(), epk, "{text}");
        }
        assert_eq!(boundary_text(Epk::MIN).as_deref(), Some(""));
        let key = PartitionKeyValue(vec![PkComponent::String("k".into())]);
        assert_eq!(parse(&epk_text(&key)).unwrap(), epk(&key));
        assert!(boundary_text(epk(&key)).is_none());
        for bad in ["0", "zz", "08", "05", "05C1", "01FF", "05BF", "05BFE0"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn point_ranges_and_hash_ranges_read_as_text_order_has_them() {
        let key = PartitionKeyValue(vec![PkComponent::String("k".into())]);
        let text = epk_text(&key);
        // The point range SDKs send for a key: its EPK, and its EPK with the last byte plus one.
        let mut bytes = bytes_of(&text).unwrap();
        *bytes.last_mut().unwrap() += 1;
        let after = hex(&bytes);
        let (lo, hi) = parse_range(&text, &after).unwrap();
        assert_eq!(lo, epk(&key));
        assert_eq!(hi.first(), lo.first() + 1);
        // A hash alone, and the same with its last byte plus one: every key of that hash.
        let hash = floor_to_hash(epk(&key));
        let start = boundary_text(hash).unwrap();
        let mut next = bytes_of(&start).unwrap();
        *next.last_mut().unwrap() += 1;
        let (lo, hi) = parse_range(&start, &hex(&next)).unwrap();
        assert_eq!(lo, hash);
        assert_eq!(hi.first(), hash.first() + (1u128 << LOW_BITS));
        assert!(lo <= epk(&key) && epk(&key) < hi);
    }

    #[test]
    fn a_key_lies_between_its_hash_and_the_next() {
        for s in ["a", "b", "partitionKey", ""] {
            let key = PartitionKeyValue(vec![PkComponent::String(s.into())]);
            let image = epk(&key);
            let floor = floor_to_hash(image);
            assert!(floor <= image && image.first() < floor.first() + (1u128 << LOW_BITS));
            assert!(epk_text(&key).starts_with(&boundary_text(floor).unwrap()));
        }
    }
}
