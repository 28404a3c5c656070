//! Resource-token requests: admitting the token (its permission still exists and it has not
//! expired) before the body is read, then resolving what the request will do into an
//! [`Intent`] and asking [`crate::auth::decide`] whether the permission covers it.
//!
//! The intent comes from the same [`operation`] classification that picks the handler, the
//! route's resources resolved to canonical names (resource ids and names are the same resource),
//! and, for batches, each operation's own partition key from the body. No flag a client sets can
//! make a write count as a read.

use serde::Deserialize;
use serde_json::Value;

use crate::auth::{decide, Action, Decision, Intent, Keys, ResourceToken};
use crate::exchange::request_class::{operation, Operation};
use crate::exchange::{header_text, RequestCtx, Shared};
use crate::protocol::{headers, ApiError, Resource, Route, ScriptKind};
use crate::store::users::Grant;

/// The service's words for a request its token does not cover.
pub(super) const INSUFFICIENT_PERMISSIONS: &str = "Insufficient permissions provided in the authorization header for the corresponding request. Please retry with another authorization header.";

/// What a verified resource token's permission grants now: 401 when the permission no longer
/// exists or the token has expired.
pub(crate) fn admit(shared: &Shared, token: &ResourceToken) -> Result<Grant, ApiError> {
    let grant = shared.store.users.grant(&token.token_id).ok_or_else(|| {
        ApiError::new(
            401,
            "The resource token's permission no longer exists (it or its user was deleted).",
        )
    })?;
    let now = shared.auth.now_unix();
    if now >= token.expires {
        return Err(ApiError::new(
            401,
            format!(
                "The resource token has expired ({} seconds ago); read the permission again for a new token.",
                now - token.expires
            ),
        ));
    }
    Ok(grant)
}

/// Whether `grant` covers the request (its body read): 403 in the service's words when not.
pub(crate) fn authorize(
    ctx: &RequestCtx<'_>,
    route: &Route,
    grant: &Grant,
) -> Result<(), ApiError> {
    let canonical = |link: &[&str]| canonical_link(ctx, link);
    let intent = intent_of(
        operation(ctx.method, route, ctx.headers),
        route,
        ctx.headers,
        &ctx.body,
        &canonical,
    );
    let granted: Vec<&str> = grant
        .resource
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let grant = Grant {
        resource: canonical(&granted).join("/"),
        ..grant.clone()
    };
    match decide(&grant, &intent) {
        Decision::Allow => Ok(()),
        Decision::Deny(_) => Err(ApiError::new(403, INSUFFICIENT_PERMISSIONS)),
    }
}

/// Where an operation acts and which partition keys it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    /// The account, or an account-level feed (no link).
    Account,
    /// The database the route names.
    Database,
    /// The container the route names (a feed of its items or scripts, its ranges...).
    Container,
    /// The resource the route names itself (an item, a script, a conflict).
    Resource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeySource {
    NoItems,
    /// The partition key header (none: every key).
    Header,
    /// Each batch operation's own key (the header for those without one).
    Batch,
}

/// What each operation kind needs. Exhaustive: a kind added later without a rule does not
/// compile.
fn requirement(op: Operation) -> (Action, Scope, KeySource) {
    use Action as A;
    use KeySource as K;
    use Operation as O;
    use Scope as S;
    match op {
        O::ReadAccount => (A::ReadAccount, S::Account, K::NoItems),
        O::ListDatabases
        | O::QueryDatabases
        | O::CreateDatabase
        | O::DeleteDatabase
        | O::CreateContainer
        | O::ReplaceContainer
        | O::DeleteContainer
        | O::ListUsers
        | O::QueryUsers
        | O::CreateUser
        | O::ReadUser
        | O::ReplaceUser
        | O::DeleteUser
        | O::ListPermissions
        | O::QueryPermissions
        | O::CreatePermission
        | O::ReadPermission
        | O::ReplacePermission
        | O::DeletePermission
        | O::ListOffers
        | O::QueryOffers
        | O::ReadOffer
        | O::ReplaceOffer => (A::Administer, S::Account, K::NoItems),
        O::ReadDatabase | O::ListContainers | O::QueryContainers => {
            (A::Read, S::Database, K::NoItems)
        }
        O::ReadContainer | O::ReadPkRanges | O::QueryPlan => (A::Route, S::Container, K::NoItems),
        O::ReadConflicts | O::ListScripts | O::QueryScripts => (A::Read, S::Container, K::NoItems),
        O::ReadConflict | O::ReadScript => (A::Read, S::Resource, K::NoItems),
        O::DeleteConflict | O::ReplaceScript | O::DeleteScript => {
            (A::Write, S::Resource, K::NoItems)
        }
        O::CreateScript => (A::Write, S::Container, K::NoItems),
        O::ExecuteStoredProcedure => (A::Execute, S::Resource, K::Header),
        O::QueryItems | O::ReadFeed | O::ChangeFeed => (A::Read, S::Container, K::Header),
        O::CreateItem | O::DeletePartitionKey => (A::Write, S::Container, K::Header),
        O::Batch => (A::Write, S::Container, K::Batch),
        O::ReadItem => (A::Read, S::Resource, K::Header),
        O::ReplaceItem | O::DeleteItem | O::PatchItem => (A::Write, S::Resource, K::Header),
    }
}

