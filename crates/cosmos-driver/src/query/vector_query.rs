//! Building a vector search: [`Query::vector_search`] writes the `ORDER BY VectorDistance` query
//! for a vector property with the probe vector as a parameter, and [`VectorHit`] is what each of
//! its results deserializes into.

use serde::{Deserialize, Serialize};

use super::query_spec::Query;
use crate::error::CosmosError;

/// The parameter the probe vector is bound to.
pub const VECTOR_PARAMETER: &str = "@vector";
/// Most results one vector search may ask for.
pub const MAX_VECTOR_TOP: u32 = 50_000;

/// One result of [`Query::vector_search`]: the item and its `VectorDistance` score (a similarity
/// for cosine and dot product, a distance for Euclidean).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct VectorHit<T> {
    /// The item.
    pub item: T,
    /// Its `VectorDistance` score.
    pub score: f64,
}

/// `c["a"]["b"]` for the property path `/a/b` (or `a.b`).
fn property_of(path: &str) -> Result<String, CosmosError> {
    let names: Vec<&str> = if let Some(rest) = path.strip_prefix('/') {
        rest.split('/').collect()
    } else {
        path.split('.').collect()
    };
    if names.is_empty() || names.iter().any(|n| n.is_empty()) {
        return Err(CosmosError::invalid_input(format!(
            "the vector property {path:?} must be a path such as /embedding"
        )));
    }
    let mut out = String::from("c");
    for n in names {
        out.push('[');
        out.push_str(&serde_json::Value::from(n).to_string());
        out.push(']');
    }
    Ok(out)
}

impl Query {
    /// The `top` items closest to `vector` by the vector property at `path` (`/embedding`),
    /// closest first, each with its score, under the container's vector embedding policy:
    ///
    /// `SELECT TOP k c AS item, VectorDistance(c["embedding"], @vector) AS score FROM c
    /// ORDER BY VectorDistance(c["embedding"], @vector)`
    ///
    /// Results deserialize into [`VectorHit<T>`].
    ///
    /// ```
    /// use cosmos_driver::Query;
    ///
    /// let q = Query::vector_search("/embedding", [0.1f32, 0.2, 0.3], 10)?;
    /// assert!(q.text().starts_with("SELECT TOP 10 c AS item"));
    /// assert_eq!(q.parameters()[0].name(), "@vector");
    /// # Ok::<(), cosmos_driver::CosmosError>(())
    /// ```
    pub fn vector_search<V: Serialize>(
        path: &str,
        vector: V,
        top: u32,
    ) -> Result<Query, CosmosError> {
        if top == 0 || top > MAX_VECTOR_TOP {
            return Err(CosmosError::invalid_input(format!(
                "a vector search asks for 1 to {MAX_VECTOR_TOP} results, not {top}"
            )));
        }
        let property = property_of(path)?;
        let distance = format!("VectorDistance({property}, {VECTOR_PARAMETER})");
        Query::new(format!(
            "SELECT TOP {top} c AS item, {distance} AS score FROM c ORDER BY {distance}"
        ))
        .with_parameter(VECTOR_PARAMETER, vector)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_queries_name_the_property_and_bind_the_vector() {
        let q = Query::vector_search("/a/b\"c", vec![1.0f32, 2.0], 3).unwrap();
        assert_eq!(
            q.text(),
            "SELECT TOP 3 c AS item, VectorDistance(c[\"a\"][\"b\\\"c\"], @vector) AS score FROM c ORDER BY VectorDistance(c[\"a\"][\"b\\\"c\"], @vector)"
        );
        assert_eq!(q.parameters()[0].value(), &serde_json::json!([1.0, 2.0]));
        assert_eq!(
            Query::vector_search("e.x", [1], 1)
                .unwrap()
                .text()
                .matches("c[\"e\"][\"x\"]")
                .count(),
            2
        );
        for (path, top) in [("/", 1), ("", 1), ("/a//b", 1), ("/e", 0), ("/e", 50_001)] {
            assert!(
                Query::vector_search(path, [1], top).is_err(),
                "{path} {top}"
            );
        }
    }
}
