//! Users and permissions: `/dbs/{db}/users[/{user}]` and
//! `/dbs/{db}/users/{user}/permissions[/{permission}]`: list, query, create, upsert
//! (`x-ms-documentdb-is-upsert: true`), read, replace (a new `id` renames) and delete. Each
//! permission's body carries a resource token (`_token`), which [`super::resource_access`]
//! checks requests against: a new one each time a permission is created, replaced, read, listed
//! or queried, valid for the seconds `x-ms-documentdb-expiry-seconds` asks (10 to 18000; an hour
//! when absent).

use bytes::Bytes;
use serde_json::{Map, Value};

use super::consistency::require_write_region;
use super::{etag_read, feed_body};
use crate::auth::{token_lifetime, EXPIRY_SECONDS_HEADER};
use crate::exchange::request_class::{flag, is_query};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError};
use crate::store::document::{id_of, parse_object};
use crate::store::users::{grant_of, token_id, Stored, Written};
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

/// How long the tokens this request answers stay valid; 400 when the header asks for a lifetime
/// out of range.
fn lifetime(ctx: &RequestCtx<'_>) -> Result<u64, ApiError> {
    token_lifetime(ctx.header(EXPIRY_SECONDS_HEADER)).map_err(ApiError::bad_request)
}

/// Permission bodies with a token issued now, valid for `seconds`.
fn with_fresh_tokens(
    ctx: &RequestCtx<'_>,
    db_rid: &str,
    user_rid: &str,
    bodies: Vec<Bytes>,
    seconds: u64,
) -> Vec<Bytes> {
    bodies
        .into_iter()
        .map(|body| {
            let Ok(mut map) = serde_json::from_slice::<Map<String, Value>>(&body) else {
                return body;
            };
            let Some(rid) = map.get("_rid").and_then(Value::as_str) else {
                return body;
            };
            let token = ctx
                .shared
                .auth
                .resource_token_for(&token_id(db_rid, user_rid, rid), seconds);
            map.insert("_token".into(), Value::String(token));
            serde_json::to_vec(&map).map(Bytes::from).unwrap_or(body)
        })
        .collect()
}

/// GET /dbs/{db}/users
pub(super) fn list_users(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
    let database = database(ctx, db)?;
    let users = ctx.shared.store.users.list(&database.rid)?;
    Ok(feed(&database.rid, "Users", &users))
}

/// POST /dbs/{db}/users: a query, or a create (an upsert when asked).
pub(super) fn post_user(ctx: &RequestCtx<'_>, db: &str) -> Result<Reply, ApiError> {
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
pub(super) fn read_user(ctx: &RequestCtx<'_>, db: &str, user: &str) -> Result<Reply, ApiError> {
    let database = database(ctx, db)?;
    let stored = ctx.shared.store.users.read(&database.rid, user)?;
    Ok(etag_read(ctx, &stored.body, &stored.etag))
}

/// PUT /dbs/{db}/users/{user}
pub(super) fn replace_user(ctx: &RequestCtx<'_>, db: &str, user: &str) -> Result<Reply, ApiError> {
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
pub(super) fn delete_user(ctx: &RequestCtx<'_>, db: &str, user: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let database = database(ctx, db)?;
    ctx.shared.store.users.delete(&database.rid, user)?;
    Ok(Reply::empty(204, charge::metadata()))
}

/// GET /dbs/{db}/users/{user}/permissions
pub(super) fn list_permissions(
    ctx: &RequestCtx<'_>,
    db: &str,
    user: &str,
) -> Result<Reply, ApiError> {
    let seconds = lifetime(ctx)?;
    let database = database(ctx, db)?;
    let users = &ctx.shared.store.users;
    let permissions = users.permissions(&database.rid, user)?;
    let user_rid = users.user_rid(&database.rid, user)?;
    let permissions = with_fresh_tokens(ctx, &database.rid, &user_rid, permissions, seconds);
    Ok(feed(&user_rid, "Permissions", &permissions))
}

/// POST /dbs/{db}/users/{user}/permissions: a query, or a create (an upsert when asked).
pub(super) fn post_permission(
    ctx: &RequestCtx<'_>,
    db: &str,
    user: &str,
) -> Result<Reply, ApiError> {
    let seconds = lifetime(ctx)?;
    let database = database(ctx, db)?;
    let users = &ctx.shared.store.users;
    if is_query(ctx.headers) {
        let permissions = users.permissions(&database.rid, user)?;
        let user_rid = users.user_rid(&database.rid, user)?;
        let permissions = with_fresh_tokens(ctx, &database.rid, &user_rid, permissions, seconds);
        return super::metadata_query::answer(ctx, &user_rid, "Permissions", &permissions);
    }
    require_write_region(ctx)?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    let grant = grant_of(&map)?;
    let upsert = flag(ctx.headers, headers::IS_UPSERT);
    let auth = &ctx.shared.auth;
    let token = |token_id: &str| auth.resource_token_for(token_id, seconds);
    let (status, stored) =
        users.write_permission(&database.rid, user, id, map, grant, upsert, &token)?;
    Ok(written(status, stored))
}

/// GET /dbs/{db}/users/{user}/permissions/{permission}
pub(super) fn read_permission(
    ctx: &RequestCtx<'_>,
    db: &str,
    user: &str,
    permission: &str,
) -> Result<Reply, ApiError> {
    let seconds = lifetime(ctx)?;
    let database = database(ctx, db)?;
    let users = &ctx.shared.store.users;
    let stored = users.permission(&database.rid, user, permission)?;
    let user_rid = users.user_rid(&database.rid, user)?;
    let body = with_fresh_tokens(ctx, &database.rid, &user_rid, vec![stored.body], seconds)
        .pop()
        .unwrap_or_default();
    Ok(etag_read(ctx, &body, &stored.etag))
}

/// PUT /dbs/{db}/users/{user}/permissions/{permission}
pub(super) fn replace_permission(
    ctx: &RequestCtx<'_>,
    db: &str,
    user: &str,
    permission: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let seconds = lifetime(ctx)?;
    let database = database(ctx, db)?;
    let map = parse_object(&ctx.body)?;
    let id = id_of(&map)?;
    let grant = grant_of(&map)?;
    let auth = &ctx.shared.auth;
    let token = |token_id: &str| auth.resource_token_for(token_id, seconds);
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
pub(super) fn delete_permission(
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
