//! Which operation kind a request is (for fault rules and counters), and the request flags
//! handlers and the pipeline both read.

use http::{HeaderMap, Method};

use crate::faults::OpKind;
use crate::protocol::headers;
use crate::protocol::{Resource, Route, ScriptKind};

/// Classifies a routed request.
pub(crate) fn op_kind(method: &Method, route: &Route, headers: &HeaderMap) -> OpKind {
    match (&route.resource, method) {
        (Resource::Items { .. }, &Method::POST) => {
            if is_query(headers) {
                OpKind::Query
            } else if flag(headers, headers::IS_UPSERT) {
                OpKind::Upsert
            } else {
                OpKind::Create
            }
        }
        (Resource::Items { .. }, &Method::GET) => OpKind::ReadFeed,
        (Resource::PartitionKeyDelete { .. }, &Method::POST) => OpKind::Delete,
        (Resource::Item { .. }, &Method::GET) => OpKind::Read,
        (Resource::Item { .. }, &Method::PUT) => OpKind::Replace,
        (Resource::Item { .. }, &Method::DELETE) => OpKind::Delete,
        (Resource::Item { .. }, &Method::PATCH) => OpKind::Patch,
        _ => OpKind::Metadata,
    }
}

/// What a routed request does: the one classification both the handler dispatch and the
/// resource-token decision use, so the two cannot disagree. `None` from [`operation`] is a verb the
/// resource does not serve (405).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Operation {
    ReadAccount,
    ListDatabases,
    QueryDatabases,
    CreateDatabase,
    ReadDatabase,
    DeleteDatabase,
    ListContainers,
    QueryContainers,
    CreateContainer,
    ReadContainer,
    ReplaceContainer,
    DeleteContainer,
    ReadPkRanges,
    ReadConflicts,
    ReadConflict,
    DeleteConflict,
    ListScripts,
    QueryScripts,
    CreateScript,
    ReadScript,
    ReplaceScript,
    DeleteScript,
    ExecuteStoredProcedure,
    ListUsers,
    QueryUsers,
    CreateUser,
    ReadUser,
    ReplaceUser,
    DeleteUser,
    ListPermissions,
    QueryPermissions,
    CreatePermission,
    ReadPermission,
    ReplacePermission,
    DeletePermission,
    ListOffers,
    QueryOffers,
    ReadOffer,
    ReplaceOffer,
    QueryPlan,
    QueryItems,
    Batch,
    CreateItem,
    ReadFeed,
    ChangeFeed,
    DeletePartitionKey,
    ReadItem,
    ReplaceItem,
    DeleteItem,
    PatchItem,
}

impl Operation {
    /// Whether the operation never changes anything (a batch may: it counts as a change). Pure.
    pub(crate) fn reads_only(self) -> bool {
        use Operation as O;
        matches!(
            self,
            O::ReadAccount
                | O::ListDatabases
                | O::QueryDatabases
                | O::ReadDatabase
                | O::ListContainers
                | O::QueryContainers
                | O::ReadContainer
                | O::ReadPkRanges
                | O::ReadConflicts
                | O::ReadConflict
                | O::ListScripts
                | O::QueryScripts
                | O::ReadScript
                | O::ListUsers
                | O::QueryUsers
                | O::ReadUser
                | O::ListPermissions
                | O::QueryPermissions
                | O::ReadPermission
                | O::ListOffers
                | O::QueryOffers
                | O::ReadOffer
                | O::QueryPlan
                | O::QueryItems
                | O::ReadFeed
                | O::ChangeFeed
                | O::ReadItem
        )
    }
}

