//! What the driver knows of each container's metadata, read once and kept: the partition key paths
//! and hash version (PATCH's pre-flight and hierarchical keys need the paths; read many hashes
//! keys into ranges with the version) and the partition key ranges (queries and bulk fan out over
//! them). A container deleted or found recreated is forgotten (a new one of the
//! same name may be keyed differently); its ranges are also forgotten when a request finds one gone
//! (410/1002, 410/1007: a split or merge).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::protocol::HashVersion;

/// A container's partition key paths and hash version, as its definition gives them.
type KeyDefinition = (Arc<[String]>, HashVersion);

/// Container metadata per container link, shared by every operation of one driver.
#[derive(Debug, Default)]
pub(crate) struct ContainerMetadata {
    partition_key_paths: RwLock<HashMap<Arc<str>, KeyDefinition>>,
    partition_key_ranges: RwLock<HashMap<Arc<str>, Arc<[TargetRange]>>>,
    /// Per container, the parents of each range born of a split or merge (oldest first), as the
    /// last listing gave them.
    range_parents: RwLock<HashMap<Arc<str>, Arc<RangeParents>>>,
}

/// The parents of each range that has some, by range id.
pub(crate) type RangeParents = HashMap<Arc<str>, Arc<[Arc<str>]>>;

/// A partition key range an operation is sent to: its id (`x-ms-documentdb-partitionkeyrangeid`;
/// empty for a query scoped by partition key) and its effective partition key bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetRange {
    /// The range id.
    pub id: String,
    /// The inclusive lower bound.
    pub min: String,
    /// The exclusive upper bound.
    pub max: String,
}

/// The property names of a partition key path, outermost first. Partition key paths are not
/// escaped like JSON Pointers: they are `/`-separated property names, where a name holding special
/// characters is written in double quotes (`/"tenant/id"`, with `\"` and `\\` escapes inside);
/// `~` is literal. The one reader of partition key paths: PATCH's pre-flight and read many use it.
pub(crate) fn partition_key_path_segments(path: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = path.chars().peekable();
    while chars.next_if_eq(&'/').is_some() {
        let mut token = String::new();
        if chars.next_if_eq(&'"').is_some() {
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => token.extend(chars.next()),
                    c => token.push(c),
                }
            }
            // Anything between the closing quote and the next '/' is kept as written.
            while let Some(c) = chars.next_if(|c| *c != '/') {
                token.push(c);
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != '/') {
                token.push(c);
            }
        }
        tokens.push(token);
    }
    tokens
}

impl ContainerMetadata {
    /// The known partition key paths and hash version of the container at `link`.
    pub(crate) fn partition_key_definition(
        &self,
        link: &str,
    ) -> Option<(Arc<[String]>, HashVersion)> {
        self.partition_key_paths.read().ok()?.get(link).cloned()
    }

    /// Remembers the partition key paths and hash version of the container at `link`.
    pub(crate) fn remember_partition_key_definition(
        &self,
        link: Arc<str>,
        paths: Arc<[String]>,
        version: HashVersion,
    ) {
        if let Ok(mut map) = self.partition_key_paths.write() {
            map.insert(link, (paths, version));
        }
    }

    /// The partition key ranges last read for the container at `link` (its leaves, by lower bound).
    pub(crate) fn partition_key_ranges(&self, link: &str) -> Option<Arc<[TargetRange]>> {
        self.partition_key_ranges.read().ok()?.get(link).cloned()
    }

    /// Remembers the partition key ranges of the container at `link`.
    pub(crate) fn remember_partition_key_ranges(&self, link: &str, ranges: Arc<[TargetRange]>) {
        if let Ok(mut map) = self.partition_key_ranges.write() {
            map.insert(Arc::from(link), ranges);
        }
    }

