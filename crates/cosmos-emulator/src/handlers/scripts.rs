//! Stored procedures, triggers and user-defined functions as resources: create, read, replace,
//! delete, list and query under `/dbs/{db}/colls/{coll}/sprocs|triggers|udfs`.

use bytes::Bytes;

use super::consistency::require_write_region;
use super::{etag_read, feed_body};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError, ScriptKind};
use crate::store::document::parse_object;

/// POST .../sprocs (triggers, udfs): 201 with the script.
pub(super) fn create(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    kind: ScriptKind,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let map = parse_object(&ctx.body)?;
    let script = ctx.shared.scripts.create(&container, kind, map)?;
    Ok(Reply::json(201, script.json.clone(), charge::metadata())
        .header(headers::ETAG, &script.etag))
}

/// GET .../sprocs/{id} (304 when `If-None-Match` names the current etag).
pub(super) fn read(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    kind: ScriptKind,
    id: &str,
) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let script = ctx
        .shared
        .scripts
        .get(&container, kind, id)
        .ok_or_else(ApiError::missing_entity)?;
    Ok(etag_read(ctx, &script.json, &script.etag))
}

/// PUT .../sprocs/{id}
pub(super) fn replace(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    kind: ScriptKind,
    id: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let map = parse_object(&ctx.body)?;
    let script =
        ctx.shared
            .scripts
            .replace(&container, kind, id, map, ctx.header(headers::IF_MATCH))?;
    Ok(Reply::json(200, script.json.clone(), charge::metadata())
        .header(headers::ETAG, &script.etag))
}

/// DELETE .../sprocs/{id}: 204.
pub(super) fn delete(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    kind: ScriptKind,
    id: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let container = ctx.shared.store.catalog.container(db, coll)?;
    ctx.shared
        .scripts
        .delete(&container, kind, id, ctx.header(headers::IF_MATCH))?;
    Ok(Reply::empty(204, charge::metadata()))
}

/// GET .../sprocs: the feed `{"_rid", "StoredProcedures": [...], "_count"}` (`Triggers`,
/// `UserDefinedFunctions`).
pub(super) fn list(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    kind: ScriptKind,
) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let scripts = ctx.shared.scripts.list(&container, kind);
    let bodies: Vec<&Bytes> = scripts.iter().map(|s| &s.json).collect();
    Ok(Reply::json(
        200,
        feed_body(&container.rid, kind.feed_name(), &bodies),
        charge::metadata(),
    )
    .header(headers::ITEM_COUNT, bodies.len().to_string()))
}

/// POST .../sprocs with a query: the scripts it selects, as one page of the feed.
pub(super) fn query(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    kind: ScriptKind,
) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let bodies: Vec<Bytes> = ctx
        .shared
        .scripts
        .list(&container, kind)
        .iter()
        .map(|s| s.json.clone())
        .collect();
    super::metadata_query::answer(ctx, &container.rid, kind.feed_name(), &bodies)
}
