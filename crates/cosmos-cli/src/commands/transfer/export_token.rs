//! The continuation of an export that reads the container's feed ranges in parallel: for each
//! range not yet finished, the range and the query continuation after its last page written
//! (none: not started). A finished range is left out. Bound to the query by a hash of its text.
//!
//! Text form: `r1.` then the JSON `{"q":HASH,"ranges":[{"r":RANGE,"c":TOKEN|null},...]}` in
//! lower-case hex (a token needs no quoting in a shell).

use serde::{Deserialize, Serialize};

/// What starts a parallel export's token (a token without it is a single query's).
pub const PREFIX: &str = "r1.";
/// The longest token accepted, checked before decoding.
pub const MAX_TOKEN_LEN: usize = 4 << 20;
/// The most ranges one token may list.
pub const MAX_RANGES: usize = 10_000;

/// One feed range's progress.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct RangeProgress {
    /// The feed range, as the driver's `FeedRange::to_token` writes it.
    #[serde(rename = "r")]
    pub range: String,
    /// The query continuation after the range's last page written; `None`: not started.
    #[serde(rename = "c")]
    pub continuation: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Wire {
    q: String,
    ranges: Vec<RangeProgress>,
}

/// The query's hash as the token holds it (FNV-1a, 64 bits, hex): stable across builds.
pub fn query_hash(query: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in query.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Whether `token` is a parallel export's (by its prefix).
pub fn is_ranges_token(token: &str) -> bool {
    token.starts_with(PREFIX)
}

/// The token of the ranges still to read, for `query`.
pub fn encode(query: &str, ranges: &[RangeProgress]) -> String {
    let wire = Wire {
        q: query_hash(query),
        ranges: ranges.to_vec(),
    };
    let json = serde_json::to_vec(&wire).unwrap_or_default();
    let mut text = String::with_capacity(PREFIX.len() + 2 * json.len());
    text.push_str(PREFIX);
    for b in json {
        text.push_str(&format!("{b:02x}"));
    }
    text
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The ranges still to read from `token`, which must have been printed for `query`. The error
/// says what is wrong without repeating the token.
pub fn decode(query: &str, token: &str) -> Result<Vec<RangeProgress>, String> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(format!(
            "the continuation is {} bytes; at most {MAX_TOKEN_LEN}",
            token.len()
        ));
    }
    let body = token
        .strip_prefix(PREFIX)
        .ok_or("not a continuation of a parallel export")?;
    let bytes = unhex(body).ok_or("the continuation is damaged (not hex)")?;
    let wire: Wire =
        serde_json::from_slice(&bytes).map_err(|e| format!("the continuation is damaged ({e})"))?;
    if wire.q != query_hash(query) {
        return Err("the continuation was printed for another --query".into());
    }
    if wire.ranges.len() > MAX_RANGES {
        return Err(format!(
            "the continuation lists {} ranges; at most {MAX_RANGES}",
            wire.ranges.len()
        ));
    }
    Ok(wire.ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(r: &str, c: Option<&str>) -> RangeProgress {
        RangeProgress {
            range: r.into(),
            continuation: c.map(str::to_owned),
        }
    }

    #[test]
    fn a_token_round_trips_for_its_query_only() {
        let ranges = vec![progress("a", None), progress("b", Some("t\"1"))];
        let token = encode("SELECT * FROM c", &ranges);
        assert!(is_ranges_token(&token));
        assert_eq!(decode("SELECT * FROM c", &token).unwrap(), ranges);
        assert!(decode("SELECT * FROM c WHERE c.x", &token)
            .unwrap_err()
            .contains("another --query"));
        // Nothing left: an empty list, still a token.
        assert_eq!(decode("q", &encode("q", &[])).unwrap(), vec![]);
    }

    #[test]
    fn bad_tokens_are_refused_without_being_echoed() {
        let secret = "r1.7365637265742d74657874";
        let long = format!("r1.{}", "A".repeat(MAX_TOKEN_LEN));
        let many = encode("q", &vec![progress("a", None); MAX_RANGES + 1]);
        let cases: [(&str, &str); 7] = [
            ("plain-driver-token", "not a continuation"),
            ("r1.!!", "not hex"),
            ("r1.abc", "not hex"),
            ("r1.é1", "not hex"),
            (secret, "damaged"),
            (&long, "at most"),
            (&many, "ranges; at most"),
        ];
        for (token, want) in cases {
            let e = decode("q", token).unwrap_err();
            assert!(e.contains(want), "{token:.20}: {e}");
            assert!(!e.contains("7365637265"), "{e}");
        }
    }

    #[test]
    fn the_query_hash_is_stable() {
        assert_eq!(query_hash(""), "cbf29ce484222325");
        assert_ne!(query_hash("a"), query_hash("b"));
    }
}
