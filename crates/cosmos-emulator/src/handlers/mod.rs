//! Request handlers, one file per resource; [`handle`] picks one by route and method.

mod account;
mod account_admin;
mod batch;
mod batch_ops;
mod change_feed;
mod conflict_merge;
mod consistency;
mod container_stats;
mod containers;
mod databases;
mod failover;
mod feed;
mod item_reply;
mod item_write;
mod items;
mod lag_admin;
mod metadata_query;
mod offers;
mod patch;
mod query;
mod query_plan;
mod query_request;
mod replica_headers;
mod resource_access;
mod rid_items;
mod script_txn;
mod scripts;
mod split_admin;
mod sproc;
mod target;
mod throttle;
mod triggered;
mod users;
mod write_conflict;

pub(crate) use account::account_document;
pub(crate) use account_admin::{account_admin, PATH as ACCOUNT_ADMIN_PATH};
pub(crate) use failover::failover;
pub(crate) use lag_admin::replication_lag;
pub(crate) use resource_access::{
    admit as admit_resource_token, authorize as authorize_resource_token,
};
pub(crate) use split_admin::split;

use bytes::Bytes;

use crate::exchange::request_class::{operation, Operation};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{headers, ApiError, Resource, Route};
use http::Method;

/// Serves a routed, authenticated request (held to its range's throughput when enforced).
pub(crate) fn handle(ctx: &RequestCtx<'_>, route: &Route) -> Result<Reply, ApiError> {
    throttle::metered(ctx, route, || dispatch(ctx, route))
}

/// A request on a container's contents that names the container it means by resource id
/// (`x-ms-cosmos-intended-collection-rid`, from a client's cache) is refused with 400/1024 when
/// the container of that name is another one (deleted and re-created): the client then refreshes
/// its cache and retries, rather than acting on a container it does not know.
fn check_intended_container(ctx: &RequestCtx<'_>, resource: &Resource) -> Result<(), ApiError> {
    let (db, coll) = match resource {
        Resource::Items { db, coll }
        | Resource::Item { db, coll, .. }
        | Resource::PartitionKeyDelete { db, coll }
        | Resource::Conflicts { db, coll }
        | Resource::Conflict { db, coll, .. }
        | Resource::Scripts { db, coll, .. }
        | Resource::Script { db, coll, .. } => (db, coll),
        _ => return Ok(()),
    };
    let Some(intended) = ctx.header(headers::INTENDED_COLLECTION_RID) else {
        return Ok(());
    };
    let container = ctx.shared.store.catalog.container(db, coll)?;
    if container.rid == intended.trim() {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "The container {coll} is not the one this request was meant for: its resource id is {}, the request names {} (the container was deleted and created again). Read the container again and retry.",
        container.rid,
        intended.trim()
    ))
    .with_sub_status(crate::protocol::sub_status::COLLECTION_RID_MISMATCH))
}

