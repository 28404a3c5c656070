//! Session tokens: the service's per-partition-key-range progress markers, parsed and merged.
//!
//! Wire format (`x-ms-session-token`): comma-separated entries `{rangeId}:{token}`, where a token is
//! either simple (`{lsn}`) or a vector (`{version}#{globalLsn}#{regionId}={localLsn}#...`), e.g.
//! `0:-1#12` or `0:1#12#1=10#2=8`.
//!
//! Merging keeps the most advanced view: the global LSN is the maximum of both; the regional LSNs
//! come from the token with the higher version, and when versions are equal they are the union with
//! the per-region maximum. That makes merge commutative, associative and idempotent, so a late
//! response can never move a token backwards, whatever order merges happen in.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::protocol_error::ProtocolError;

/// The most bytes of session token the driver keeps, and sends, for one container (the
/// `x-ms-session-token` header's value): 64 KiB. A service token names each partition key range of
/// the container once, a few dozen bytes each, so this holds well over a thousand ranges; a
/// response header longer than this is refused, and a merged token that would grow past it is
/// first cut to the ranges the container has (when they are known), else refused.
pub const MAX_SESSION_TOKEN_BYTES: usize = 64 * 1024;

/// The session token of one partition key range.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PartitionSessionToken {
    /// `None` for the simple (`{lsn}`) form; the partition's configuration version otherwise.
    version: Option<i64>,
    global_lsn: i64,
    /// (region id, local LSN), sorted by region id, no duplicates.
    regional: Vec<(u32, i64)>,
}

impl PartitionSessionToken {
    /// A simple token carrying only an LSN.
    pub fn simple(lsn: i64) -> Self {
        Self {
            version: None,
            global_lsn: lsn,
            regional: Vec::new(),
        }
    }

    /// A vector token.
    pub fn vector(
        version: i64,
        global_lsn: i64,
        regional: impl IntoIterator<Item = (u32, i64)>,
    ) -> Self {
        let mut out = Self {
            version: Some(version),
            global_lsn,
            regional: Vec::new(),
        };
        for (region, lsn) in regional {
            out.raise_region(region, lsn);
        }
        out
    }

    /// The partition's configuration version (`None` for a simple token).
    pub fn version(&self) -> Option<i64> {
        self.version
    }

    /// The global LSN.
    pub fn global_lsn(&self) -> i64 {
        self.global_lsn
    }

    /// The local LSN per region id, sorted by region id.
    pub fn regional_lsns(&self) -> &[(u32, i64)] {
        &self.regional
    }

    fn raise_region(&mut self, region: u32, lsn: i64) {
        match self.regional.binary_search_by_key(&region, |&(r, _)| r) {
            Ok(i) => self.regional[i].1 = self.regional[i].1.max(lsn),
            Err(i) => self.regional.insert(i, (region, lsn)),
        }
    }

    /// The most advanced view of both tokens.
    pub fn merge(&self, other: &Self) -> Self {
        let mut out = match self.version.cmp(&other.version) {
            Ordering::Greater => self.clone(),
            Ordering::Less => other.clone(),
            Ordering::Equal => {
                let mut out = self.clone();
                for &(r, l) in &other.regional {
                    out.raise_region(r, l);
                }
                out
            }
        };
        out.global_lsn = self.global_lsn.max(other.global_lsn);
        out
    }

    /// Whether this token is at least as advanced as `other` (merging `other` would change nothing).
    pub fn covers(&self, other: &Self) -> bool {
        self.merge(other) == *self
    }

    fn parse(text: &str) -> Result<Self, String> {
        let mut parts = text.split('#');
        let first = parts.next().unwrap_or_default();
        let Some(second) = parts.next() else {
            let lsn = first
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("{first:?} is not an LSN"))?;
            return Ok(Self::simple(lsn));
        };
        let version = first
            .parse::<i64>()
            .map_err(|_| format!("version {first:?} is not a number"))?;
        let global = second
            .parse::<i64>()
            .map_err(|_| format!("global LSN {second:?} is not a number"))?;
        let mut out = Self {
            version: Some(version),
            global_lsn: global,
            regional: Vec::new(),
        };
        for part in parts {
            let (region, lsn) = part
                .split_once('=')
                .ok_or_else(|| format!("regional entry {part:?} is not region=lsn"))?;
            let region = region
                .parse::<u32>()
                .map_err(|_| format!("region id {region:?} is not a number"))?;
            let lsn = lsn
                .parse::<i64>()
                .map_err(|_| format!("regional LSN {lsn:?} is not a number"))?;
            out.raise_region(region, lsn);
        }
        Ok(out)
    }
}

