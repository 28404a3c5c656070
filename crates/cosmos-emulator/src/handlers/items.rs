//! Point operations on items: create, upsert, read, replace, delete.

use std::sync::Arc;

use tokio::time::Instant;

use super::consistency::{if_match_ok, read_lsn, require_write_region, session_token};
use super::target::Target;
use crate::protocol::{charge, headers, ApiError};
use crate::server::op_kind::flag;
use crate::server::{Reply, RequestCtx};
use crate::store::document::{id_of, parse_object, seal};
use crate::store::{DocKey, Partition, StoredDoc};

/// The partition's headers on an item answer: session token and `lsn` at `lsn`, and the range id.
fn partition_headers(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    lsn: u64,
) -> [(&'static str, String); 3] {
    [
        (
            headers::SESSION_TOKEN,
            session_token(ctx, partition, target.range_id(), lsn),
        ),
        (headers::LSN, lsn.to_string()),
        (
            headers::PARTITION_KEY_RANGE_ID,
            target.range_id().to_owned(),
        ),
    ]
}

/// The headers every item answer carries.
pub fn item_reply(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    status: u16,
    doc: Option<&StoredDoc>,
    lsn: u64,
    charge: f64,
) -> Reply {
    let body = match (status, doc) {
        (204 | 304, _) | (_, None) => bytes::Bytes::new(),
        (_, Some(d)) => d.body.clone(),
    };
    let mut reply = Reply::json(status, body, charge);
    for (name, value) in partition_headers(ctx, target, partition, lsn) {
        reply = reply.header(name, value);
    }
    if let Some(d) = doc {
        reply = reply.header(headers::ETAG, &d.etag);
    }
    reply
}

/// An error the partition itself decided (409, 412, a missing item's 404, a patch the item
/// refused): like a success it carries the session token, `lsn` and range id, at `lsn` (the state
/// the decision saw).
pub fn partition_error(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    lsn: u64,
    error: ApiError,
) -> ApiError {
    partition_headers(ctx, target, partition, lsn)
        .into_iter()
        .fold(error, |e, (name, value)| e.with_header(name, value))
}

/// [`partition_error`] for a write, decided on the committed state.
pub fn write_error(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    error: ApiError,
) -> ApiError {
    partition_error(ctx, target, partition, partition.committed_lsn(), error)
}

/// POST .../docs: create, or upsert with `x-ms-documentdb-is-upsert: true`.
pub fn create(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    target.check_document_key(&map)?;
    let upsert = flag(ctx.headers, headers::IS_UPSERT);
    let key = target.key(&id);
    let mut partition = target.write()?;
    let existing = partition.latest(&key).cloned();
    if existing.is_some() && !upsert {
        return Err(write_error(
            ctx,
            &target,
            &partition,
            ApiError::conflict("Entity with the specified id already exists in the system."),
        ));
    }
    if upsert && !if_match_ok(ctx, existing.as_ref().map(|d| d.etag.as_str())) {
        return Err(write_error(
            ctx,
            &target,
            &partition,
            ApiError::precondition_failed(),
        ));
    }
    let rid = existing
        .as_ref()
        .map(|d| d.rid)
        .unwrap_or_else(|| target.container.next_item_rid());
    let sealed = seal(map, &rid, target.self_link(&rid));
    let doc = Arc::new(StoredDoc {
        body: sealed.body,
        etag: sealed.etag,
        rid,
    });
    let lsn = commit(ctx, &mut partition, &key, Some(doc.clone()));
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
pub fn read(ctx: &RequestCtx<'_>, db: &str, coll: &str, id: &str) -> Result<Reply, ApiError> {
    let target = Target::locate(ctx, db, coll)?;
    let partition = target.read()?;
    let lsn = read_lsn(ctx, &partition, target.range_id())?;
    let doc = partition.read_at(&target.key(id), lsn).ok_or_else(|| {
        partition_error(ctx, &target, &partition, lsn, ApiError::missing_entity())
    })?;
    if ctx
        .header(headers::IF_NONE_MATCH)
        .is_some_and(|tag| tag.trim() == doc.etag)
    {
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
    Ok(item_reply(
        ctx,
        &target,
        &partition,
        200,
        Some(doc),
        lsn,
        charge::point_read(doc.body.len()),
    ))
}

/// PUT .../docs/{id}
pub fn replace(ctx: &RequestCtx<'_>, db: &str, coll: &str, id: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let map = parse_object(&ctx.body)?;
    let body_id = id_of(&map)?;
    if body_id != id {
        return Err(ApiError::bad_request(format!(
            "The id in the body ({body_id:?}) is not the id in the URL ({id:?}); replace cannot rename an item."
        )));
    }
    target.check_document_key(&map)?;
    let key = target.key(id);
    let mut partition = target.write()?;
    let existing = current_for_write(ctx, &target, &partition, &key)?;
    let sealed = seal(map, &existing.rid, target.self_link(&existing.rid));
    let doc = Arc::new(StoredDoc {
        body: sealed.body,
        etag: sealed.etag,
        rid: existing.rid,
    });
    let lsn = commit(ctx, &mut partition, &key, Some(doc.clone()));
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
pub fn delete(ctx: &RequestCtx<'_>, db: &str, coll: &str, id: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let key = target.key(id);
    let mut partition = target.write()?;
    let existing = current_for_write(ctx, &target, &partition, &key)?;
    let lsn = commit(ctx, &mut partition, &key, None);
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

/// The item a replace, delete or patch changes, in the committed state: 404 when it is missing,
/// 412 when an `If-Match` names another version (both with the partition's headers).
pub fn current_for_write(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    key: &DocKey,
) -> Result<Arc<StoredDoc>, ApiError> {
    let refuse = |error| write_error(ctx, target, partition, error);
    let existing = partition
        .latest(key)
        .cloned()
        .ok_or_else(|| refuse(ApiError::missing_entity()))?;
    if !if_match_ok(ctx, Some(&existing.etag)) {
        return Err(refuse(ApiError::precondition_failed()));
    }
    Ok(existing)
}

/// Commits a write in the serving region; the partition's clock reading is taken under its lock so
/// commits stay in time order.
pub fn commit(
    ctx: &RequestCtx<'_>,
    partition: &mut Partition,
    key: &DocKey,
    doc: Option<Arc<StoredDoc>>,
) -> u64 {
    let lags = ctx.shared.store.sample_lags();
    partition.commit(key.clone(), doc, ctx.region, Instant::now(), &lags)
}
