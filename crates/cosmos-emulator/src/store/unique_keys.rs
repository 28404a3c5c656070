//! A container's unique key constraints (`uniqueKeyPolicy`), as the service enforces them: within
//! one logical partition no two items may hold the same values at every path of one unique key. A
//! missing property counts as `null` (so one item at most may lack it); strings compare exactly and
//! numbers by value. A write that would break a constraint is refused with 409 and changes nothing.
//!
//! Limits, as the service's: at most 10 unique keys per container and 16 paths per key; a path is
//! `/name[/name...]`. The policy cannot change after the container is created.
//!
//! Each stored item carries its values at the unique keys' paths ([`UniqueKeys::entries`], one
//! text per key), and each partition keeps an index of them per logical partition
//! ([`UniqueIndex`], maintained as items are committed), so a write is checked by looking its own
//! values up: it costs the same with 3 or 3,000 items in the logical partition.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::stored_doc::{DocKey, StoredDoc};
use crate::epk::Epk;
use crate::protocol::ApiError;
use crate::sql::value::canonical;

/// Unique keys per container, as the service allows.
pub(crate) const MAX_UNIQUE_KEYS: usize = 10;
/// Paths per unique key, as the service allows.
pub(crate) const MAX_PATHS_PER_KEY: usize = 16;

/// One path, split into property names (`/address/zip` -> `["address", "zip"]`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyPath {
    text: String,
    segments: Vec<String>,
}

/// The unique keys of a container (empty: no constraint).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct UniqueKeys {
    keys: Vec<Vec<KeyPath>>,
}

impl UniqueKeys {
    /// Reads `uniqueKeyPolicy` from a container body (absent or null: no constraint); 400 with
    /// what is wrong when it is malformed or past the limits.
    pub(crate) fn from_definition(map: &Map<String, Value>) -> Result<Self, ApiError> {
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
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The item's values at each unique key, as texts equal exactly when the values are (one per
    /// key, the key's number first); empty without a policy.
    pub(crate) fn entries(&self, item: &Map<String, Value>) -> Box<[String]> {
        self.keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                let mut text = format!("{i}:");
                for v in values(key, item) {
                    text.push_str(&canonical(Some(v)));
                    text.push('\u{1f}');
                }
                text
            })
            .collect()
    }

    /// The 409 for a write whose value `entry` (one of [`UniqueKeys::entries`]) another item holds.
    pub(crate) fn violation(&self, entry: &str) -> ApiError {
        let paths: Vec<&str> = entry
            .split(':')
            .next()
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| self.keys.get(i))
            .map(|key| key.iter().map(|p| p.text.as_str()).collect())
            .unwrap_or_default();
        ApiError::conflict(format!(
            "Unique index constraint violation: another item in this logical partition has the same values at {}.",
            paths.join(", ")
        ))
    }
}

/// The unique values of a partition's committed items: which item (by id) holds each, per
/// logical partition.
#[derive(Clone, Debug, Default)]
pub(crate) struct UniqueIndex {
    owners: HashMap<(Epk, String), String>,
}

impl UniqueIndex {
    /// The id of the item of logical partition `epk` holding `entry`, if any.
    pub(crate) fn owner(&self, epk: Epk, entry: &str) -> Option<&str> {
        self.owners
            .get(&(epk, entry.to_owned()))
            .map(String::as_str)
    }

    /// Notes that `key`'s committed version went from `previous` to `next`.
    pub(crate) fn replace(
        &mut self,
        key: &DocKey,
        previous: Option<&StoredDoc>,
        next: Option<&StoredDoc>,
    ) {
        for entry in previous.iter().flat_map(|d| d.unique.iter()) {
            let slot = (key.epk, entry.clone());
            if self.owners.get(&slot) == Some(&key.id) {
                self.owners.remove(&slot);
            }
        }
        for entry in next.iter().flat_map(|d| d.unique.iter()) {
            self.owners.insert((key.epk, entry.clone()), key.id.clone());
        }
    }

    /// Values held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.owners.len()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Partition;
    use serde_json::json;
    use std::sync::Arc;

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

    fn stored(uk: &UniqueKeys, v: Value) -> Arc<StoredDoc> {
        Arc::new(StoredDoc {
            body: v.to_string().into(),
            etag: "e".into(),
            rid: [0; 16],
            unique: uk.entries(&obj(v)),
            vectors: Default::default(),
            indexed: true,
        })
    }

    fn key(id: &str) -> DocKey {
        DocKey {
            epk: Epk::single(7),
            id: id.into(),
        }
    }