impl fmt::Display for PartitionSessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.version {
            None => write!(f, "{}", self.global_lsn),
            Some(v) => {
                write!(f, "{v}#{}", self.global_lsn)?;
                for (r, l) in &self.regional {
                    write!(f, "#{r}={l}")?;
                }
                Ok(())
            }
        }
    }
}

/// A session token over one or more partition key ranges (the `x-ms-session-token` value).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct SessionToken {
    /// Sorted by range id, no duplicates.
    entries: Vec<(Arc<str>, PartitionSessionToken)>,
}

impl SessionToken {
    /// Parses the header form; fails with a message naming the malformed part.
    pub fn parse(text: &str) -> Result<Self, ProtocolError> {
        let mut out = SessionToken::default();
        let text = text.trim();
        if text.is_empty() {
            return Err(ProtocolError::new("the session token is empty"));
        }
        for entry in text.split(',') {
            let entry = entry.trim();
            let (range, token) = entry.split_once(':').ok_or_else(|| {
                ProtocolError::new(format!(
                    "the session token entry {entry:?} has no partition key range id (expected rangeId:token)"
                ))
            })?;
            if range.is_empty() {
                return Err(ProtocolError::new(format!(
                    "the session token entry {entry:?} has an empty partition key range id"
                )));
            }
            let token = PartitionSessionToken::parse(token).map_err(|why| {
                ProtocolError::new(format!(
                    "the session token entry {entry:?} is malformed: {why}"
                ))
            })?;
            out.merge_partition(range, &token);
        }
        Ok(out)
    }

    /// A token of one range.
    pub fn single(range_id: impl AsRef<str>, token: PartitionSessionToken) -> Self {
        let mut out = SessionToken::default();
        out.merge_partition(range_id.as_ref(), &token);
        out
    }

    /// The token of `range_id`, if present.
    pub fn get(&self, range_id: &str) -> Option<&PartitionSessionToken> {
        self.entries
            .binary_search_by(|(r, _)| (**r).cmp(range_id))
            .ok()
            .map(|i| &self.entries[i].1)
    }

    /// The ranges and their tokens, sorted by range id.
    pub fn partitions(&self) -> impl Iterator<Item = (&str, &PartitionSessionToken)> {
        self.entries.iter().map(|(r, t)| (&**r, t))
    }

    /// Whether the token holds no range.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many ranges the token names.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Keeps only the ranges `keep` accepts; returns whether any was dropped.
    pub fn retain_ranges(&mut self, mut keep: impl FnMut(&str) -> bool) -> bool {
        let before = self.entries.len();
        self.entries.retain(|(r, _)| keep(r));
        self.entries.len() != before
    }

    /// Merges one range's token in; returns whether anything advanced.
    pub fn merge_partition(&mut self, range_id: &str, token: &PartitionSessionToken) -> bool {
        match self.entries.binary_search_by(|(r, _)| (**r).cmp(range_id)) {
            Ok(i) => {
                let merged = self.entries[i].1.merge(token);
                if merged == self.entries[i].1 {
                    false
                } else {
                    self.entries[i].1 = merged;
                    true
                }
            }
            Err(i) => {
                self.entries.insert(i, (Arc::from(range_id), token.clone()));
                true
            }
        }
    }

    /// Merges every range of `other` in; returns whether anything advanced.
    pub fn merge_from(&mut self, other: &SessionToken) -> bool {
        let mut changed = false;
        for (r, t) in &other.entries {
            changed |= self.merge_partition(r, t);
        }
        changed
    }

    /// The most advanced view of both tokens.
    pub fn merge(&self, other: &SessionToken) -> SessionToken {
        let mut out = self.clone();
        out.merge_from(other);
        out
    }
}

impl fmt::Display for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (r, t)) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}:{t}")?;
        }
        Ok(())
    }
}

impl FromStr for SessionToken {
    type Err = ProtocolError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SessionToken::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_simple_and_vector_forms() {
        let t = SessionToken::parse("0:-1#12").unwrap();
        let p = t.get("0").unwrap();
        assert_eq!(
            (p.version(), p.global_lsn(), p.regional_lsns()),
            (Some(-1), 12, &[][..])
        );
        let t = SessionToken::parse("0:1#12#1=10#2=8").unwrap();
        let p = t.get("0").unwrap();
        assert_eq!(p.regional_lsns(), &[(1, 10), (2, 8)]);
        assert_eq!(t.to_string(), "0:1#12#1=10#2=8");
        let t = SessionToken::parse("3:42").unwrap();
        assert_eq!(t.get("3").unwrap(), &PartitionSessionToken::simple(42));
        assert_eq!(t.to_string(), "3:42");
        let t = SessionToken::parse("1:1#5, 0:1#7").unwrap();
        assert_eq!(t.to_string(), "0:1#7,1:1#5");
    }

