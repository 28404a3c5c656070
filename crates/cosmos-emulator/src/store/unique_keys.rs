//! A container's unique key constraints (`uniqueKeyPolicy`), as the service enforces them: within
//! one logical partition no two items may hold the same values at every path of one unique key. A
//! missing property counts as `null` (so one item at most may lack it); strings compare exactly and
//! numbers by value. A write that would break a constraint is refused with 409 and changes nothing.
//!
//! Limits, as the service's: at most 10 unique keys per container and 16 paths per key; a path is
//! `/name[/name...]`. The policy cannot change after the container is created.
//!
//! The check reads the logical partition's items at each write to a container that has a policy
//! (the emulator keeps no secondary index): its cost grows with the logical partition.

use serde_json::{Map, Value};

use crate::protocol::ApiError;

/// Unique keys per container, as the service allows.
pub const MAX_UNIQUE_KEYS: usize = 10;
/// Paths per unique key, as the service allows.
pub const MAX_PATHS_PER_KEY: usize = 16;

/// One path, split into property names (`/address/zip` -> `["address", "zip"]`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyPath {
    text: String,
    segments: Vec<String>,
}

/// The unique keys of a container (empty: no constraint).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UniqueKeys {
    keys: Vec<Vec<KeyPath>>,
}

impl UniqueKeys {
    /// Reads `uniqueKeyPolicy` from a container body (absent or null: no constraint); 400 with
    /// what is wrong when it is malformed or past the limits.
    pub fn from_definition(map: &Map<String, Value>) -> Result<Self, ApiError> {
        let bad =
            |why: String| ApiError::bad_request(format!("The uniqueKeyPolicy is invalid: {why}"));
        let policy = match map.get("uniqueKeyPolicy") {
            None | Some(Value::Null) => return Ok(Self::default()),
            Some(Value::Object(policy)) => policy,
            Some(_) => return Err(bad("it must be an object with \"uniqueKeys\".".into())),
        };
        let keys = match policy.get("uniqueKeys") {
            None | Some(Value::Null) => return Ok(Self::default()),
            Some(Value::Array(keys)) => keys,
            Some(_) => return Err(bad("\"uniqueKeys\" must be an array.".into())),
        };
        if keys.len() > MAX_UNIQUE_KEYS {
            return Err(bad(format!(
                "{} unique keys, at most {MAX_UNIQUE_KEYS} are allowed.",
                keys.len()
            )));
        }
        let mut parsed = Vec::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate() {
            let Some(Value::Array(paths)) = key.get("paths") else {
                return Err(bad(format!("unique key {i} needs a \"paths\" array.")));
            };
            if paths.is_empty() || paths.len() > MAX_PATHS_PER_KEY {
                return Err(bad(format!(
                    "unique key {i} has {} paths; give 1 to {MAX_PATHS_PER_KEY}.",
                    paths.len()
                )));
            }
            let mut key_paths = Vec::with_capacity(paths.len());
            for path in paths {
                let Some(text) = path.as_str() else {
                    return Err(bad(format!(
                        "unique key {i} has a path that is not a string."
                    )));
                };
                let segments: Vec<String> = match text.strip_prefix('/') {
                    Some(rest) => rest.split('/').map(str::to_owned).collect(),
                    None => Vec::new(),
                };
                if segments.is_empty() || segments.iter().any(String::is_empty) {
                    return Err(bad(format!(
                        "the path {text:?} of unique key {i} must look like \"/name\" or \"/name/name\"."
                    )));
                }
                key_paths.push(KeyPath {
                    text: text.to_owned(),
                    segments,
                });
            }
            parsed.push(key_paths);
        }
        Ok(Self { keys: parsed })
    }

