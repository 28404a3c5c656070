//! Partition keys from the command line (`--pk`, `--pk-json`) or from a document and its
//! container's partition key paths.

use cosmos_driver::{PartitionKey, PartitionKeyValue};
use serde_json::Value;

use crate::cli::ItemLocation;

fn component(v: &Value, what: &str) -> Result<PartitionKeyValue, String> {
    match v {
        Value::String(s) => Ok(PartitionKeyValue::from(s.as_str())),
        Value::Bool(b) => Ok(PartitionKeyValue::Bool(*b)),
        Value::Null => Ok(PartitionKeyValue::Null),
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.is_finite())
            .map(PartitionKeyValue::Number)
            .ok_or_else(|| format!("{what}: {n} is not a usable number")),
        Value::Array(_) | Value::Object(_) => Err(format!(
            "{what}: a partition key value is a string, number, boolean or null, not {v}"
        )),
    }
}

/// A partition key from JSON: one value, or an array of one to three for a hierarchical key.
pub fn from_json_value(v: &Value, what: &str) -> Result<PartitionKey, String> {
    let values = match v {
        Value::Array(list) => list
            .iter()
            .map(|c| component(c, what))
            .collect::<Result<Vec<_>, _>>()?,
        other => vec![component(other, what)?],
    };
    PartitionKey::hierarchical(values).map_err(|e| format!("{what}: {}", e.message()))
}

/// The key given by `--pk` or `--pk-json`, if any.
pub fn from_flags(at: &ItemLocation) -> Result<Option<PartitionKey>, String> {
    if let Some(s) = &at.pk {
        return Ok(Some(PartitionKey::from(s.as_str())));
    }
    match &at.pk_json {
        None => Ok(None),
        Some(text) => {
            let v: Value = serde_json::from_str(text)
                .map_err(|e| format!("--pk-json is not valid JSON: {e}"))?;
            from_json_value(&v, "--pk-json").map(Some)
        }
    }
}

/// The value at a partition key path (`/a/b`, with `~1` and `~0` escapes) of `doc`. A missing value
/// is `None`: the service would file the document under an "undefined" key, which this tool does
/// not guess at; it asks for `--pk` instead.
fn value_at<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    let mut at = doc;
    for segment in path.trim_start_matches('/').split('/') {
        let key = segment.replace("~1", "/").replace("~0", "~");
        at = at.as_object()?.get(&key)?;
    }
    Some(at)
}

/// The partition key of `doc` under the container's `paths`.
pub fn from_document(doc: &Value, paths: &[String]) -> Result<PartitionKey, String> {
    let mut values = Vec::with_capacity(paths.len());
    for p in paths {
        let v = value_at(doc, p).ok_or_else(|| {
            format!("the document has no value at the partition key path {p}; add it or pass --pk")
        })?;
        values.push(component(v, &format!("the value at {p}"))?);
    }
    PartitionKey::hierarchical(values).map_err(|e| e.message().to_string())
}

/// The partition key paths of a container document (`partitionKey.paths`).
pub fn paths_of_container(container: &Value) -> Result<Vec<String>, String> {
    container
        .get("partitionKey")
        .and_then(|pk| pk.get("paths"))
        .and_then(Value::as_array)
        .map(|paths| {
            paths
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|p| !p.is_empty())
        .ok_or_else(|| "the container document has no partitionKey.paths; pass --pk".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn loc(pk: Option<&str>, pk_json: Option<&str>) -> ItemLocation {
        ItemLocation {
            db: "d".into(),
            container: "c".into(),
            pk: pk.map(str::to_owned),
            pk_json: pk_json.map(str::to_owned),
        }
    }

    #[test]
    fn flags() {
        assert_eq!(
            from_flags(&loc(Some("123"), None))
                .unwrap()
                .unwrap()
                .as_json(),
            r#"["123"]"#
        );
        assert_eq!(
            from_flags(&loc(None, Some("123")))
                .unwrap()
                .unwrap()
                .as_json(),
            "[123]"
        );
        assert_eq!(
            from_flags(&loc(None, Some(r#"["t", 1, null]"#)))
                .unwrap()
                .unwrap()
                .as_json(),
            r#"["t",1,null]"#
        );
        assert!(from_flags(&loc(None, None)).unwrap().is_none());
        assert!(from_flags(&loc(None, Some("{")))
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(from_flags(&loc(None, Some(r#"{"a":1}"#)))
            .unwrap_err()
            .contains("not {"));
        assert!(from_flags(&loc(None, Some("[1,2,3,4]"))).is_err());
    }

    #[test]
    fn from_documents() {
        let doc = json!({"id": "1", "pk": "p", "t": {"a/b": 5}, "flag": true});
        assert_eq!(
            from_document(&doc, &["/pk".into()]).unwrap().as_json(),
            r#"["p"]"#
        );
        assert_eq!(
            from_document(&doc, &["/t/a~1b".into()]).unwrap().as_json(),
            "[5]"
        );
        assert_eq!(
            from_document(&doc, &["/pk".into(), "/flag".into()])
                .unwrap()
                .as_json(),
            r#"["p",true]"#
        );
        let e = from_document(&doc, &["/missing".into()]).unwrap_err();
        assert!(e.contains("/missing") && e.contains("--pk"), "{e}");
        assert!(from_document(&json!({"pk": [1]}), &["/pk".into()]).is_err());
    }

    #[test]
    fn container_paths() {
        let c =
            json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
        assert_eq!(paths_of_container(&c).unwrap(), ["/pk"]);
        assert!(paths_of_container(&json!({"id": "c"})).is_err());
    }
}
