//! Users and permissions: `/dbs/{db}/users[/{user}]` and
//! `/dbs/{db}/users/{user}/permissions[/{permission}]`: list, query, create, upsert
//! (`x-ms-documentdb-is-upsert: true`), read, replace (a new `id` renames) and delete. Each
//! permission's body carries its resource token (`_token`), which [`super::resource_access`]
//! checks requests against.

use bytes::Bytes;

use super::consistency::require_write_region;
use super::{etag_read, feed_body};
use crate::exchange::request_class::{flag, is_query};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError};
use crate::store::document::{id_of, parse_object};
use crate::store::users::{grant_of, Stored, Written};
use crate::store::Database;

fn database(ctx: &RequestCtx<'_>, db: &str) -> Result<std::sync::Arc<Database>, ApiError> {
    ctx.shared.store.catalog.owner_database(db)
}

fn feed(rid: &str, name: &str, bodies: &[Bytes]) -> Reply {
    let refs: Vec<&Bytes> = bodies.iter().collect();
    Reply::json(200, feed_body(rid, name, &refs), charge::metadata())
        .header(headers::ITEM_COUNT, refs.len().to_string())
}

fn written(status: Written, stored: Stored) -> Reply {
    let code = match status {
        Written::Created => 201,
        Written::Replaced => 200,
    };
    Reply::json(code, stored.body, charge::metadata()).header(headers::ETAG, &stored.etag)
}

/// GET /dbs/{db}/users
pub fn list_users(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    let database = database(ctx, db)?;
    let users = ctx.shared.store.users.list(&database.rid)?;
    Ok(feed(&database.rid, "Users", &users))
}

/// POST /dbs/{db}/users: a query, or a create (an upsert when asked).
pub fn post_user(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    let database = database(ctx, db)?;
    if is_query(ctx.headers) {
        let users = ctx.shared.store.users.list(&database.rid)?;
        return super::metadata_query::answer(ctx, &database.rid, "Users", &users);
    }
    require_write_region(ctx)?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    let upsert = flag(ctx.headers, headers::IS_UPSERT);
    let (status, stored) =
        ctx.shared
            .store
            .users
            .write(&database.rid, database.rid_bytes, id, map, upsert)?;
    Ok(written(status, stored))
}

/// GET /dbs/{db}/users/{user}
pub fn read_user(ctx: &RequestCtx<'_>, db: &str, user: &str) -> Result<Reply, ApiError> {
    let database = database(ctx, db)?;
    let stored = ctx.shared.store.users.read(&database.rid, user)?;
    Ok(etag_read(ctx, &stored.body, &stored.etag))
}

/// PUT /dbs/{db}/users/{user}
pub fn replace_user(ctx: &RequestCtx<'_>, db: &str, user: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let database = database(ctx, db)?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    let stored = ctx
        .shared
        .store
        .users
        .replace(&database.rid, user, id, map)?;
    Ok(written(Written::Replaced, stored))
}

/// DELETE /dbs/{db}/users/{user}
pub fn delete_user(ctx: &RequestCtx<'_>, db: &str, user: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let database = database(ctx, db)?;
    ctx.shared.store.users.delete(&database.rid, user)?;
    Ok(Reply::empty(204, charge::metadata()))
}

/// GET /dbs/{db}/users/{user}/permissions
pub fn list_permissions(ctx: &RequestCtx<'_>, db: &str, user: &str) -> Result<Reply, ApiError> {
    let database = database(ctx, db)?;
    let users = &ctx.shared.store.users;
    let permissions = users.permissions(&database.rid, user)?;
    let user_rid = users.user_rid(&database.rid, user)?;
    Ok(feed(&user_rid, "Permissions", &permissions))
}

/// POST /dbs/{db}/users/{user}/permissions: a query, or a create (an upsert when asked).
pub fn post_permission(ctx: &RequestCtx<'_>, db: &str, user: &str) -> Result<Reply, ApiError> {
    let database = database(ctx, db)?;
    let users = &ctx.shared.store.users;
    if is_query(ctx.headers) {
        let permissions = users.permissions(&database.rid, user)?;
        let user_rid = users.user_rid(&database.rid, user)?;
        return super::metadata_query::answer(ctx, &user_rid, "Permissions", &permissions);
    }
    require_write_region(ctx)?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    let grant = grant_of(&map)?;
    let upsert = flag(ctx.headers, headers::IS_UPSERT);
    let auth = &ctx.shared.auth;
    let token = |token_id: &str| auth.resource_token(token_id);
    let (status, stored) =
        users.write_permission(&database.rid, user, id, map, grant, upsert, &token)?;
    Ok(written(status, stored))
}

/// GET /dbs/{db}/users/{user}/permissions/{permission}
pub fn read_permission(
    ctx: &RequestCtx<'_>,
    db: &str,
    user: &str,
    permission: &str,
) -> Result<Reply, ApiError> {
    let database = database(ctx, db)?;
    let stored = ctx
        .shared
        .store
        .users
        .permission(&database.rid, user, permission)?;
    Ok(etag_read(ctx, &stored.body, &stored.etag))
}

/// PUT /dbs/{db}/users/{user}/permissions/{permission}
pub fn replace_permission(
    ctx: &RequestCtx<'_>,
    db: &str,
    user: &str,
    permission: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let database = database(ctx, db)?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    let grant = grant_of(&map)?;
    let auth = &ctx.shared.auth;
    let token = |token_id: &str| auth.resource_token(token_id);
    let stored = ctx.shared.store.users.replace_permission(
        &database.rid,
        user,
        permission,
        id,
        map,
        grant,
        &token,
    )?;
    Ok(written(Written::Replaced, stored))
}

/// DELETE /dbs/{db}/users/{user}/permissions/{permission}
pub fn delete_permission(
    ctx: &RequestCtx<'_>,
    db: &str,
    user: &str,
    permission: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let database = database(ctx, db)?;
    ctx.shared
        .store
        .users
        .delete_permission(&database.rid, user, permission)?;
    Ok(Reply::empty(204, charge::metadata()))
}
