//! A container's search policies as the service takes and checks them: the vector embedding
//! policy (`vectorEmbeddingPolicy.vectorEmbeddings`: path, data type, distance function,
//! dimensions), the vector indexes of the indexing policy (`flat` up to 505 dimensions,
//! `quantizedFlat` and `diskANN` up to 4,096; `quantizationByteSize` 1 to the dimensions, at most
//! 512; `indexingSearchListSize` 25 to 500; at most one `vectorIndexShardKey` path), the full-text
//! policy (`defaultLanguage`, `fullTextPaths`, each path with an optional `language`; the
//! languages are the service's: en-US, de-DE, es-ES, fr-FR, it-IT, pt-BR and pt-PT, in any case)
//! and the full-text indexes. The refusals carry the service's status (400) and the words of its
//! messages. On replace, the embedding policy and the existing vector indexes are fixed; vector
//! indexes may be added, and the full-text policy and indexes may change. Pure: JSON in, checked
//! data or a 400 out.

use std::ops::RangeInclusive;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::protocol::ApiError;
use crate::sql::fulltext_language::Language;
use crate::sql::search::{SearchPolicy, TextLanguages, VectorPath};
use crate::sql::vector::{DataType, Distance};

/// Most dimensions a vector embedding may declare.
pub(crate) const MAX_EMBEDDING_DIMENSIONS: u32 = 4096;
/// Most dimensions a `flat` vector index takes.
pub(crate) const MAX_FLAT_DIMENSIONS: u32 = 505;
/// Most vector embeddings (and full-text paths) one policy may declare.
const MAX_PATHS: usize = 50;
/// Most bytes a quantized vector takes (`quantizationByteSize`), below the dimensions.
const MAX_QUANTIZATION_BYTES: i64 = 512;
/// The `indexingSearchListSize` a `diskANN` index takes.
const SEARCH_LIST_SIZES: RangeInclusive<i64> = 25..=500;
/// Most shard paths a vector index names (`vectorIndexShardKey`).
const MAX_SHARD_PATHS: usize = 1;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EmbeddingPolicy {
    #[serde(default)]
    vector_embeddings: Vec<Embedding>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Embedding {
    path: String,
    data_type: Option<String>,
    distance_function: Option<String>,
    dimensions: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VectorIndex {
    path: String,
    #[serde(rename = "type")]
    kind: String,
    quantization_byte_size: Option<i64>,
    indexing_search_list_size: Option<i64>,
    vector_index_shard_key: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FullTextPolicy {
    default_language: Option<String>,
    #[serde(default)]
    full_text_paths: Vec<FullTextPath>,
}

#[derive(Debug, Deserialize)]
struct FullTextPath {
    path: String,
    language: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FullTextIndex {
    path: String,
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message)
}

/// `value` as a `T`; a shape that does not read as one (a string where a list belongs, a
/// missing path) is the service's generic refusal of a malformed input.
fn parse<T: serde::de::DeserializeOwned>(
    value: Option<&Value>,
    what: &str,
) -> Result<Option<T>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|e| {
            bad(format!(
                "One of the specified inputs is invalid: the {what} is not well formed ({e})."
            ))
        }),
    }
}

/// The names of a policy path (`/a/b` is `["a", "b"]`), or why it is not one: it must start with
/// `/` and have no empty or wildcard segment.
fn names(path: &str) -> Result<Vec<String>, &'static str> {
    let rest = path.strip_prefix('/').ok_or("it must start with '/'")?;
    let names: Vec<String> = rest.split('/').map(str::to_owned).collect();
    if names.iter().any(|n| n.is_empty() || n == "*" || n == "?") {
        return Err("it must name a property (no empty, '*' or '?' segment)");
    }
    Ok(names)
}

/// [`names`] of a path of the `what` policy, 400 naming the path when it is not one.
fn path_names(path: &str, what: &str) -> Result<Vec<String>, ApiError> {
    names(path).map_err(|why| {
        bad(format!(
            "The {what} policy contains an invalid path {path:?}: {why}."
        ))
    })
}