/// The link segments of what `route` names, at `scope`.
fn target(route: &Route, scope: Scope) -> Vec<String> {
    let (db, coll, leaf): (Option<&str>, Option<&str>, Option<(&str, &str)>) = match &route.resource
    {
        Resource::Account | Resource::Databases | Resource::Offers | Resource::Offer { .. } => {
            (None, None, None)
        }
        Resource::Database { db }
        | Resource::Containers { db }
        | Resource::Users { db }
        | Resource::User { db, .. }
        | Resource::Permissions { db, .. }
        | Resource::Permission { db, .. } => (Some(db), None, None),
        Resource::Container { db, coll }
        | Resource::Items { db, coll }
        | Resource::PkRanges { db, coll }
        | Resource::Conflicts { db, coll }
        | Resource::PartitionKeyDelete { db, coll }
        | Resource::Scripts { db, coll, .. } => (Some(db), Some(coll), None),
        Resource::Item { db, coll, id } => (Some(db), Some(coll), Some(("docs", id))),
        Resource::Conflict { db, coll, id } => (Some(db), Some(coll), Some(("conflicts", id))),
        Resource::Script { db, coll, kind, id } => {
            (Some(db), Some(coll), Some((kind.segment(), id)))
        }
    };
    let mut link = Vec::new();
    if scope == Scope::Account {
        return link;
    }
    if let Some(db) = db {
        link.extend(["dbs".to_owned(), db.to_owned()]);
    }
    if scope == Scope::Database {
        return link;
    }
    if let Some(coll) = coll {
        link.extend(["colls".to_owned(), coll.to_owned()]);
    }
    if scope == Scope::Container {
        return link;
    }
    if let Some((kind, id)) = leaf {
        link.extend([kind.to_owned(), id.to_owned()]);
    }
    link
}

/// A batch operation's fields the decision reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BatchOpView {
    #[serde(default)]
    operation_type: String,
    #[serde(default)]
    partition_key: Option<String>,
}

fn parse_key(text: Option<&str>) -> Option<Value> {
    serde_json::from_str(text?).ok()
}

/// A batch's action (a read when every operation reads) and the keys its operations touch.
fn batch_keys(body: &[u8], header: Option<&str>) -> (Action, Keys) {
    let Ok(ops) = serde_json::from_slice::<Vec<BatchOpView>>(body) else {
        return (Action::Write, Keys::Every);
    };
    let mut keys = Vec::with_capacity(ops.len() + 1);
    if let Some(text) = header {
        match parse_key(Some(text)) {
            Some(key) => keys.push(key),
            None => return (Action::Write, Keys::Every),
        }
    }
    for op in &ops {
        match (&op.partition_key, header) {
            (Some(text), _) => match parse_key(Some(text)) {
                Some(key) => keys.push(key),
                None => return (Action::Write, Keys::Every),
            },
            (None, Some(_)) => {}
            (None, None) => return (Action::Write, Keys::Every),
        }
    }
    let reads = !ops.is_empty()
        && ops
            .iter()
            .all(|op| op.operation_type.eq_ignore_ascii_case("read"));
    let action = if reads { Action::Read } else { Action::Write };
    (action, Keys::Listed(keys))
}

/// The resolved operation of a request (`op` from [`operation`]; `None`, a verb the resource
/// does not serve, is administration: no token may). `canonical` maps a link to its canonical
/// form.
fn intent_of(
    op: Option<Operation>,
    route: &Route,
    request_headers: &http::HeaderMap,
    body: &[u8],
    canonical: &dyn Fn(&[&str]) -> Vec<String>,
) -> Intent {
    let Some(op) = op else {
        return Intent {
            action: Action::Administer,
            target: Vec::new(),
            keys: Keys::NoItems,
        };
    };
    let (mut action, scope, source) = requirement(op);
    let header = header_text(request_headers, headers::PARTITION_KEY);
    let keys = match source {
        KeySource::NoItems => Keys::NoItems,
        KeySource::Header => match parse_key(header) {
            Some(key) => Keys::Listed(vec![key]),
            None => Keys::Every,
        },
        KeySource::Batch => {
            let (batch_action, keys) = batch_keys(body, header);
            action = batch_action;
            keys
        }
    };
    let raw = target(route, scope);
    let raw: Vec<&str> = raw.iter().map(String::as_str).collect();
    Intent {
        action,
        target: canonical(&raw),
        keys,
    }
}

/// `link` with each database, container, item and script segment given as a resource id replaced
/// by that resource's name (an item's id resolved in the partition the request names).
fn canonical_link(ctx: &RequestCtx<'_>, link: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(link.len());
    let mut database = None;
    let mut container = None;
    for pair in link.chunks(2) {
        let [kind, id] = pair else {
            out.extend(pair.iter().map(|s| (*s).to_owned()));
            continue;
        };
        let name = match *kind {
            "dbs" => {
                database = ctx.shared.store.catalog.database(id);
                database.as_ref().map(|d| d.id.clone())
            }
            "colls" => {
                container = database.as_ref().and_then(|d| d.container(id));
                container.as_ref().map(|c| c.id.clone())
            }
            "docs" => match (&database, &container) {
                (Some(d), Some(c)) => super::rid_items::resolve(ctx, &d.id, &c.id, id)
                    .ok()
                    .map(|name| name.into_owned()),
                _ => None,
            },
            other => ScriptKind::from_segment(other)
                .zip(container.as_ref())
                .and_then(|(kind, c)| ctx.shared.scripts.get(c, kind, id))
                .map(|s| s.id.clone()),
        };
        out.push((*kind).to_owned());
        out.push(name.unwrap_or_else(|| (*id).to_owned()));
    }
    out
}

#[cfg(test)]
#[path = "resource_access_tests.rs"]
mod tests;