    /// A partition holding `items`, committed one by one.
    fn partition(uk: &UniqueKeys, items: &[Value]) -> Partition {
        let mut p = Partition::new(1);
        for item in items {
            let id = item["id"].as_str().unwrap();
            p.commit(
                key(id),
                Some(stored(uk, item.clone())),
                0,
                tokio::time::Instant::now(),
                &[std::time::Duration::ZERO],
            );
        }
        p
    }

    /// Whether writing `candidate` alone conflicts.
    fn conflicts(uk: &UniqueKeys, p: &Partition, candidate: Value) -> Option<ApiError> {
        let id = candidate["id"].as_str().unwrap().to_owned();
        uk.check_writes(p, &[(key(&id), Some(stored(uk, candidate)))])
            .err()
            .map(|(_, e)| e)
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
        let p = partition(&uk, &[existing]);
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
        for (candidate, want) in table {
            let got = conflicts(&uk, &p, candidate.clone());
            assert_eq!(got.is_some(), want, "{candidate}");
            if let Some(e) = got {
                assert_eq!(e.status, 409);
                assert!(
                    e.message.contains("Unique index constraint violation"),
                    "{e:?}"
                );
            }
        }
        let e = conflicts(
            &uk,
            &p,
            json!({"id": "b", "email": "z", "name": {"first": "Ann", "last": "Lee"}}),
        )
        .unwrap();
        assert!(
            e.message.contains("/name/first, /name/last"),
            "{}",
            e.message
        );
    }

    #[test]
    fn missing_properties_count_as_null_and_numbers_compare_by_value() {
        let uk = keys(json!({"uniqueKeys": [{"paths": ["/email"]}]})).unwrap();
        let none = json!({"id": "b"});
        assert!(conflicts(&uk, &partition(&uk, &[json!({"id": "a"})]), none.clone()).is_some());
        assert!(conflicts(
            &uk,
            &partition(&uk, &[json!({"id": "a", "email": null})]),
            none.clone()
        )
        .is_some());
        assert!(conflicts(
            &uk,
            &partition(&uk, &[json!({"id": "a", "email": "e"})]),
            none
        )
        .is_none());
        let one = json!({"id": "b", "email": 1});
        assert!(conflicts(
            &uk,
            &partition(&uk, &[json!({"id": "a", "email": 1.0})]),
            one.clone()
        )
        .is_some());
        assert!(conflicts(
            &uk,
            &partition(&uk, &[json!({"id": "a", "email": "1"})]),
            one
        )
        .is_none());
    }

    #[test]
    fn the_index_follows_replaces_and_deletes_and_a_batch_is_checked_in_order() {
        let uk = keys(json!({"uniqueKeys": [{"paths": ["/email"]}]})).unwrap();
        let mut p = partition(&uk, &[json!({"id": "a", "email": "x"})]);
        p.commit(
            key("a"),
            Some(stored(&uk, json!({"id": "a", "email": "y"}))),
            0,
            tokio::time::Instant::now(),
            &[std::time::Duration::ZERO],
        );
        assert!(conflicts(&uk, &p, json!({"id": "b", "email": "x"})).is_none());
        assert!(conflicts(&uk, &p, json!({"id": "b", "email": "y"})).is_some());
        // In one batch: "a" moves to "z" first, so "b" may take "y"; a third taking "z" conflicts.
        let writes = [
            (
                key("a"),
                Some(stored(&uk, json!({"id": "a", "email": "z"}))),
            ),
            (
                key("b"),
                Some(stored(&uk, json!({"id": "b", "email": "y"}))),
            ),
            (
                key("c"),
                Some(stored(&uk, json!({"id": "c", "email": "z"}))),
            ),
        ];
        assert_eq!(uk.check_writes(&p, &writes[..2]).map_err(|e| e.0), Ok(()));
        assert_eq!(uk.check_writes(&p, &writes).map_err(|e| e.0), Err(2));
        let delete_then_take = [
            (key("a"), None),
            (
                key("b"),
                Some(stored(&uk, json!({"id": "b", "email": "y"}))),
            ),
        ];
        assert!(uk.check_writes(&p, &delete_then_take).is_ok());
        p.commit(
            key("a"),
            None,
            0,
            tokio::time::Instant::now(),
            &[std::time::Duration::ZERO],
        );
        assert!(conflicts(&uk, &p, json!({"id": "b", "email": "y"})).is_none());
        assert_eq!(p.unique_values(), 0);
    }
}
