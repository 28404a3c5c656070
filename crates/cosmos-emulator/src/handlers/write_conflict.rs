//! Concurrent writes of one item in a multi-write account: a write taken by a region whose
//! replica has not yet received the item's latest version (written in another region within the
//! replication lag) conflicts with it, and the container's conflict resolution policy
//! ([`ConflictPolicy`]) decides at once which version stands, as the service decides when the
//! regions converge. Both writes are accepted; a later write (or delete) that loses is not
//! committed; under a `Custom` policy the merge procedure decides (`conflict_merge.rs`), or
//! with none (or a failing one) the later write goes to the conflicts feed.

use std::sync::Arc;

use serde_json::Value;
use tokio::time::Instant;

use super::target::Target;
use crate::exchange::RequestCtx;
use crate::store::conflict_policy::{ConflictPolicy, Outcome};
use crate::store::{DocKey, Partition, StoredDoc};

/// The version of `key` a write checks its preconditions against (exists, `If-Match`): in a
/// multi-write account the one the writing region's replica holds, so two regions may both
/// create, or both replace from the same version, within the replication lag; else the latest.
pub(super) fn as_seen_by_writer<'p>(
    ctx: &RequestCtx<'_>,
    partition: &'p Partition,
    key: &DocKey,
) -> Option<&'p Arc<StoredDoc>> {
    if ctx.shared.store.topology.multi_write() {
        partition.read_at(key, partition.visible_lsn(ctx.region, Instant::now()))
    } else {
        partition.latest(key)
    }
}

/// Whether the write `doc` (`None`: a delete) of `key` conflicts with a version this region has
/// not seen and the policy keeps that version (the write is then not to be committed; a `Custom`
/// policy has recorded it in the conflicts feed).
pub(super) fn settled_against_unseen(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &mut Partition,
    key: &DocKey,
    doc: Option<&StoredDoc>,
) -> bool {
    if !ctx.shared.store.topology.multi_write() {
        return false;
    }
    let seen = partition.visible_lsn(ctx.region, Instant::now());
    let unseen = partition
        .item_lsn(key, partition.committed_lsn())
        .is_some_and(|lsn| lsn > seen);
    if !unseen {
        return false;
    }
    let parse = |body: &[u8]| serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    let definition = parse(&target.container.definition().body);
    let policy = definition
        .as_object()
        .map(ConflictPolicy::of_definition)
        .unwrap_or(ConflictPolicy::LastWriterWins(vec!["_ts".into()]));
    let earlier = partition.latest(key).map(|d| parse(&d.body));
    let later = doc.map(|d| parse(&d.body));
    match policy.decide(earlier.as_ref(), later.as_ref()) {
        Outcome::Stands => false,
        Outcome::Loses => true,
        Outcome::Merge => {
            let ConflictPolicy::Custom(Some(name)) = &policy else {
                return false;
            };
            if !super::conflict_merge::resolved_by_procedure(
                ctx, target, partition, name, later, earlier,
            ) {
                record(target, partition, key, seen, doc);
            }
            true
        }
        Outcome::Recorded => {
            record(target, partition, key, seen, doc);
            true
        }
    }
}

/// Puts the write `doc` (`None`: a delete) of `key`, taken by a region whose replica was at
/// `seen`, in the conflicts feed.
fn record(
    target: &Target,
    partition: &Partition,
    key: &DocKey,
    seen: u64,
    doc: Option<&StoredDoc>,
) {
    // The operation as the writing region saw it: a create when it held no version; a deleted
    // item's content is the version the region deleted.
    let held = partition.read_at(key, seen);
    let (operation, content) = match (doc, held) {
        (Some(doc), None) => ("create", doc),
        (Some(doc), Some(_)) => ("replace", doc),
        (None, Some(held)) => ("delete", held.as_ref()),
        (None, None) => return,
    };
    target
        .container
        .conflicts
        .record(&target.container.rid_bytes, content, operation);
}
