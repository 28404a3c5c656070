//! Splitting a partition key range in two: the container is rebuilt with the parent's range
//! replaced by two children (halves of its key space, new ids, the parent named in `parents`),
//! each child holding its half of the parent's items and the parent's replication log. The old
//! container's partitions are emptied and retired, so a request still holding it answers 410.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::RwLock;

use super::container::{pkranges_feed, Container};
use super::partition::Partition;
use crate::epk::{Epk, PkDefinition};
use crate::protocol::ids::encode_rid;
use crate::protocol::ApiError;

/// Where range `index` of `boundaries` is cut in two: the middle of its key space (by the
/// boundaries' first parts; for hash V1, on a whole hash value).
pub(super) fn midpoint(pk: &PkDefinition, index: usize, boundaries: &[Epk]) -> Option<Epk> {
    let low = if index == 0 {
        Epk::MIN
    } else {
        *boundaries.get(index - 1)?
    };
    pk.midpoint(low, boundaries.get(index).copied())
}

/// Where a hierarchical-key range holding items with the distinct EPKs `held` is cut: at its
/// median key, as the service splits by the data a range holds, so one key prefix can span
/// several ranges. None with fewer than two distinct keys.
pub(super) fn median_key(held: &[Epk]) -> Option<Epk> {
    (held.len() >= 2).then(|| held[held.len() / 2])
}

impl Container {
    /// A copy of this container with range `range_id` split in two; this container's partitions
    /// are left empty and retired. 404 when the range does not exist.
    pub(crate) fn split_range(&self, range_id: &str) -> Result<Container, ApiError> {
        let index = self.range_by_id(range_id).ok_or_else(|| {
            ApiError::not_found(format!(
                "Partition key range {range_id:?} does not exist (the container's ranges are {}).",
                self.range_ids.join(", ")
            ))
        })?;
        let by_data = if self.pk.multi_hash {
            let held = self.partitions[index]
                .read()
                .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))?
                .distinct_epks();
            median_key(&held)
        } else {
            None
        };
        let mid = by_data
            .or_else(|| midpoint(&self.pk, index, &self.boundaries))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "Partition key range {range_id:?} is too small to split."
                ))
            })?;
        // Every partition is locked for the whole move: no write lands in between.
        let mut guards = Vec::with_capacity(self.partitions.len());
        for p in &self.partitions {
            guards.push(
                p.write()
                    .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))?,
            );
        }
        let next_id = self
            .range_ids
            .iter()
            .filter_map(|id| id.parse::<u64>().ok())
            .max()
            .map_or(0, |m| m + 1);
        if next_id + 1 > super::container::MAX_RANGE_ID {
            return Err(ApiError::bad_request(format!(
                "Partition key range {range_id:?} cannot be split: the container has used every range id up to {}.",
                super::container::MAX_RANGE_ID
            )));
        }
        let (low_id, high_id) = (next_id.to_string(), (next_id + 1).to_string());
        let mut partitions = Vec::with_capacity(self.partitions.len() + 1);
        let mut range_ids = Vec::with_capacity(partitions.capacity());
        let mut parents = Vec::with_capacity(partitions.capacity());
        for (i, guard) in guards.iter_mut().enumerate() {
            if i == index {
                let (low, high) = guard.split(|k| k.epk < mid);
                partitions.push(RwLock::new(low));
                partitions.push(RwLock::new(high));
                range_ids.extend([low_id.clone(), high_id.clone()]);
                let lineage = vec![range_id.to_owned()];
                parents.extend([lineage.clone(), lineage]);
            } else {
                let (moved, _) = guard.split(|_| true);
                partitions.push(RwLock::new(moved));
                range_ids.push(self.range_ids[i].clone());
                parents.push(self.range_parents[i].clone());
            }
        }
        let mut boundaries = self.boundaries.clone();
        boundaries.insert(index, mid);
        let db_rid = encode_rid(&self.rid_bytes[..4]);
        let (pkranges_body, pkranges_etag) = pkranges_feed(
            &self.rid,
            &db_rid,
            &self.pk,
            &boundaries,
            &range_ids,
            &parents,
        );
        // A range keeps its item counter; the two new ranges go on from their parent's (their
        // markers are new, so ids stay distinct), so a range's counter stays above every item it
        // holds and resource-id order is creation order within it.
        let parent_count = self
            .next_item
            .get(index)
            .map_or(1, |c| c.load(Ordering::Relaxed));
        let next_item = range_ids
            .iter()
            .map(|id| {
                let kept = self.range_by_id(id).and_then(|i| self.next_item.get(i));
                AtomicU64::new(kept.map_or(parent_count, |c| c.load(Ordering::Relaxed)))
            })
            .collect();
        Ok(Container {
            id: self.id.clone(),
            rid_bytes: self.rid_bytes,
            rid: self.rid.clone(),
            definition: RwLock::new(self.definition()),
            pk: self.pk.clone(),
            boundaries,
            partitions,
            range_ids,
            range_parents: parents,
            pkranges_body,
            pkranges_etag,
            next_item,
            unique_keys: self.unique_keys.clone(),
            default_ttl: AtomicI64::new(self.default_ttl.load(Ordering::Relaxed)),
            computed: RwLock::new(self.computed()),
            vector_paths: self.vector_paths.clone(),
            conflicts: self.conflicts.copy(),
        })
    }
}

