//! The effective partition key (EPK) as a value: one 128-bit hash for a `Hash` key, one hash per
//! component (up to three) for a `MultiHash` key. It orders exactly as its hex text does (32
//! upper-case hex digits per part, parts concatenated), so a shorter key sorts before every longer
//! key it is a prefix of: the partition key range bounds of the pkranges feed compare with it
//! directly.

use std::cmp::Ordering;
use std::fmt;

/// Most parts an EPK has (a `MultiHash` key has at most three paths).
pub const MAX_PARTS: usize = 3;
/// Hex digits per part.
const PART_DIGITS: usize = 32;

/// An effective partition key: up to [`MAX_PARTS`] 128-bit parts.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Epk {
    parts: [u128; MAX_PARTS],
    len: u8,
}

impl Epk {
    /// The smallest EPK (the empty text `""`, the start of the key space).
    pub const MIN: Epk = Epk {
        parts: [0; MAX_PARTS],
        len: 0,
    };

    /// A one-part EPK.
    pub const fn single(value: u128) -> Self {
        Self {
            parts: [value, 0, 0],
            len: 1,
        }
    }

    /// An EPK of the given parts; None when there are more than [`MAX_PARTS`].
    pub fn from_parts(parts: &[u128]) -> Option<Self> {
        if parts.len() > MAX_PARTS {
            return None;
        }
        let mut out = Self::MIN;
        out.parts[..parts.len()].copy_from_slice(parts);
        out.len = parts.len() as u8;
        Some(out)
    }

    /// The parts, most significant first.
    pub fn parts(&self) -> &[u128] {
        &self.parts[..usize::from(self.len)]
    }

    /// The first part (0 for [`Epk::MIN`]).
    pub fn first(&self) -> u128 {
        self.parts[0]
    }

    /// The hex text: 32 upper-case digits per part.
    pub fn hex(&self) -> String {
        self.parts().iter().map(|p| format!("{p:032X}")).collect()
    }

    /// Reads EPK text as the pkranges feed and the `x-ms-start-epk` / `x-ms-end-epk` headers write
    /// it: hex digits in parts of 32, a shorter last part read as if padded with zeros (so `"FF"`,
    /// the end of the key space, and a prefix key's end `<prefix>FF` order after every key they
    /// bound). At most [`MAX_PARTS`] parts.
    pub fn parse_hex(text: &str) -> Result<Self, String> {
        if text.len() > PART_DIGITS * MAX_PARTS {
            return Err(format!(
                "the effective partition key is {} characters long; at most {} are allowed",
                text.len(),
                PART_DIGITS * MAX_PARTS
            ));
        }
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "the effective partition key {text:?} is not hexadecimal"
            ));
        }
        let mut out = Self::MIN;
        for (i, chunk) in text.as_bytes().chunks(PART_DIGITS).enumerate() {
            let digits = std::str::from_utf8(chunk).unwrap_or_default();
            let value = u128::from_str_radix(digits, 16)
                .map_err(|e| format!("the effective partition key {text:?} is not valid: {e}"))?;
            out.parts[i] = value << (4 * (PART_DIGITS - chunk.len()));
            out.len = i as u8 + 1;
        }
        Ok(out)
    }

    /// The end (exclusive) of the keys that start with this one: this key followed by `"FF"`.
    pub fn prefix_end(&self) -> Self {
        let mut out = *self;
        if usize::from(out.len) < MAX_PARTS {
            out.parts[usize::from(out.len)] = 0xFF << 120;
            out.len += 1;
        }
        out
    }
}

impl From<u128> for Epk {
    fn from(value: u128) -> Self {
        Self::single(value)
    }
}

impl Ord for Epk {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts().cmp(other.parts())
    }
}

impl PartialOrd for Epk {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for Epk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Epk({})", self.hex())
    }
}

/// Which keys a read is restricted to: one key (a full partition key) or a half-open EPK range
/// (a prefix of a hierarchical key, or the `x-ms-start-epk` / `x-ms-end-epk` headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpkFilter {
    /// Exactly this key.
    Key(Epk),
    /// Keys in `[min, max)`.
    Range(Epk, Epk),
}

impl EpkFilter {
    /// Whether `epk` passes.
    pub fn contains(&self, epk: Epk) -> bool {
        match self {
            Self::Key(k) => epk == *k,
            Self::Range(min, max) => *min <= epk && epk < *max,
        }
    }

    /// The smallest key that can pass.
    pub fn floor(&self) -> Epk {
        match self {
            Self::Key(k) | Self::Range(k, _) => *k,
        }
    }

    /// Whether `epk` and every larger key are past the filter (a scan in key order can stop).
    pub fn is_past(&self, epk: Epk) -> bool {
        match self {
            Self::Key(k) => epk > *k,
            Self::Range(_, max) => epk >= *max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(hex: &str) -> Epk {
        Epk::parse_hex(hex).unwrap()
    }

    #[test]
    fn keys_order_as_their_hex_text() {
        let a = "0C507ACAC853ECA7977BF4CEFB562A25";
        let b = "2D9349D64712AEB5EB1406E2F0BE2725";
        let texts = [
            String::new(),
            a.to_owned(),
            format!("{a}{b}"),
            format!("{a}{b}{a}"),
            format!("{a}FF"),
            b.to_owned(),
            format!("{b}{a}"),
            "FF".to_owned(),
        ];
        for pair in texts.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
            assert!(key(&pair[0]) < key(&pair[1]), "{pair:?}");
        }
        for t in &texts[..7] {
            if t.len() % 32 == 0 {
                assert_eq!(&key(t).hex(), t);
            }
        }
        assert_eq!(key(a).prefix_end(), key(&format!("{a}FF")));
    }

    #[test]
    fn bad_text_is_refused() {
        for bad in ["xyz", &"A".repeat(97), "12 4"] {
            assert!(Epk::parse_hex(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn filters_bound_a_scan() {
        let a = key("0C507ACAC853ECA7977BF4CEFB562A25");
        let inside = key("0C507ACAC853ECA7977BF4CEFB562A252D9349D64712AEB5EB1406E2F0BE2725");
        let prefix = EpkFilter::Range(a, a.prefix_end());
        assert!(prefix.contains(inside) && !prefix.contains(key("0D")));
        assert!(prefix.is_past(key("0D")) && !prefix.is_past(inside));
        assert_eq!(prefix.floor(), a);
        let exact = EpkFilter::Key(inside);
        assert!(exact.contains(inside) && !exact.contains(a) && exact.is_past(key("0D")));
    }
}
