//! Which operation kind a request is (for fault rules and counters), and the request flags
//! handlers and the pipeline both read.

use http::{HeaderMap, Method};

use crate::faults::OpKind;
use crate::protocol::headers;
use crate::protocol::{Resource, Route};

/// Classifies a routed request.
pub fn op_kind(method: &Method, route: &Route, headers: &HeaderMap) -> OpKind {
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

/// Request bodies larger than this are parsed away from the I/O threads.
pub const LARGE_BODY: usize = 64 * 1024;

/// Whether serving the request may take long enough to delay other requests on the same thread:
/// queries and query plans (metadata and offer queries too), PATCH (its condition), batches, a
/// partition key delete, and any request with a large body.
/// The pipeline runs these on the blocking pool, so a slow one never stalls the I/O threads.
pub fn evaluates(method: &Method, route: &Route, headers: &HeaderMap, body_len: usize) -> bool {
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
pub fn names_triggers(headers: &HeaderMap) -> bool {
    [headers::PRE_TRIGGER_INCLUDE, headers::POST_TRIGGER_INCLUDE]
        .iter()
        .any(|h| {
            headers
                .get(*h)
                .is_some_and(|v| !v.as_bytes().trim_ascii().is_empty())
        })
}

/// Whether a POST to a feed is a query.
pub fn is_query(headers: &HeaderMap) -> bool {
    flag(headers, headers::IS_QUERY)
        || headers
            .get(headers::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/query+json"))
}

/// Whether a boolean header is set to true.
pub fn flag(headers: &HeaderMap, name: &str) -> bool {
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
}
