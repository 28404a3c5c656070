//! Grouping read-many items by partition key range, and the query each group sends.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::error::CosmosError;
use crate::protocol::{
    effective_partition_key_for, epk_in_range, HashVersion, PartitionKey, PartitionKeyValue,
};
use crate::query::{Query, MAX_PARAMETERS};
use crate::routing::TargetRange;

/// The most items one read-many call takes.
pub const MAX_READ_MANY_ITEMS: usize = 100_000;
/// The most items one group query asks for.
pub const MAX_ITEMS_PER_QUERY: usize = 100;
/// Groups in flight at once unless the caller says otherwise.
pub const DEFAULT_READ_MANY_CONCURRENCY: usize = 8;

/// One item asked for: its partition key and id, and its index in the caller's list.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ItemKey {
    /// The caller's index.
    pub index: usize,
    /// The partition key.
    pub partition_key: PartitionKey,
    /// The id.
    pub id: String,
}

/// The request one group sends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ReadManyRequest {
    /// A point read of the group's only item.
    PointRead(ItemKey),
    /// A query on id and partition key, sent to the group's range.
    Query(Query),
}

/// The items of one partition key range (or a chunk of them) and the request that reads them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReadManyGroup {
    /// The range.
    pub range: TargetRange,
    /// The items asked for.
    pub items: Vec<ItemKey>,
    /// The request.
    pub request: ReadManyRequest,
}

impl ReadManyGroup {
    /// The caller's index of a document this group's query returned, or `None` when it is not one
    /// of the group's items (an item with the same id under another partition key).
    pub(crate) fn index_of(&self, document: &Value, paths: &[Vec<String>]) -> Option<usize> {
        let id = document.get("id")?.as_str()?;
        let key = partition_key_of(document, paths)?;
        self.items
            .iter()
            .find(|k| k.id == id && k.partition_key.as_json() == key.as_json())
            .map(|k| k.index)
    }
}

/// The partition key of `document` under the container's key `paths` (each split into its
/// segments); `None` when a component is missing or not a scalar.
fn partition_key_of(document: &Value, paths: &[Vec<String>]) -> Option<PartitionKey> {
    let mut values = Vec::with_capacity(paths.len());
    for path in paths {
        let v = path.iter().try_fold(document, |v, s| v.get(s))?;
        values.push(match v {
            Value::String(s) => PartitionKeyValue::from(s.as_str()),
            Value::Number(n) => PartitionKeyValue::Number(n.as_f64()?),
            Value::Bool(b) => PartitionKeyValue::Bool(*b),
            Value::Null => PartitionKeyValue::Null,
            _ => return None,
        });
    }
    PartitionKey::hierarchical(values).ok()
}

/// `c["a"]["b"]` for path segments `a`, `b`.
fn path_expression(segments: &[String]) -> String {
    let mut out = String::from("c");
    for s in segments {
        out.push('[');
        out.push_str(&serde_json::to_string(s).unwrap_or_default());
        out.push(']');
    }
    out
}

fn group_query(items: &[ItemKey], paths: &[Vec<String>]) -> Result<Query, CosmosError> {
    let mut text = String::from("SELECT * FROM c WHERE ");
    let mut params: Vec<(String, Value)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            text.push_str(" OR ");
        }
        text.push_str(&format!("(c.id = @id{i}"));
        params.push((format!("@id{i}"), Value::String(item.id.clone())));
        let values: Vec<Value> = serde_json::from_str(item.partition_key.as_json())
            .map_err(|e| CosmosError::invalid_input(format!("a partition key: {e}")))?;
        if values.len() != paths.len() {
            return Err(CosmosError::invalid_input(format!(
                "the partition key {} of item {:?} has {} values; the container's key has {} paths",
                item.partition_key.as_json(),
                item.id,
                values.len(),
                paths.len()
            )));
        }
        for (j, (value, path)) in values.into_iter().zip(paths).enumerate() {
            let name = format!("@pk{i}_{j}");
            text.push_str(&format!(" AND {} = {name}", path_expression(path)));
            params.push((name, value));
        }
        text.push(')');
    }
    let mut query = Query::new(text);
    for (name, value) in &params {
        query = query.with_parameter(name, value)?;
    }
    Ok(query)
}

