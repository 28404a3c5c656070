//! A container's search policies as the service takes and checks them: the vector embedding
//! policy (`vectorEmbeddingPolicy.vectorEmbeddings`: path, data type, distance function,
//! dimensions), the vector indexes of the indexing policy (`flat` up to 505 dimensions,
//! `quantizedFlat` and `diskANN` up to 4,096), the full-text policy (`defaultLanguage`,
//! `fullTextPaths`, each path with an optional `language`; the languages are the service's:
//! en-US, de-DE, es-ES, fr-FR, it-IT, pt-BR and pt-PT, in any case) and the full-text indexes. The vector embedding policy is fixed once the
//! container is created; the others may be replaced. Pure: JSON in, checked data or a 400 out.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::protocol::ApiError;
use crate::sql::fulltext_language::Language;
use crate::sql::search::{SearchPolicy, TextLanguages, VectorPath};
use crate::sql::vector::{DataType, Distance};

/// Most dimensions a vector embedding may declare.
pub const MAX_EMBEDDING_DIMENSIONS: u32 = 4096;
/// Most dimensions a `flat` vector index takes.
pub const MAX_FLAT_DIMENSIONS: u32 = 505;
/// Most vector embeddings (and full-text paths) one policy may declare.
const MAX_PATHS: usize = 50;

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
    dimensions: u32,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VectorIndex {
    path: String,
    #[serde(rename = "type")]
    kind: String,
    quantization_byte_size: Option<u32>,
    indexing_search_list_size: Option<u32>,
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

fn parse<T: serde::de::DeserializeOwned>(value: Option<&Value>, what: &str) -> Result<Option<T>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| bad(format!("The {what} is invalid: {e}."))),
    }
}