/// The operation a request is, from its resource, verb and the headers that pick a handler.
pub(crate) fn operation(method: &Method, route: &Route, headers: &HeaderMap) -> Option<Operation> {
    use Operation as O;
    let m = method;
    let (get, post, put, delete) = (
        m == Method::GET,
        m == Method::POST,
        m == Method::PUT,
        m == Method::DELETE,
    );
    let query = post && is_query(headers);
    let pick = |choices: &[(bool, Operation)]| choices.iter().find(|(c, _)| *c).map(|(_, o)| *o);
    match &route.resource {
        Resource::Account => pick(&[(get, O::ReadAccount)]),
        Resource::Databases => pick(&[
            (query, O::QueryDatabases),
            (post, O::CreateDatabase),
            (get, O::ListDatabases),
        ]),
        Resource::Database { .. } => pick(&[(get, O::ReadDatabase), (delete, O::DeleteDatabase)]),
        Resource::Containers { .. } => pick(&[
            (query, O::QueryContainers),
            (post, O::CreateContainer),
            (get, O::ListContainers),
        ]),
        Resource::Container { .. } => pick(&[
            (get, O::ReadContainer),
            (put, O::ReplaceContainer),
            (delete, O::DeleteContainer),
        ]),
        Resource::PkRanges { .. } => pick(&[(get, O::ReadPkRanges)]),
        Resource::Conflicts { .. } => pick(&[(get || post, O::ReadConflicts)]),
        Resource::Conflict { .. } => pick(&[(get, O::ReadConflict), (delete, O::DeleteConflict)]),
        Resource::Scripts { .. } => pick(&[
            (query, O::QueryScripts),
            (post, O::CreateScript),
            (get, O::ListScripts),
        ]),
        Resource::Script { kind, .. } => pick(&[
            (
                post && *kind == ScriptKind::StoredProcedure,
                O::ExecuteStoredProcedure,
            ),
            (get, O::ReadScript),
            (put, O::ReplaceScript),
            (delete, O::DeleteScript),
        ]),
        Resource::Users { .. } => pick(&[
            (get, O::ListUsers),
            (query, O::QueryUsers),
            (post, O::CreateUser),
        ]),
        Resource::User { .. } => pick(&[
            (get, O::ReadUser),
            (put, O::ReplaceUser),
            (delete, O::DeleteUser),
        ]),
        Resource::Permissions { .. } => pick(&[
            (get, O::ListPermissions),
            (query, O::QueryPermissions),
            (post, O::CreatePermission),
        ]),
        Resource::Permission { .. } => pick(&[
            (get, O::ReadPermission),
            (put, O::ReplacePermission),
            (delete, O::DeletePermission),
        ]),
        Resource::Offers => pick(&[(get, O::ListOffers), (query, O::QueryOffers)]),
        Resource::Offer { .. } => pick(&[(get, O::ReadOffer), (put, O::ReplaceOffer)]),
        Resource::Items { .. } => pick(&[
            (post && flag(headers, headers::IS_QUERY_PLAN), O::QueryPlan),
            (query, O::QueryItems),
            (post && flag(headers, headers::IS_BATCH_REQUEST), O::Batch),
            (post, O::CreateItem),
            (
                get && super::header_text(headers, headers::A_IM).is_some(),
                O::ChangeFeed,
            ),
            (get, O::ReadFeed),
        ]),
        Resource::PartitionKeyDelete { .. } => pick(&[(post, O::DeletePartitionKey)]),
        Resource::Item { .. } => pick(&[
            (get, O::ReadItem),
            (put, O::ReplaceItem),
            (delete, O::DeleteItem),
            (m == Method::PATCH, O::PatchItem),
        ]),
    }
}

/// Request bodies larger than this are parsed away from the I/O threads.
pub(crate) const LARGE_BODY: usize = 64 * 1024;

/// Whether serving the request may take long enough to delay other requests on the same thread:
/// queries and query plans (metadata and offer queries too), PATCH (its condition), batches, a
/// partition key delete, and any request with a large body.
/// The pipeline runs these on the blocking pool, so a slow one never stalls the I/O threads.
pub(crate) fn evaluates(
    method: &Method,
    route: &Route,
    headers: &HeaderMap,
    body_len: usize,
) -> bool {
    body_len > LARGE_BODY
        || match (&route.resource, method) {
            // Stored procedures and item writes that run triggers execute JavaScript.
            (Resource::Script { .. }, &Method::POST) => !is_query(headers),
            (Resource::Items { .. }, &Method::POST)
            | (Resource::Item { .. }, &Method::PUT)
            | (Resource::Item { .. }, &Method::DELETE)
                if names_triggers(headers) =>
            {
                true
            }
            (Resource::Items { .. }, &Method::POST) => {
                is_query(headers)
                    || flag(headers, headers::IS_QUERY_PLAN)
                    || flag(headers, headers::IS_BATCH_REQUEST)
            }
            (Resource::Item { .. }, &Method::PATCH) => true,
            (Resource::Databases, &Method::POST) | (Resource::Containers { .. }, &Method::POST) => {
                is_query(headers)
            }
            (Resource::Offers, &Method::POST) => true,
            (Resource::PartitionKeyDelete { .. }, &Method::POST) => true,
            _ => false,
        }
}

