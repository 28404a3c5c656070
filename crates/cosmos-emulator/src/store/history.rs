//! The change history behind all-versions-and-deletes feeds: every commit of a partition (deletes
//! included, with the version it replaced) within a retention window.

use std::collections::VecDeque;
use std::sync::Arc;

use super::stored_doc::{DocKey, StoredDoc};

/// How long changes stay readable by all-versions-and-deletes feeds.
pub(crate) const RETENTION_SECONDS: u64 = 10 * 60;
/// At most this many changes are kept per partition (older ones leave the window early).
pub(crate) const RETENTION_CHANGES: usize = 10_000;

/// One commit: the new version (`None` for a delete) and the one it replaced.
#[derive(Clone, Debug)]
pub(crate) struct HistoryEntry {
    pub lsn: u64,
    pub key: DocKey,
    pub doc: Option<Arc<StoredDoc>>,
    /// The version this commit replaced or deleted, with its LSN.
    pub previous: Option<(u64, Arc<StoredDoc>)>,
    pub unix_ts: u64,
}

/// The retained commits of one partition, oldest first.
#[derive(Clone, Default)]
pub(super) struct ChangeHistory {
    entries: VecDeque<HistoryEntry>,
    /// The newest LSN that has left the window (0 when none has).
    dropped_through: u64,
}

impl ChangeHistory {
    /// Records a commit and drops what has left the window.
    pub(super) fn record(
        &mut self,
        lsn: u64,
        key: &DocKey,
        doc: Option<Arc<StoredDoc>>,
        previous: Option<(u64, Arc<StoredDoc>)>,
        unix_ts: u64,
    ) {
        self.entries.push_back(HistoryEntry {
            lsn,
            key: key.clone(),
            doc,
            previous,
            unix_ts,
        });
        let oldest_kept = unix_ts.saturating_sub(RETENTION_SECONDS);
        while let Some(front) = self.entries.front() {
            if self.entries.len() <= RETENTION_CHANGES && front.unix_ts >= oldest_kept {
                break;
            }
            self.dropped_through = front.lsn;
            self.entries.pop_front();
        }
    }

    /// Keeps only the commits of keys `keep` accepts (a split child's half).
    pub(super) fn retain(&mut self, keep: impl Fn(&DocKey) -> bool) {
        self.entries.retain(|e| keep(&e.key));
    }

    /// Up to `limit` commits after `after` and at or below `upto`, only keys `wanted` accepts, and
    /// never part of one LSN (a transaction's commits come together, past `limit` if need be);
    /// `Err(first retained LSN)` when commits after `after` have left the window.
    pub(super) fn after(
        &self,
        after: u64,
        upto: u64,
        wanted: impl Fn(&DocKey) -> bool,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, u64> {
        if self.dropped_through > after {
            return Err(self.dropped_through + 1);
        }
        let start = self.entries.partition_point(|e| e.lsn <= after);
        let mut out: Vec<HistoryEntry> = Vec::new();
        for e in self
            .entries
            .iter()
            .skip(start)
            .take_while(|e| e.lsn <= upto)
        {
            if out.len() >= limit && out.last().is_none_or(|last| last.lsn != e.lsn) {
                break;
            }
            if wanted(&e.key) {
                out.push(e.clone());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ids::unix_seconds;

    fn key(id: &str) -> DocKey {
        DocKey {
            epk: 1u128.into(),
            id: id.into(),
        }
    }

    fn doc() -> Option<Arc<StoredDoc>> {
        Some(Arc::new(StoredDoc {
            body: bytes::Bytes::from_static(b"{}"),
            etag: "\"e\"".into(),
            rid: [0; 16],
            unique: Box::default(),
            vectors: Default::default(),
            indexed: true,
        }))
    }

    #[test]
    fn reads_commits_after_a_point_up_to_the_replica() {
        let mut h = ChangeHistory::default();
        let now = unix_seconds();
        h.record(1, &key("a"), doc(), None, now);
        h.record(2, &key("a"), None, doc().map(|d| (1, d)), now);
        h.record(3, &key("b"), doc(), None, now);
        let lsns = |v: Vec<HistoryEntry>| v.iter().map(|e| e.lsn).collect::<Vec<_>>();
        assert_eq!(lsns(h.after(0, 3, |_| true, 10).unwrap()), vec![1, 2, 3]);
        assert_eq!(lsns(h.after(1, 2, |_| true, 10).unwrap()), vec![2]);
        assert_eq!(lsns(h.after(0, 3, |k| k.id == "b", 10).unwrap()), vec![3]);
        assert_eq!(lsns(h.after(0, 3, |_| true, 2).unwrap()), vec![1, 2]);
        assert!(h.after(3, 3, |_| true, 10).unwrap().is_empty());
    }

    #[test]
    fn commits_leave_the_window_by_age_and_count() {
        let mut h = ChangeHistory::default();
        let now = unix_seconds();
        h.record(1, &key("a"), doc(), None, now - RETENTION_SECONDS - 5);
        h.record(2, &key("a"), doc(), None, now);
        assert_eq!(h.after(0, 2, |_| true, 10).unwrap_err(), 2);
        assert_eq!(h.after(1, 2, |_| true, 10).unwrap().len(), 1);
        for lsn in 3..(RETENTION_CHANGES as u64 + 10) {
            h.record(lsn, &key("a"), doc(), None, now);
        }
        assert!(h.after(5, u64::MAX, |_| true, 1).is_err());
        assert!(h.after(20, u64::MAX, |_| true, 1).is_ok());
    }
}
