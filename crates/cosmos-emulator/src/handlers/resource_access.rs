//! What a request made with a resource token may do: what the token's permission grants.
//!
//! A permission on a resource link covers that resource and everything under it (a container's
//! permission covers its items). `Read` allows reads, feeds and queries; `All` allows any
//! operation. A permission with a partition key covers only requests on items of that key
//! value. Whatever the grant, a token also reads the account and, for a resource inside a
//! container, that container's definition and partition key ranges (what a client reads to
//! route). Anything else answers 403.

use http::{HeaderMap, Method};
use serde_json::Value;

use crate::auth::percent_decode;
use crate::exchange::request_class::{flag, is_query};
use crate::exchange::Shared;
use crate::protocol::{headers, ApiError};
use crate::store::users::{Grant, PermissionMode};

/// The service's words for a request its token does not cover.
pub const INSUFFICIENT_PERMISSIONS: &str = "Insufficient permissions provided in the authorization header for the corresponding request. Please retry with another authorization header.";

/// The facts of a request the decision looks at.
#[derive(Debug)]
pub struct Asked<'a> {
    /// Whether the request only reads (GET, HEAD, a query or a query plan).
    pub reads: bool,
    /// The request path's segments, decoded (`["dbs", "d", "colls", "c", "docs"]`).
    pub segments: &'a [String],
    /// The request's partition key header, parsed.
    pub partition_key: Option<Value>,
}

/// Whether `grant` covers the request.
pub fn covers(grant: &Grant, asked: &Asked<'_>) -> bool {
    let granted: Vec<&str> = grant.resource.split('/').collect();
    let target: Vec<&str> = asked.segments.iter().map(String::as_str).collect();
    if asked.reads && routing_read(&granted, &target) {
        return true;
    }
    let within = target.len() >= granted.len() && target[..granted.len()] == granted[..];
    if !within {
        return false;
    }
    if grant.mode == PermissionMode::Read && !asked.reads {
        return false;
    }
    match &grant.partition_key {
        None => true,
        Some(key) => {
            // Only item requests can be held to a key; the container itself is not one.
            let on_items = target.get(4) == Some(&"docs");
            on_items
                && asked
                    .partition_key
                    .as_ref()
                    .is_some_and(|asked| same_key(asked, key))
        }
    }
}

/// The reads any token may make: the account, and the definition and partition key ranges of
/// the container its resource is in.
fn routing_read(granted: &[&str], target: &[&str]) -> bool {
    if target.is_empty() {
        return true;
    }
    let container = match granted {
        ["dbs", _, "colls", _, ..] => &granted[..4],
        _ => return false,
    };
    target == container
        || (target.len() == 5 && target[..4] == *container && target[4] == "pkranges")
}

/// Partition key values as the service compares them (numbers by value).
fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_key(x, y))
        }
        _ => a == b,
    }
}

/// Checks a resource-token request against what its permission grants now: 401 when the
/// permission no longer exists, 403 when it does not cover the request.
pub fn authorize(
    shared: &Shared,
    token_id: &str,
    method: &Method,
    path: &str,
    request_headers: &HeaderMap,
) -> Result<(), ApiError> {
    let grant = shared.store.users.grant(token_id).ok_or_else(|| {
        ApiError::new(
            401,
            "The resource token's permission no longer exists (it or its user was deleted).",
        )
    })?;
    let segments: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_decode(s).unwrap_or_default())
        .collect();
    let reads = *method == Method::GET
        || *method == Method::HEAD
        || (*method == Method::POST
            && (is_query(request_headers) || flag(request_headers, headers::IS_QUERY_PLAN)));
    let partition_key = request_headers
        .get(headers::PARTITION_KEY)
        .and_then(|v| v.to_str().ok())
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    let asked = Asked {
        reads,
        segments: &segments,
        partition_key,
    };
    if covers(&grant, &asked) {
        Ok(())
    } else {
        Err(ApiError::new(403, INSUFFICIENT_PERMISSIONS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grant(mode: PermissionMode, resource: &str, pk: Option<Value>) -> Grant {
        Grant {
            mode,
            resource: resource.into(),
            partition_key: pk,
        }
    }

    fn asked(g: &Grant, reads: bool, path: &str, pk: Option<Value>) -> bool {
        let segments: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let a = Asked {
            reads,
            segments: &segments,
            partition_key: pk,
        };
        covers(g, &a)
    }

    #[test]
    fn read_on_a_container() {
        let g = grant(PermissionMode::Read, "dbs/d/colls/c", None);
        let cases = [
            (true, "dbs/d/colls/c", true),
            (true, "dbs/d/colls/c/docs", true),
            (true, "dbs/d/colls/c/docs/a", true),
            (true, "dbs/d/colls/c/pkranges", true),
            (true, "", true),
            (false, "dbs/d/colls/c", false),
            (false, "dbs/d/colls/c/docs", false),
            (false, "dbs/d/colls/c/docs/a", false),
            (true, "dbs/d/colls/other/docs", false),
            (true, "dbs/d/colls/cc/docs", false),
            (true, "dbs/d", false),
            (true, "dbs/d/colls", false),
            (true, "dbs/d/users", false),
        ];
        for (reads, path, expected) in cases {
            assert_eq!(asked(&g, reads, path, None), expected, "{reads} {path}");
        }
    }

    #[test]
    fn all_on_an_item() {
        let g = grant(PermissionMode::All, "dbs/d/colls/c/docs/a", None);
        let cases = [
            (true, "dbs/d/colls/c/docs/a", true),
            (false, "dbs/d/colls/c/docs/a", true),
            (true, "dbs/d/colls/c", true),
            (true, "dbs/d/colls/c/pkranges", true),
            (false, "dbs/d/colls/c", false),
            (true, "dbs/d/colls/c/docs", false),
            (false, "dbs/d/colls/c/docs", false),
            (true, "dbs/d/colls/c/docs/b", false),
        ];
        for (reads, path, expected) in cases {
            assert_eq!(asked(&g, reads, path, None), expected, "{reads} {path}");
        }
    }

    #[test]
    fn a_partition_key_limits_item_requests() {
        let g = grant(PermissionMode::All, "dbs/d/colls/c", Some(json!([1])));
        let cases = [
            (false, "dbs/d/colls/c/docs", Some(json!([1])), true),
            (false, "dbs/d/colls/c/docs", Some(json!([1.0])), true),
            (false, "dbs/d/colls/c/docs", Some(json!([2])), false),
            (false, "dbs/d/colls/c/docs", Some(json!(["1"])), false),
            (false, "dbs/d/colls/c/docs", None, false),
            (false, "dbs/d/colls/c/docs/x", Some(json!([1])), true),
            (true, "dbs/d/colls/c/docs", None, false),
            (true, "dbs/d/colls/c", None, true),
            (false, "dbs/d/colls/c", Some(json!([1])), false),
        ];
        for (reads, path, pk, expected) in cases {
            assert_eq!(
                asked(&g, reads, path, pk.clone()),
                expected,
                "{reads} {path} {pk:?}"
            );
        }
    }
}