    #[test]
    fn malformed_tokens_name_the_part() {
        for (text, needle) in [
            ("", "empty"),
            ("12", "no partition key range id"),
            (":1#2", "empty partition key range id"),
            ("0:x#2", "version"),
            ("0:1#y", "global LSN"),
            ("0:1#2#3", "region=lsn"),
            ("0:1#2#a=1", "region id"),
            ("0:1#2#1=b", "regional LSN"),
        ] {
            let err = SessionToken::parse(text).unwrap_err();
            assert!(
                err.message().contains(needle),
                "{text:?}: {}",
                err.message()
            );
        }
    }

    #[test]
    fn merge_takes_the_higher_version_and_max_lsns() {
        let a = PartitionSessionToken::vector(1, 10, [(1, 5), (2, 7)]);
        let b = PartitionSessionToken::vector(1, 12, [(1, 9)]);
        assert_eq!(
            a.merge(&b),
            PartitionSessionToken::vector(1, 12, [(1, 9), (2, 7)])
        );
        let c = PartitionSessionToken::vector(2, 3, [(1, 1)]);
        assert_eq!(a.merge(&c), PartitionSessionToken::vector(2, 10, [(1, 1)]));
        let s = PartitionSessionToken::simple(50);
        assert_eq!(
            s.merge(&a),
            PartitionSessionToken::vector(1, 50, [(1, 5), (2, 7)])
        );
    }

    #[test]
    fn ranges_can_be_dropped() {
        let mut t = SessionToken::parse("0:1#5,1:1#6,2:1#7").unwrap();
        assert_eq!(t.len(), 3);
        assert!(!t.retain_ranges(|_| true));
        assert!(t.retain_ranges(|r| r != "1"));
        assert_eq!(t.to_string(), "0:1#5,2:1#7");
        assert!(t.retain_ranges(|_| false));
        assert!(t.is_empty());
    }

    #[test]
    fn merge_never_regresses() {
        let mut held = SessionToken::parse("0:1#20#1=20").unwrap();
        let late = SessionToken::parse("0:1#10#1=10,1:1#3").unwrap();
        held.merge_from(&late);
        assert_eq!(held.to_string(), "0:1#20#1=20,1:1#3");
    }

    fn partition() -> impl Strategy<Value = PartitionSessionToken> {
        prop_oneof![
            (0i64..50).prop_map(PartitionSessionToken::simple),
            (
                -1i64..3,
                0i64..50,
                proptest::collection::vec((0u32..4, 0i64..50), 0..4)
            )
                .prop_map(|(v, g, r)| PartitionSessionToken::vector(v, g, r)),
        ]
    }

    fn token() -> impl Strategy<Value = SessionToken> {
        proptest::collection::vec((0u8..4, partition()), 1..4).prop_map(|entries| {
            let mut t = SessionToken::default();
            for (r, p) in entries {
                t.merge_partition(&r.to_string(), &p);
            }
            t
        })
    }

    proptest! {
        #[test]
        fn merge_is_commutative(a in token(), b in token()) {
            prop_assert_eq!(a.merge(&b), b.merge(&a));
        }

        #[test]
        fn merge_is_associative(a in token(), b in token(), c in token()) {
            prop_assert_eq!(a.merge(&b).merge(&c), a.merge(&b.merge(&c)));
        }

        #[test]
        fn merge_is_idempotent(a in token(), b in token()) {
            prop_assert_eq!(a.merge(&a), a.clone());
            let ab = a.merge(&b);
            prop_assert_eq!(ab.merge(&b), ab.clone());
        }

        #[test]
        fn merge_covers_both_inputs(a in token(), b in token()) {
            let m = a.merge(&b);
            for (r, t) in a.partitions().chain(b.partitions()) {
                let held = m.get(r).unwrap();
                prop_assert!(held.covers(t));
                prop_assert!(held.global_lsn() >= t.global_lsn());
            }
        }

        #[test]
        fn display_round_trips(a in token()) {
            prop_assert_eq!(SessionToken::parse(&a.to_string()).unwrap(), a);
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,40}") {
            let _ = SessionToken::parse(&s);
        }
    }
}
