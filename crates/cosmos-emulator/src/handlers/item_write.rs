//! Sealing an item for a write and committing writes in the serving region: the steps every
//! write path shares (items, PATCH, batches, scripts), below the conflict handling that only the
//! item handlers add.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::target::Target;
use crate::exchange::RequestCtx;
use crate::protocol::ApiError;
use crate::store::document::seal;
use crate::store::embeddings::Embeddings;
use crate::store::item_limits::{check_depth, check_size};
use crate::store::{DocKey, Partition, StoredDoc};

/// `map` checked and sealed (system properties added) as the item with resource id `rid`, with
/// its unique key values; nothing is committed (no lock is needed). Refuses an item whose `ttl`
/// is not -1 or a positive number of seconds (400), one deeper than
/// [`MAX_ITEM_DEPTH`](crate::store::item_limits::MAX_ITEM_DEPTH) (400) or larger than
/// [`MAX_ITEM_BYTES`](crate::store::item_limits::MAX_ITEM_BYTES) (413). `indexed` is false for an
/// item kept out of the index (`x-ms-indexing-directive: Exclude`).
pub(super) fn prepare_item(
    target: &Target,
    map: Map<String, Value>,
    rid: [u8; 16],
    indexed: bool,
) -> Result<Arc<StoredDoc>, ApiError> {
    check_depth(&map)?;
    crate::store::ttl::check_item_ttl(&map).map_err(ApiError::bad_request)?;
    let unique = target.container.unique_keys.entries(&map);
    let vectors = Embeddings::of_item(&map, &target.container.vector_paths);
    let sealed = seal(map, &rid, target.self_link(&rid));
    check_size(sealed.body.len())?;
    Ok(Arc::new(StoredDoc {
        body: sealed.body,
        etag: sealed.etag,
        rid,
        unique,
        vectors,
        indexed,
    }))
}

/// Commits a write in the serving region; the partition's clock reading is taken under its lock so
/// commits stay in time order.
pub(super) fn commit(
    ctx: &RequestCtx<'_>,
    partition: &mut Partition,
    key: &DocKey,
    doc: Option<Arc<StoredDoc>>,
) -> u64 {
    let lags = ctx.shared.store.sample_lags();
    partition.commit(key.clone(), doc, ctx.region, Instant::now(), &lags)
}

/// Commits a transaction's writes at one LSN in the serving region (see [`commit`]).
pub(super) fn commit_all(
    ctx: &RequestCtx<'_>,
    partition: &mut Partition,
    writes: Vec<(DocKey, Option<Arc<StoredDoc>>)>,
) -> u64 {
    let lags = ctx.shared.store.sample_lags();
    partition.commit_all(writes, ctx.region, Instant::now(), &lags)
}

/// Commits a merge procedure's writes at one LSN, taken by no region: the serving region (whose
/// write conflicted with a version it had not received) gets them with that version and not
/// before, every other region after its replication lag, so every region serves its own write
/// until the versions meet and the merge result from then on.
pub(super) fn commit_all_when_met(
    ctx: &RequestCtx<'_>,
    partition: &mut Partition,
    writes: Vec<(DocKey, Option<Arc<StoredDoc>>)>,
) -> u64 {
    let mut lags = ctx.shared.store.sample_lags();
    if let Some(own) = lags.get_mut(ctx.region) {
        // Replicas apply the log in order: this one reaches the region with the version before.
        *own = std::time::Duration::ZERO;
    }
    partition.commit_all(writes, NO_REGION, Instant::now(), &lags)
}

/// The origin of a commit no region took.
const NO_REGION: usize = usize::MAX;
