//! The replica and quota headers the service's backend sends with every answer that reached a
//! partition (point operations and their errors, read feeds, single-range query pages, change-feed
//! pages, batches),
//! which SDKs surface in their diagnostics and response-header maps:
//! `lsn`, `x-ms-item-lsn`, `x-ms-global-committed-lsn`, `x-ms-quorum-acked-lsn`,
//! `x-ms-cosmos-llsn`, `x-ms-cosmos-item-llsn`, `x-ms-cosmos-quorum-acked-llsn`,
//! `x-ms-current-write-quorum`, `x-ms-current-replica-set-size`, `x-ms-xp-role`,
//! `x-ms-number-of-read-regions`; and, for a container (and for the range a change-feed page
//! reads), `x-ms-resource-quota` / `x-ms-resource-usage`.
//!
//! The values are pure functions of the partition's replication state ([`ReplicaState`]); the
//! emulator's one replica per region stands for the service's replica set.

use crate::exchange::RequestCtx;
use crate::protocol::headers;
use crate::store::{Container, Partition};

/// Replicas a write waits for, and the replica-set size, that the headers report.
const WRITE_QUORUM: u32 = 3;
const REPLICA_SET_SIZE: u32 = 4;
/// `x-ms-xp-role` of a primary replica (the write region) and of a secondary.
const PRIMARY: u32 = 1;
const SECONDARY: u32 = 2;

/// Largest item and container the quota header announces, as the service's defaults (KB).
const DOCUMENT_SIZE_KB: u64 = 2048;
const COLLECTION_SIZE_KB: u64 = 50 * 1024 * 1024;

/// What the replica headers of one answer are computed from.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ReplicaState {
    /// The LSN the answer was served at (the commit's LSN for a write).
    pub lsn: u64,
    /// The LSN of the item the answer returns or wrote, when it is about one item.
    pub item_lsn: Option<u64>,
    /// The partition's committed LSN (the write region's).
    pub committed: u64,
    /// The lowest LSN every region's replica holds.
    pub everywhere: u64,
    /// Whether the serving region takes writes.
    pub writes_here: bool,
    /// The account's regions.
    pub regions: usize,
}

/// The headers for `state`, in a fixed order.
pub(super) fn replica_headers(state: &ReplicaState) -> Vec<(&'static str, String)> {
    let mut out = vec![
        (headers::LSN, state.lsn.to_string()),
        (headers::COSMOS_LLSN, state.lsn.to_string()),
        (headers::GLOBAL_COMMITTED_LSN, state.everywhere.to_string()),
        (headers::QUORUM_ACKED_LSN, state.committed.to_string()),
        (
            headers::COSMOS_QUORUM_ACKED_LLSN,
            state.committed.to_string(),
        ),
        (headers::CURRENT_WRITE_QUORUM, WRITE_QUORUM.to_string()),
        (
            headers::CURRENT_REPLICA_SET_SIZE,
            REPLICA_SET_SIZE.to_string(),
        ),
        (
            headers::XP_ROLE,
            if state.writes_here {
                PRIMARY
            } else {
                SECONDARY
            }
            .to_string(),
        ),
        (
            headers::NUMBER_OF_READ_REGIONS,
            state.regions.saturating_sub(1).to_string(),
        ),
    ];
    if let Some(item) = state.item_lsn {
        out.push((headers::ITEM_LSN, item.to_string()));
        out.push((headers::COSMOS_ITEM_LLSN, item.to_string()));
    }
    out
}

/// [`ReplicaState`] of `partition` for an answer served by `ctx`'s region at `lsn`.
pub(super) fn replica_state(
    ctx: &RequestCtx<'_>,
    partition: &Partition,
    lsn: u64,
    item_lsn: Option<u64>,
) -> ReplicaState {
    let topology = &ctx.shared.store.topology;
    ReplicaState {
        lsn,
        item_lsn,
        committed: partition.committed_lsn(),
        everywhere: partition.progress(ctx.now).into_iter().min().unwrap_or(lsn),
        writes_here: topology.can_write(ctx.region),
        regions: topology.regions().len(),
    }
}

/// `x-ms-resource-quota` and `x-ms-resource-usage` of a container holding `documents` items of
/// `bytes` bytes in all, in the service's `name=value;` form (sizes in KB, -1: no limit).
pub(super) fn quota_headers(documents: u64, bytes: u64) -> [(&'static str, String); 2] {
    let kb = bytes.div_ceil(1024);
    [
        (
            headers::RESOURCE_QUOTA,
            format!(
                "documentSize={DOCUMENT_SIZE_KB};documentsSize={COLLECTION_SIZE_KB};documentsCount=-1;collectionSize={COLLECTION_SIZE_KB};"
            ),
        ),
        (
            headers::RESOURCE_USAGE,
            format!("documentSize=0;documentsSize={kb};documentsCount={documents};collectionSize={kb};"),
        ),
    ]
}

/// `x-ms-alt-content-path` (`dbs/{db}/colls/{coll}`) and `x-ms-content-path` (the container's
/// `_rid`): how the Python SDK files the session token an answer carries.
pub(super) fn container_paths(
    ctx: &RequestCtx<'_>,
    db: &str,
    container: &Container,
) -> [(&'static str, String); 2] {
    let db_id = ctx
        .shared
        .store
        .catalog
        .database(db)
        .map_or_else(|| db.to_owned(), |d| d.id.clone());
    [
        (
            headers::ALT_CONTENT_PATH,
            format!("dbs/{db_id}/colls/{}", container.id),
        ),
        (headers::CONTENT_PATH, container.rid.clone()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(h: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
        h.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn replica_headers_follow_the_replication_state() {
        let state = ReplicaState {
            lsn: 7,
            item_lsn: Some(5),
            committed: 9,
            everywhere: 4,
            writes_here: false,
            regions: 3,
        };
        let h = replica_headers(&state);
        for (name, want) in [
            (headers::LSN, "7"),
            (headers::COSMOS_LLSN, "7"),
            (headers::GLOBAL_COMMITTED_LSN, "4"),
            (headers::QUORUM_ACKED_LSN, "9"),
            (headers::COSMOS_QUORUM_ACKED_LLSN, "9"),
            (headers::XP_ROLE, "2"),
            (headers::NUMBER_OF_READ_REGIONS, "2"),
            (headers::ITEM_LSN, "5"),
            (headers::COSMOS_ITEM_LLSN, "5"),
            (headers::CURRENT_WRITE_QUORUM, "3"),
            (headers::CURRENT_REPLICA_SET_SIZE, "4"),
        ] {
            assert_eq!(value(&h, name), Some(want), "{name}");
        }
        let feed = replica_headers(&ReplicaState {
            item_lsn: None,
            writes_here: true,
            regions: 1,
            ..state
        });
        assert_eq!(value(&feed, headers::ITEM_LSN), None);
        assert_eq!(value(&feed, headers::XP_ROLE), Some("1"));
        assert_eq!(value(&feed, headers::NUMBER_OF_READ_REGIONS), Some("0"));
    }

    #[test]
    fn quota_and_usage_are_name_value_lists_in_kb() {
        let [(q, quota), (u, usage)] = quota_headers(3, 2049);
        assert_eq!((q, u), (headers::RESOURCE_QUOTA, headers::RESOURCE_USAGE));
        assert!(quota.contains("documentsCount=-1;"), "{quota}");
        assert_eq!(
            usage,
            "documentSize=0;documentsSize=3;documentsCount=3;collectionSize=3;"
        );
    }
}
