//! Point operations on items: create, upsert, read, replace, delete.

use std::sync::Arc;

use super::consistency::{if_match_ok, if_none_match_hit, read_lsn, require_write_region};
use super::item_reply::{item_reply, partition_error, with_item_lsn, write_error};
use super::item_write::{commit, commit_all, prepare_item};
use super::target::Target;
use crate::epk::EpkFilter;
use crate::exchange::request_class::flag;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::ids::unix_seconds;
use crate::protocol::{charge, headers, indexing_directive, ApiError};
use crate::store::document::{id_of, parse_object};
use crate::store::{DocKey, Partition, StoredDoc};

/// POST .../docs: create, or upsert with `x-ms-documentdb-is-upsert: true`.
///
/// The item is checked and sealed (serialized with its system properties) before the partition's
/// lock is taken, so a large item does not hold up the partition's readers while it is written
/// out; under the lock only the preconditions, the unique keys and the commit remain.
pub(super) fn create(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    target.check_document_key(&map)?;
    let upsert = flag(ctx.headers, headers::IS_UPSERT);
    let indexed = indexing_directive::indexed(ctx.header(headers::INDEXING_DIRECTIVE))?;
    let key = target.key(&id);
    let rid_seen = target.read()?.latest(&key).map(|d| d.rid);
    let rid = rid_seen.unwrap_or_else(|| target.container.next_item_rid(target.range));
    let prepared = prepare_item(&target, map, rid, indexed);
    let mut partition = target.write(ctx)?;
    let existing = super::write_conflict::as_seen_by_writer(ctx, &partition, &key).cloned();
    let refuse = |error| write_error(ctx, &target, &partition, error);
    if existing.is_some() && !upsert {
        return Err(refuse(ApiError::already_exists()));
    }
    // An upsert's If-Match is a replace's precondition: an upsert of a missing item creates it
    // whatever If-Match says, as the service does.
    if let (true, Some(current)) = (upsert, &existing) {
        if !if_match_ok(ctx, Some(current.etag.as_str())) {
            return Err(refuse(ApiError::precondition_failed()));
        }
    }
    // An item created or deleted meanwhile changes the resource id the item is sealed with.
    let rid_now = existing.as_ref().map(|d| d.rid);
    let prepared = if rid_now == rid_seen {
        prepared
    } else {
        let rid = rid_now.unwrap_or_else(|| target.container.next_item_rid(target.range));
        prepare_item(&target, parse_object(&ctx.body)?, rid, indexed)
    };
    let (doc, lsn) = prepared
        .and_then(|doc| commit_prepared(ctx, &target, &mut partition, &key, doc))
        .map_err(|e| write_error(ctx, &target, &partition, e))?;
    let status = if existing.is_some() { 200 } else { 201 };
    Ok(item_reply(
        ctx,
        &target,
        &partition,
        status,
        Some(&doc),
        lsn,
        charge::write(doc.body.len()),
    ))
}

/// GET .../docs/{id}
pub(super) fn read(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    id: &str,
) -> Result<Reply, ApiError> {
    let target = Target::locate(ctx, db, coll)?;
    let partition = target.read()?;
    let lsn = read_lsn(ctx, &partition, target.range_id())?;
    // An item past its time to live is not read, even before the sweep deletes it.
    // The region's own conflicting write while it serves one (multi-write).
    let doc = partition
        .read_in(&target.key(id), lsn, ctx.region)
        .filter(|doc| !target.container.expired(&doc.body, unix_seconds()))
        .ok_or_else(|| {
            partition_error(ctx, &target, &partition, lsn, ApiError::missing_entity())
        })?;
    if if_none_match_hit(ctx, &doc.etag) {
        return Ok(item_reply(
            ctx,
            &target,
            &partition,
            304,
            Some(doc),
            lsn,
            charge::not_modified(),
        ));
    }
    let reply = item_reply(
        ctx,
        &target,
        &partition,
        200,
        Some(doc),
        lsn,
        charge::point_read(doc.body.len()),
    );
    let item_lsn = partition.item_lsn(&target.key(id), lsn).unwrap_or(lsn);
    Ok(with_item_lsn(reply, item_lsn))
}

/// PUT .../docs/{id}: replaces the item (sealed before the lock is taken, as a create is); a
/// body naming another id renames it, as the service does (the same resource id under the new
/// id, the old id gone, at one LSN; 409 when the new id is taken).
pub(super) fn replace(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    id: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let map = parse_object(&ctx.body)?;
    let body_id = id_of(&map)?;
    target.check_document_key(&map)?;
    let indexed = indexing_directive::indexed(ctx.header(headers::INDEXING_DIRECTIVE))?;
    let key = target.key(id);
    let rid_seen = target.read()?.latest(&key).map(|d| d.rid);
    let mut map = Some(map);
    let prepared = rid_seen.and_then(|rid| Some(prepare_item(&target, map.take()?, rid, indexed)));
    let mut partition = target.write(ctx)?;
    let existing = current_for_write(ctx, &target, &partition, &key)?;
    let prepared = match prepared {
        Some(prepared) if rid_seen == Some(existing.rid) => prepared,
        _ => {
            let map = match map.take() {
                Some(map) => map,
                None => parse_object(&ctx.body)?,
            };
            prepare_item(&target, map, existing.rid, indexed)
        }
    };
    let (doc, lsn) = prepared
        .and_then(|doc| {
            if body_id == id {
                commit_prepared(ctx, &target, &mut partition, &key, doc)
            } else {
                rename(ctx, &target, &mut partition, &key, &body_id, doc)
            }
        })
        .map_err(|e| write_error(ctx, &target, &partition, e))?;
    Ok(item_reply(
        ctx,
        &target,
        &partition,
        200,
        Some(&doc),
        lsn,
        charge::write(doc.body.len()),
    ))
}