    /// Forgets the partition key ranges of the container at `link` (one was found gone).
    pub(crate) fn forget_partition_key_ranges(&self, link: &str) {
        if let Ok(mut map) = self.partition_key_ranges.write() {
            map.remove(link);
        }
    }

    /// Remembers the parents of the ranges of the container at `link`, from a listing.
    pub(crate) fn remember_range_parents(&self, link: &str, parents: RangeParents) {
        if let Ok(mut map) = self.range_parents.write() {
            map.insert(Arc::from(link), Arc::new(parents));
        }
    }

    /// The parents of `range` of the container at `link`, oldest first, when a listing named any.
    pub(crate) fn range_parents(&self, link: &str, range: &str) -> Option<Arc<[Arc<str>]>> {
        self.range_parents
            .read()
            .ok()?
            .get(link)?
            .get(range)
            .cloned()
    }

    /// The range of the container at `link` that holds effective partition key `epk`, from the
    /// ranges last read (which are in key order), when they are known.
    pub(crate) fn range_holding(&self, link: &str, epk: &str) -> Option<String> {
        let ranges = self.partition_key_ranges(link)?;
        let i =
            ranges.partition_point(|r| r.max != crate::protocol::EPK_MAX && r.max.as_str() <= epk);
        let range = ranges.get(i)?;
        crate::protocol::epk_in_range(epk, &range.min, &range.max).then(|| range.id.clone())
    }

    /// Forgets everything known of the container at `link` (it was deleted or recreated).
    pub(crate) fn forget(&self, link: &str) {
        if let Ok(mut map) = self.partition_key_paths.write() {
            map.remove(link);
        }
        if let Ok(mut map) = self.range_parents.write() {
            map.remove(link);
        }
        self.forget_partition_key_ranges(link);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_key_paths_split_into_names() {
        let cases: &[(&str, &[&str])] = &[
            ("/pk", &["pk"]),
            ("/a/b/c", &["a", "b", "c"]),
            ("/\"a/b\"", &["a/b"]),
            ("/\"q\\\"x\"/y", &["q\"x", "y"]),
            ("/m~n", &["m~n"]),
            ("/\"a\"b/c", &["ab", "c"]),
            ("", &[]),
        ];
        for (path, names) in cases {
            assert_eq!(partition_key_path_segments(path), *names, "{path}");
        }
    }

    #[test]
    fn remembers_and_forgets_partition_key_paths() {
        let cache = ContainerMetadata::default();
        assert!(cache.partition_key_definition("dbs/d/colls/c").is_none());
        cache.remember_partition_key_definition(
            Arc::from("dbs/d/colls/c"),
            Arc::from(vec!["/pk".to_owned()]),
            HashVersion::V1,
        );
        let (paths, version) = cache.partition_key_definition("dbs/d/colls/c").unwrap();
        assert_eq!(&paths[..], &["/pk".to_owned()][..]);
        assert_eq!(version, HashVersion::V1);
        assert!(cache
            .partition_key_definition("dbs/d/colls/other")
            .is_none());
        cache.forget("dbs/d/colls/c");
        assert!(cache.partition_key_definition("dbs/d/colls/c").is_none());
    }

    #[test]
    fn remembers_ranges_until_one_is_gone_or_the_container_is() {
        let cache = ContainerMetadata::default();
        let c = "dbs/d/colls/c";
        let ranges: Arc<[TargetRange]> = Arc::from(vec![TargetRange {
            id: "0".into(),
            min: String::new(),
            max: "FF".into(),
        }]);
        assert!(cache.partition_key_ranges(c).is_none());
        cache.remember_partition_key_ranges(c, ranges.clone());
        assert_eq!(cache.partition_key_ranges(c), Some(ranges.clone()));
        cache.forget_partition_key_ranges(c);
        assert!(cache.partition_key_ranges(c).is_none());
        cache.remember_partition_key_ranges(c, ranges);
        cache.forget(c);
        assert!(cache.partition_key_ranges(c).is_none());
    }
}