    /// Whether the container has no constraint.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// 409 when `candidate` (item `id`) holds the same values at every path of a unique key as one
    /// of `others` (the logical partition's items, `(id, body)`; the item itself is skipped).
    ///
    /// [`stored_items`] gives `others` from stored items.
    pub fn check<'a>(
        &self,
        candidate: &Map<String, Value>,
        id: &str,
        others: impl IntoIterator<Item = (&'a str, Value)>,
    ) -> Result<(), ApiError> {
        if self.keys.is_empty() {
            return Ok(());
        }
        let mine: Vec<Vec<&Value>> = self.keys.iter().map(|k| values(k, candidate)).collect();
        for (other_id, body) in others {
            if other_id == id {
                continue;
            }
            let Value::Object(other) = &body else {
                continue;
            };
            for (key, my_values) in self.keys.iter().zip(&mine) {
                let theirs = values(key, other);
                if my_values.iter().zip(&theirs).all(|(a, b)| same(a, b)) {
                    let paths: Vec<&str> = key.iter().map(|p| p.text.as_str()).collect();
                    return Err(ApiError::conflict(format!(
                        "Unique index constraint violation: another item in this logical partition has the same values at {}.",
                        paths.join(", ")
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Stored items as `(id, body)` for [`UniqueKeys::check`] (bodies that do not parse are skipped:
/// the store only holds what it sealed).
pub fn stored_items<'a>(
    items: &'a [(super::DocKey, std::sync::Arc<super::StoredDoc>)],
) -> impl Iterator<Item = (&'a str, Value)> + 'a {
    items
        .iter()
        .filter_map(|(key, doc)| Some((key.id.as_str(), serde_json::from_slice(&doc.body).ok()?)))
}

static NULL: Value = Value::Null;

/// The item's values at a key's paths (`null` where a property is missing).
fn values<'v>(key: &[KeyPath], doc: &'v Map<String, Value>) -> Vec<&'v Value> {
    key.iter()
        .map(|path| {
            let mut at: Option<&Value> = None;
            for (i, name) in path.segments.iter().enumerate() {
                at = if i == 0 {
                    doc.get(name)
                } else {
                    at.and_then(|v| v.get(name))
                };
            }
            at.unwrap_or(&NULL)
        })
        .collect()
}

/// Equal as unique key values: numbers by value, everything else exactly.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(policy: Value) -> Result<UniqueKeys, String> {
        let Value::Object(map) = json!({"id": "c", "uniqueKeyPolicy": policy}) else {
            unreachable!()
        };
        UniqueKeys::from_definition(&map).map_err(|e| e.message)
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("an object"),
        }
    }

    #[test]
    fn policies_are_read_and_bad_ones_refused_with_the_reason() {
        assert!(keys(Value::Null).unwrap().is_empty());
        assert!(keys(json!({"uniqueKeys": []})).unwrap().is_empty());
        assert!(!keys(json!({"uniqueKeys": [{"paths": ["/email"]}]}))
            .unwrap()
            .is_empty());
        let eleven: Vec<Value> = (0..11)
            .map(|i| json!({"paths": [format!("/p{i}")]}))
            .collect();
        let seventeen: Vec<String> = (0..17).map(|i| format!("/p{i}")).collect();
        let refused = [
            (json!("x"), "must be an object"),
            (json!({"uniqueKeys": {}}), "must be an array"),
            (json!({"uniqueKeys": eleven}), "at most 10"),
            (
                json!({"uniqueKeys": [{"paths": seventeen}]}),
                "give 1 to 16",
            ),
            (json!({"uniqueKeys": [{"paths": []}]}), "give 1 to 16"),
            (json!({"uniqueKeys": [{}]}), "needs a \"paths\" array"),
            (json!({"uniqueKeys": [{"paths": [1]}]}), "not a string"),
            (
                json!({"uniqueKeys": [{"paths": ["email"]}]}),
                "must look like",
            ),
            (
                json!({"uniqueKeys": [{"paths": ["/a//b"]}]}),
                "must look like",
            ),
        ];
        for (policy, why) in refused {
            let e = keys(policy.clone()).expect_err(&policy.to_string());
            assert!(e.contains(why), "{policy}: {e}");
        }
    }

    #[test]
    fn the_constraint_table() {
        let uk = keys(json!({"uniqueKeys": [
            {"paths": ["/email"]},
            {"paths": ["/name/first", "/name/last"]}
        ]}))
        .unwrap();
        let existing =
            json!({"id": "a", "email": "x@y", "n": 1, "name": {"first": "Ann", "last": "Lee"}});
        // (candidate, conflicts with item "a"?)
        let table = [
            (json!({"id": "b", "email": "x@y"}), true),
            (json!({"id": "b", "email": "X@y"}), false),
            (json!({"id": "a", "email": "x@y"}), false),
            (
                json!({"id": "b", "email": "z", "name": {"first": "Ann", "last": "Lee"}}),
                true,
            ),
            (
                json!({"id": "b", "email": "z", "name": {"first": "Ann", "last": "Li"}}),
                false,
            ),
            (
                json!({"id": "b", "email": "z", "name": {"first": "Ann"}}),
                false,
            ),
        ];
        for (candidate, conflicts) in table {
            let id = candidate["id"].as_str().unwrap().to_owned();
            let got = uk.check(&obj(candidate.clone()), &id, [("a", existing.clone())]);
            assert_eq!(got.is_err(), conflicts, "{candidate}");
            if let Err(e) = got {
                assert_eq!(e.status, 409);
                assert!(
                    e.message.contains("Unique index constraint violation"),
                    "{e:?}"
                );
            }
        }
    }

    #[test]
    fn missing_properties_count_as_null_and_numbers_compare_by_value() {
        let uk = keys(json!({"uniqueKeys": [{"paths": ["/email"]}]})).unwrap();
        let none = obj(json!({"id": "b"}));
        assert!(uk.check(&none, "b", [("a", json!({"id": "a"}))]).is_err());
        assert!(uk
            .check(&none, "b", [("a", json!({"id": "a", "email": null}))])
            .is_err());
        assert!(uk
            .check(&none, "b", [("a", json!({"id": "a", "email": "e"}))])
            .is_ok());
        let one = obj(json!({"id": "b", "email": 1}));
        assert!(uk
            .check(&one, "b", [("a", json!({"id": "a", "email": 1.0}))])
            .is_err());
        assert!(uk
            .check(&one, "b", [("a", json!({"id": "a", "email": "1"}))])
            .is_ok());
    }
}
