//! Splitting a partition key range in two: the container is rebuilt with the parent's range
//! replaced by two children (halves of its key space, new ids, the parent named in `parents`),
//! each child holding its half of the parent's items and the parent's replication log. The old
//! container's partitions are emptied and retired, so a request still holding it answers 410.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::RwLock;

use super::container::{pkranges_feed, Container};
use crate::epk::Epk;
use crate::protocol::ids::encode_rid;
use crate::protocol::ApiError;

/// The top of the hash V2 key space (exclusive).
const EPK_SPACE: u128 = 1 << 126;

/// Where range `index` of `boundaries` is cut in two: the middle of its key space (by the
/// boundaries' first parts).
pub fn midpoint(index: usize, boundaries: &[Epk]) -> Option<Epk> {
    let low = if index == 0 {
        Epk::MIN
    } else {
        *boundaries.get(index - 1)?
    };
    let high = boundaries
        .get(index)
        .copied()
        .unwrap_or(Epk::single(EPK_SPACE));
    let (l, h) = (low.first(), high.first());
    let mid = Epk::single(l + h.saturating_sub(l) / 2);
    (low < mid && mid < high).then_some(mid)
}

/// Where a hierarchical-key range holding items with the distinct EPKs `held` is cut: at its
/// median key, as the service splits by the data a range holds, so one key prefix can span
/// several ranges. None with fewer than two distinct keys.
pub fn median_key(held: &[Epk]) -> Option<Epk> {
    (held.len() >= 2).then(|| held[held.len() / 2])
}

impl Container {
    /// A copy of this container with range `range_id` split in two; this container's partitions
    /// are left empty and retired. 404 when the range does not exist.
    pub fn split_range(&self, range_id: &str) -> Result<Container, ApiError> {
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
            .or_else(|| midpoint(index, &self.boundaries))
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
        let (pkranges_body, pkranges_etag) =
            pkranges_feed(&self.rid, &db_rid, &boundaries, &range_ids, &parents);
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
            next_item: AtomicU64::new(self.next_item.load(Ordering::Relaxed)),
            unique_keys: self.unique_keys.clone(),
            default_ttl: AtomicI64::new(self.default_ttl.load(Ordering::Relaxed)),
            computed: RwLock::new(self.computed()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::epk::boundaries;

    #[test]
    fn ranges_are_cut_in_the_middle_of_their_key_space() {
        let b = boundaries(2);
        let b0 = b[0].first();
        assert_eq!(midpoint(0, &b), Some(Epk::single(b0 / 2)));
        assert_eq!(
            midpoint(1, &b),
            Some(Epk::single(b0 + (EPK_SPACE - b0) / 2))
        );
        assert_eq!(midpoint(0, &[]), Some(Epk::single(EPK_SPACE / 2)));
        assert_eq!(midpoint(1, &[Epk::single(5), Epk::single(6)]), None);
        assert_eq!(midpoint(9, &b), None);
    }

    #[test]
    fn hierarchical_ranges_are_cut_at_their_median_key() {
        let keys: Vec<Epk> = (1..=5u128)
            .map(|i| Epk::from_parts(&[7, i]).unwrap())
            .collect();
        assert_eq!(median_key(&keys), Some(keys[2]));
        assert_eq!(median_key(&keys[..1]), None);
    }
}
