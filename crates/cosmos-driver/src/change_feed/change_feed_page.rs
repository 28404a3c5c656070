//! One page of a change feed, typed; and the all-versions-and-deletes item with its metadata.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diagnostics::DiagnosticsContext;

/// One page of a change feed: the changes one request returned (or none, when every range of
/// the feed answered "nothing new": the poll is over), the continuation after it, and what the
/// requests behind it cost and did.
#[derive(Debug)]
pub struct ChangeFeedPage<T> {
    pub(crate) items: Vec<T>,
    pub(crate) continuation: String,
    pub(crate) request_charge: f64,
    pub(crate) session_token: Option<String>,
    pub(crate) diagnostics: Vec<DiagnosticsContext>,
}

impl<T> ChangeFeedPage<T> {
    /// The changes, in commit order within their range.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The changes, owned.
    pub fn into_items(self) -> Vec<T> {
        self.items
    }

    /// Whether the page is empty: every range answered "nothing new" (304). The poll is over; the
    /// continuation is kept, so the caller can poll again later.
    pub fn is_caught_up(&self) -> bool {
        self.items.is_empty()
    }

    /// Where the feed stands after this page: one string covering every range of the feed.
    pub fn continuation(&self) -> &str {
        &self.continuation
    }

    /// Request units charged by the requests behind this page (including "nothing new" answers
    /// of other ranges read on the way).
    pub fn request_charge(&self) -> f64 {
        self.request_charge
    }

    /// The session token of the last answer.
    pub fn session_token(&self) -> Option<&str> {
        self.session_token.as_deref()
    }

    /// The diagnostics of each request behind this page, in order.
    pub fn diagnostics(&self) -> &[DiagnosticsContext] {
        &self.diagnostics
    }
}

/// What a change in an all-versions-and-deletes feed did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeOperation {
    /// The item was created.
    Create,
    /// The item was replaced (or upserted over an existing one).
    Replace,
    /// The item was deleted (or expired).
    Delete,
}

/// The metadata of one change in an all-versions-and-deletes feed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeMetadata {
    /// What the change did.
    pub operation_type: ChangeOperation,
    /// The change's log sequence number in its partition.
    pub lsn: u64,
    /// When the change was committed (Unix seconds).
    pub crts: u64,
    /// The LSN of the version this change replaced or deleted, when there was one.
    #[serde(default, rename = "previousImageLSN")]
    pub previous_image_lsn: Option<u64>,
    /// Whether a delete was an expiry.
    #[serde(default)]
    pub time_to_live_expired: bool,
    /// The deleted item's id (deletes only).
    #[serde(default)]
    pub id: Option<String>,
    /// The deleted item's partition key, as an object (deletes only).
    #[serde(default)]
    pub partition_key: Option<Value>,
}

/// One change of an all-versions-and-deletes feed: the item after the change (absent for a
/// delete), the version before it when the service sent it, and the change's metadata.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    try_from = "WireChange",
    bound(deserialize = "T: serde::de::DeserializeOwned")
)]
pub struct ChangeFeedItem<T> {
    /// The item after the change; `None` for a delete.
    pub current: Option<T>,
    /// The version before the change (deletes, and replaces when the container keeps
    /// pre-images).
    pub previous: Option<T>,
    /// What the change was.
    pub metadata: ChangeMetadata,
}

/// A change as the wire has it: the service writes a delete's `current` as `{}`.
#[derive(Deserialize)]
struct WireChange {
    #[serde(default)]
    current: Option<Value>,
    #[serde(default)]
    previous: Option<Value>,
    metadata: ChangeMetadata,
}

impl<T: serde::de::DeserializeOwned> TryFrom<WireChange> for ChangeFeedItem<T> {
    type Error = serde_json::Error;

    fn try_from(wire: WireChange) -> Result<Self, Self::Error> {
        let delete = wire.metadata.operation_type == ChangeOperation::Delete;
        let current = match wire.current {
            Some(_) if delete => None,
            Some(Value::Null) | None => None,
            Some(value) => Some(serde_json::from_value(value)?),
        };
        let previous = match wire.previous {
            Some(Value::Null) | None => None,
            Some(value) => Some(serde_json::from_value(value)?),
        };
        Ok(ChangeFeedItem {
            current,
            previous,
            metadata: wire.metadata,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_versions_items_read_as_the_wire_format_writes_them() {
        let create = r#"{"current":{"id":"a","n":1,"_lsn":4},"metadata":{"operationType":"create","lsn":4,"crts":1700000000,"timeToLiveExpired":false}}"#;
        let item: ChangeFeedItem<Value> = serde_json::from_str(create).unwrap();
        assert_eq!(item.metadata.operation_type, ChangeOperation::Create);
        assert_eq!(item.metadata.lsn, 4);
        assert_eq!(item.current.unwrap()["n"], 1);
        assert!(item.previous.is_none());

        let delete = r#"{"metadata":{"operationType":"delete","lsn":9,"crts":1700000001,"previousImageLSN":5,"timeToLiveExpired":false,"id":"a","partitionKey":{"pk":"p"}},"previous":{"id":"a","n":2}}"#;
        let item: ChangeFeedItem<Value> = serde_json::from_str(delete).unwrap();
        assert_eq!(item.metadata.operation_type, ChangeOperation::Delete);
        assert_eq!(item.metadata.previous_image_lsn, Some(5));
        assert_eq!(item.metadata.id.as_deref(), Some("a"));
        assert!(item.current.is_none());
        assert_eq!(item.previous.unwrap()["n"], 2);

        // The service writes a delete's current as an empty object: no current version, also
        // for an item type whose fields an empty object lacks.
        #[derive(Debug, Deserialize, Serialize, PartialEq)]
        struct Counted {
            n: i64,
        }
        let delete = r#"{"current":{},"metadata":{"operationType":"delete","lsn":9,"crts":1700000001,"previousImageLSN":5,"timeToLiveExpired":true,"id":"a"},"previous":{"n":2}}"#;
        let item: ChangeFeedItem<Counted> = serde_json::from_str(delete).unwrap();
        assert!(item.current.is_none());
        assert!(item.metadata.time_to_live_expired);
        assert_eq!(item.previous, Some(Counted { n: 2 }));
        // A replace without a previous image.
        let replace = r#"{"current":{"n":3},"metadata":{"operationType":"replace","lsn":10,"crts":1700000002,"previousImageLSN":9}}"#;
        let item: ChangeFeedItem<Counted> = serde_json::from_str(replace).unwrap();
        assert_eq!(
            (item.current, item.previous),
            (Some(Counted { n: 3 }), None)
        );
    }
}