/// The full-text language of `code`: 400 naming the supported ones for another.
fn language(code: &str) -> Result<Language, ApiError> {
    Language::from_code(code).ok_or_else(|| {
        bad(format!(
            "The full-text language {code:?} is not supported: use one of {}.",
            Language::supported()
        ))
    })
}

/// The vector paths an embedding policy declares, checked.
fn vector_paths(embeddings: &[Embedding]) -> Result<Vec<VectorPath>, ApiError> {
    let mut vectors: Vec<VectorPath> = Vec::new();
    for e in embeddings {
        let path = path_names(&e.path, "vector embedding")?;
        if vectors.len() >= MAX_PATHS {
            return Err(bad(format!(
                "A vector embedding policy declares at most {MAX_PATHS} paths."
            )));
        }
        if vectors.iter().any(|v| v.path == path) {
            return Err(bad(format!(
                "The vector embedding path {:?} is declared twice.",
                e.path
            )));
        }
        let data_type = match &e.data_type {
            None => DataType::Float32,
            Some(t) => DataType::from_name(t).ok_or_else(|| {
                bad(format!(
                    "The Vector Embedding Policy has an invalid DataType:{t} for the path {}: use float32, float16, int8 or uint8.",
                    e.path
                ))
            })?,
        };
        let distance = match &e.distance_function {
            None => Distance::Cosine,
            Some(f) => Distance::from_name(f).ok_or_else(|| {
                bad(format!(
                    "The Vector Embedding Policy has an invalid DistanceFunction:{f} for the path {}: use cosine, dotproduct or euclidean.",
                    e.path
                ))
            })?,
        };
        if e.dimensions <= 0 {
            return Err(bad(format!(
                "The Vector Embedding Policy has Dimensions:{} for the path {}: the dimensions are 1 to {MAX_EMBEDDING_DIMENSIONS}.",
                e.dimensions, e.path
            )));
        }
        let dimensions = match u32::try_from(e.dimensions) {
            Ok(d) if d <= MAX_EMBEDDING_DIMENSIONS => d,
            _ => {
                return Err(bad(format!(
                    "The Vector Embedding Policy has Dimensions:{} which is more than the maximum supported value {MAX_EMBEDDING_DIMENSIONS}, for the path {}.",
                    e.dimensions, e.path
                )))
            }
        };
        vectors.push(VectorPath {
            path,
            distance,
            data_type,
            dimensions,
        });
    }
    Ok(vectors)
}

/// Checks one vector index against the embedding paths it must index.
fn check_vector_index(index: &VectorIndex, vectors: &[VectorPath]) -> Result<(), ApiError> {
    let path = path_names(&index.path, "indexing")?;
    let Some(embedding) = vectors.iter().find(|v| v.path == path) else {
        return Err(bad(format!(
            "The Vector Indexing Policy's path::{} not matching in Embedding's path. A vector index path must be declared in the vector embedding policy.",
            index.path
        )));
    };
    let limit = match index.kind.as_str() {
        "flat" => MAX_FLAT_DIMENSIONS,
        "quantizedFlat" | "diskANN" => MAX_EMBEDDING_DIMENSIONS,
        other => {
            return Err(bad(format!(
                "The Vector Indexing Policy's Index Type::{other} is invalid for the path {}: use flat, quantizedFlat or diskANN.",
                index.path
            )))
        }
    };
    if embedding.dimensions > limit {
        return Err(bad(format!(
            "A {} vector index takes at most {limit} dimensions; {:?} has {}.",
            index.kind, index.path, embedding.dimensions
        )));
    }
    if let Some(size) = index.quantization_byte_size {
        if index.kind == "flat" {
            return Err(bad(format!(
                "The Vector Indexing Policy parameter QuantizationByteSize applies to quantizedFlat and diskANN indexes, not to the flat index on {}.",
                index.path
            )));
        }
        let most = i64::from(embedding.dimensions).min(MAX_QUANTIZATION_BYTES);
        if !(1..=most).contains(&size) {
            return Err(bad(format!(
                "The Vector Indexing Policy parameter QuantizationByteSize value :: {size} is out of range. The allowed range is between 1 and {most}."
            )));
        }
    }
    if let Some(size) = index.indexing_search_list_size {
        if index.kind != "diskANN" {
            return Err(bad(format!(
                "The Vector Indexing Policy parameter IndexingSearchListSize applies to diskANN indexes, not to the {} index on {}.",
                index.kind, index.path
            )));
        }
        if !SEARCH_LIST_SIZES.contains(&size) {
            return Err(bad(format!(
                "The Vector Indexing Policy parameter IndexingSearchListSize value :: {size} is out of range. The allowed range is between {} and {}.",
                SEARCH_LIST_SIZES.start(),
                SEARCH_LIST_SIZES.end()
            )));
        }
    }
    if let Some(keys) = &index.vector_index_shard_key {
        if keys.len() > MAX_SHARD_PATHS {
            return Err(bad(format!(
                "The number of shard paths defined in the Vector Indexing Policy: {} exceeds the maximum: {MAX_SHARD_PATHS}.",
                keys.len()
            )));
        }
        if let Some((key, why)) = keys.iter().find_map(|k| names(k).err().map(|why| (k, why))) {
            return Err(bad(format!(
                "The Vector Indexing Policy has an invalid Shard Path: {key}. A shard path names a property: {why}."
            )));
        }
    }
    Ok(())
}

