//! One physical partition: the item versions its replicas need and its replication log.
//!
//! Each item keeps the versions some region may still read: the newest version every replica has
//! applied, plus any newer ones still on their way. A read in a region picks the newest version at or
//! below that region's replica LSN.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::creation_order::{ordinal, CreationOrder, Ordinal};
use super::history::{ChangeHistory, HistoryEntry};
use super::local_writes::LocalWrites;
use super::replica_log::ReplicaLog;
use super::stored_doc::{DocKey, StoredDoc};
use super::unique_keys::UniqueIndex;
use crate::epk::{Epk, EpkFilter};
use crate::protocol::ids::unix_seconds;

#[derive(Clone)]
struct Version {
    lsn: u64,
    /// None marks a delete.
    doc: Option<Arc<StoredDoc>>,
}

/// The state of one physical partition.
pub(crate) struct Partition {
    /// Each log entry names the keys one commit wrote (several for a transactional batch).
    log: ReplicaLog<Vec<DocKey>>,
    docs: BTreeMap<DocKey, Vec<Version>>,
    /// Each held version's LSN, with its key and commit time: the change feed's order. A
    /// transactional batch commits several keys at one LSN.
    by_lsn: BTreeMap<u64, Vec<Committed>>,
    /// The items in creation order (`_rid` order): how queries without ORDER BY list them.
    order: CreationOrder,
    /// Every change within the retention window, deletes included (all-versions feeds).
    history: ChangeHistory,
    /// Set once a split has moved this partition's items to its children.
    retired: bool,
    /// The unique key values of the committed items.
    unique: UniqueIndex,
    /// Where committed writes are recorded for a restart (with a data directory).
    sink: Option<super::item_log::ItemSink>,
    /// Conflicting writes each served only by the region that took them, until the version they
    /// conflict with reaches it (multi-write accounts).
    local: LocalWrites,
}

/// What the change feed knows of a commit.
#[derive(Clone, Debug)]
struct Committed {
    key: DocKey,
    unix_ts: u64,
}

/// One item in a latest-version change feed page.
#[derive(Clone, Debug)]
pub(crate) struct Change {
    pub lsn: u64,
    #[allow(dead_code)]
    pub key: DocKey,
    pub doc: Arc<StoredDoc>,
}

impl Partition {
    /// An empty partition replicated to `regions` regions.
    pub(crate) fn new(regions: usize) -> Self {
        Self {
            log: ReplicaLog::new(regions),
            docs: BTreeMap::new(),
            by_lsn: BTreeMap::new(),
            order: CreationOrder::default(),
            history: ChangeHistory::default(),
            retired: false,
            unique: UniqueIndex::default(),
            sink: None,
            local: LocalWrites::default(),
        }
    }

    /// Records every commit from now on in `sink` (a split's children keep it).
    pub(crate) fn set_sink(&mut self, sink: super::item_log::ItemSink) {
        self.sink = Some(sink);
    }

    /// Whether a split has moved this partition's items away (requests on it answer 410).
    pub(crate) fn is_retired(&self) -> bool {
        self.retired
    }

