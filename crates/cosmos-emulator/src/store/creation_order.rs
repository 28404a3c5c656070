//! A partition's items in the order the service lists them for a query without ORDER BY: by
//! resource id, which within a partition is creation order. An item's `_rid` holds its range's
//! counter and the range's marker (`item_rid.rs`); a range's counter is always above the
//! counters of the items it holds (a split's children go on from their parent's), so ordering by
//! counter, then marker, is creation order within any range.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::stored_doc::DocKey;

/// Where an item stands in creation order (its `_rid`'s counter, then marker).
pub(crate) type Ordinal = (u64, u16);

/// The creation-order place of the item with resource id `rid`.
pub(crate) fn ordinal(rid: &[u8; 16]) -> Ordinal {
    let (marker, counter) = super::item_rid::item_rid_parts(rid);
    (counter, marker)
}

/// Each held item's ordinal and key (an entry may outlive its item until compaction; readers
/// check that the version they read still has that resource id).
#[derive(Clone, Default)]
pub(super) struct CreationOrder {
    keys: BTreeMap<Ordinal, DocKey>,
}

impl CreationOrder {
    /// Notes that `key` holds an item with resource id `rid` (a rename moves its entry).
    pub(super) fn insert(&mut self, rid: &[u8; 16], key: &DocKey) {
        self.keys.insert(ordinal(rid), key.clone());
    }

    /// Forgets `rid`'s entry when it still names `key`.
    pub(super) fn forget(&mut self, rid: &[u8; 16], key: &DocKey) {
        let at = ordinal(rid);
        if self.keys.get(&at) == Some(key) {
            self.keys.remove(&at);
        }
    }

    /// Only the entries whose keys `keep` accepts (a split child's share).
    pub(super) fn filtered(&self, keep: impl Fn(&DocKey) -> bool) -> Self {
        Self {
            keys: self
                .keys
                .iter()
                .filter(|(_, k)| keep(k))
                .map(|(o, k)| (*o, k.clone()))
                .collect(),
        }
    }

    /// Entries from `from` on, in order.
    pub(super) fn starting_at(
        &self,
        from: Bound<Ordinal>,
    ) -> impl Iterator<Item = (&Ordinal, &DocKey)> {
        self.keys.range((from, Bound::Unbounded))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::item_rid::item_rid;

    fn key(id: &str) -> DocKey {
        DocKey {
            epk: 1u128.into(),
            id: id.into(),
        }
    }

    #[test]
    fn entries_follow_the_counter_then_the_marker() {
        let c = [0; 8];
        let mut order = CreationOrder::default();
        order.insert(&item_rid(&c, 0, 300), &key("late"));
        order.insert(&item_rid(&c, 2, 5), &key("child"));
        order.insert(&item_rid(&c, 0, 5), &key("parent"));
        order.insert(&item_rid(&c, 0, 1), &key("first"));
        let ids: Vec<&str> = order
            .starting_at(Bound::Unbounded)
            .map(|(_, k)| k.id.as_str())
            .collect();
        assert_eq!(ids, ["first", "parent", "child", "late"]);
        let after: Vec<&str> = order
            .starting_at(Bound::Excluded((5, 0)))
            .map(|(_, k)| k.id.as_str())
            .collect();
        assert_eq!(after, ["child", "late"]);
        // A renamed item's entry names its new key; forgetting by the old key leaves it.
        order.insert(&item_rid(&c, 0, 1), &key("renamed"));
        order.forget(&item_rid(&c, 0, 1), &key("first"));
        assert_eq!(order.starting_at(Bound::Unbounded).count(), 4);
        order.forget(&item_rid(&c, 0, 1), &key("renamed"));
        assert_eq!(order.starting_at(Bound::Unbounded).count(), 3);
        let kept = order.filtered(|k| k.id != "late");
        assert_eq!(kept.starting_at(Bound::Unbounded).count(), 2);
    }
}