/// Checks the search policies of a container body, and returns what queries need of them.
pub(crate) fn check(map: &Map<String, Value>) -> Result<SearchPolicy, ApiError> {
    let embeddings: Option<EmbeddingPolicy> =
        parse(map.get("vectorEmbeddingPolicy"), "vector embedding policy")?;
    let vectors = vector_paths(&embeddings.map(|p| p.vector_embeddings).unwrap_or_default())?;
    let indexing = map.get("indexingPolicy");
    let indexes: Option<Vec<VectorIndex>> = parse(
        indexing.and_then(|p| p.get("vectorIndexes")),
        "vectorIndexes list",
    )?;
    for index in indexes.unwrap_or_default() {
        check_vector_index(&index, &vectors)?;
    }
    let full_text: Option<FullTextPolicy> = parse(map.get("fullTextPolicy"), "full-text policy")?;
    let mut languages = TextLanguages::default();
    if let Some(policy) = full_text {
        if let Some(code) = &policy.default_language {
            languages.default = language(code)?;
        }
        if policy.full_text_paths.len() > MAX_PATHS {
            return Err(bad(format!(
                "A full-text policy declares at most {MAX_PATHS} paths."
            )));
        }
        for p in &policy.full_text_paths {
            let path = path_names(&p.path, "full-text")?;
            let own = match &p.language {
                Some(code) => language(code)?,
                None => languages.default,
            };
            languages.paths.push((path, own));
        }
    }
    let text_indexes: Option<Vec<FullTextIndex>> = parse(
        indexing.and_then(|p| p.get("fullTextIndexes")),
        "fullTextIndexes list",
    )?;
    for index in text_indexes.unwrap_or_default() {
        let path = path_names(&index.path, "indexing")?;
        if !languages.paths.iter().any(|(p, _)| *p == path) {
            return Err(bad(format!(
                "The full-text index path {:?} is not in the full-text policy.",
                index.path
            )));
        }
    }
    Ok(SearchPolicy {
        vectors,
        full_text: languages,
    })
}

