//! A container's conflicts feed (`/dbs/{db}/colls/{coll}/conflicts`): the writes a `Custom`
//! conflict resolution policy left for the application ([`super::conflict_policy`]), each as the
//! service shapes a conflict resource: `id`, `_rid`, `resourceId` (the item's `_rid`),
//! `resourceType` `document`, `operationType`, `content` (the item's JSON text), `_self`, `_etag`
//! and `_ts`. At most [`MOST_CONFLICTS`] are kept, the oldest dropped first. One is read or
//! deleted by its id. A conflict is recorded when the write is taken but shows in the feed only
//! from the time replication brings the two versions together (the replication lag). With a
//! data directory each conflict recorded and each one deleted is
//! reported to a [`ConflictSink`], under the feed's lock, so the records keep the feed's order.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::json;
use tokio::time::Instant;

use super::StoredDoc;
use crate::protocol::ids::{encode_rid, new_etag, unix_seconds};

/// Most conflicts one container keeps.
pub(crate) const MOST_CONFLICTS: usize = 10_000;

/// Takes the changes of conflicts feeds (it is called under a feed's lock, so it must only
/// queue them, never wait).
pub(crate) trait ConflictJournal: Send + Sync {
    /// Conflict `id` (resource JSON `body`) was added to the feed of container `container_rid`,
    /// whose counter of conflicts ever recorded is now `next`.
    fn added(&self, container_rid: &str, next: u64, id: &str, body: &Bytes);
    /// Conflict `id` was deleted from the feed of container `container_rid`.
    fn removed(&self, container_rid: &str, id: &str);
}

/// A [`ConflictJournal`] and the container whose feed reports to it.
#[derive(Clone)]
pub(crate) struct ConflictSink {
    log: Arc<dyn ConflictJournal>,
    container_rid: Arc<str>,
}

impl ConflictSink {
    /// Reports the feed changes of container `container_rid` to `log`.
    pub(crate) fn new(log: Arc<dyn ConflictJournal>, container_rid: &str) -> Self {
        Self {
            log,
            container_rid: container_rid.into(),
        }
    }
}

impl std::fmt::Debug for ConflictSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConflictSink")
            .field("container_rid", &self.container_rid)
            .finish_non_exhaustive()
    }
}

/// The conflicts of one container, oldest first.
#[derive(Debug, Default)]
pub(crate) struct ConflictLog {
    entries: Mutex<VecDeque<Entry>>,
    /// How many conflicts were ever recorded: the next one's id counts on from it.
    next: AtomicU64,
    sink: Mutex<Option<ConflictSink>>,
}

/// One conflict: its id, resource JSON and, until it shows in the feed, when it does.
#[derive(Clone, Debug)]
struct Entry {
    id: String,
    body: Bytes,
    shows_at: Option<Instant>,
}

impl Entry {
    fn shown(&self, now: Instant) -> bool {
        self.shows_at.is_none_or(|at| at <= now)
    }
}

/// Adds a conflict at the end of `entries`, dropping the oldest past [`MOST_CONFLICTS`].
fn push_bounded(entries: &mut VecDeque<Entry>, id: String, body: Bytes, shows_at: Option<Instant>) {
    if entries.len() >= MOST_CONFLICTS {
        entries.pop_front();
    }
    entries.push_back(Entry { id, body, shows_at });
}

