//! A container's vector and full-text search policies as typed data: the vector embedding policy
//! (path, data type, distance function, dimensions), the full-text policy (default language and
//! paths), and the vector and full-text indexes of the indexing policy. Fields the driver does not
//! name are kept as they came.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `vectorEmbeddingPolicy`: the vector properties of the container's items.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct VectorEmbeddingPolicy {
    /// One entry per vector property.
    #[serde(default)]
    pub vector_embeddings: Vec<VectorEmbedding>,
}

/// One vector property.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct VectorEmbedding {
    /// The property's path, e.g. `/embedding`.
    pub path: String,
    /// The type of its numbers.
    pub data_type: VectorDataType,
    /// How `VectorDistance` compares two of them by default.
    pub distance_function: DistanceFunction,
    /// How many numbers each holds.
    pub dimensions: u32,
}

/// The type of a vector's numbers.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum VectorDataType {
    /// 32-bit floating point.
    Float32,
    /// 16-bit floating point.
    Float16,
    /// Signed 8-bit integers.
    Int8,
    /// Unsigned 8-bit integers.
    Uint8,
}

/// How two vectors compare.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DistanceFunction {
    /// Cosine similarity (larger is closer).
    Cosine,
    /// Dot product (larger is closer).
    #[serde(rename = "dotproduct")]
    DotProduct,
    /// Euclidean distance (smaller is closer).
    Euclidean,
}

/// One entry of `indexingPolicy.vectorIndexes`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct VectorIndex {
    /// The vector property's path.
    pub path: String,
    /// `flat` (up to 505 dimensions), `quantizedFlat` or `diskANN` (up to 4,096).
    #[serde(rename = "type")]
    pub kind: VectorIndexType,
    /// Other settings (`quantizationByteSize`, `indexingSearchListSize`...), kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The kind of a vector index.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum VectorIndexType {
    /// Exact, up to 505 dimensions.
    #[serde(rename = "flat")]
    Flat,
    /// Quantized brute force, up to 4,096 dimensions.
    #[serde(rename = "quantizedFlat")]
    QuantizedFlat,
    /// A DiskANN graph, up to 4,096 dimensions.
    #[serde(rename = "diskANN")]
    DiskAnn,
}

/// `fullTextPolicy`: the properties full-text search reads.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FullTextPolicy {
    /// The language of paths that name none (e.g. `en-US`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_language: Option<String>,
    /// The text properties.
    #[serde(default)]
    pub full_text_paths: Vec<FullTextPath>,
}

/// One text property of a full-text policy.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct FullTextPath {
    /// The property's path, e.g. `/text`.
    pub path: String,
    /// Its language, when not the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

/// One entry of `indexingPolicy.fullTextIndexes`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct FullTextIndex {
    /// The text property's path.
    pub path: String,
}

#[cfg(test)]
mod tests {
    use super::super::{ContainerProperties, IndexingPolicy};
    use super::*;
    use serde_json::json;

    #[test]
    fn search_policies_read_and_write_the_service_json() {
        let wire = json!({
            "id": "v",
            "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
            "vectorEmbeddingPolicy": {"vectorEmbeddings": [
                {"path": "/e", "dataType": "float32", "distanceFunction": "dotproduct", "dimensions": 128}
            ]},
            "fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/t", "language": "en-US"}]},
            "indexingPolicy": {
                "includedPaths": [], "excludedPaths": [],
                "vectorIndexes": [{"path": "/e", "type": "diskANN", "quantizationByteSize": 64}],
                "fullTextIndexes": [{"path": "/t"}]
            }
        });
        let p: ContainerProperties = serde_json::from_value(wire.clone()).unwrap();
        let e = &p
            .vector_embedding_policy
            .as_ref()
            .unwrap()
            .vector_embeddings[0];
        assert_eq!(
            (e.distance_function, e.data_type, e.dimensions),
            (DistanceFunction::DotProduct, VectorDataType::Float32, 128)
        );
        let ip: &IndexingPolicy = p.indexing_policy.as_ref().unwrap();
        assert_eq!(ip.vector_indexes[0].kind, VectorIndexType::DiskAnn);
        assert_eq!(ip.vector_indexes[0].other["quantizationByteSize"], 64);
        assert_eq!(ip.full_text_indexes[0].path, "/t");
        assert_eq!(
            p.full_text_policy.as_ref().unwrap().full_text_paths[0].path,
            "/t"
        );
        assert!(p.other.is_empty(), "{:?}", p.other);
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }
}