/// DELETE .../docs/{id}
pub(super) fn delete(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    id: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let key = target.key(id);
    let mut partition = target.write(ctx)?;
    let existing = current_for_write(ctx, &target, &partition, &key)?;
    let lsn = if super::write_conflict::settled_against_unseen(
        ctx,
        &target,
        &mut partition,
        &key,
        None,
        Vec::new(),
    ) {
        // Accepted, but the version this region had not seen stands; the region serves the
        // delete until it arrives, and the session token names what the region holds.
        super::write_conflict::region_lsn(ctx, &partition)
    } else {
        commit(ctx, &mut partition, &key, None)
    };
    Ok(item_reply(
        ctx,
        &target,
        &partition,
        204,
        None,
        lsn,
        charge::write(existing.body.len()),
    ))
}

/// POST .../colls/{coll}/operations/partitionkeydelete: deletes every item of the partition key
/// the header names, in one commit (the service runs it in the background and reports it done at
/// once; here it is done when the answer is sent). 200 without a body; the charge is that of the
/// deletes.
pub(super) fn delete_partition_key(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let mut partition = target.write(ctx)?;
    let items = partition.scan(
        partition.committed_lsn(),
        None,
        Some(EpkFilter::Key(target.epk)),
        usize::MAX,
    );
    let charge: f64 = items
        .iter()
        .map(|(_, doc)| charge::write(doc.body.len()))
        .sum();
    let lsn = if items.is_empty() {
        partition.committed_lsn()
    } else {
        let deletes = items.into_iter().map(|(key, _)| (key, None)).collect();
        commit_all(ctx, &mut partition, deletes)
    };
    Ok(item_reply(
        ctx,
        &target,
        &partition,
        200,
        None,
        lsn,
        charge.max(charge::metadata()),
    ))
}

/// The item a replace, delete or patch changes, in the committed state: 404 when it is missing,
/// 412 when an `If-Match` names another version (both with the partition's headers).
pub(super) fn current_for_write(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    key: &DocKey,
) -> Result<Arc<StoredDoc>, ApiError> {
    let refuse = |error| write_error(ctx, target, partition, error);
    let existing = super::write_conflict::as_seen_by_writer(ctx, partition, key)
        .cloned()
        .ok_or_else(|| refuse(ApiError::missing_entity()))?;
    if !if_match_ok(ctx, Some(&existing.etag)) {
        return Err(refuse(ApiError::precondition_failed()));
    }
    Ok(existing)
}

/// Commits an item [`prepare_item`] sealed: 409 (changing nothing) when another item of its
/// logical partition holds its values at a unique key.
pub(super) fn commit_prepared(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &mut Partition,
    key: &DocKey,
    doc: Arc<StoredDoc>,
) -> Result<(Arc<StoredDoc>, u64), ApiError> {
    let write = [(key.clone(), Some(doc.clone()))];
    let unique = target
        .container
        .unique_keys
        .check_writes(partition, &write)
        .map_err(|(_, e)| e);
    // A collision only with items this region has not received refuses nothing here when the
    // write conflicts with a version of its item it has not received either (a multi-write
    // account): it comes to light when the versions meet (a merge procedure gets the items).
    let conflicting = match &unique {
        Ok(()) => Vec::new(),
        Err(refusal) => match super::write_conflict::unseen_collisions(ctx, partition, key, &doc) {
            Some(items) if !items.is_empty() => items,
            _ => return Err(refusal.clone()),
        },
    };
    if super::write_conflict::settled_against_unseen(
        ctx,
        target,
        partition,
        key,
        Some(&doc),
        conflicting,
    ) {
        // Accepted, but the version this region had not seen stands; the region serves the
        // write until it arrives, and the session token names what the region holds.
        return Ok((doc, super::write_conflict::region_lsn(ctx, partition)));
    }
    unique?;
    let lsn = commit(ctx, partition, key, Some(doc.clone()));
    Ok((doc, lsn))
}

/// Renames the item at `old` to `new_id` as `doc` (which [`prepare_item`] sealed with the
/// item's resource id): one commit deletes `old` and writes the item; 409 when an item already
/// has `new_id`, or when another item of the logical partition holds its unique key values (the
/// item leaving does not count).
fn rename(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &mut Partition,
    old: &DocKey,
    new_id: &str,
    doc: Arc<StoredDoc>,
) -> Result<(Arc<StoredDoc>, u64), ApiError> {
    let new = target.key(new_id);
    if partition.latest(&new).is_some() {
        return Err(ApiError::already_exists());
    }
    let writes = vec![(old.clone(), None), (new, Some(doc.clone()))];
    target
        .container
        .unique_keys
        .check_writes(partition, &writes)
        .map_err(|(_, e)| e)?;
    let lsn = commit_all(ctx, partition, writes);
    Ok((doc, lsn))
}
