//! A conflict as the service records it in a multi-write container's conflict feed: a write that
//! lost to a concurrent one in another region, with the losing version's content.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// A conflict of a multi-write container (`/dbs/{db}/colls/{c}/conflicts/{id}`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ConflictProperties {
    /// The conflict's id.
    pub id: String,
    /// Its resource id.
    #[serde(rename = "_rid", default)]
    pub resource_id: String,
    /// The kind of resource in conflict (`document`, or a script kind).
    #[serde(rename = "resourceType", default)]
    pub resource_type: String,
    /// The losing write (`create`, `replace` or `delete`).
    #[serde(rename = "operationType", default)]
    pub operation_type: String,
    /// The resource id of the resource in conflict.
    #[serde(rename = "resourceId", default)]
    pub source_resource_id: String,
    /// The losing version as the service gives it (a JSON text, or an object).
    #[serde(default)]
    pub content: Option<Value>,
    /// When the conflict was recorded (Unix seconds).
    #[serde(rename = "_ts", default)]
    pub timestamp: i64,
    /// Its etag.
    #[serde(rename = "_etag", default)]
    pub etag: String,
}

impl ConflictProperties {
    /// The losing version read as `T` (`None`: the conflict carries none, as for a delete); why
    /// not, when it is not a `T`.
    pub fn content_as<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        match self.content.as_ref()? {
            Value::Null => None,
            Value::String(text) => Some(serde_json::from_str(text)),
            other => Some(T::deserialize(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_conflict_reads_with_its_content_as_text_or_object() {
        let feed = json!({"_rid": "x", "Conflicts": [
            {"id": "c1", "_rid": "r1", "resourceType": "document", "operationType": "replace",
             "resourceId": "doc-rid", "content": "{\"id\":\"o1\",\"n\":2}", "_ts": 1700000000,
             "_etag": "\"e\"", "_self": "dbs/x/colls/y/conflicts/r1/"},
            {"id": "c2", "resourceType": "document", "operationType": "delete",
             "resourceId": "doc-rid"},
            {"id": "c3", "operationType": "create", "content": {"id": "o3", "n": 3}},
        ], "_count": 3});
        let conflicts: Vec<ConflictProperties> =
            serde_json::from_value(feed["Conflicts"].clone()).unwrap();
        assert_eq!(conflicts[0].operation_type, "replace");
        assert_eq!(conflicts[0].source_resource_id, "doc-rid");
        assert_eq!(conflicts[0].timestamp, 1_700_000_000);
        let n = |c: &ConflictProperties| c.content_as::<Value>().map(|v| v.unwrap()["n"].clone());
        assert_eq!(n(&conflicts[0]), Some(json!(2)));
        assert_eq!(n(&conflicts[1]), None);
        assert_eq!(n(&conflicts[2]), Some(json!(3)));
        let bad = ConflictProperties {
            content: Some(json!("not json")),
            ..conflicts[0].clone()
        };
        assert!(bad.content_as::<Value>().unwrap().is_err());
    }
}
