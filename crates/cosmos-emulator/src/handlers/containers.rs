//! Containers: create, read, list, query, delete, and their partition key ranges.

use bytes::Bytes;

use super::consistency::require_write_region;
use super::replica_headers::quota_headers;
use super::{etag_read, feed_body};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError};
use crate::store::document::{name_of, parse_object};
use crate::store::{Container, Throughput};

/// POST /dbs/{db}/colls
pub(super) fn create(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let store = &ctx.shared.store;
    let database = store.catalog.owner_database(db)?;
    let map = parse_object(&ctx.body)?;
    let id = name_of(&map)?;
    Container::check_definition(&map)?;
    let throughput = super::offers::requested(ctx)?;
    let regions = store.topology.regions().len();
    // A container in a database with shared throughput has no offer of its own unless it asks.
    let database_offer = store.offers.of_resource(&database.rid);
    let own = throughput.or_else(|| {
        database_offer.is_none().then_some(Throughput::Manual(
            super::offers::DEFAULT_CONTAINER_THROUGHPUT,
        ))
    });
    let sized_from = own
        .or(database_offer.map(|o| o.throughput))
        .unwrap_or(Throughput::Manual(
            super::offers::DEFAULT_CONTAINER_THROUGHPUT,
        ));
    let partitions = store.partition_sizing.partitions(sized_from);
    let container = database.add_container(&id, |ordinal| {
        Container::create(
            map,
            id.clone(),
            database.rid_bytes,
            ordinal,
            partitions,
            regions,
        )
        .inspect(|c| {
            // Recording starts before the container can be written to.
            if let Some(data) = &ctx.shared.data {
                data.record(c);
            }
        })
    })?;
    if let Some(t) = own {
        let link = format!("dbs/{}/colls/{}/", database.rid, container.rid);
        store
            .offers
            .create(link, container.rid.clone(), &container.rid_bytes, t);
    }
    let definition = container.definition();
    Ok(Reply::json(201, definition.body, charge::metadata())
        .header(headers::ETAG, &definition.etag))
}

/// GET /dbs/{db}/colls
pub(super) fn list(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    let database = ctx
        .shared
        .store
        .catalog
        .database(db)
        .ok_or_else(ApiError::missing_entity)?;
    let definitions: Vec<Bytes> = database
        .containers()
        .iter()
        .map(|c| c.definition().body)
        .collect();
    let bodies: Vec<&Bytes> = definitions.iter().collect();
    Ok(Reply::json(
        200,
        feed_body(&database.rid, "DocumentCollections", &bodies),
        charge::metadata(),
    )
    .header(headers::ITEM_COUNT, bodies.len().to_string()))
}

/// POST /dbs/{db}/colls with a query: the containers it selects.
pub(super) fn query(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    let database = ctx
        .shared
        .store
        .catalog
        .database(db)
        .ok_or_else(ApiError::missing_entity)?;
    let definitions: Vec<Bytes> = database
        .containers()
        .iter()
        .map(|c| c.definition().body)
        .collect();
    super::metadata_query::answer(ctx, &database.rid, "DocumentCollections", &definitions)
}

/// GET /dbs/{db}/colls/{coll}
pub(super) fn read(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    let container = ctx
        .shared
        .store
        .catalog
        .owner_database(db)?
        .container(coll)
        .ok_or_else(ApiError::missing_entity)?;
    let (documents, bytes) = container
        .partitions()
        .iter()
        .filter_map(|p| p.read().ok().map(|p| p.usage()))
        .fold((0, 0), |(n, b), (pn, pb)| (n + pn, b + pb));
    let definition = container.definition();
    let body = super::container_stats::body(ctx, &container, &definition.body);
    let mut reply = etag_read(ctx, &body, &definition.etag);
    let asked = super::container_stats::headers(ctx);
    for (name, value) in quota_headers(documents, bytes).into_iter().chain(asked) {
        reply = reply.header(name, value);
    }
    Ok(reply)
}

/// PUT /dbs/{db}/colls/{coll}: replaces the indexing policy, default TTL and other settings; the
/// partition key definition and the unique key policy cannot change (400), as in the service.
pub(super) fn replace(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let database = ctx.shared.store.catalog.owner_database(db)?;
    let map = parse_object(&ctx.body)?;
    let definition = database.replace_container(coll, map, ctx.header(headers::IF_MATCH))?;
    Ok(Reply::json(200, definition.body, charge::metadata())
        .header(headers::ETAG, &definition.etag))
}

/// DELETE /dbs/{db}/colls/{coll}
pub(super) fn delete(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let database = ctx.shared.store.catalog.owner_database(db)?;
    let rid_bytes = database.container(coll).map(|c| c.rid_bytes);
    database.delete_container(coll)?;
    if let Some(bytes) = rid_bytes {
        ctx.shared.store.offers.remove_under(&bytes);
        ctx.shared.scripts.drop_container(&bytes);
    }
    Ok(Reply::empty(204, charge::metadata()))
}

/// GET /dbs/{db}/colls/{coll}/pkranges (304 when `If-None-Match` carries the current etag).
pub(super) fn pkranges(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let reply = etag_read(ctx, &container.pkranges_body, &container.pkranges_etag);
    if reply.status == 304 {
        return Ok(reply);
    }
    let count = container.partitions().len();
    Ok(reply.header(headers::ITEM_COUNT, count.to_string()))
}

/// GET (or a query POST to) /dbs/{db}/colls/{coll}/conflicts: the conflicts feed, the writes of
/// a multi-write account a `Custom` conflict resolution policy left to the application (see
/// `write_conflict.rs`; last writer wins records none). A query answers the whole feed.
pub(super) fn conflicts(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let is_query =
        *ctx.method == http::Method::POST && crate::exchange::request_class::is_query(ctx.headers);
    if is_query && ctx.header(headers::PARTITION_KEY).is_none() {
        super::query::require_cross_partition(ctx)?;
    }
    let listed = container.conflicts.list();
    let refs: Vec<&bytes::Bytes> = listed.iter().collect();
    Ok(Reply::json(
        200,
        feed_body(&container.rid, "Conflicts", &refs),
        charge::metadata(),
    )
    .header(headers::ITEM_COUNT, listed.len().to_string()))
}

/// GET /dbs/{db}/colls/{coll}/conflicts/{id}: one conflict of the feed.
pub(super) fn read_conflict(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    id: &str,
) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let body = container
        .conflicts
        .get(id)
        .ok_or_else(ApiError::missing_entity)?;
    Ok(Reply::json(200, body, charge::metadata()))
}

/// DELETE /dbs/{db}/colls/{coll}/conflicts/{id}: the application has resolved the conflict; 204.
pub(super) fn delete_conflict(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    id: &str,
) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    if !container.conflicts.remove(id) {
        return Err(ApiError::missing_entity());
    }
    Ok(Reply::empty(204, charge::metadata()))
}
