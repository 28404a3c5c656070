//! Where a bulk operation goes: the container's partition key ranges and how its keys hash, and
//! the route of one partition key. Hash-V2 containers, single-path and hierarchical (`MultiHash`,
//! up to three paths), and hash-V1 containers (`Hash`, one path) route a full key by partition
//! key range (its effective partition key falls in one range); any other definition or an
//! incomplete key routes by the partition key itself, which is always correct but packs fewer
//! operations per request.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::Deserialize;

use crate::protocol::{effective_partition_key_for, HashVersion, PartitionKey};
use crate::routing::TargetRange;

/// Where one batch of a bulk run goes.
#[derive(Clone, Debug)]
pub(crate) enum BulkRoute {
    /// The partition key range with this id (`x-ms-documentdb-partitionkeyrangeid`).
    Range(Arc<str>),
    /// The items of one partition key (`x-ms-documentdb-partitionkey`).
    PartitionKey(PartitionKey),
}

impl BulkRoute {
    fn key(&self) -> (u8, &str) {
        match self {
            BulkRoute::Range(id) => (0, id),
            BulkRoute::PartitionKey(pk) => (1, pk.as_json()),
        }
    }
}

impl PartialEq for BulkRoute {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for BulkRoute {}
impl Hash for BulkRoute {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// A container's partition key definition as the service describes it.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub(crate) struct KeyDefinition {
    /// The partition key paths.
    #[serde(default)]
    pub paths: Vec<String>,
    /// `Hash` or `MultiHash`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The hash version (2 for current containers; 1, or absent, for the older hash).
    #[serde(default)]
    pub version: Option<u32>,
}

impl KeyDefinition {
    /// The hashing keys route by, when they route by range: hash V2 with one path (`Hash`) or
    /// one to three (`MultiHash`), hash V1 with one path (`Hash`).
    pub(crate) fn range_hashing(&self) -> Option<HashVersion> {
        let paths = self.paths.len();
        let version = HashVersion::from_definition(self.version.map(u64::from))?;
        let routes = match (self.kind.as_deref(), version) {
            (Some("Hash"), _) => paths == 1,
            (Some("MultiHash"), HashVersion::V2) => (1..=3).contains(&paths),
            _ => false,
        };
        routes.then_some(version)
    }

    /// Whether keys route by their effective partition key (see [`Self::range_hashing`]).
    pub(crate) fn routes_by_range(&self) -> bool {
        self.range_hashing().is_some()
    }
}

/// The routes of a container's partition keys, from one reading of its ranges.
#[derive(Clone, Debug)]
pub(crate) struct RangeMap {
    /// Sorted by lower bound; empty when keys route by partition key.
    ranges: Vec<TargetRange>,
    /// The number of partition key paths (a key routes by range only with all of them).
    paths: usize,
    /// How the container hashes its keys.
    version: HashVersion,
}

impl RangeMap {
    /// The map of a container with `definition` and `ranges` (leaves, any order).
    pub(crate) fn new(definition: &KeyDefinition, mut ranges: Vec<TargetRange>) -> Self {
        let hashing = definition.range_hashing();
        if hashing.is_none() {
            ranges.clear();
        }
        ranges.sort_by(|a, b| a.min.cmp(&b.min));
        RangeMap {
            ranges,
            paths: definition.paths.len(),
            version: hashing.unwrap_or_default(),
        }
    }

    /// Routes every key by the key itself.
    pub(crate) fn by_partition_key() -> Self {
        RangeMap {
            ranges: Vec::new(),
            paths: 0,
            version: HashVersion::V2,
        }
    }