/// The vector indexes of a container body's indexing policy, as JSON.
fn vector_index_values(map: &Map<String, Value>) -> &[Value] {
    map.get("indexingPolicy")
        .and_then(|p| p.get("vectorIndexes"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Checks a replace as the service does. The body is checked as sent: its vector indexes must be
/// in its own embedding policy (an absent one declares none). Then the embedding policy may not
/// change (an absent one keeps the current), and each vector index the container has must stay
/// as it is while the body sends an indexing policy; a vector index on a newly indexed path may
/// be added. An absent full-text policy keeps the current one.
pub(crate) fn check_replace(
    current: &Map<String, Value>,
    map: &mut Map<String, Value>,
) -> Result<(), ApiError> {
    const KEY: &str = "vectorEmbeddingPolicy";
    if !map.contains_key("fullTextPolicy") {
        if let Some(v) = current.get("fullTextPolicy") {
            map.insert("fullTextPolicy".into(), v.clone());
        }
    }
    check(map)?;
    let now = current.get(KEY).cloned().unwrap_or(Value::Null);
    let empty = |v: &Value| {
        v.is_null()
            || v.get("vectorEmbeddings")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
    };
    match map.get(KEY) {
        None => {
            if !now.is_null() {
                map.insert(KEY.into(), now);
            }
        }
        Some(requested) => {
            if requested != &now && !(empty(requested) && empty(&now)) {
                return Err(bad(
                    "Paths in existing embedding policy cannot be modified in Collection Replace: the vector embedding policy is fixed when the container is created.",
                ));
            }
        }
    }
    if map.contains_key("indexingPolicy") {
        let requested = vector_index_values(map);
        for existing in vector_index_values(current) {
            if !requested.contains(existing) {
                let path = existing
                    .get("path")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return Err(bad(format!(
                    "Paths in existing vector indexing policy cannot be modified in Collection Replace: the vector index on {path} must be sent as it was created."
                )));
            }
        }
    }
    Ok(())
}

/// What queries need of the container whose resource JSON is `body` (its policies were checked
/// when it was created or replaced).
pub(crate) fn of_definition(body: &[u8]) -> SearchPolicy {
    serde_json::from_slice::<Map<String, Value>>(body)
        .ok()
        .and_then(|map| check(&map).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn policy(dims: u32, index: &str) -> Map<String, Value> {
        body(json!({
            "vectorEmbeddingPolicy": {"vectorEmbeddings": [
                {"path": "/embedding", "dataType": "float32", "distanceFunction": "euclidean", "dimensions": dims}
            ]},
            "indexingPolicy": {"vectorIndexes": [{"path": "/embedding", "type": index}]}
        }))
    }

    #[test]
    fn valid_policies_give_the_paths_queries_use() {
        let p = check(&policy(128, "quantizedFlat")).unwrap();
        assert_eq!(
            p.vectors,
            vec![VectorPath {
                path: vec!["embedding".into()],
                distance: Distance::Euclidean,
                data_type: DataType::Float32,
                dimensions: 128
            }]
        );
        assert!(check(&policy(505, "flat")).is_ok());
        assert!(check(&policy(4096, "diskANN")).is_ok());
        let text = body(json!({
            "fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/text", "language": "en-US"}]},
            "indexingPolicy": {"fullTextIndexes": [{"path": "/text"}]}
        }));
        assert!(check(&text).is_ok());
    }

    /// A body with one embedding at `/v` (float32, euclidean, `dims` dimensions) and the given
    /// vector indexes.
    fn indexed(dims: i64, indexes: Value) -> Map<String, Value> {
        body(json!({
            "vectorEmbeddingPolicy": {"vectorEmbeddings": [
                {"path": "/v", "dataType": "float32", "distanceFunction": "euclidean", "dimensions": dims}
            ]},
            "indexingPolicy": {"vectorIndexes": indexes}
        }))
    }

    /// A body with one embedding at `/v` whose fields other than the path are `fields`.
    fn embedding(fields: Value) -> Map<String, Value> {
        let mut e = json!({"path": "/v"});
        if let (Some(e), Value::Object(fields)) = (e.as_object_mut(), fields) {
            e.extend(fields);
        }
        body(json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [e]}}))
    }

    #[test]
    fn the_service_accepts_these_vector_policies() {
        let cases = [
            indexed(256, json!([{"path": "/v", "type": "flat"}])),
            indexed(
                200,
                json!([{"path": "/v", "type": "quantizedFlat", "quantizerType": "product", "quantizationByteSize": 8}]),
            ),
            indexed(
                400,
                json!([{"path": "/v", "type": "diskANN", "quantizerType": "product", "quantizationByteSize": 8,
                "vectorIndexShardKey": ["/city"], "indexingSearchListSize": 50}]),
            ),
            indexed(
                400,
                json!([{"path": "/v", "type": "diskANN", "quantizerType": "spherical", "indexingSearchListSize": 50}]),
            ),
            indexed(
                200,
                json!([{"path": "/v", "type": "diskANN", "quantizationByteSize": 64, "indexingSearchListSize": 100,
                "vectorIndexShardKey": ["/country/city"]}]),
            ),
            indexed(
                550,
                json!([{"path": "/v", "type": "quantizedFlat", "quantizationByteSize": 512}]),
            ),
            indexed(
                200,
                json!([{"path": "/v", "type": "quantizedFlat", "quantizationByteSize": 200}]),
            ),
            indexed(
                8,
                json!([{"path": "/v", "type": "diskANN", "indexingSearchListSize": 25}]),
            ),
            indexed(
                8,
                json!([{"path": "/v", "type": "diskANN", "indexingSearchListSize": 500}]),
            ),
            indexed(
                8,
                json!([{"path": "/v", "type": "diskANN", "vectorIndexShardKey": []}]),
            ),
            indexed(1, json!([])),
            indexed(4096, json!([])),
            embedding(json!({"dataType": "float16", "dimensions": 3})),
            embedding(
                json!({"dataType": "int8", "distanceFunction": "dotproduct", "dimensions": 3}),
            ),
            embedding(json!({"dataType": "uint8", "distanceFunction": "cosine", "dimensions": 3})),
        ];
        for (row, map) in cases.iter().enumerate() {
            assert!(check(map).is_ok(), "row {row}: {:?}", check(map).err());
        }
    }

    #[test]
    fn the_service_refusals_carry_its_status_and_words() {
        let text = |v: Value| body(v);
        let cases = [
            // the vector embedding policy
            (embedding(json!({"dataType": "float33", "dimensions": 256})), "The Vector Embedding Policy has an invalid DataType:float33"),
            (embedding(json!({"dimensions": 8000})), "The Vector Embedding Policy has Dimensions:8000 which is more than the maximum supported value"),
            (embedding(json!({"dimensions": 4097})), "Dimensions:4097 which is more than the maximum supported value 4096"),
            (embedding(json!({"dimensions": 10_000_000_000_i64})), "Dimensions:10000000000 which is more than the maximum"),
            (embedding(json!({"dimensions": -1})), "The Vector Embedding Policy has Dimensions:-1"),
            (embedding(json!({"dimensions": 0})), "The Vector Embedding Policy has Dimensions:0"),
            (embedding(json!({"distanceFunction": "handMeasured", "dimensions": 256})), "The Vector Embedding Policy has an invalid DistanceFunction:handMeasured"),
            (embedding(json!({"dimensions": 2.5})), "One of the specified inputs is invalid"),
            (embedding(json!({"dataType": "float32"})), "One of the specified inputs is invalid"),
            (
                text(json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "v", "dimensions": 3}]}})),
                "start with",
            ),
            (
                text(json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "dimensions": 3}, {"path": "/v", "dimensions": 4}]}})),
                "declared twice",
            ),
            // the vector indexes
            (
                text(json!({"indexingPolicy": {"vectorIndexes": [{"path": "/vector1", "type": "flat"}]}})),
                "The Vector Indexing Policy's path::/vector1 not matching in Embedding's path.",
            ),
            (indexed(256, json!([{"path": "/vector3", "type": "flat"}])), "vector3 not matching in Embedding's path"),
            (indexed(256, json!([{"path": "/v", "type": "notFlat"}])), "Index Type::notFlat is invalid"),
            (indexed(256, json!([{"path": "/v"}])), "One of the specified inputs is invalid"),
            (indexed(506, json!([{"path": "/v", "type": "flat"}])), "505"),
            (
                indexed(256, json!([{"path": "/v", "type": "quantizedFlat", "quantizationByteSize": 0}])),
                "The Vector Indexing Policy parameter QuantizationByteSize value :: 0 is out of range. The allowed range is between 1 and 256.",
            ),
            (
                indexed(550, json!([{"path": "/v", "type": "quantizedFlat", "quantizationByteSize": 513}])),
                "The Vector Indexing Policy parameter QuantizationByteSize value :: 513 is out of range. The allowed range is between 1 and 512.",
            ),
            (
                indexed(200, json!([{"path": "/v", "type": "diskANN", "quantizationByteSize": 201}])),
                "QuantizationByteSize value :: 201 is out of range. The allowed range is between 1 and 200.",
            ),
            (indexed(200, json!([{"path": "/v", "type": "flat", "quantizationByteSize": 8}])), "QuantizationByteSize applies to quantizedFlat and diskANN"),
            (
                indexed(256, json!([{"path": "/v", "type": "diskANN", "indexingSearchListSize": 5}])),
                "IndexingSearchListSize value :: 5 is out of range. The allowed range is between 25 and 500.",
            ),
            (
                indexed(256, json!([{"path": "/v", "type": "diskANN", "indexingSearchListSize": 501}])),
                "IndexingSearchListSize value :: 501 is out of range.",
            ),
            (indexed(256, json!([{"path": "/v", "type": "quantizedFlat", "indexingSearchListSize": 50}])), "IndexingSearchListSize applies to diskANN"),
            (
                indexed(200, json!([{"path": "/v", "type": "diskANN", "vectorIndexShardKey": ["country"]}])),
                "The Vector Indexing Policy has an invalid Shard Path: country.",
            ),
            (
                indexed(200, json!([{"path": "/v", "type": "diskANN", "vectorIndexShardKey": ["/country", "/city", "/zipcode"]}])),
                "The number of shard paths defined in the Vector Indexing Policy: 3 exceeds the maximum: 1.",
            ),
            (
                indexed(200, json!([{"path": "/v", "type": "diskANN", "vectorIndexShardKey": "/country"}])),
                "One of the specified inputs is invalid",
            ),
            // the full-text policy and indexes
            (text(json!({"fullTextPolicy": {"defaultLanguage": "ja-JP", "fullTextPaths": []}})), "ja-JP"),
            (text(json!({"indexingPolicy": {"fullTextIndexes": [{"path": "/t"}]}})), "not in the full-text policy"),
        ];
        for (map, needle) in cases {
            let e = check(&map).unwrap_err();
            assert_eq!(e.status, 400, "{needle}");
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        }
    }

    fn text_policy(default: Option<&str>, paths: Value) -> Map<String, Value> {
        let mut policy = json!({"fullTextPaths": paths});
        if let Some(d) = default {
            policy["defaultLanguage"] = json!(d);
        }
        body(json!({"fullTextPolicy": policy}))
    }

    #[test]
    fn the_service_languages_are_accepted_in_any_case() {
        use Language::*;
        let cases = [
            ("en-US", English),
            ("de-DE", German),
            ("es-ES", Spanish),
            ("fr-FR", French),
            ("it-IT", Italian),
            ("pt-BR", PortugueseBrazil),
            ("pt-PT", PortuguesePortugal),
            ("DE-de", German),
            ("pt-br", PortugueseBrazil),
        ];
        for (code, want) in cases {
            let as_default = check(&text_policy(Some(code), json!([{"path": "/t"}]))).unwrap();
            assert_eq!(as_default.full_text.default, want, "{code}");
            assert_eq!(
                as_default.full_text.paths,
                vec![(vec!["t".to_owned()], want)],
                "{code}"
            );
            let on_path = check(&text_policy(
                None,
                json!([{"path": "/t", "language": code}]),
            ))
            .unwrap();
            assert_eq!(on_path.full_text.default, English, "{code}");
            assert_eq!(
                on_path.full_text.paths,
                vec![(vec!["t".to_owned()], want)],
                "{code}"
            );
        }
        // A path's own language, else the default; no policy at all is English.
        let mixed = check(&text_policy(
            Some("fr-FR"),
            json!([{"path": "/de", "language": "de-DE"}, {"path": "/a/b"}, {"path": "/en", "language": "en-US"}]),
        ))
        .unwrap();
        assert_eq!(
            mixed.full_text.paths,
            vec![
                (vec!["de".to_owned()], German),
                (vec!["a".to_owned(), "b".to_owned()], French),
                (vec!["en".to_owned()], English),
            ]
        );
        assert_eq!(mixed.full_text.of_path(&["a", "b"]), French);
        assert_eq!(mixed.full_text.of_path(&["de"]), German);
        assert_eq!(mixed.full_text.of_path(&["other"]), French);
        assert_eq!(
            check(&Map::new()).unwrap().full_text,
            TextLanguages::default()
        );
    }

    #[test]
    fn other_languages_are_refused_naming_the_supported_ones() {
        let cases = [
            text_policy(Some("ja-JP"), json!([])),
            text_policy(Some("en-US"), json!([{"path": "/t", "language": "ja-JP"}])),
        ];
        for map in cases {
            let e = check(&map).unwrap_err();
            assert_eq!(e.status, 400);
            assert!(e.message.contains("\"ja-JP\""), "{}", e.message);
            for code in [
                "en-US", "de-DE", "es-ES", "fr-FR", "it-IT", "pt-BR", "pt-PT",
            ] {
                assert!(e.message.contains(code), "{code}: {}", e.message);
            }
        }
    }

    #[test]
    fn replaces_keep_the_embedding_policy_and_the_existing_vector_indexes() {
        let two = |indexes: Value, dims: i64| {
            body(json!({
                "vectorEmbeddingPolicy": {"vectorEmbeddings": [
                    {"path": "/a", "dimensions": 256},
                    {"path": "/b", "dimensions": dims}
                ]},
                "indexingPolicy": {"includedPaths": [{"path": "/*"}], "vectorIndexes": indexes}
            }))
        };
        let flat_a = json!([{"path": "/a", "type": "flat"}]);
        let current = two(flat_a.clone(), 8);
        let embeddings = current["vectorEmbeddingPolicy"].clone();
        let without_embeddings =
            |indexing: Value| body(json!({"id": "c", "indexingPolicy": indexing}));
        let mut other_paths = two(flat_a.clone(), 8);
        other_paths["indexingPolicy"]["includedPaths"] = json!([{"path": "/color/?"}]);
        let cases: [(Map<String, Value>, Option<&str>); 8] = [
            (two(flat_a.clone(), 8), None),
            (other_paths, None),
            (two(json!([{"path": "/a", "type": "flat"}, {"path": "/b", "type": "diskANN"}]), 8), None),
            (body(json!({"id": "c"})), None),
            (
                without_embeddings(json!({"vectorIndexes": flat_a})),
                Some("The Vector Indexing Policy's path::/a not matching in Embedding's path."),
            ),
            (
                two(json!([{"path": "/a", "type": "quantizedFlat"}]), 8),
                Some("Paths in existing vector indexing policy cannot be modified in Collection Replace"),
            ),
            (two(json!([]), 8), Some("Paths in existing vector indexing policy cannot be modified in Collection Replace")),
            (two(flat_a.clone(), 16), Some("Paths in existing embedding policy cannot be modified in Collection Replace")),
        ];
        for (row, (mut requested, refusal)) in cases.into_iter().enumerate() {
            match (check_replace(&current, &mut requested), refusal) {
                (Ok(()), None) => {
                    assert_eq!(requested["vectorEmbeddingPolicy"], embeddings, "row {row}")
                }
                (Err(e), Some(needle)) => {
                    assert_eq!(e.status, 400, "row {row}");
                    assert!(e.message.contains(needle), "row {row}: {}", e.message);
                }
                (got, want) => panic!("row {row}: got {got:?}, want {want:?}"),
            }
        }
    }
}