impl ConflictLog {
    /// Reports every later change of the feed to `sink`.
    pub(crate) fn record_to(&self, sink: ConflictSink) {
        *self.sink.lock().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    fn sink(&self) -> Option<ConflictSink> {
        self.sink.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Records that the write `doc` (an item `operation`: `create`, `replace` or `delete`) of
    /// the container with `_rid` bytes `container_rid` conflicted and was left to the
    /// application; it shows in the feed from `shows_at` on (None: at once).
    pub(crate) fn record(
        &self,
        container_rid: &[u8; 8],
        doc: &StoredDoc,
        operation: &str,
        shows_at: Option<Instant>,
    ) {
        let sink = self.sink();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut rid = [0u8; 16];
        rid[..8].copy_from_slice(container_rid);
        rid[8..].copy_from_slice(&n.to_be_bytes());
        let rid = encode_rid(&rid);
        let body = json!({
            "id": &rid,
            "_rid": &rid,
            "resourceId": encode_rid(&doc.rid),
            "resourceType": "document",
            "operationType": operation,
            "content": String::from_utf8_lossy(&doc.body),
            "_self": format!(
                "dbs/{}/colls/{}/conflicts/{rid}/",
                encode_rid(&container_rid[..4]),
                encode_rid(container_rid)
            ),
            "_etag": new_etag(),
            "_ts": unix_seconds(),
        });
        let body = Bytes::from(body.to_string());
        if let Some(sink) = &sink {
            sink.log.added(&sink.container_rid, n, &rid, &body);
        }
        push_bounded(&mut entries, rid, body, shows_at);
    }

    /// The conflicts, oldest first.
    pub(crate) fn list(&self) -> Vec<Bytes> {
        let now = Instant::now();
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .iter()
            .filter(|e| e.shown(now))
            .map(|e| e.body.clone())
            .collect()
    }

    /// The conflict with id `id`.
    pub(crate) fn get(&self, id: &str) -> Option<Bytes> {
        let now = Instant::now();
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .iter()
            .find(|e| e.id == id && e.shown(now))
            .map(|e| e.body.clone())
    }

    /// Removes the conflict with id `id`; whether there was one.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let sink = self.sink();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let at = entries.iter().position(|e| e.id == id && e.shown(now));
        let removed = at.and_then(|i| entries.remove(i)).is_some();
        if removed {
            if let Some(sink) = &sink {
                sink.log.removed(&sink.container_rid, id);
            }
        }
        removed
    }

    /// The counter of conflicts ever recorded and the conflicts with their ids, oldest first,
    /// those not showing yet included (what a data directory's snapshot keeps).
    pub(crate) fn kept(&self) -> (u64, Vec<(String, Bytes)>) {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        (
            self.next.load(Ordering::Relaxed),
            entries
                .iter()
                .map(|e| (e.id.clone(), e.body.clone()))
                .collect(),
        )
    }

    /// Puts back kept conflicts `added` (oldest first) recorded when the counter of conflicts
    /// ever recorded became `next`. A record the feed holds already (its counter is past `next`:
    /// read from a snapshot and again from the log after it) changes nothing, so the feed and
    /// its order come out as they were, and ids are never handed out twice. Nothing is reported
    /// to the sink. They show at once.
    pub(crate) fn restore(&self, next: u64, added: Vec<(String, Bytes)>) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if next <= self.next.load(Ordering::Relaxed) {
            return;
        }
        self.next.store(next, Ordering::Relaxed);
        for (id, body) in added {
            push_bounded(&mut entries, id, body, None);
        }
    }