    /// The route of the items of `key`: the range holding its effective partition key, or the
    /// key itself when the map has no range for it.
    pub(crate) fn route(&self, key: &PartitionKey) -> BulkRoute {
        if !self.ranges.is_empty() {
            let complete = key.values().len() == self.paths;
            if let Some(epk) =
                complete.then(|| effective_partition_key_for(key, self.paths, self.version))
            {
                let after = self
                    .ranges
                    .partition_point(|r| r.min.as_str() <= epk.as_str());
                if let Some(range) = after.checked_sub(1).and_then(|i| self.ranges.get(i)) {
                    if epk.as_str() < range.max.as_str() {
                        return BulkRoute::Range(Arc::from(range.id.as_str()));
                    }
                }
            }
        }
        BulkRoute::PartitionKey(key.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(id: &str, min: &str, max: &str) -> TargetRange {
        TargetRange {
            id: id.into(),
            min: min.into(),
            max: max.into(),
        }
    }

    fn v2() -> KeyDefinition {
        KeyDefinition {
            paths: vec!["/pk".into()],
            kind: Some("Hash".into()),
            version: Some(2),
        }
    }

    #[test]
    fn keys_route_to_the_range_holding_their_epk() {
        // "partitionKey" hashes to 013AEF..., "" to 32E936..., null to 378867...
        let ranges = vec![
            range("2", "20000000000000000000000000000000", "FF"),
            range("0", "", "10000000000000000000000000000000"),
            range(
                "1",
                "10000000000000000000000000000000",
                "20000000000000000000000000000000",
            ),
        ];
        let map = RangeMap::new(&v2(), ranges);
        let cases = [
            (
                PartitionKey::from("partitionKey"),
                BulkRoute::Range(Arc::from("0")),
            ),
            (PartitionKey::from(""), BulkRoute::Range(Arc::from("2"))),
            (PartitionKey::null(), BulkRoute::Range(Arc::from("2"))),
        ];
        for (key, expected) in cases {
            assert_eq!(map.route(&key), expected, "{key:?}");
        }
        // A boundary belongs to the range it starts.
        let map = RangeMap::new(
            &v2(),
            vec![
                range("a", "", "013AEFCF77FA271571CF665A58C933F1"),
                range("b", "013AEFCF77FA271571CF665A58C933F1", "FF"),
            ],
        );
        assert_eq!(
            map.route(&PartitionKey::from("partitionKey")),
            BulkRoute::Range(Arc::from("b"))
        );
    }

    #[test]
    fn other_definitions_and_gaps_route_by_partition_key() {
        let ranges = vec![range("0", "", "FF")];
        let key = PartitionKey::from("partitionKey");
        let by_key = BulkRoute::PartitionKey(key.clone());
        let definitions = [
            KeyDefinition {
                version: Some(3),
                ..v2()
            },
            KeyDefinition {
                paths: vec!["/a".into(), "/b".into()],
                kind: Some("MultiHash".into()),
                version: Some(1),
            },
            KeyDefinition {
                paths: vec!["/a".into(), "/b".into(), "/c".into(), "/d".into()],
                kind: Some("MultiHash".into()),
                version: Some(2),
            },
            KeyDefinition {
                paths: vec!["/a".into(), "/b".into()],
                kind: Some("Hash".into()),
                version: Some(2),
            },
        ];
        for d in definitions {
            assert_eq!(
                RangeMap::new(&d, ranges.clone()).route(&key),
                by_key,
                "{d:?}"
            );
        }
        // A map with a gap where the key falls.
        let gap = RangeMap::new(
            &v2(),
            vec![range("1", "20000000000000000000000000000000", "FF")],
        );
        assert_eq!(gap.route(&key), by_key);
        assert_eq!(RangeMap::by_partition_key().route(&key), by_key);
    }

    /// Hash V1 keys route by their V1 EPK ("partitionKey" is 05C1E1B3D9CD26..., "" is
    /// 05C1CF33970FF8..., null 05C1ED45D74756...), also for a definition without a version.
    #[test]
    fn v1_keys_route_to_the_range_holding_their_v1_epk() {
        let ranges = vec![
            range("0", "", "05C1E0"),
            range("1", "05C1E0", "05C1E8"),
            range("2", "05C1E8", "FF"),
        ];
        for version in [Some(1), None] {
            let v1 = KeyDefinition { version, ..v2() };
            let map = RangeMap::new(&v1, ranges.clone());
            let cases = [
                (PartitionKey::from("partitionKey"), "1"),
                (PartitionKey::from(""), "0"),
                (PartitionKey::null(), "2"),
            ];
            for (key, id) in cases {
                assert_eq!(map.route(&key), BulkRoute::Range(Arc::from(id)), "{key:?}");
            }
        }
    }

    #[test]
    fn full_hierarchical_keys_route_by_range_and_prefixes_by_key() {
        let two = KeyDefinition {
            paths: vec!["/a".into(), "/b".into()],
            kind: Some("MultiHash".into()),
            version: Some(2),
        };
        let full = PartitionKey::hierarchical(["t".into(), "u".into()]).unwrap();
        let epk = crate::protocol::effective_partition_key(&full, 2);
        assert_eq!(epk.len(), 64, "two 32-digit hashes");
        let map = RangeMap::new(&two, vec![range("lo", "", &epk), range("hi", &epk, "FF")]);
        assert_eq!(map.route(&full), BulkRoute::Range(Arc::from("hi")));
        let prefix = PartitionKey::from("t");
        assert_eq!(map.route(&prefix), BulkRoute::PartitionKey(prefix.clone()));
    }
}
