//! A container's indexing policy as the service stores it: what a create or replace leaves out is
//! filled in. `indexingMode` defaults to `consistent`; `automatic` is true unless the mode is `none`
//! (as the service keeps it, whatever it was sent); under a mode other
//! than `none`, missing `includedPaths` are `[{"path": "/*"}]`, and `/"_etag"/?` is always among
//! the `excludedPaths`; the legacy per-path `indexes` (kinds, data types, precisions) are
//! dropped, as the service ignores them. Pure: JSON in, JSON out.

use serde_json::{json, Map, Value};

/// The excluded path the service adds to every policy that indexes anything.
const ETAG_PATH: &str = "/\"_etag\"/?";

/// The stored form of `requested` (the body's `indexingPolicy`, absent or null meaning none
/// given); a policy that is not an object is returned as given, for the caller's checks.
pub(super) fn filled(requested: Option<&Value>) -> Value {
    let mut policy = match requested {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => return other.clone(),
    };
    let mode = policy
        .entry("indexingMode")
        .or_insert_with(|| json!("consistent"))
        .as_str()
        .unwrap_or("consistent")
        .to_ascii_lowercase();
    let none = mode == "none";
    // The service keeps `automatic` true for any policy that indexes (an `automatic: false` it is
    // sent reads back true); under `none` it stays as given, false by default.
    if none {
        policy.entry("automatic").or_insert(Value::Bool(false));
    } else {
        policy.insert("automatic".into(), Value::Bool(true));
    }
    let included = policy.entry("includedPaths").or_insert_with(|| {
        if none {
            json!([])
        } else {
            json!([{"path": "/*"}])
        }
    });
    if let Value::Array(paths) = included {
        for path in paths.iter_mut() {
            if let Value::Object(p) = path {
                p.remove("indexes");
            }
        }
    }
    let excluded = policy.entry("excludedPaths").or_insert_with(|| json!([]));
    if let Value::Array(paths) = excluded {
        let has_etag = paths
            .iter()
            .any(|p| p.get("path").and_then(Value::as_str) == Some(ETAG_PATH));
        if !none && !has_etag {
            paths.push(json!({"path": ETAG_PATH}));
        }
    }
    Value::Object(policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_policy_leaves_out_is_filled_in_as_the_service_does() {
        let default = json!({"indexingMode": "consistent", "automatic": true,
            "includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": ETAG_PATH}]});
        let table = [
            (None, default.clone()),
            (Some(json!({})), default.clone()),
            (
                Some(json!({"indexingMode": "consistent", "automatic": true})),
                default.clone(),
            ),
            (
                Some(json!({"includedPaths": [{"path": "/*"}]})),
                default.clone(),
            ),
            (
                Some(json!({"includedPaths": [{"path": "/*", "indexes": [
                    {"kind": "Hash", "dataType": "String"}, {"kind": "Range", "dataType": "Number"}]}]})),
                default,
            ),
            (
                Some(
                    json!({"includedPaths": [{"path": "/", "indexes": [{"kind": "Hash", "precision": 2}]}],
                    "excludedPaths": [{"path": "/\"systemMetadata\"/*"}]}),
                ),
                json!({"indexingMode": "consistent", "automatic": true, "includedPaths": [{"path": "/"}],
                    "excludedPaths": [{"path": "/\"systemMetadata\"/*"}, {"path": ETAG_PATH}]}),
            ),
            (
                Some(json!({"excludedPaths": [{"path": ETAG_PATH}, {"path": "/a/*"}]})),
                json!({"indexingMode": "consistent", "automatic": true, "includedPaths": [{"path": "/*"}],
                    "excludedPaths": [{"path": ETAG_PATH}, {"path": "/a/*"}]}),
            ),
            (
                Some(json!({"indexingMode": "none", "automatic": false})),
                json!({"indexingMode": "none", "automatic": false, "includedPaths": [], "excludedPaths": []}),
            ),
            (
                Some(json!({"automatic": false})),
                json!({"indexingMode": "consistent", "automatic": true, "includedPaths": [{"path": "/*"}],
                    "excludedPaths": [{"path": ETAG_PATH}]}),
            ),
            (Some(json!("lazy")), json!("lazy")),
        ];
        for (requested, want) in table {
            assert_eq!(filled(requested.as_ref()), want, "{requested:?}");
        }
    }
}
