//! A container's conflicts feed (`/dbs/{db}/colls/{coll}/conflicts`): the writes a `Custom`
//! conflict resolution policy left for the application ([`super::conflict_policy`]), each as the
//! service shapes a conflict resource: `id`, `_rid`, `resourceId` (the item's `_rid`),
//! `resourceType` `document`, `operationType`, `content` (the item's JSON text), `_self`, `_etag`
//! and `_ts`. At most [`MOST_CONFLICTS`] are kept, the oldest dropped first. One is read or
//! deleted by its id.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use serde_json::json;

use super::StoredDoc;
use crate::protocol::ids::{encode_rid, new_etag, unix_seconds};

/// Most conflicts one container keeps.
pub(crate) const MOST_CONFLICTS: usize = 10_000;

/// The conflicts of one container, oldest first.
#[derive(Debug, Default)]
pub(crate) struct ConflictLog {
    entries: Mutex<VecDeque<(String, Bytes)>>,
    next: AtomicU64,
}

impl ConflictLog {
    /// Records that the write `doc` (an item `operation`: `create` or `replace`) of the
    /// container with `_rid` bytes `container_rid` conflicted and was left to the application.
    pub(crate) fn record(&self, container_rid: &[u8; 8], doc: &StoredDoc, operation: &str) {
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
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MOST_CONFLICTS {
                entries.pop_front();
            }
            entries.push_back((rid, Bytes::from(body.to_string())));
        }
    }

    /// The conflicts, oldest first.
    pub(crate) fn list(&self) -> Vec<Bytes> {
        self.entries
            .lock()
            .map(|e| e.iter().map(|(_, body)| body.clone()).collect())
            .unwrap_or_default()
    }

    /// The conflict with id `id`.
    pub(crate) fn get(&self, id: &str) -> Option<Bytes> {
        let entries = self.entries.lock().ok()?;
        entries
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, b)| b.clone())
    }

    /// Removes the conflict with id `id`; whether there was one.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let Ok(mut entries) = self.entries.lock() else {
            return false;
        };
        let at = entries.iter().position(|(k, _)| k == id);
        at.and_then(|i| entries.remove(i)).is_some()
    }

    /// A copy (a split container keeps its conflicts).
    pub(crate) fn copy(&self) -> Self {
        Self {
            entries: Mutex::new(self.entries.lock().map(|e| e.clone()).unwrap_or_default()),
            next: AtomicU64::new(self.next.load(Ordering::Relaxed)),
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
        log.record(&[0, 0, 0, 1, 0x80, 0, 0, 1], &doc, "create");
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
            log.record(&[0; 8], &doc, "replace");
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
}