    /// Moves the items out into two children, `lower` taking the keys `in_lower` accepts; both
    /// keep the replication log, so LSNs, session tokens and change-feed etags carry on. This
    /// partition is left empty and retired.
    pub(crate) fn split(&mut self, in_lower: impl Fn(&DocKey) -> bool) -> (Partition, Partition) {
        let regions = 0;
        let parent = std::mem::replace(self, Partition::new(regions));
        self.retired = true;
        let child = |lower: bool| {
            let keep = |k: &DocKey| in_lower(k) == lower;
            let mut history = parent.history.clone();
            history.retain(keep);
            let mut unique = UniqueIndex::default();
            let committed = parent.log.committed();
            for (key, versions) in parent.docs.iter().filter(|(k, _)| keep(k)) {
                unique.replace(
                    key,
                    None,
                    version_at(versions, committed).map(|d| d.as_ref()),
                );
            }
            Partition {
                unique,
                log: parent.log.clone(),
                docs: parent
                    .docs
                    .iter()
                    .filter(|(k, _)| keep(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                by_lsn: parent
                    .by_lsn
                    .iter()
                    .filter_map(|(l, group)| {
                        let kept: Vec<Committed> =
                            group.iter().filter(|c| keep(&c.key)).cloned().collect();
                        (!kept.is_empty()).then_some((*l, kept))
                    })
                    .collect(),
                order: parent.order.filtered(keep),
                history,
                retired: false,
                sink: parent.sink.clone(),
                local: parent.local.filtered(keep),
            }
        };
        (child(true), child(false))
    }

    /// LSN of the last committed write.
    pub(crate) fn committed_lsn(&self) -> u64 {
        self.log.committed()
    }

    /// The LSN region `region`'s replica holds at `now`.
    pub(crate) fn visible_lsn(&self, region: usize, now: Instant) -> u64 {
        self.log.visible(region, now)
    }

    /// Every region's replica LSN.
    pub(crate) fn progress(&self, now: Instant) -> Vec<u64> {
        self.log.progress(now)
    }

    /// The item as of replica LSN `lsn`.
    pub(crate) fn read_at(&self, key: &DocKey, lsn: u64) -> Option<&Arc<StoredDoc>> {
        version_at(self.docs.get(key)?, lsn)
    }

    /// The item as region `region` reads it at replica LSN `lsn`: its own conflicting write while
    /// it has one ([`Partition::keep_local`]), else as of `lsn`.
    pub(crate) fn read_in(&self, key: &DocKey, lsn: u64, region: usize) -> Option<&Arc<StoredDoc>> {
        match self.local.get(key, region, lsn) {
            Some(own) => own,
            None => self.read_at(key, lsn),
        }
    }

    /// Keeps `doc` (None: a delete), a write region `region` took while its replica was at
    /// `seen` and that conflicts with a later version of `key` it had not seen, as what that
    /// region reads of `key` until the first such version reaches it; returns when that is (None
    /// when `key` has no version past `seen` on its way to `region`: nothing is kept).
    pub(crate) fn keep_local(
        &mut self,
        key: &DocKey,
        region: usize,
        seen: u64,
        doc: Option<Arc<StoredDoc>>,
    ) -> Option<Instant> {
        let until = self.docs.get(key)?.iter().find(|v| v.lsn > seen)?.lsn;
        let reaches = self.log.visible_at(until, region)?;
        if let Some(d) = &doc {
            // Queries in creation order find it by its resource id.
            self.order.insert(&d.rid, key);
        }
        let new_rid = doc.as_ref().map(|d| d.rid);
        if let Some(rid) = self
            .local
            .keep(key, region, until, doc)
            .filter(|rid| Some(*rid) != new_rid)
        {
            self.forget_unless_held(rid, key);
        }
        Some(reaches)
    }

    /// Drops `key`'s creation-order entry under resource id `rid` unless a version of it or a
    /// region's own write still holds that id.
    fn forget_unless_held(&mut self, rid: [u8; 16], key: &DocKey) {
        let held = self.docs.get(key).is_some_and(|versions| {
            versions
                .iter()
                .any(|v| v.doc.as_ref().is_some_and(|d| d.rid == rid))
        });
        if !held && !self.local.holds(key, rid) {
            self.order.forget(&rid, key);
        }
    }

    /// Whether region `region` has conflicting writes of its own to serve, and a number that
    /// moves whenever any is kept or dropped (what a cached query answer in the region depends
    /// on beside the LSN).
    pub(crate) fn local_state(&self, region: usize) -> (bool, u64) {
        (self.local.any_for(region), self.local.generation())
    }

    /// The LSN of the version of `key` a replica at `lsn` reads.
    pub(crate) fn item_lsn(&self, key: &DocKey, lsn: u64) -> Option<u64> {
        self.docs
            .get(key)?
            .iter()
            .rev()
            .find(|v| v.lsn <= lsn)
            .map(|v| v.lsn)
    }

    /// Items and their bytes in the committed state (the container's usage headers).
    pub(crate) fn usage(&self) -> (u64, u64) {
        let committed = self.log.committed();
        self.docs
            .values()
            .filter_map(|versions| version_at(versions, committed))
            .fold((0, 0), |(n, bytes), d| (n + 1, bytes + d.body.len() as u64))
    }

    /// The item in the committed (write-region) state.
    pub(crate) fn latest(&self, key: &DocKey) -> Option<&Arc<StoredDoc>> {
        self.read_at(key, self.log.committed())
    }

    /// Commits a write (`Some`) or delete (`None`) of `key`, taken by region `origin`; `lags[r]` is
    /// how long region r takes to receive it. Returns the new LSN.
    pub(crate) fn commit(
        &mut self,
        key: DocKey,
        doc: Option<Arc<StoredDoc>>,
        origin: usize,
        now: Instant,
        lags: &[Duration],
    ) -> u64 {
        self.commit_all(vec![(key, doc)], origin, now, lags)
    }

    /// Commits several writes and deletes as one transaction at ONE new LSN (a transactional
    /// batch): replicas, session tokens and change feeds see all of them or none. A key written
    /// twice keeps its last write. Returns the LSN (the committed one when `writes` is empty).
    pub(crate) fn commit_all(
        &mut self,
        writes: Vec<(DocKey, Option<Arc<StoredDoc>>)>,
        origin: usize,
        now: Instant,
        lags: &[Duration],
    ) -> u64 {
        if writes.is_empty() {
            return self.log.committed();
        }
        let mut keys: Vec<DocKey> = Vec::with_capacity(writes.len());
        for (key, _) in &writes {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
        if let Some(sink) = &self.sink {
            // Under this partition's lock: the record's order is the commit's.
            sink.record(&writes);
        }
        let lsn = self.log.commit(keys.clone(), origin, now, lags);
        let unix_ts = unix_seconds();
        for (key, doc) in writes {
            let versions = self.docs.entry(key.clone()).or_default();
            let previous = versions
                .last()
                .and_then(|v| v.doc.clone().map(|d| (v.lsn, d)));
            self.unique.replace(
                &key,
                previous.as_ref().map(|(_, d)| d.as_ref()),
                doc.as_deref(),
            );
            self.history
                .record(lsn, &key, doc.clone(), previous, unix_ts);
            if let Some(d) = &doc {
                self.order.insert(&d.rid, &key);
            }
            match versions.last_mut() {
                // Written earlier in this transaction: the last write is the version.
                Some(v) if v.lsn == lsn => v.doc = doc,
                _ => versions.push(Version { lsn, doc }),
            }
        }
        self.by_lsn.insert(
            lsn,
            keys.iter()
                .map(|key| Committed {
                    key: key.clone(),
                    unix_ts,
                })
                .collect(),
        );
        self.clean_up(now);
        let min_visible = self.log.min_visible(now);
        for key in &keys {
            self.compact(key, min_visible);
        }
        lsn
    }

    /// Drops the replica-log entries every region has applied by `now` and the item versions no
    /// region can read any more. Runs on every commit and on the store's cleanup timer, so a
    /// partition that goes quiet does not keep what its writes left behind.
    pub(crate) fn clean_up(&mut self, now: Instant) {
        let min = self.log.min_visible(now);
        for applied in self.log.drain_applied(now).into_iter().flatten() {
            self.compact(&applied, min);
        }
        let log = &self.log;
        for (rid, key) in self.local.drop_reached(|region| log.visible(region, now)) {
            self.forget_unless_held(rid, &key);
        }
    }

    /// Whether replica-log entries are still on their way to some region.
    pub(crate) fn has_pending(&self) -> bool {
        self.log.has_pending()
    }

    /// Brings `region`'s replica up to date (it became the write region).
    pub(crate) fn catch_up(&mut self, region: usize) {
        self.log.catch_up(region);
    }

    /// Up to `limit` items visible at `lsn`, in key order, strictly after `after`, optionally only
    /// those whose EPK passes `only_epk`.
    pub(crate) fn scan(
        &self,
        lsn: u64,
        after: Option<&DocKey>,
        only_epk: Option<EpkFilter>,
        limit: usize,
    ) -> Vec<(DocKey, Arc<StoredDoc>)> {
        use std::ops::Bound;
        let from = match after {
            Some(k) => Bound::Excluded(k),
            None => Bound::Unbounded,
        };
        self.scan_from(lsn, from, only_epk, limit)
    }

    /// Up to `limit` items visible at `lsn`, in key order, from `from` on, optionally only those
    /// whose EPK passes `only_epk`.
    pub(crate) fn scan_from(
        &self,
        lsn: u64,
        from: std::ops::Bound<&DocKey>,
        only_epk: Option<EpkFilter>,
        limit: usize,
    ) -> Vec<(DocKey, Arc<StoredDoc>)> {
        self.scan_from_in(lsn, from, only_epk, limit, None)
    }

    /// As [`Partition::scan_from`], as region `region` reads (its own conflicting writes
    /// included, see [`Partition::read_in`]) when it is Some.
    pub(crate) fn scan_from_in(
        &self,
        lsn: u64,
        from: std::ops::Bound<&DocKey>,
        only_epk: Option<EpkFilter>,
        limit: usize,
        region: Option<usize>,
    ) -> Vec<(DocKey, Arc<StoredDoc>)> {
        use std::ops::Bound;
        let floor = only_epk.map(|f| DocKey {
            epk: f.floor(),
            id: String::new(),
        });
        let lower = match (from, &floor) {
            (Bound::Unbounded, Some(f)) => Bound::Included(f.clone()),
            (Bound::Included(k), Some(f)) if k < f => Bound::Included(f.clone()),
            (Bound::Excluded(k), Some(f)) if k < f => Bound::Included(f.clone()),
            (Bound::Included(k), _) => Bound::Included(k.clone()),
            (Bound::Excluded(k), _) => Bound::Excluded(k.clone()),
            (Bound::Unbounded, None) => Bound::Unbounded,
        };
        let mut out = Vec::new();
        for (key, versions) in self.docs.range((lower, Bound::Unbounded)) {
            if out.len() >= limit {
                break;
            }
            if only_epk.is_some_and(|f| !f.contains(key.epk)) {
                if only_epk.is_some_and(|f| f.is_past(key.epk)) {
                    break;
                }
                continue;
            }
            if let Some(doc) = self.version_in(key, versions, lsn, region) {
                out.push((key.clone(), doc.clone()));
            }
        }
        out
    }

    /// The version of `key` (held as `versions`) a read at `lsn` sees, in region `region`'s view
    /// when it is Some.
    fn version_in<'s>(
        &'s self,
        key: &DocKey,
        versions: &'s [Version],
        lsn: u64,
        region: Option<usize>,
    ) -> Option<&'s Arc<StoredDoc>> {
        match region.and_then(|r| self.local.get(key, r, lsn)) {
            Some(own) => own,
            None => version_at(versions, lsn),
        }
    }

    /// Up to `limit` items visible at `lsn` in creation order (see [`CreationOrder`]), from `from`
    /// on, optionally only those whose EPK passes `only_epk`; each with its ordinal. With
    /// `region`, as that region reads (see [`Partition::scan_from_in`]).
    pub(crate) fn scan_in_order(
        &self,
        lsn: u64,
        from: std::ops::Bound<Ordinal>,
        only_epk: Option<EpkFilter>,
        limit: usize,
        region: Option<usize>,
    ) -> Vec<(Ordinal, DocKey, Arc<StoredDoc>)> {
        let mut out = Vec::new();
        for (at, key) in self.order.starting_at(from) {
            if out.len() >= limit {
                break;
            }
            if only_epk.is_some_and(|f| !f.contains(key.epk)) {
                continue;
            }
            let doc = self
                .docs
                .get(key)
                .and_then(|v| self.version_in(key, v, lsn, region));
            // The entry of an item deleted (or deleted and created again) is passed by.
            if let Some(doc) = doc.filter(|d| ordinal(&d.rid) == *at) {
                out.push((*at, key.clone(), doc.clone()));
            }
        }
        out
    }

    /// The distinct EPKs of the keys held (any version), ascending.
    pub(crate) fn distinct_epks(&self) -> Vec<Epk> {
        let mut out: Vec<Epk> = Vec::new();
        for key in self.docs.keys() {
            if out.last() != Some(&key.epk) {
                out.push(key.epk);
            }
        }
        out
    }

    /// Drops versions of `key` no region can read any more.
    fn compact(&mut self, key: &DocKey, min_visible: u64) {
        let Some(versions) = self.docs.get_mut(key) else {
            return;
        };
        let keep_from = versions
            .iter()
            .rposition(|v| v.lsn <= min_visible)
            .unwrap_or(0);
        let drained: Vec<Version> = versions.drain(..keep_from).collect();
        let mut dropped: Vec<u64> = drained.iter().map(|v| v.lsn).collect();
        let mut gone_rids: Vec<[u8; 16]> = drained
            .iter()
            .filter_map(|v| Some(v.doc.as_ref()?.rid))
            .collect();
        let only_a_replicated_delete = versions.len() == 1
            && versions
                .first()
                .is_some_and(|v| v.doc.is_none() && v.lsn <= min_visible);
        if versions.is_empty() || only_a_replicated_delete {
            dropped.extend(versions.iter().map(|v| v.lsn));
            self.docs.remove(key);
        } else {
            // A resource id the kept versions still hold keeps its place.
            gone_rids.retain(|rid| {
                !versions
                    .iter()
                    .any(|v| v.doc.as_ref().is_some_and(|d| &d.rid == rid))
            });
        }
        for rid in gone_rids {
            self.order.forget(&rid, key);
        }
        for lsn in dropped {
            if let Some(group) = self.by_lsn.get_mut(&lsn) {
                group.retain(|c| &c.key != key);
                if group.is_empty() {
                    self.by_lsn.remove(&lsn);
                }
            }
        }
    }

    /// The position (an LSN, as a change-feed etag names one) just before the first change a
    /// replica at `upto` sees committed at or after `since_unix` seconds; `upto` when there is
    /// none. Commits are in time order, so every change after the position is that recent.
    pub(crate) fn position_at(&self, since_unix: u64, upto: u64) -> u64 {
        self.by_lsn
            .range(1..=upto)
            .find(|(_, group)| group.iter().any(|c| c.unix_ts >= since_unix))
            .map_or(upto, |(&lsn, _)| lsn - 1)
    }

    /// The latest-version change feed as a replica at `upto` sees it: up to `limit` items whose
    /// newest version at `upto` was committed after `after` (and at or after `since_unix` seconds),
    /// each once, in commit order, only keys `wanted` accepts.
    pub(crate) fn changes(
        &self,
        after: u64,
        upto: u64,
        since_unix: Option<u64>,
        wanted: impl Fn(&DocKey) -> bool,
        limit: usize,
    ) -> Vec<Change> {
        let mut out = Vec::new();
        if after >= upto {
            return out;
        }
        // A page never ends inside one LSN: a transaction's changes arrive together.
        for (&lsn, group) in self.by_lsn.range(after + 1..=upto) {
            if out.len() >= limit {
                break;
            }
            for entry in group {
                if since_unix.is_some_and(|since| entry.unix_ts < since) || !wanted(&entry.key) {
                    continue;
                }
                let newest = self
                    .docs
                    .get(&entry.key)
                    .and_then(|versions| versions.iter().rev().find(|v| v.lsn <= upto));
                if let Some(Version {
                    lsn: newest_lsn,
                    doc: Some(doc),
                }) = newest
                {
                    if *newest_lsn == lsn {
                        out.push(Change {
                            lsn,
                            key: entry.key.clone(),
                            doc: doc.clone(),
                        });
                    }
                }
            }
        }
        out
    }

    /// The all-versions-and-deletes feed at `upto`: changes after `after`, oldest first; `Err`
    /// with the oldest LSN still held when `after` lies before the retention window.
    pub(crate) fn history(
        &self,
        after: u64,
        upto: u64,
        wanted: impl Fn(&DocKey) -> bool,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, u64> {
        self.history.after(after, upto, wanted, limit)
    }

    /// The id of the item of logical partition `epk` that holds the unique key value `entry`.
    pub(crate) fn unique_owner(&self, epk: Epk, entry: &str) -> Option<&str> {
        self.unique.owner(epk, entry)
    }

    /// Unique key values indexed; for tests.
    #[cfg(test)]
    pub(crate) fn unique_values(&self) -> usize {
        self.unique.len()
    }

    /// Number of item keys held (live items plus not-yet-replicated deletes); for tests.
    #[cfg(test)]
    pub(crate) fn key_count(&self) -> usize {
        self.docs.len()
    }
}

fn version_at(versions: &[Version], lsn: u64) -> Option<&Arc<StoredDoc>> {
    versions
        .iter()
        .rev()
        .find(|v| v.lsn <= lsn)
        .and_then(|v| v.doc.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn key(id: &str) -> DocKey {
        DocKey {
            epk: 7u128.into(),
            id: id.into(),
        }
    }

    fn doc(text: &str) -> Option<Arc<StoredDoc>> {
        Some(Arc::new(StoredDoc {
            body: Bytes::from(text.to_owned()),
            etag: format!("\"{text}\""),
            rid: [0; 16],
            unique: Box::default(),
            vectors: Default::default(),
            indexed: true,
        }))
    }

    #[tokio::test(start_paused = true)]
    async fn a_point_in_time_names_the_position_before_its_first_change() {
        let mut p = Partition::new(1);
        let lags = [Duration::ZERO];
        assert_eq!(p.position_at(0, 0), 0, "an empty range is at its start");
        p.commit(key("a"), doc("a1"), 0, Instant::now(), &lags);
        p.commit(key("b"), doc("b1"), 0, Instant::now(), &lags);
        assert_eq!(p.position_at(0, 2), 0, "every change is that recent");
        assert_eq!(p.position_at(u64::MAX, 2), 2, "none is: the end");
        assert_eq!(p.position_at(u64::MAX, 1), 1, "a replica at 1 ends there");
    }

    fn body(d: Option<&Arc<StoredDoc>>) -> Option<&str> {
        d.map(|d| std::str::from_utf8(&d.body).unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn a_transaction_commits_at_one_lsn_that_replicas_apply_whole() {
        let mut p = Partition::new(2);
        let t0 = Instant::now();
        let lags = [Duration::ZERO, Duration::from_millis(100)];
        assert_eq!(p.commit(key("a"), doc("a1"), 0, t0, &lags), 1);
        let lsn = p.commit_all(
            vec![
                (key("a"), doc("a2")),
                (key("b"), doc("b1")),
                (key("a"), doc("a3")),
                (key("c"), doc("c1")),
                (key("c"), None),
            ],
            0,
            t0 + Duration::from_millis(200),
            &lags,
        );
        assert_eq!((lsn, p.committed_lsn()), (2, 2));
        let changed: Vec<(String, u64)> = p
            .changes(1, 2, None, |_| true, 1)
            .into_iter()
            .map(|c| (c.key.id, c.lsn))
            .collect();
        assert_eq!(changed, vec![("a".to_owned(), 2), ("b".to_owned(), 2)]);
        // The lagging region sees none of the transaction, then all of it.
        let lagging = p.visible_lsn(1, t0 + Duration::from_millis(250));
        assert_eq!(body(p.read_at(&key("a"), lagging)), Some("a1"));
        assert_eq!(body(p.read_at(&key("b"), lagging)), None);
        let caught_up = p.visible_lsn(1, t0 + Duration::from_millis(300));
        assert_eq!(body(p.read_at(&key("a"), caught_up)), Some("a3"));
        assert_eq!(body(p.read_at(&key("b"), caught_up)), Some("b1"));
        assert_eq!(body(p.read_at(&key("c"), caught_up)), None);
        p.clean_up(t0 + Duration::from_millis(300));
        assert_eq!(p.key_count(), 2, "the replicated delete of c is gone");
        assert_eq!(p.changes(0, 2, None, |_| true, 10).len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn lagging_regions_read_older_versions_until_they_catch_up() {
        let mut p = Partition::new(2);
        let t0 = Instant::now();
        let lags = [Duration::ZERO, Duration::from_millis(100)];
        p.commit(key("a"), doc("v1"), 0, t0, &lags);
        p.commit(
            key("a"),
            doc("v2"),
            0,
            t0 + Duration::from_millis(200),
            &lags,
        );
        let now = t0 + Duration::from_millis(250);
        assert_eq!(
            body(p.read_at(&key("a"), p.visible_lsn(0, now))),
            Some("v2")
        );
        assert_eq!(
            body(p.read_at(&key("a"), p.visible_lsn(1, now))),
            Some("v1")
        );
        let later = t0 + Duration::from_millis(300);
        assert_eq!(
            body(p.read_at(&key("a"), p.visible_lsn(1, later))),
            Some("v2")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_region_serves_its_own_conflicting_write_until_the_version_before_reaches_it() {
        let mut p = Partition::new(2);
        let t0 = Instant::now();
        let lag = Duration::from_millis(500);
        let lags = [lag, lag];
        p.commit(key("a"), doc("base"), 0, t0, &lags);
        let t1 = t0 + Duration::from_secs(1);
        // Region 0 writes v0; region 1, still at the base version, writes v1 and loses.
        p.commit(key("a"), doc("v0"), 0, t1, &lags);
        let seen = p.visible_lsn(1, t1);
        assert_eq!(body(p.read_at(&key("a"), seen)), Some("base"));
        assert_eq!(p.keep_local(&key("a"), 1, seen, doc("v1")), Some(t1 + lag));
        assert!(p.local_state(1).0);
        assert!(!p.local_state(0).0);
        let in_region = |p: &Partition, r: usize, at: Instant| {
            body(p.read_in(&key("a"), p.visible_lsn(r, at), r)).map(str::to_owned)
        };
        let scanned = |p: &Partition, r: usize, at: Instant| {
            let lsn = p.visible_lsn(r, at);
            let keyed = p.scan_from_in(lsn, std::ops::Bound::Unbounded, None, 10, Some(r));
            let ordered = p.scan_in_order(lsn, std::ops::Bound::Unbounded, None, 10, Some(r));
            let bodies = |docs: Vec<&Arc<StoredDoc>>| {
                docs.iter()
                    .map(|d| String::from_utf8_lossy(&d.body).into_owned())
                    .collect::<Vec<_>>()
            };
            (
                bodies(keyed.iter().map(|(_, d)| d).collect()),
                bodies(ordered.iter().map(|(_, _, d)| d).collect()),
            )
        };
        let before = t1 + Duration::from_millis(499);
        assert_eq!(in_region(&p, 1, before).as_deref(), Some("v1"));
        assert_eq!(
            scanned(&p, 1, before),
            (vec!["v1".into()], vec!["v1".into()])
        );
        assert_eq!(in_region(&p, 0, before).as_deref(), Some("v0"));
        // Reads without a region's view never see it.
        assert_eq!(
            body(p.read_at(&key("a"), p.visible_lsn(1, before))),
            Some("base")
        );
        let met = t1 + lag;
        assert_eq!(in_region(&p, 1, met).as_deref(), Some("v0"));
        assert_eq!(scanned(&p, 1, met), (vec!["v0".into()], vec!["v0".into()]));
        let (_, generation) = p.local_state(1);
        p.clean_up(met);
        assert_eq!(p.local_state(1), (false, generation + 1));
        // Nothing past the replica: nothing is kept.
        let now = p.visible_lsn(1, met);
        assert_eq!(p.keep_local(&key("a"), 1, now, doc("v2")), None);
        assert!(!p.local_state(1).0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_regions_own_writes_leave_no_creation_order_entries_behind() {
        let with_rid = |text: &str, n: u64| {
            let rid = crate::store::item_rid::item_rid(&[9; 8], 0, n);
            Some(Arc::new(StoredDoc {
                body: Bytes::from(text.to_owned()),
                etag: format!("\"{text}\""),
                rid,
                unique: Box::default(),
                vectors: Default::default(),
                indexed: true,
            }))
        };
        let entries = |p: &Partition| p.order.starting_at(std::ops::Bound::Unbounded).count();
        let mut p = Partition::new(2);
        let t0 = Instant::now();
        let lag = Duration::from_millis(500);
        // Region 0 creates a; region 1, not having seen it, creates a (rid 2), deletes its own
        // version and creates it again (rid 3), each losing.
        p.commit(key("a"), with_rid("v0", 1), 0, t0, &[lag, lag]);
        let seen = p.visible_lsn(1, t0);
        assert!(p
            .keep_local(&key("a"), 1, seen, with_rid("v1", 2))
            .is_some());
        assert_eq!(entries(&p), 2);
        assert!(p.keep_local(&key("a"), 1, seen, None).is_some());
        assert_eq!(entries(&p), 1, "the replaced write's entry goes");
        assert!(p
            .keep_local(&key("a"), 1, seen, with_rid("v2", 3))
            .is_some());
        let ordered = p.scan_in_order(seen, std::ops::Bound::Unbounded, None, 10, Some(1));
        assert_eq!(ordered.len(), 1);
        assert_eq!(body(Some(&ordered[0].2)), Some("v2"));
        p.clean_up(t0 + lag);
        assert_eq!(entries(&p), 1, "only the committed version's entry stays");
    }

    #[tokio::test(start_paused = true)]
    async fn deletes_disappear_once_replicated() {
        let mut p = Partition::new(1);
        let t0 = Instant::now();
        p.commit(key("a"), doc("v1"), 0, t0, &[Duration::ZERO]);
        p.commit(key("a"), None, 0, t0, &[Duration::ZERO]);
        assert!(p.latest(&key("a")).is_none());
        assert_eq!(p.key_count(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn clean_up_drops_what_a_quiet_partition_left_behind() {
        let mut p = Partition::new(2);
        let t0 = Instant::now();
        let lags = [Duration::ZERO, Duration::from_millis(100)];
        p.commit(key("a"), doc("v1"), 0, t0, &lags);
        p.commit(key("a"), None, 0, t0 + Duration::from_millis(10), &lags);
        assert_eq!(p.key_count(), 1, "the delete has not reached region 1 yet");
        assert!(p.has_pending());
        p.clean_up(t0 + Duration::from_millis(50));
        assert_eq!(p.key_count(), 1);
        p.clean_up(t0 + Duration::from_millis(200));
        assert_eq!(p.key_count(), 0, "no further commit was needed");
        assert!(!p.has_pending());
    }

    #[tokio::test(start_paused = true)]
    async fn scans_page_in_key_order_and_filter_by_epk() {
        let mut p = Partition::new(1);
        let t0 = Instant::now();
        for (epk, id) in [(1u128, "x"), (2, "a"), (2, "b"), (3, "c")] {
            p.commit(
                DocKey {
                    epk: Epk::single(epk),
                    id: id.into(),
                },
                doc(id),
                0,
                t0,
                &[Duration::ZERO],
            );
        }
        let lsn = p.committed_lsn();
        let first = p.scan(lsn, None, None, 2);
        assert_eq!(
            first.iter().map(|(k, _)| k.id.as_str()).collect::<Vec<_>>(),
            vec!["x", "a"]
        );
        let rest = p.scan(lsn, Some(&first[1].0), None, 10);
        assert_eq!(
            rest.iter().map(|(k, _)| k.id.as_str()).collect::<Vec<_>>(),
            vec!["b", "c"]
        );
        let only = p.scan(lsn, None, Some(EpkFilter::Key(Epk::single(2))), 10);
        assert_eq!(
            only.iter().map(|(k, _)| k.id.as_str()).collect::<Vec<_>>(),
            vec!["a", "b"]
        );
        let span = EpkFilter::Range(Epk::single(2), Epk::single(3));
        let ranged = p.scan(lsn, None, Some(span), 10);
        assert_eq!(
            ranged
                .iter()
                .map(|(k, _)| k.id.as_str())
                .collect::<Vec<_>>(),
            vec!["a", "b"]
        );
    }
}