/// The names of a policy path (`/a/b` is `["a", "b"]`): 400 unless it starts with `/` and has
/// no empty or wildcard segment.
fn path_names(path: &str, what: &str) -> Result<Vec<String>, ApiError> {
    let Some(rest) = path.strip_prefix('/') else {
        return Err(bad(format!(
            "The {what} policy contains an invalid path {path:?}: it must start with '/'."
        )));
    };
    let names: Vec<String> = rest.split('/').map(str::to_owned).collect();
    if names.iter().any(|n| n.is_empty() || n == "*" || n == "?") {
        return Err(bad(format!(
            "The {what} policy contains an invalid path {path:?}: it must name a property (no empty, '*' or '?' segment)."
        )));
    }
    Ok(names)
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

/// Checks the search policies of a container body, and returns what queries need of them.
pub fn check(map: &Map<String, Value>) -> Result<SearchPolicy, ApiError> {
    let embeddings: Option<EmbeddingPolicy> =
        parse(map.get("vectorEmbeddingPolicy"), "vector embedding policy")?;
    let mut vectors: Vec<VectorPath> = Vec::new();
    for e in embeddings.map(|p| p.vector_embeddings).unwrap_or_default() {
        let path = path_names(&e.path, "vector embedding")?;
        if vectors.len() >= MAX_PATHS {
            return Err(bad(format!("A vector embedding policy declares at most {MAX_PATHS} paths.")));
        }
        if vectors.iter().any(|v| v.path == path) {
            return Err(bad(format!("The vector embedding path {:?} is declared twice.", e.path)));
        }
        let data_type = match &e.data_type {
            None => DataType::Float32,
            Some(t) => DataType::from_name(t).ok_or_else(|| {
                bad(format!("The vector data type {t:?} is not supported: use float32, float16, int8 or uint8."))
            })?,
        };
        let distance = match &e.distance_function {
            None => Distance::Cosine,
            Some(f) => Distance::from_name(f).ok_or_else(|| {
                bad(format!("The distance function {f:?} is not supported: use cosine, dotproduct or euclidean."))
            })?,
        };
        if e.dimensions == 0 || e.dimensions > MAX_EMBEDDING_DIMENSIONS {
            return Err(bad(format!(
                "The vector embedding {:?} declares {} dimensions; it takes 1 to {MAX_EMBEDDING_DIMENSIONS}.",
                e.path, e.dimensions
            )));
        }
        vectors.push(VectorPath {
            path,
            distance,
            data_type,
            dimensions: e.dimensions,
        });
    }
    let indexing = map.get("indexingPolicy");
    let indexes: Option<Vec<VectorIndex>> =
        parse(indexing.and_then(|p| p.get("vectorIndexes")), "vectorIndexes list")?;
    for index in indexes.unwrap_or_default() {
        let path = path_names(&index.path, "indexing")?;
        let Some(embedding) = vectors.iter().find(|v| v.path == path) else {
            return Err(bad(format!(
                "The vector index path {:?} is not in the vector embedding policy.",
                index.path
            )));
        };
        let limit = match index.kind.as_str() {
            "flat" => MAX_FLAT_DIMENSIONS,
            "quantizedFlat" | "diskANN" => MAX_EMBEDDING_DIMENSIONS,
            other => {
                return Err(bad(format!(
                    "The vector index type {other:?} is not supported: use flat, quantizedFlat or diskANN."
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
            if index.kind == "flat" || size == 0 || size > embedding.dimensions {
                return Err(bad(format!(
                    "quantizationByteSize {size} is invalid for the {} index on {:?}: it applies to quantizedFlat and diskANN and takes 1 to the dimensions ({}).",
                    index.kind, index.path, embedding.dimensions
                )));
            }
        }
        if let Some(size) = index.indexing_search_list_size {
            if index.kind != "diskANN" || !(25..=500).contains(&size) {
                return Err(bad(format!(
                    "indexingSearchListSize {size} is invalid for the {} index on {:?}: it applies to diskANN and takes 25 to 500.",
                    index.kind, index.path
                )));
            }
        }
    }
    let full_text: Option<FullTextPolicy> = parse(map.get("fullTextPolicy"), "full-text policy")?;
    let mut languages = TextLanguages::default();
    if let Some(policy) = full_text {
        if let Some(code) = &policy.default_language {
            languages.default = language(code)?;
        }
        if policy.full_text_paths.len() > MAX_PATHS {
            return Err(bad(format!("A full-text policy declares at most {MAX_PATHS} paths.")));
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
    let text_indexes: Option<Vec<FullTextIndex>> =
        parse(indexing.and_then(|p| p.get("fullTextIndexes")), "fullTextIndexes list")?;
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

/// Checks a replace: the vector embedding policy may not change (an absent one keeps the
/// current); the rest is checked as at creation.
pub fn check_replace(current: &Map<String, Value>, map: &mut Map<String, Value>) -> Result<(), ApiError> {
    const KEY: &str = "vectorEmbeddingPolicy";
    let now = current.get(KEY).cloned().unwrap_or(Value::Null);
    let empty = |v: &Value| {
        v.is_null() || v.get("vectorEmbeddings").and_then(Value::as_array).is_some_and(Vec::is_empty)
    };
    match map.get(KEY) {
        None => {
            if !now.is_null() {
                map.insert(KEY.into(), now);
            }
        }
        Some(requested) => {
            if requested != &now && !(empty(requested) && empty(&now)) {
                return Err(bad("The vector embedding policy of a container cannot be changed after it is created."));
            }
        }
    }
    if !map.contains_key("fullTextPolicy") {
        if let Some(v) = current.get("fullTextPolicy") {
            map.insert("fullTextPolicy".into(), v.clone());
        }
    }
    check(map).map(|_| ())
}

/// What queries need of the container whose resource JSON is `body` (its policies were checked
/// when it was created or replaced).
pub fn of_definition(body: &[u8]) -> SearchPolicy {
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

    #[test]
    fn the_service_limits_and_rules_are_enforced() {
        let cases = [
            (policy(506, "flat"), "505"),
            (policy(4097, "diskANN"), "4096"),
            (policy(0, "diskANN"), "dimensions"),
            (policy(3, "hnsw"), "hnsw"),
            (
                body(json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "dataType": "float64", "dimensions": 3}]}})),
                "float64",
            ),
            (
                body(json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "distanceFunction": "manhattan", "dimensions": 3}]}})),
                "manhattan",
            ),
            (
                body(json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "v", "dimensions": 3}]}})),
                "start with",
            ),
            (
                body(json!({"indexingPolicy": {"vectorIndexes": [{"path": "/v", "type": "flat"}]}})),
                "not in the vector embedding policy",
            ),
            (
                body(json!({"fullTextPolicy": {"defaultLanguage": "ja-JP", "fullTextPaths": []}})),
                "ja-JP",
            ),
            (
                body(json!({"indexingPolicy": {"fullTextIndexes": [{"path": "/t"}]}})),
                "not in the full-text policy",
            ),
        ];
        for (map, needle) in cases {
            let e = check(&map).unwrap_err();
            assert_eq!(e.status, 400);
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
            assert_eq!(as_default.full_text.paths, vec![(vec!["t".to_owned()], want)], "{code}");
            let on_path = check(&text_policy(None, json!([{"path": "/t", "language": code}]))).unwrap();
            assert_eq!(on_path.full_text.default, English, "{code}");
            assert_eq!(on_path.full_text.paths, vec![(vec!["t".to_owned()], want)], "{code}");
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
        assert_eq!(check(&Map::new()).unwrap().full_text, TextLanguages::default());
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
            for code in ["en-US", "de-DE", "es-ES", "fr-FR", "it-IT", "pt-BR", "pt-PT"] {
                assert!(e.message.contains(code), "{code}: {}", e.message);
            }
        }
    }

    #[test]
    fn the_embedding_policy_is_fixed_on_replace() {
        let current = policy(8, "flat");
        let mut same = policy(8, "flat");
        assert!(check_replace(&current, &mut same).is_ok());
        let mut absent = body(json!({"id": "c"}));
        check_replace(&current, &mut absent).unwrap();
        assert_eq!(absent["vectorEmbeddingPolicy"], current["vectorEmbeddingPolicy"]);
        let mut changed = policy(16, "flat");
        assert!(check_replace(&current, &mut changed).is_err());
    }
}
