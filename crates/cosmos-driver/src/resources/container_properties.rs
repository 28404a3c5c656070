//! A container's definition: partition key, indexing policy, default TTL, unique keys and the
//! vector and full-text search policies. Fields the driver does not name (system properties,
//! conflict resolution...) are kept as they came, so reading a definition and replacing it loses
//! nothing.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{CosmosError, ErrorKind};
use crate::protocol::PartitionKeyDefinition;

/// A container's definition as the service holds it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProperties {
    /// The container's id.
    pub id: String,
    /// How items are partitioned (fixed when the container is created).
    pub partition_key: PartitionKeySpec,
    /// Which paths are indexed and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexing_policy: Option<IndexingPolicy>,
    /// Seconds after their last write that items expire: `None` never (items' own `ttl` is
    /// ignored), `Some(-1)` only items with their own `ttl`, `Some(n)` with `n > 0` after `n`
    /// seconds unless an item says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_ttl: Option<i64>,
    /// Property combinations unique within a logical partition (fixed when the container is
    /// created).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_key_policy: Option<UniqueKeyPolicy>,
    /// The vector properties of the items (fixed when the container is created).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_embedding_policy: Option<super::search_policy::VectorEmbeddingPolicy>,
    /// The text properties full-text search reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_text_policy: Option<super::search_policy::FullTextPolicy>,
    /// Every other field, kept as it came.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A container's partition key definition on the wire.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct PartitionKeySpec {
    /// The paths, one for `Hash`, up to three for `MultiHash`.
    pub paths: Vec<String>,
    /// `Hash` or `MultiHash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The hash version (2 for new containers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u8>,
    /// Other fields, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// How a container indexes its items.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IndexingPolicy {
    /// Consistent, lazy or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexing_mode: Option<IndexingMode>,
    /// Whether items are indexed unless they opt out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automatic: Option<bool>,
    /// Paths indexed (`/*` for all).
    #[serde(default)]
    pub included_paths: Vec<IndexPath>,
    /// Paths not indexed.
    #[serde(default)]
    pub excluded_paths: Vec<IndexPath>,
    /// Composite indexes, each a list of paths with their order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub composite_indexes: Vec<Vec<CompositePath>>,
    /// Vector indexes (see [`super::VectorIndex`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vector_indexes: Vec<super::search_policy::VectorIndex>,
    /// Full-text indexes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub full_text_indexes: Vec<super::search_policy::FullTextIndex>,
    /// Other fields (spatial, vector indexes...), kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// When the index is updated.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum IndexingMode {
    /// With every write.
    #[serde(rename = "consistent", alias = "Consistent")]
    Consistent,
    /// In the background.
    #[serde(rename = "lazy", alias = "Lazy")]
    Lazy,
    /// No index (point reads only).
    #[serde(rename = "none", alias = "None")]
    None,
}

/// One path of an indexing policy.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct IndexPath {
    /// The path, e.g. `/name/?` or `/*`.
    pub path: String,
    /// Other fields, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One path of a composite index.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct CompositePath {
    /// The path.
    pub path: String,
    /// `ascending` or `descending`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// Unique keys of a container.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UniqueKeyPolicy {
    /// The unique keys.
    #[serde(default)]
    pub unique_keys: Vec<UniqueKey>,
}

/// One unique key: the paths whose values together are unique in a logical partition.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct UniqueKey {
    /// The paths.
    pub paths: Vec<String>,
}

impl ContainerProperties {
    /// A definition of container `id` partitioned by `partition_key`, with the service's
    /// defaults for everything else.
    pub fn new(id: impl Into<String>, partition_key: &PartitionKeyDefinition) -> Self {
        let wire = partition_key.to_json();
        let paths = wire["paths"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            id: id.into(),
            partition_key: PartitionKeySpec {
                paths,
                kind: wire["kind"].as_str().map(str::to_owned),
                version: wire["version"].as_u64().and_then(|v| u8::try_from(v).ok()),
                other: Map::new(),
            },
            indexing_policy: None,
            default_ttl: None,
            unique_key_policy: None,
            vector_embedding_policy: None,
            full_text_policy: None,
            other: Map::new(),
        }
    }

    /// The same definition with `policy` as its vector embedding policy.
    pub fn with_vector_embedding_policy(
        mut self,
        policy: super::search_policy::VectorEmbeddingPolicy,
    ) -> Self {
        self.vector_embedding_policy = Some(policy);
        self
    }

    /// The same definition with `policy` as its full-text policy.
    pub fn with_full_text_policy(mut self, policy: super::search_policy::FullTextPolicy) -> Self {
        self.full_text_policy = Some(policy);
        self
    }

    /// The same definition with `policy`.
    pub fn with_indexing_policy(mut self, policy: IndexingPolicy) -> Self {
        self.indexing_policy = Some(policy);
        self
    }