/// Groups `items` (the caller's (partition key, id) list) by the range of `ranges` (sorted
/// leaves covering the space) their key hashes into; `paths` are the container's partition key
/// paths, split into segments, and `version` its hashing. Repeated items are read once (the first index answers). A group
/// of one item is a point read; a bigger one is one query per [`MAX_ITEMS_PER_QUERY`] items.
pub(crate) fn plan_read_many(
    items: &[(PartitionKey, String)],
    ranges: &[TargetRange],
    paths: &[Vec<String>],
    version: HashVersion,
) -> Result<Vec<ReadManyGroup>, CosmosError> {
    if items.len() > MAX_READ_MANY_ITEMS {
        return Err(CosmosError::invalid_input(format!(
            "read many takes at most {MAX_READ_MANY_ITEMS} items; got {}",
            items.len()
        )));
    }
    if paths.is_empty() {
        return Err(CosmosError::invalid_input(
            "the container has no partition key paths",
        ));
    }
    let per_query = (MAX_PARAMETERS / (1 + paths.len())).min(MAX_ITEMS_PER_QUERY);
    let mut seen: HashMap<(String, &str), ()> = HashMap::with_capacity(items.len());
    let mut by_range: BTreeMap<usize, Vec<ItemKey>> = BTreeMap::new();
    for (index, (pk, id)) in items.iter().enumerate() {
        if id.is_empty() {
            return Err(CosmosError::invalid_input(format!(
                "read many item {index} has an empty id"
            )));
        }
        if seen.insert((pk.as_json().to_owned(), id), ()).is_some() {
            continue;
        }
        let epk = effective_partition_key_for(pk, paths.len(), version);
        let r = ranges
            .iter()
            .position(|r| epk_in_range(&epk, &r.min, &r.max))
            .ok_or_else(|| {
                CosmosError::new(
                    crate::error::ErrorKind::Service,
                    "the container's partition key ranges do not cover every partition key",
                )
            })?;
        by_range.entry(r).or_default().push(ItemKey {
            index,
            partition_key: pk.clone(),
            id: id.clone(),
        });
    }
    let mut groups = Vec::new();
    for (r, keys) in by_range {
        if keys.len() == 1 {
            groups.push(ReadManyGroup {
                range: ranges[r].clone(),
                request: ReadManyRequest::PointRead(keys[0].clone()),
                items: keys,
            });
            continue;
        }
        for chunk in keys.chunks(per_query) {
            groups.push(ReadManyGroup {
                range: ranges[r].clone(),
                request: ReadManyRequest::Query(group_query(chunk, paths)?),
                items: chunk.to_vec(),
            });
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ranges() -> Vec<TargetRange> {
        vec![
            TargetRange {
                id: "0".into(),
                min: String::new(),
                max: "20".into(),
            },
            TargetRange {
                id: "1".into(),
                min: "20".into(),
                max: "FF".into(),
            },
        ]
    }

    fn pk_paths() -> Vec<Vec<String>> {
        vec![vec!["pk".into()]]
    }

    /// A hash V1 container's ranges (split at the hash 2^31, as V1 bounds are written): each item
    /// lands in the range its V1 key falls in, which its V2 key says nothing about.
    #[test]
    fn v1_items_group_by_their_v1_key() {
        let v1_ranges = vec![
            TargetRange {
                id: "0".into(),
                min: String::new(),
                max: "05C1E0".into(),
            },
            TargetRange {
                id: "1".into(),
                min: "05C1E0".into(),
                max: "FF".into(),
            },
        ];
        let items: Vec<(PartitionKey, String)> = (0..40)
            .map(|i| (PartitionKey::from(format!("p{i}")), format!("i{i}")))
            .collect();
        let groups = plan_read_many(&items, &v1_ranges, &pk_paths(), HashVersion::V1).unwrap();
        let mut seen = 0;
        for g in &groups {
            for k in &g.items {
                let epk = effective_partition_key_for(&k.partition_key, 1, HashVersion::V1);
                assert!(epk.starts_with("05"), "{epk}");
                assert!(epk_in_range(&epk, &g.range.min, &g.range.max));
                seen += 1;
            }
        }
        assert_eq!(seen, 40);
        assert!(groups.iter().any(|g| g.range.id == "0"));
        assert!(groups.iter().any(|g| g.range.id == "1"));
    }

    #[test]
    fn items_group_by_the_range_their_key_hashes_into() {
        let items: Vec<(PartitionKey, String)> = (0..300)
            .map(|i| (PartitionKey::from(format!("p{}", i % 30)), format!("i{i}")))
            .collect();
        let groups = plan_read_many(&items, &ranges(), &pk_paths(), HashVersion::V2).unwrap();
        let mut indices: Vec<usize> = Vec::new();
        for g in &groups {
            for k in &g.items {
                let epk = crate::protocol::effective_partition_key(&k.partition_key, 1);
                assert!(epk_in_range(&epk, &g.range.min, &g.range.max));
                indices.push(k.index);
            }
            assert!(g.items.len() <= MAX_ITEMS_PER_QUERY);
            assert!(matches!(g.request, ReadManyRequest::Query(_)));
        }
        indices.sort();
        assert_eq!(indices, (0..300).collect::<Vec<_>>());
        assert!(groups.iter().any(|g| g.range.id == "0"));
        assert!(groups.iter().any(|g| g.range.id == "1"));
    }

    #[test]
    fn one_item_is_a_point_read_and_repeats_are_read_once() {
        let items = vec![
            (PartitionKey::from("a"), "x".to_owned()),
            (PartitionKey::from("a"), "x".to_owned()),
        ];
        let one = ranges()[..].to_vec();
        let groups = plan_read_many(&items, &one, &pk_paths(), HashVersion::V2).unwrap();
        assert_eq!(groups.len(), 1);
        match &groups[0].request {
            ReadManyRequest::PointRead(k) => assert_eq!((k.index, k.id.as_str()), (0, "x")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_query_matches_id_and_every_key_path() {
        let items = [
            (
                PartitionKey::hierarchical(["t".into(), 1.0.into()]).unwrap(),
                "a".to_owned(),
            ),
            (
                PartitionKey::hierarchical(["t".into(), 2.0.into()]).unwrap(),
                "b".to_owned(),
            ),
        ];
        let paths = vec![vec!["tenant".into()], vec!["user".into(), "n".into()]];
        let q = group_query(
            &items
                .iter()
                .enumerate()
                .map(|(index, (pk, id))| ItemKey {
                    index,
                    partition_key: pk.clone(),
                    id: id.clone(),
                })
                .collect::<Vec<_>>(),
            &paths,
        )
        .unwrap();
        assert_eq!(
            q.text(),
            r#"SELECT * FROM c WHERE (c.id = @id0 AND c["tenant"] = @pk0_0 AND c["user"]["n"] = @pk0_1) OR (c.id = @id1 AND c["tenant"] = @pk1_0 AND c["user"]["n"] = @pk1_1)"#
        );
        assert_eq!(q.parameters().len(), 6);
        assert!(group_query(
            &[ItemKey {
                index: 0,
                partition_key: "only-one".into(),
                id: "a".into()
            }],
            &paths
        )
        .is_err());
    }

    #[test]
    fn answers_map_back_to_the_callers_index_and_other_keys_are_dropped() {
        let items = vec![
            (PartitionKey::from("a"), "x".to_owned()),
            (PartitionKey::from("b"), "x".to_owned()),
        ];
        let all = vec![TargetRange {
            id: "0".into(),
            min: String::new(),
            max: "FF".into(),
        }];
        let groups = plan_read_many(&items, &all, &pk_paths(), HashVersion::V2).unwrap();
        let g = &groups[0];
        assert_eq!(
            g.index_of(&json!({"id": "x", "pk": "b"}), &pk_paths()),
            Some(1)
        );
        assert_eq!(
            g.index_of(&json!({"id": "x", "pk": "c"}), &pk_paths()),
            None
        );
        assert_eq!(g.index_of(&json!({"id": "x"}), &pk_paths()), None);
    }

    #[test]
    fn bad_input_is_refused() {
        let items = vec![(PartitionKey::from("a"), String::new())];
        assert!(plan_read_many(&items, &ranges(), &pk_paths(), HashVersion::V2).is_err());
        assert!(plan_read_many(&[], &ranges(), &[], HashVersion::V2).is_err());
        let items = vec![(PartitionKey::from("a"), "x".to_owned())];
        assert!(plan_read_many(&items, &[], &pk_paths(), HashVersion::V2).is_err());
    }
}
