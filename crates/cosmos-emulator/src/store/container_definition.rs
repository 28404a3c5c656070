//! A container's definition (its resource JSON and etag) and the rules of replacing it: the
//! indexing policy, default TTL and other settings change; the id, the partition key definition and
//! the unique key policy are fixed when the container is created, as in the service.

use bytes::Bytes;
use serde_json::{Map, Value};

use crate::protocol::ApiError;

/// The container's resource JSON as served, and its etag.
#[derive(Clone, Debug)]
pub(crate) struct Definition {
    /// The resource JSON.
    pub body: Bytes,
    /// Its etag.
    pub etag: String,
}

/// Properties a replace may not change.
const FIXED: [(&str, &str); 2] = [
    (
        "partitionKey",
        "The partition key definition of a container cannot be changed.",
    ),
    (
        "uniqueKeyPolicy",
        "The unique key policy of a container cannot be changed after it is created.",
    ),
];

/// Checks `defaultTtl` as the service does: absent or null (no expiry), -1 (items expire only
/// with their own `ttl`), or a positive whole number of seconds.
pub(super) fn check_default_ttl(map: &Map<String, Value>) -> Result<(), ApiError> {
    match map.get("defaultTtl") {
        None | Some(Value::Null) => Ok(()),
        Some(v) => match v.as_i64() {
            Some(-1) => Ok(()),
            Some(n) if n > 0 && n <= i64::from(i32::MAX) => Ok(()),
            _ => Err(ApiError::bad_request(format!(
                "The value of defaultTtl ({v}) is invalid: use -1 or a positive whole number of seconds up to {}.",
                i32::MAX
            ))),
        },
    }
}

/// The body of a replace of the container whose current resource JSON is `current`, from the
/// requested `map`: 400 when it changes what is fixed or names another container; properties it
/// leaves out that the service fills in (the partition key definition, the indexing policy) keep
/// their current values. System properties are written by the caller when it seals the result.
pub(super) fn replaced(
    current: &Map<String, Value>,
    mut map: Map<String, Value>,
    url_id: &str,
) -> Result<Map<String, Value>, ApiError> {
    let current_id = current.get("id").and_then(Value::as_str).unwrap_or(url_id);
    match map.get("id").and_then(Value::as_str) {
        Some(id) if id == current_id => {}
        Some(id) => {
            return Err(ApiError::bad_request(format!(
                "The container's id cannot be changed: the body names {id:?}, the container is {current_id:?}."
            )))
        }
        None => {
            return Err(ApiError::bad_request(
                "The input content is invalid because the required property, id, is missing.",
            ))
        }
    }
    check_default_ttl(&map)?;
    for (name, reason) in FIXED {
        let empty = Value::Null;
        let now = current.get(name).unwrap_or(&empty);
        match map.get(name) {
            None if name == "partitionKey" => {
                map.insert(name.into(), now.clone());
            }
            requested => {
                if !same_setting(name, now, requested.unwrap_or(&empty)) {
                    return Err(ApiError::bad_request(reason));
                }
            }
        }
    }
    super::search_policy::check_replace(current, &mut map)?;
    if let Some(policy) = map.get("indexingPolicy") {
        let policy = super::indexing_policy::filled(Some(policy));
        map.insert("indexingPolicy".into(), policy);
    }
    for kept in [
        "indexingPolicy",
        "conflictResolutionPolicy",
        "geospatialConfig",
    ] {
        if !map.contains_key(kept) {
            if let Some(v) = current.get(kept) {
                map.insert(kept.into(), v.clone());
            }
        }
    }
    Ok(map)
}

/// Whether two values of a fixed setting mean the same: an absent or empty unique key policy is no
/// policy; a partition key definition is compared by paths, kind and version (absent means 2).
fn same_setting(name: &str, a: &Value, b: &Value) -> bool {
    if name == "uniqueKeyPolicy" {
        let keys = |v: &Value| v.get("uniqueKeys").cloned().unwrap_or(Value::Array(vec![]));
        return keys(a) == keys(b);
    }
    let part = |v: &Value, key: &str, default: Value| v.get(key).cloned().unwrap_or(default);
    part(a, "paths", Value::Null) == part(b, "paths", Value::Null)
        && part(a, "kind", "Hash".into()) == part(b, "kind", "Hash".into())
        && part(a, "version", 2.into()) == part(b, "version", 2.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("test input is an object"),
        }
    }

    fn current() -> Map<String, Value> {
        obj(json!({
            "id": "c",
            "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
            "indexingPolicy": {"indexingMode": "consistent"},
            "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]},
            "defaultTtl": 60,
            "_rid": "x"
        }))
    }

    #[test]
    fn replace_rules_table() {
        let pk = json!({"paths": ["/pk"], "kind": "Hash"});
        let uk = json!({"uniqueKeys": [{"paths": ["/email"]}]});
        let rows: Vec<(Value, Result<(), &str>)> = vec![
            (
                json!({"id": "c", "partitionKey": pk, "uniqueKeyPolicy": uk, "defaultTtl": -1}),
                Ok(()),
            ),
            (json!({"id": "c", "uniqueKeyPolicy": uk}), Ok(())),
            (
                json!({"id": "c", "partitionKey": pk, "uniqueKeyPolicy": uk, "defaultTtl": 0}),
                Err("defaultTtl"),
            ),
            (
                json!({"id": "c", "uniqueKeyPolicy": uk, "defaultTtl": "1"}),
                Err("defaultTtl"),
            ),
            (
                json!({"id": "c", "partitionKey": {"paths": ["/other"]}, "uniqueKeyPolicy": uk}),
                Err("partition key definition"),
            ),
            (
                json!({"id": "c", "partitionKey": pk, "uniqueKeyPolicy": {"uniqueKeys": []}}),
                Err("unique key policy"),
            ),
            (
                json!({"id": "c", "partitionKey": pk}),
                Err("unique key policy"),
            ),
            (
                json!({"id": "d", "uniqueKeyPolicy": uk}),
                Err("cannot be changed"),
            ),
            (json!({"uniqueKeyPolicy": uk}), Err("id, is missing")),
        ];
        for (body, want) in rows {
            let got = replaced(&current(), obj(body.clone()), "c");
            match (got, want) {
                (Ok(_), Ok(())) => {}
                (Err(e), Err(needle)) => {
                    assert_eq!(e.status, 400, "{body}");
                    assert!(e.message.contains(needle), "{body}: {}", e.message);
                }
                (got, want) => panic!("{body}: got {:?}, want {want:?}", got.map(|_| ())),
            }
        }
    }

    #[test]
    fn left_out_settings_keep_their_values_and_new_ones_replace() {
        let body = json!({"id": "c", "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]},
                          "indexingPolicy": {"indexingMode": "none", "automatic": false}});
        let out = replaced(&current(), obj(body), "c").unwrap();
        assert_eq!(out["partitionKey"]["paths"][0], "/pk");
        assert_eq!(out["indexingPolicy"]["indexingMode"], "none");
        assert!(
            !out.contains_key("defaultTtl"),
            "a replace without defaultTtl turns expiry off"
        );
        let without_policy =
            json!({"id": "c", "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]}});
        let out = replaced(&current(), obj(without_policy), "c").unwrap();
        assert_eq!(out["indexingPolicy"]["indexingMode"], "consistent");
    }

    #[test]
    fn no_unique_keys_equals_an_empty_policy() {
        let mut cur = current();
        cur.remove("uniqueKeyPolicy");
        let body = json!({"id": "c", "uniqueKeyPolicy": {"uniqueKeys": []}});
        assert!(replaced(&cur, obj(body), "c").is_ok());
    }
}
