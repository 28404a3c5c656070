//! Locating the container, partition key and physical partition a point operation addresses.

use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};

use serde_json::{Map, Value};

use super::consistency::require_write_region;
use crate::epk::Epk;
use crate::exchange::RequestCtx;
use crate::protocol::{headers, ApiError};
use crate::store::{live, Container, DocKey, Partition};

/// Where a point operation lands.
pub(super) struct Target {
    pub container: Arc<Container>,
    /// The owning database's id (the request may have named it by `_rid`).
    pub db_id: String,
    pub epk: Epk,
    pub range: usize,
}

impl Target {
    /// Resolves the container and the required partition key header (400 when missing or bad).
    pub(super) fn locate(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Self, ApiError> {
        let container = ctx.shared.store.catalog.container(db, coll)?;
        let raw = ctx.header(headers::PARTITION_KEY).ok_or_else(|| {
            ApiError::bad_request(format!(
                "PartitionKey value must be supplied for this operation: send the {} header, e.g. [\"value\"].",
                headers::PARTITION_KEY
            ))
        })?;
        let epk = container.point_epk(raw)?;
        let range = container.range_index(epk);
        let db_id = ctx
            .shared
            .store
            .catalog
            .database(db)
            .map_or_else(|| db.to_owned(), |d| d.id.clone());
        Ok(Self {
            container,
            db_id,
            epk,
            range,
        })
    }

    /// The item's key in its partition.
    pub(super) fn key(&self, id: &str) -> DocKey {
        DocKey {
            epk: self.epk,
            id: id.to_owned(),
        }
    }

    /// The container's name-based path, `dbs/{db}/colls/{coll}` (`x-ms-alt-content-path`).
    pub(super) fn alt_content_path(&self) -> String {
        format!("dbs/{}/colls/{}", self.db_id, self.container.id)
    }

    /// The partition key range id ("0", "1", ...).
    pub(super) fn range_id(&self) -> &str {
        self.container.range_id(self.range)
    }

    /// The partition, locked for reading.
    pub(super) fn read(&self) -> Result<RwLockReadGuard<'_, Partition>, ApiError> {
        self.container
            .partition(self.range)
            .and_then(|p| p.read().ok())
            .ok_or_else(lock_error)
            .and_then(live)
    }

    /// The partition, locked for writing, once the serving region is checked again under the lock
    /// (403/3 otherwise): a failover locks every partition before it moves the write region, so a
    /// write either commits before the switch or is refused after it.
    pub(super) fn write(
        &self,
        ctx: &RequestCtx<'_>,
    ) -> Result<RwLockWriteGuard<'_, Partition>, ApiError> {
        let partition = self
            .container
            .partition(self.range)
            .and_then(|p| p.write().ok())
            .ok_or_else(lock_error)
            .and_then(live)?;
        require_write_region(ctx)?;
        Ok(partition)
    }

    /// 400 unless the partition key inside `doc` is the one the header named.
    pub(super) fn check_document_key(&self, doc: &Map<String, Value>) -> Result<(), ApiError> {
        let inside = self
            .container
            .pk
            .epk_of_document(doc)
            .map_err(ApiError::bad_request)?;
        if inside != self.epk {
            return Err(ApiError::bad_request(
                "PartitionKey extracted from document doesn't match the one specified in the header.",
            )
            .with_sub_status(crate::store::PARTITION_KEY_MISMATCH));
        }
        Ok(())
    }

    /// The `_self` link of an item with resource id `rid`.
    pub(super) fn self_link(&self, rid: &[u8; 16]) -> String {
        self.container.item_self_link(rid)
    }
}

fn lock_error() -> ApiError {
    ApiError::new(
        500,
        "The partition's lock was poisoned by an earlier failure.",
    )
}