fn dispatch(ctx: &RequestCtx<'_>, route: &Route) -> Result<Reply, ApiError> {
    use Operation as O;
    let m = ctx.method;
    let Some(op) = operation(m, route, ctx.headers) else {
        return Err(not_supported(m));
    };
    check_intended_container(ctx, &route.resource)?;
    match (op, &route.resource) {
        (O::ReadAccount, _) => account::read(ctx),
        (O::QueryDatabases, _) => databases::query(ctx),
        (O::CreateDatabase, _) => databases::create(ctx),
        (O::ListDatabases, _) => databases::list(ctx),
        (O::ReadDatabase, Resource::Database { db }) => databases::read(ctx, db),
        (O::DeleteDatabase, Resource::Database { db }) => databases::delete(ctx, db),
        (O::QueryContainers, Resource::Containers { db }) => containers::query(ctx, db),
        (O::CreateContainer, Resource::Containers { db }) => containers::create(ctx, db),
        (O::ListContainers, Resource::Containers { db }) => containers::list(ctx, db),
        (O::ReadContainer, Resource::Container { db, coll }) => containers::read(ctx, db, coll),
        (O::ReplaceContainer, Resource::Container { db, coll }) => {
            containers::replace(ctx, db, coll)
        }
        (O::DeleteContainer, Resource::Container { db, coll }) => containers::delete(ctx, db, coll),
        (O::ReadPkRanges, Resource::PkRanges { db, coll }) => containers::pkranges(ctx, db, coll),
        (O::ReadConflicts, Resource::Conflicts { db, coll }) => {
            containers::conflicts(ctx, db, coll)
        }
        (O::ReadConflict, Resource::Conflict { db, coll, id }) => {
            containers::read_conflict(ctx, db, coll, id)
        }
        (O::DeleteConflict, Resource::Conflict { db, coll, id }) => {
            containers::delete_conflict(ctx, db, coll, id)
        }
        (O::QueryScripts, Resource::Scripts { db, coll, kind }) => {
            scripts::query(ctx, db, coll, *kind)
        }
        (O::CreateScript, Resource::Scripts { db, coll, kind }) => {
            scripts::create(ctx, db, coll, *kind)
        }
        (O::ListScripts, Resource::Scripts { db, coll, kind }) => {
            scripts::list(ctx, db, coll, *kind)
        }
        (O::ExecuteStoredProcedure, Resource::Script { db, coll, id, .. }) => {
            sproc::execute(ctx, db, coll, id)
        }
        (O::ReadScript, Resource::Script { db, coll, kind, id }) => {
            scripts::read(ctx, db, coll, *kind, id)
        }
        (O::ReplaceScript, Resource::Script { db, coll, kind, id }) => {
            scripts::replace(ctx, db, coll, *kind, id)
        }
        (O::DeleteScript, Resource::Script { db, coll, kind, id }) => {
            scripts::delete(ctx, db, coll, *kind, id)
        }
        (O::ListUsers, Resource::Users { db }) => users::list_users(ctx, db),
        (O::QueryUsers | O::CreateUser, Resource::Users { db }) => users::post_user(ctx, db),
        (O::ReadUser, Resource::User { db, user }) => users::read_user(ctx, db, user),
        (O::ReplaceUser, Resource::User { db, user }) => users::replace_user(ctx, db, user),
        (O::DeleteUser, Resource::User { db, user }) => users::delete_user(ctx, db, user),
        (O::ListPermissions, Resource::Permissions { db, user }) => {
            users::list_permissions(ctx, db, user)
        }
        (O::QueryPermissions | O::CreatePermission, Resource::Permissions { db, user }) => {
            users::post_permission(ctx, db, user)
        }
        (O::ReadPermission, Resource::Permission { db, user, id }) => {
            users::read_permission(ctx, db, user, id)
        }
        (O::ReplacePermission, Resource::Permission { db, user, id }) => {
            users::replace_permission(ctx, db, user, id)
        }
        (O::DeletePermission, Resource::Permission { db, user, id }) => {
            users::delete_permission(ctx, db, user, id)
        }
        (O::ListOffers, _) => Ok(offers::list(ctx)),
        (O::QueryOffers, _) => offers::query(ctx),
        (O::ReadOffer, Resource::Offer { id }) => offers::read(ctx, id),
        (O::ReplaceOffer, Resource::Offer { id }) => offers::replace(ctx, id),
        (O::QueryPlan, Resource::Items { db, coll }) => query_plan::query_plan(ctx, db, coll),
        (O::QueryItems, Resource::Items { db, coll }) => query::query(ctx, db, coll),
        (O::Batch, Resource::Items { db, coll }) => batch::execute(ctx, db, coll),
        (O::CreateItem, Resource::Items { db, coll }) if triggered::names_triggers(ctx.headers) => {
            triggered::write(ctx, db, coll, triggered::Write::Create)
        }
        (O::CreateItem, Resource::Items { db, coll }) => items::create(ctx, db, coll),
        (O::ChangeFeed, Resource::Items { db, coll }) => {
            let a_im = ctx.header(headers::A_IM).unwrap_or_default();
            change_feed::read(ctx, db, coll, a_im)
        }
        (O::ReadFeed, Resource::Items { db, coll }) => feed::read_feed(ctx, db, coll),
        (O::DeletePartitionKey, Resource::PartitionKeyDelete { db, coll }) => {
            items::delete_partition_key(ctx, db, coll)
        }
        (
            O::ReadItem | O::ReplaceItem | O::DeleteItem | O::PatchItem,
            Resource::Item { db, coll, id },
        ) => one_item(ctx, op, db, coll, id),
        // `operation` names each kind only for its own resource.
        _ => Err(not_supported(m)),
    }
}

/// A read, replace, delete or patch of one item (addressed by id or by resource id).
fn one_item(
    ctx: &RequestCtx<'_>,
    op: Operation,
    db: &str,
    coll: &str,
    id: &str,
) -> Result<Reply, ApiError> {
    let id = &rid_items::resolve(ctx, db, coll, id)?;
    let triggers = triggered::names_triggers(ctx.headers);
    match op {
        Operation::ReplaceItem if triggers => {
            triggered::write(ctx, db, coll, triggered::Write::Replace(id))
        }
        Operation::DeleteItem if triggers => {
            triggered::write(ctx, db, coll, triggered::Write::Delete(id))
        }
        Operation::ReadItem => items::read(ctx, db, coll, id),
        Operation::ReplaceItem => items::replace(ctx, db, coll, id),
        Operation::DeleteItem => items::delete(ctx, db, coll, id),
        _ => patch::patch(ctx, db, coll, id),
    }
}

fn not_supported(m: &Method) -> ApiError {
    ApiError::new(
        405,
        format!("The verb {m} is not supported on this resource."),
    )
}

/// A metadata read: 304 when `If-None-Match` names `etag`, else `body`; both carry the etag.
pub(crate) fn etag_read(ctx: &RequestCtx<'_>, body: &Bytes, etag: &str) -> Reply {
    let reply = if consistency::if_none_match_hit(ctx, etag) {
        Reply::empty(304, crate::protocol::charge::not_modified())
    } else {
        Reply::json(200, body.clone(), crate::protocol::charge::metadata())
    };
    reply.header(crate::protocol::headers::ETAG, etag)
}

/// A feed body: `{"_rid": rid, "<name>": [bodies...], "_count": n}` without re-serializing bodies.
pub(crate) fn feed_body(rid: &str, name: &str, bodies: &[&Bytes]) -> Bytes {
    let mut out = Vec::with_capacity(64 + bodies.iter().map(|b| b.len() + 1).sum::<usize>());
    out.extend_from_slice(format!("{{\"_rid\":\"{rid}\",\"{name}\":[").as_bytes());
    for (i, b) in bodies.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b);
    }
    out.extend_from_slice(format!("],\"_count\":{}}}", bodies.len()).as_bytes());
    out.into()
}