/// Whether a request names a pre- or post-trigger.
pub(crate) fn names_triggers(headers: &HeaderMap) -> bool {
    [headers::PRE_TRIGGER_INCLUDE, headers::POST_TRIGGER_INCLUDE]
        .iter()
        .any(|h| {
            headers
                .get(*h)
                .is_some_and(|v| !v.as_bytes().trim_ascii().is_empty())
        })
}

/// Whether a POST to a feed is a query.
pub(crate) fn is_query(headers: &HeaderMap) -> bool {
    flag(headers, headers::IS_QUERY)
        || headers
            .get(headers::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/query+json"))
}

/// Whether a boolean header is set to true.
pub(crate) fn flag(headers: &HeaderMap, name: &str) -> bool {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::route::parse;

    #[test]
    fn classifies_each_request_shape() {
        let plain = HeaderMap::new();
        let mut upsert = HeaderMap::new();
        upsert.insert(headers::IS_UPSERT, "True".parse().unwrap());
        let mut query = HeaderMap::new();
        query.insert(
            headers::CONTENT_TYPE,
            "application/query+json".parse().unwrap(),
        );
        let docs = parse("/dbs/d/colls/c/docs").unwrap();
        let doc = parse("/dbs/d/colls/c/docs/x").unwrap();
        let table = [
            (Method::GET, parse("/").unwrap(), &plain, OpKind::Metadata),
            (
                Method::GET,
                parse("/dbs/d/colls/c/pkranges").unwrap(),
                &plain,
                OpKind::Metadata,
            ),
            (Method::POST, docs.clone(), &plain, OpKind::Create),
            (Method::POST, docs.clone(), &upsert, OpKind::Upsert),
            (Method::POST, docs.clone(), &query, OpKind::Query),
            (Method::GET, docs, &plain, OpKind::ReadFeed),
            (Method::GET, doc.clone(), &plain, OpKind::Read),
            (Method::PUT, doc.clone(), &plain, OpKind::Replace),
            (Method::DELETE, doc.clone(), &plain, OpKind::Delete),
            (Method::PATCH, doc, &plain, OpKind::Patch),
        ];
        for (method, route, headers, want) in table {
            assert_eq!(
                op_kind(&method, &route, headers),
                want,
                "{method} {route:?}"
            );
        }
    }

    #[test]
    fn only_reads_count_as_reading_whatever_flags_they_carry() {
        let plain = HeaderMap::new();
        let mut query = HeaderMap::new();
        query.insert(headers::IS_QUERY, "True".parse().unwrap());
        query.insert(
            headers::CONTENT_TYPE,
            "application/query+json".parse().unwrap(),
        );
        let table = [
            (Method::GET, "/dbs/d/colls/c/docs/x", &plain, true),
            (Method::GET, "/dbs/d/colls/c/docs", &plain, true),
            (Method::POST, "/dbs/d/colls/c/docs", &query, true),
            (Method::GET, "/dbs/d/colls/c/pkranges", &plain, true),
            (Method::GET, "/dbs/d/users/u/permissions", &plain, true),
            (Method::POST, "/dbs/d/colls/c/docs", &plain, false),
            (Method::PUT, "/dbs/d/colls/c/docs/x", &plain, false),
            (Method::PATCH, "/dbs/d/colls/c/docs/x", &plain, false),
            (Method::DELETE, "/dbs/d/colls/c/docs/x", &plain, false),
            (Method::POST, "/dbs/d/colls/c/sprocs/s", &query, false),
            (Method::POST, "/dbs/d/colls/c/sprocs", &query, true),
            (Method::POST, "/dbs/d/colls/c/sprocs", &plain, false),
            (
                Method::POST,
                "/dbs/d/colls/c/operations/partitionkeydelete",
                &query,
                false,
            ),
            (Method::POST, "/dbs", &plain, false),
            (Method::PUT, "/offers/o", &plain, false),
        ];
        for (method, path, headers, want) in table {
            let route = parse(path).unwrap();
            let op = operation(&method, &route, headers);
            assert_eq!(
                op.map(Operation::reads_only),
                Some(want),
                "{method} {path} {op:?}"
            );
        }
    }
}