    /// The same definition with a default TTL (see [`ContainerProperties::default_ttl`]).
    pub fn with_default_ttl(mut self, seconds: Option<i64>) -> Self {
        self.default_ttl = seconds;
        self
    }

    /// The same definition with one more unique key of `paths`.
    pub fn with_unique_key<I: IntoIterator<Item = S>, S: Into<String>>(mut self, paths: I) -> Self {
        self.unique_key_policy
            .get_or_insert_with(UniqueKeyPolicy::default)
            .unique_keys
            .push(UniqueKey {
                paths: paths.into_iter().map(Into::into).collect(),
            });
        self
    }

    /// The container's resource id (`_rid`), once it exists.
    pub fn resource_id(&self) -> Option<&str> {
        self.other.get("_rid").and_then(Value::as_str)
    }

    /// The definition's etag (`_etag`), once it exists.
    pub fn etag(&self) -> Option<&str> {
        self.other.get("_etag").and_then(Value::as_str)
    }

    /// Checks what the service would refuse and can be told before sending: an empty id, a
    /// default TTL of 0 or below -1.
    pub fn validate(&self) -> Result<(), CosmosError> {
        crate::protocol::validate_id("container", &self.id)?;
        if let Some(ttl) = self.default_ttl {
            if ttl == 0 || ttl < -1 || ttl > i64::from(i32::MAX) {
                return Err(CosmosError::invalid_input(format!(
                    "a default TTL of {ttl} is not allowed: use None, -1 or 1 to {} seconds",
                    i32::MAX
                )));
            }
        }
        Ok(())
    }

    /// Parses a container definition as the service returns it.
    pub fn from_json(body: &[u8]) -> Result<Self, CosmosError> {
        serde_json::from_slice(body).map_err(|e| {
            CosmosError::new(
                ErrorKind::Deserialization,
                format!("the container definition is not valid: {e}"),
            )
        })
    }

    /// The definition as JSON.
    pub fn to_json(&self) -> Result<Vec<u8>, CosmosError> {
        serde_json::to_vec(self).map_err(|e| {
            CosmosError::invalid_input(format!(
                "the container definition cannot be serialized: {e}"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_service_definition_round_trips_with_unknown_fields() {
        let v = json!({
            "id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
            "indexingPolicy": {"indexingMode": "consistent", "automatic": true,
                "includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/\"_etag\"/?"}],
                "compositeIndexes": [[{"path": "/a", "order": "ascending"}, {"path": "/b", "order": "descending"}]],
                "spatialIndexes": []},
            "defaultTtl": -1,
            "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]},
            "conflictResolutionPolicy": {"mode": "LastWriterWins"},
            "_rid": "AAAAAIAAAAA=", "_etag": "\"e\"", "_ts": 5
        });
        let p = ContainerProperties::from_json(v.to_string().as_bytes()).unwrap();
        assert_eq!(p.default_ttl, Some(-1));
        assert_eq!(p.resource_id(), Some("AAAAAIAAAAA="));
        assert_eq!(p.etag(), Some("\"e\""));
        let policy = p.indexing_policy.as_ref().unwrap();
        assert_eq!(policy.indexing_mode, Some(IndexingMode::Consistent));
        assert_eq!(
            policy.composite_indexes[0][1].order.as_deref(),
            Some("descending")
        );
        let back: Value = serde_json::from_slice(&p.to_json().unwrap()).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn built_definitions_serialize_as_the_service_expects() {
        let pk = PartitionKeyDefinition::new("/tenant").unwrap();
        let p = ContainerProperties::new("orders", &pk)
            .with_default_ttl(Some(3600))
            .with_unique_key(["/email"])
            .with_indexing_policy(IndexingPolicy {
                indexing_mode: Some(IndexingMode::Consistent),
                included_paths: vec![IndexPath {
                    path: "/*".into(),
                    other: Map::new(),
                }],
                ..IndexingPolicy::default()
            });
        let v: Value = serde_json::from_slice(&p.to_json().unwrap()).unwrap();
        assert_eq!(v["partitionKey"]["paths"][0], "/tenant");
        assert_eq!(v["defaultTtl"], 3600);
        assert_eq!(v["uniqueKeyPolicy"]["uniqueKeys"][0]["paths"][0], "/email");
        assert_eq!(v["indexingPolicy"]["indexingMode"], "consistent");
        assert!(p.validate().is_ok());
    }

    #[test]
    fn bad_ttls_and_ids_are_refused_before_sending() {
        let pk = PartitionKeyDefinition::new("/pk").unwrap();
        for ttl in [0, -2, i64::from(i32::MAX) + 1] {
            let err = ContainerProperties::new("c", &pk)
                .with_default_ttl(Some(ttl))
                .validate()
                .unwrap_err();
            assert!(err.message().contains("default TTL"), "{ttl}");
        }
        assert!(ContainerProperties::new("a/b", &pk).validate().is_err());
        assert!(ContainerProperties::from_json(b"{\"id\": \"c\"}").is_err());
    }
}
