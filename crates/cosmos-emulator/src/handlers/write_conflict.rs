//! Concurrent writes of one item in a multi-write account: a write taken by a region whose
//! replica has not yet received the item's latest version (written in another region within the
//! replication lag) conflicts with it, and the container's conflict resolution policy
//! ([`ConflictPolicy`]) decides which version stands. Both writes are accepted. A later write
//! (or delete) that stands is committed. One that does not stand is not committed: the region
//! that took it serves it (point reads, queries, its own later writes' checks) until the version
//! it conflicts with reaches its replica ([`Partition::keep_local`]); from then on every region
//! reads what the policy decided. Under a `Custom` policy the merge procedure decides
//! (`conflict_merge.rs`; its writes reach every region, the writing one included, only when the
//! versions have met), or with none (or a failing one) the later write goes to the conflicts
//! feed, where it shows from that time on.

use std::sync::Arc;

use serde_json::Value;
use tokio::time::Instant;

use super::target::Target;
use crate::exchange::RequestCtx;
use crate::store::conflict_policy::{ConflictPolicy, Outcome};
use crate::store::{DocKey, Partition, StoredDoc};

/// The version of `key` a write checks its preconditions against (exists, `If-Match`): in a
/// multi-write account the one the writing region reads (its replica's, or its own conflicting
/// write while it serves one), so two regions may both create, or both replace from the same
/// version, within the replication lag; else the latest.
pub(super) fn as_seen_by_writer<'p>(
    ctx: &RequestCtx<'_>,
    partition: &'p Partition,
    key: &DocKey,
) -> Option<&'p Arc<StoredDoc>> {
    if ctx.shared.store.topology.multi_write() {
        let seen = partition.visible_lsn(ctx.region, Instant::now());
        partition.read_in(key, seen, ctx.region)
    } else {
        partition.latest(key)
    }
}

/// The LSN the serving region's replica holds (what a write that did not stand answers with: its
/// session token lets the region serve the write back at once).
pub(super) fn region_lsn(ctx: &RequestCtx<'_>, partition: &Partition) -> u64 {
    partition.visible_lsn(ctx.region, Instant::now())
}

/// Whether the write `doc` (`None`: a delete) of `key` conflicts with a version this region has
/// not seen and the policy does not let it stand as written (the write is then not to be
/// committed: the region serves it until the versions meet; a `Custom` policy has recorded it in
/// the conflicts feed or run the merge procedure).
pub(super) fn settled_against_unseen(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &mut Partition,
    key: &DocKey,
    doc: Option<&Arc<StoredDoc>>,
    conflicting: Vec<Value>,
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
    let outcome = policy.decide(earlier.as_ref(), later.as_ref());
    if outcome == Outcome::Stands {
        return false;
    }
    // What the region read before this write: the operation the feed names.
    let held = partition.read_in(key, seen, ctx.region).cloned();
    let meet = partition.keep_local(key, ctx.region, seen, doc.cloned());
    match outcome {
        Outcome::Stands | Outcome::Loses => {}
        Outcome::Merge => {
            let resolved = match &policy {
                ConflictPolicy::Custom(Some(name)) => super::conflict_merge::resolved_by_procedure(
                    ctx,
                    target,
                    partition,
                    name,
                    later,
                    earlier,
                    conflicting,
                ),
                _ => false,
            };
            if !resolved {
                record(target, held.as_deref(), doc.map(|d| d.as_ref()), meet);
            }
        }
        Outcome::Recorded => record(target, held.as_deref(), doc.map(|d| d.as_ref()), meet),
    }
    true
}

/// The other items of `key`'s logical partition that hold one of the unique key values of the
/// write `doc`, as JSON, when the writing region had received none of them (in a multi-write
/// account such a collision is no refusal where the write is taken: it comes to light when the
/// versions meet, and a merge procedure gets them as `conflictingItems`). None when the region
/// holds one of them (the write is refused there) or the account has one write region.
pub(super) fn unseen_collisions(
    ctx: &RequestCtx<'_>,
    partition: &Partition,
    key: &DocKey,
    doc: &StoredDoc,
) -> Option<Vec<Value>> {
    if !ctx.shared.store.topology.multi_write() {
        return None;
    }
    let seen = partition.visible_lsn(ctx.region, Instant::now());
    let mut owners: Vec<DocKey> = Vec::new();
    for entry in doc.unique.iter() {
        let Some(owner) = partition
            .unique_owner(key.epk, entry)
            .filter(|o| *o != key.id)
        else {
            continue;
        };
        let owner = DocKey {
            epk: key.epk,
            id: owner.to_owned(),
        };
        let held = partition.read_in(&owner, seen, ctx.region);
        if held.is_some_and(|d| d.unique.contains(entry)) {
            return None;
        }
        if !owners.contains(&owner) {
            owners.push(owner);
        }
    }
    let items = owners
        .iter()
        .filter_map(|owner| serde_json::from_slice(&partition.latest(owner)?.body).ok())
        .collect();
    Some(items)
}

/// Puts the write `doc` (`None`: a delete), taken by a region that read `held` of the item, in
/// the conflicts feed, to show from `shows_at` on (when the versions meet).
fn record(
    target: &Target,
    held: Option<&StoredDoc>,
    doc: Option<&StoredDoc>,
    shows_at: Option<Instant>,
) {
    // The operation as the writing region saw it: a create when it held no version; a deleted
    // item's content is the version the region deleted.
    let (operation, content) = match (doc, held) {
        (Some(doc), None) => ("create", doc),
        (Some(doc), Some(_)) => ("replace", doc),
        (None, Some(held)) => ("delete", held),
        (None, None) => return,
    };
    target
        .container
        .conflicts
        .record(&target.container.rid_bytes, content, operation, shows_at);
}