/// `partition` unless a split has retired it: 410 with sub-status 1002 (the range is gone; the
/// client refreshes its partition key ranges and retries).
pub(crate) fn live<P: std::ops::Deref<Target = Partition>>(partition: P) -> Result<P, ApiError> {
    if partition.is_retired() {
        return Err(ApiError::new(
            410,
            "The partition key range is gone: it was split. Read the pkranges feed again.",
        )
        .with_sub_status(1002));
    }
    Ok(partition)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::epk::{boundaries, SPACE_END};

    fn hash(version: u8) -> PkDefinition {
        let body = serde_json::json!({"partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": version}});
        let serde_json::Value::Object(mut map) = body else {
            unreachable!()
        };
        PkDefinition::from_container_body(&mut map).unwrap()
    }

    #[test]
    fn ranges_are_cut_in_the_middle_of_their_key_space() {
        let v2 = hash(2);
        let b = boundaries(2);
        let b0 = b[0].first();
        assert_eq!(midpoint(&v2, 0, &b), Some(Epk::single(b0 / 2)));
        assert_eq!(
            midpoint(&v2, 1, &b),
            Some(Epk::single(b0 + (SPACE_END - b0) / 2))
        );
        assert_eq!(midpoint(&v2, 0, &[]), Some(Epk::single(SPACE_END / 2)));
        assert_eq!(midpoint(&v2, 1, &[Epk::single(5), Epk::single(6)]), None);
        assert_eq!(midpoint(&v2, 9, &b), None);
    }

    #[test]
    fn hash_v1_ranges_are_cut_on_a_whole_hash_value() {
        let v1 = hash(1);
        let b = v1.boundaries(3);
        assert_eq!(b.len(), 2);
        for epk in b.iter().copied().chain(midpoint(&v1, 1, &b)) {
            assert_eq!(epk.first() % (1u128 << 94), 0, "{epk:?}");
            // Its V1 text reads back as the same boundary.
            assert_eq!(v1.parse_epk(&v1.boundary_text(epk)).unwrap(), epk);
        }
        let one_hash = [Epk::single(7u128 << 94), Epk::single(8u128 << 94)];
        assert_eq!(midpoint(&v1, 1, &one_hash), None);
    }

    #[test]
    fn hierarchical_ranges_are_cut_at_their_median_key() {
        let keys: Vec<Epk> = (1..=5u128)
            .map(|i| Epk::from_parts(&[7, i]).unwrap())
            .collect();
        assert_eq!(median_key(&keys), Some(keys[2]));
        assert_eq!(median_key(&keys[..1]), None);
    }

    #[test]
    fn a_split_keeps_the_other_ranges_counters_and_the_new_ranges_go_on_from_the_parents() {
        let body =
            serde_json::json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        let serde_json::Value::Object(map) = body else {
            unreachable!()
        };
        let before = Container::create(map, "c".into(), [0, 0, 0, 1], 1, 2, 1).unwrap();
        let old: Vec<[u8; 16]> = (0..3).map(|_| before.next_item_rid(1)).collect();
        let _ = before.next_item_rid(0);
        let _ = before.next_item_rid(0);
        let after = before.split_range("0").unwrap();
        assert_eq!(after.range_ids, ["2", "3", "1"]);
        let parts = |r: usize| super::super::container::item_rid_parts(&after.next_item_rid(r));
        assert_eq!(parts(0), (2, 3), "after the parent's two items");
        assert_eq!(parts(1), (3, 3));
        assert_eq!(parts(2), (1, 4), "range 1 goes on counting");
        let fresh = after.next_item_rid(2);
        assert!(!old.contains(&fresh));
    }
}
