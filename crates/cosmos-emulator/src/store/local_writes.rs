//! Writes a region took in a multi-write account that conflict with a version of the item its
//! replica had not received yet, and that the conflict resolution policy does not let stand as
//! such (they lose, go to the conflicts feed, or go to a merge procedure). As in the service, the
//! region that took such a write serves it (point reads, queries, its own later writes' checks)
//! until the conflicting version reaches its replica; from then on it reads what the policy
//! decided, like every region. Other regions never see it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::stored_doc::{DocKey, StoredDoc};

/// One region's conflicting write of one item.
#[derive(Clone, Debug)]
struct LocalWrite {
    region: usize,
    /// The LSN of the first version of the item the region had not seen: the write is served
    /// while the region's replica is below it.
    until: u64,
    /// None: a delete.
    doc: Option<Arc<StoredDoc>>,
}

/// The conflicting writes of one partition, at most one per item and region.
#[derive(Clone, Debug, Default)]
pub(super) struct LocalWrites {
    by_key: BTreeMap<DocKey, Vec<LocalWrite>>,
    /// Moves whenever a write is kept or dropped (cached query answers depend on it).
    generation: u64,
}

impl LocalWrites {
    /// Keeps `doc` (None: a delete) as region `region`'s version of `key` while its replica is
    /// below `until`; it replaces the region's earlier one, whose resource id is returned.
    pub(super) fn keep(
        &mut self,
        key: &DocKey,
        region: usize,
        until: u64,
        doc: Option<Arc<StoredDoc>>,
    ) -> Option<[u8; 16]> {
        let writes = self.by_key.entry(key.clone()).or_default();
        let replaced = writes
            .iter()
            .position(|w| w.region == region)
            .and_then(|i| writes.remove(i).doc.map(|d| d.rid));
        writes.push(LocalWrite { region, until, doc });
        self.generation += 1;
        replaced
    }

    /// Region `region`'s own version of `key` at replica LSN `lsn`, when it has one: `Some(None)`
    /// is its delete.
    pub(super) fn get(
        &self,
        key: &DocKey,
        region: usize,
        lsn: u64,
    ) -> Option<Option<&Arc<StoredDoc>>> {
        self.by_key
            .get(key)?
            .iter()
            .find(|w| w.region == region && lsn < w.until)
            .map(|w| w.doc.as_ref())
    }

    /// Whether some region's kept write of `key` has resource id `rid`.
    pub(super) fn holds(&self, key: &DocKey, rid: [u8; 16]) -> bool {
        self.by_key.get(key).is_some_and(|writes| {
            writes
                .iter()
                .any(|w| w.doc.as_ref().is_some_and(|d| d.rid == rid))
        })
    }

    /// Whether some write is kept for region `region`.
    pub(super) fn any_for(&self, region: usize) -> bool {
        self.by_key
            .values()
            .any(|writes| writes.iter().any(|w| w.region == region))
    }

    /// Drops the writes whose region's replica (`visible(region)`) has reached their end; returns
    /// the resource ids and keys of the versions dropped.
    pub(super) fn drop_reached(
        &mut self,
        visible: impl Fn(usize) -> u64,
    ) -> Vec<([u8; 16], DocKey)> {
        let mut gone = Vec::new();
        self.by_key.retain(|key, writes| {
            writes.retain(|w| {
                let reached = visible(w.region) >= w.until;
                if reached {
                    if let Some(d) = &w.doc {
                        gone.push((d.rid, key.clone()));
                    }
                }
                !reached
            });
            !writes.is_empty()
        });
        if !gone.is_empty() {
            self.generation += 1;
        }
        gone
    }

    /// Those of the keys `keep` accepts (a split's child).
    pub(super) fn filtered(&self, keep: impl Fn(&DocKey) -> bool) -> Self {
        Self {
            by_key: self
                .by_key
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            generation: self.generation,
        }
    }

    /// A number that moves whenever a write is kept or dropped.
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }
}
