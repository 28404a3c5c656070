//! Databases: create, read, list, query, delete.

use bytes::Bytes;

use super::consistency::require_write_region;
use super::{etag_read, feed_body};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError};
use crate::store::document::{name_of, parse_object};

/// POST /dbs
pub(super) fn create(ctx: &RequestCtx<'_>) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let map = parse_object(&ctx.body)?;
    let id = name_of(&map)?;
    let throughput = super::offers::requested(ctx)?;
    let db = ctx.shared.store.catalog.create_database(map, id)?;
    if let Some(t) = throughput {
        let link = format!("dbs/{}/", db.rid);
        ctx.shared
            .store
            .offers
            .create(link, db.rid.clone(), &db.rid_bytes, t);
    }
    Ok(Reply::json(201, db.body.clone(), charge::metadata()).header(headers::ETAG, &db.etag))
}

/// GET /dbs
pub(super) fn list(ctx: &RequestCtx<'_>) -> Result<Reply, ApiError> {
    let dbs = ctx.shared.store.catalog.databases();
    let bodies: Vec<&Bytes> = dbs.iter().map(|d| &d.body).collect();
    Ok(
        Reply::json(200, feed_body("", "Databases", &bodies), charge::metadata())
            .header(headers::ITEM_COUNT, bodies.len().to_string()),
    )
}

/// POST /dbs with a query: the databases it selects.
pub(super) fn query(ctx: &RequestCtx<'_>) -> Result<Reply, ApiError> {
    let bodies: Vec<Bytes> = ctx
        .shared
        .store
        .catalog
        .databases()
        .iter()
        .map(|d| d.body.clone())
        .collect();
    super::metadata_query::answer(ctx, "", "Databases", &bodies)
}

/// GET /dbs/{db}
pub(super) fn read(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    let db = ctx
        .shared
        .store
        .catalog
        .database(db)
        .ok_or_else(ApiError::missing_entity)?;
    Ok(etag_read(ctx, &db.body, &db.etag))
}

/// DELETE /dbs/{db}
pub(super) fn delete(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let rid_bytes = ctx.shared.store.catalog.database(db).map(|d| d.rid_bytes);
    ctx.shared.store.catalog.delete_database(db)?;
    if let Some(bytes) = rid_bytes {
        ctx.shared.store.offers.remove_under(&bytes);
        let rid = crate::protocol::ids::encode_rid(&bytes);
        ctx.shared.store.users.remove_database(&rid);
    }
    Ok(Reply::empty(204, charge::metadata()))
}
