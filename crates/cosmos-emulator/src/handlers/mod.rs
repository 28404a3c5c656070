//! Request handlers, one file per resource; [`handle`] picks one by route and method.

mod account;
mod batch;
mod batch_ops;
mod change_feed;
mod consistency;
mod container_stats;
mod containers;
mod databases;
mod failover;
mod feed;
mod item_reply;
mod items;
mod lag_admin;
mod metadata_query;
mod offers;
mod patch;
mod query;
mod query_metrics;
mod query_plan;
mod query_ranked;
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

pub use account::account_document;
pub use failover::failover;
pub use lag_admin::replication_lag;
pub use resource_access::authorize as authorize_resource_token;
pub use split_admin::split;
pub(crate) use target::live;

use bytes::Bytes;
use http::Method;

use crate::exchange::request_class::{flag, is_query};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{headers, ApiError, Resource, Route};

/// Serves a routed, authenticated request (held to its range's throughput when enforced).
pub fn handle(ctx: &RequestCtx<'_>, route: &Route) -> Result<Reply, ApiError> {
    throttle::metered(ctx, route, || dispatch(ctx, route))
}

fn dispatch(ctx: &RequestCtx<'_>, route: &Route) -> Result<Reply, ApiError> {
    let m = ctx.method;
    match &route.resource {
        Resource::Account if m == Method::GET => account::read(ctx),
        Resource::Databases if m == Method::POST && is_query(ctx.headers) => databases::query(ctx),
        Resource::Databases if m == Method::POST => databases::create(ctx),
        Resource::Databases if m == Method::GET => databases::list(ctx),
        Resource::Database { db } if m == Method::GET => databases::read(ctx, db),
        Resource::Database { db } if m == Method::DELETE => databases::delete(ctx, db),
        Resource::Containers { db } if m == Method::POST && is_query(ctx.headers) => {
            containers::query(ctx, db)
        }
        Resource::Containers { db } if m == Method::POST => containers::create(ctx, db),
        Resource::Containers { db } if m == Method::GET => containers::list(ctx, db),
        Resource::Container { db, coll } if m == Method::GET => containers::read(ctx, db, coll),
        Resource::Container { db, coll } if m == Method::PUT => containers::replace(ctx, db, coll),
        Resource::Container { db, coll } if m == Method::DELETE => {
            containers::delete(ctx, db, coll)
        }
        Resource::PkRanges { db, coll } if m == Method::GET => containers::pkranges(ctx, db, coll),
        Resource::Conflicts { db, coll } if m == Method::GET || m == Method::POST => {
            containers::conflicts(ctx, db, coll)
        }
        Resource::Conflict { db, coll, .. } if m == Method::GET || m == Method::DELETE => {
            ctx.shared.store.catalog.container(db, coll)?;
            Err(ApiError::missing_entity())
        }
        Resource::Scripts { db, coll, kind } if m == Method::POST && is_query(ctx.headers) => {
            scripts::query(ctx, db, coll, *kind)
        }
        Resource::Scripts { db, coll, kind } if m == Method::POST => {
            scripts::create(ctx, db, coll, *kind)
        }
        Resource::Scripts { db, coll, kind } if m == Method::GET => {
            scripts::list(ctx, db, coll, *kind)
        }
        Resource::Script {
            db,
            coll,
            kind: crate::protocol::ScriptKind::StoredProcedure,
            id,
        } if m == Method::POST => sproc::execute(ctx, db, coll, id),
        Resource::Script { db, coll, kind, id } if m == Method::GET => {
            scripts::read(ctx, db, coll, *kind, id)
        }
        Resource::Script { db, coll, kind, id } if m == Method::PUT => {
            scripts::replace(ctx, db, coll, *kind, id)
        }
        Resource::Script { db, coll, kind, id } if m == Method::DELETE => {
            scripts::delete(ctx, db, coll, *kind, id)
        }
        Resource::Users { db } if m == Method::GET => users::list_users(ctx, db),
        Resource::Users { db } if m == Method::POST => users::post_user(ctx, db),
        Resource::User { db, user } if m == Method::GET => users::read_user(ctx, db, user),
        Resource::User { db, user } if m == Method::PUT => users::replace_user(ctx, db, user),
        Resource::User { db, user } if m == Method::DELETE => users::delete_user(ctx, db, user),
        Resource::Permissions { db, user } if m == Method::GET => {
            users::list_permissions(ctx, db, user)
        }
        Resource::Permissions { db, user } if m == Method::POST => {
            users::post_permission(ctx, db, user)
        }
        Resource::Permission { db, user, id } if m == Method::GET => {
            users::read_permission(ctx, db, user, id)
        }
        Resource::Permission { db, user, id } if m == Method::PUT => {
            users::replace_permission(ctx, db, user, id)
        }
        Resource::Permission { db, user, id } if m == Method::DELETE => {
            users::delete_permission(ctx, db, user, id)
        }
        Resource::Offers if m == Method::GET => Ok(offers::list(ctx)),
        Resource::Offers if m == Method::POST && is_query(ctx.headers) => offers::query(ctx),
        Resource::Offer { id } if m == Method::GET => offers::read(ctx, id),
        Resource::Offer { id } if m == Method::PUT => offers::replace(ctx, id),
        Resource::Items { db, coll }
            if m == Method::POST && flag(ctx.headers, headers::IS_QUERY_PLAN) =>
        {
            query_plan::query_plan(ctx, db, coll)
        }
        Resource::Items { db, coll } if m == Method::POST && is_query(ctx.headers) => {
            query::query(ctx, db, coll)
        }
        Resource::Items { db, coll } if m == Method::POST && batch::is_batch(ctx) => {
            batch::execute(ctx, db, coll)
        }
        Resource::Items { db, coll }
            if m == Method::POST && triggered::names_triggers(ctx.headers) =>
        {
            triggered::write(ctx, db, coll, triggered::Write::Create)
        }
        Resource::Items { db, coll } if m == Method::POST => items::create(ctx, db, coll),
        Resource::Items { db, coll } if m == Method::GET => match ctx.header(headers::A_IM) {
            Some(a_im) => change_feed::read(ctx, db, coll, a_im),
            None => feed::read_feed(ctx, db, coll),
        },
        Resource::PartitionKeyDelete { db, coll } if m == Method::POST => {
            items::delete_partition_key(ctx, db, coll)
        }
        Resource::Item { db, coll, id } => {
            let id = &rid_items::resolve(ctx, db, coll, id)?;
            if (m == Method::PUT || m == Method::DELETE) && triggered::names_triggers(ctx.headers) {
                let write = if m == Method::PUT {
                    triggered::Write::Replace(id)
                } else {
                    triggered::Write::Delete(id)
                };
                triggered::write(ctx, db, coll, write)
            } else if m == Method::GET {
                items::read(ctx, db, coll, id)
            } else if m == Method::PUT {
                items::replace(ctx, db, coll, id)
            } else if m == Method::DELETE {
                items::delete(ctx, db, coll, id)
            } else if m == Method::PATCH {
                patch::patch(ctx, db, coll, id)
            } else {
                Err(not_supported(m))
            }
        }
        _ => Err(not_supported(m)),
    }
}

fn not_supported(m: &Method) -> ApiError {
    ApiError::new(
        405,
        format!("The verb {m} is not supported on this resource."),
    )
}

/// A metadata read: 304 when `If-None-Match` names `etag`, else `body`; both carry the etag.
pub fn etag_read(ctx: &RequestCtx<'_>, body: &Bytes, etag: &str) -> Reply {
    let reply = if consistency::if_none_match_hit(ctx, etag) {
        Reply::empty(304, crate::protocol::charge::not_modified())
    } else {
        Reply::json(200, body.clone(), crate::protocol::charge::metadata())
    };
    reply.header(crate::protocol::headers::ETAG, etag)
}

/// A feed body: `{"_rid": rid, "<name>": [bodies...], "_count": n}` without re-serializing bodies.
pub fn feed_body(rid: &str, name: &str, bodies: &[&Bytes]) -> Bytes {
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