    /// Removes a conflict whose deletion was kept; nothing is reported to the sink.
    pub(crate) fn restore_removal(&self, id: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|e| e.id != id);
    }

    /// A copy (a split container keeps its conflicts and where they are reported).
    pub(crate) fn copy(&self) -> Self {
        Self {
            entries: Mutex::new(
                self.entries
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
            ),
            next: AtomicU64::new(self.next.load(Ordering::Relaxed)),
            sink: Mutex::new(self.sink()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_are_shaped_as_the_service_shapes_them_and_bounded() {
        let log = ConflictLog::default();
        let doc = StoredDoc {
            body: Bytes::from_static(br#"{"id":"x","_rid":"AQ=="}"#),
            etag: "\"e\"".into(),
            rid: [1; 16],
            unique: Box::default(),
            vectors: Default::default(),
            indexed: true,
        };
        log.record(&[0, 0, 0, 1, 0x80, 0, 0, 1], &doc, "create", None);
        let listed = log.list();
        let c: serde_json::Value = serde_json::from_slice(&listed[0]).unwrap();
        assert_eq!(c["resourceType"], "document");
        assert_eq!(c["operationType"], "create");
        assert_eq!(c["content"], r#"{"id":"x","_rid":"AQ=="}"#);
        assert_eq!(c["resourceId"], encode_rid(&[1; 16]));
        assert_eq!(c["id"], c["_rid"]);
        assert!(c["_self"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/conflicts/{}/", c["_rid"].as_str().unwrap())));
        for _ in 0..MOST_CONFLICTS + 5 {
            log.record(&[0; 8], &doc, "replace", None);
        }
        assert_eq!(log.list().len(), MOST_CONFLICTS);
        assert_eq!(log.copy().list().len(), MOST_CONFLICTS);
        let last: serde_json::Value = serde_json::from_slice(log.list().last().unwrap()).unwrap();
        let id = last["id"].as_str().unwrap();
        assert_eq!(log.get(id).as_deref(), log.list().last().map(|b| &b[..]));
        assert!(
            log.get(c["id"].as_str().unwrap()).is_none(),
            "dropped as oldest"
        );
        assert!(log.remove(id));
        assert!(!log.remove(id));
        assert!(log.get(id).is_none());
        assert_eq!(log.list().len(), MOST_CONFLICTS - 1);
    }

    /// Collects what a feed reports: (next, id, body) for an addition, (0, id, None) for a
    /// deletion.
    #[derive(Default)]
    struct Collected(Mutex<Vec<(u64, String, Option<Bytes>)>>);

    impl ConflictJournal for Collected {
        fn added(&self, _container: &str, next: u64, id: &str, body: &Bytes) {
            self.0
                .lock()
                .unwrap()
                .push((next, id.to_owned(), Some(body.clone())));
        }
        fn removed(&self, _container: &str, id: &str) {
            self.0.lock().unwrap().push((0, id.to_owned(), None));
        }
    }

    fn replay(log: &ConflictLog, records: &[(u64, String, Option<Bytes>)]) {
        for (next, id, body) in records {
            match body {
                Some(body) => log.restore(*next, vec![(id.clone(), body.clone())]),
                None => log.restore_removal(id),
            }
        }
    }

    #[test]
    fn a_feed_put_back_from_its_records_is_the_feed_it_was_and_counts_on() {
        let doc = StoredDoc {
            body: Bytes::from_static(br#"{"id":"x"}"#),
            etag: "\"e\"".into(),
            rid: [2; 16],
            unique: Box::default(),
            vectors: Default::default(),
            indexed: true,
        };
        let container = [0, 0, 0, 1, 0x80, 0, 0, 1];
        let journal = Arc::new(Collected::default());
        let log = ConflictLog::default();
        log.record_to(ConflictSink::new(journal.clone(), "c"));
        for _ in 0..3 {
            log.record(&container, &doc, "create", None);
        }
        let second = {
            let (_, kept) = log.kept();
            kept[1].0.clone()
        };
        assert!(log.remove(&second));
        assert!(!log.remove(&second), "a second delete reports nothing");
        let records = journal.0.lock().unwrap().clone();
        assert_eq!(records.len(), 4, "three additions and one deletion");
        assert_eq!(
            records.iter().map(|r| r.0).collect::<Vec<_>>(),
            [1, 2, 3, 0]
        );

        // From the log alone.
        let back = ConflictLog::default();
        replay(&back, &records);
        assert_eq!(back.list(), log.list());
        assert_eq!(back.kept().0, 3);

        // From a snapshot taken after the second addition, then the whole log after it: the
        // records the snapshot holds already change nothing.
        let snapshot = ConflictLog::default();
        replay(&snapshot, &records[..2]);
        let (next, kept) = snapshot.kept();
        let back = ConflictLog::default();
        back.restore(next, kept);
        replay(&back, &records);
        assert_eq!(back.list(), log.list());

        // Restored, the feed reports nothing; a new conflict takes the next id, never an old one.
        let sink = Arc::new(Collected::default());
        back.record_to(ConflictSink::new(sink.clone(), "c"));
        back.record(&container, &doc, "replace", None);
        let (next, kept) = back.kept();
        assert_eq!(next, 4);
        let ids: Vec<&String> = kept.iter().map(|(id, _)| id).collect();
        assert_eq!(ids.len(), 3);
        assert!(!ids[..2].contains(&ids[2]) && *ids[2] != second, "{ids:?}");
        assert_eq!(sink.0.lock().unwrap().len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_conflict_shows_from_its_time_on() {
        let doc = StoredDoc {
            body: Bytes::from_static(br#"{"id":"x"}"#),
            etag: "\"e\"".into(),
            rid: [2; 16],
            unique: Box::default(),
            vectors: Default::default(),
            indexed: true,
        };
        let log = ConflictLog::default();
        let at = Instant::now() + std::time::Duration::from_millis(500);
        log.record(&[0; 8], &doc, "create", Some(at));
        let (_, kept) = log.kept();
        let id = kept[0].0.clone();
        assert!(log.list().is_empty());
        assert!(log.get(&id).is_none());
        assert!(!log.remove(&id), "not there yet");
        tokio::time::advance(std::time::Duration::from_millis(500)).await;
        assert_eq!(log.list().len(), 1);
        assert!(log.get(&id).is_some());
        assert!(log.remove(&id));
        assert!(log.list().is_empty());
    }
}
