//! Containers: create, read, list, delete, and their partition key ranges.

use bytes::Bytes;

use super::consistency::require_write_region;
use super::feed_body;
use crate::protocol::{charge, headers, ApiError};
use crate::server::{Reply, RequestCtx};
use crate::store::document::{id_of, parse_object};
use crate::store::Container;

/// POST /dbs/{db}/colls
pub fn create(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let store = &ctx.shared.store;
    let database = store
        .catalog
        .database(db)
        .ok_or_else(|| ApiError::missing_owner(&format!("database {db}")))?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    let regions = store.topology.regions().len();
    let container = database.add_container(&id, |ordinal| {
        Container::create(
            map,
            id.clone(),
            database.rid_bytes,
            ordinal,
            store.partitions_per_container,
            regions,
        )
    })?;
    Ok(Reply::json(201, container.body.clone(), charge::metadata())
        .header(headers::ETAG, &container.etag))
}

/// GET /dbs/{db}/colls
pub fn list(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    let database = ctx
        .shared
        .store
        .catalog
        .database(db)
        .ok_or_else(ApiError::missing_entity)?;
    let containers = database.containers();
    let bodies: Vec<&Bytes> = containers.iter().map(|c| &c.body).collect();
    Ok(Reply::json(
        200,
        feed_body(&database.rid, "DocumentCollections", &bodies),
        charge::metadata(),
    )
    .header(headers::ITEM_COUNT, bodies.len().to_string()))
}

/// GET /dbs/{db}/colls/{coll}
pub fn read(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    let container = lookup(ctx, db, coll)?;
    if ctx
        .header(headers::IF_NONE_MATCH)
        .is_some_and(|t| t.trim() == container.etag)
    {
        return Ok(Reply::empty(304, charge::not_modified()).header(headers::ETAG, &container.etag));
    }
    Ok(Reply::json(200, container.body.clone(), charge::metadata())
        .header(headers::ETAG, &container.etag))
}

/// DELETE /dbs/{db}/colls/{coll}
pub fn delete(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let database = ctx
        .shared
        .store
        .catalog
        .database(db)
        .ok_or_else(|| ApiError::missing_owner(&format!("database {db}")))?;
    database.delete_container(coll)?;
    Ok(Reply::empty(204, charge::metadata()))
}

/// GET /dbs/{db}/colls/{coll}/pkranges (304 when `If-None-Match` carries the current etag).
pub fn pkranges(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    if ctx
        .header(headers::IF_NONE_MATCH)
        .is_some_and(|t| t.trim() == container.pkranges_etag)
    {
        return Ok(Reply::empty(304, charge::not_modified())
            .header(headers::ETAG, &container.pkranges_etag));
    }
    Ok(
        Reply::json(200, container.pkranges_body.clone(), charge::metadata())
            .header(headers::ETAG, &container.pkranges_etag)
            .header(
                headers::ITEM_COUNT,
                container.partitions().len().to_string(),
            ),
    )
}

fn lookup(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
) -> Result<std::sync::Arc<Container>, ApiError> {
    let database = ctx
        .shared
        .store
        .catalog
        .database(db)
        .ok_or_else(|| ApiError::missing_owner(&format!("database {db}")))?;
    database
        .container(coll)
        .ok_or_else(ApiError::missing_entity)
}
