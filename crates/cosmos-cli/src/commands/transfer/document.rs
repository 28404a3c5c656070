//! One imported record checked before it is sent: JSON, an object, a string `id`, a partition key
//! value of a usable type at the container's paths. The service's own properties (`_rid`, `_self`,
//! `_etag`, `_ts`, `_attachments`, `_lsn`), which an export carries, are dropped: the service sets
//! them.

use cosmos_driver::PartitionKey;
use serde_json::Value;

use super::super::partition_key::from_document;

/// The largest document the service stores (2 MB).
pub const MAX_DOCUMENT_BYTES: usize = 2 * 1024 * 1024;

/// The properties the service sets on every item.
const SYSTEM_PROPERTIES: [&str; 6] = ["_rid", "_self", "_etag", "_ts", "_attachments", "_lsn"];

/// A document ready to send.
#[derive(Debug)]
pub struct Prepared {
    /// Its id.
    pub id: String,
    /// Its partition key.
    pub partition_key: PartitionKey,
    /// The document, without the service's properties.
    pub doc: Value,
}

/// Why a record was refused before sending, with the id when it had one.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The record's id, when it has a string one.
    pub id: Option<String>,
    /// The reason.
    pub reason: String,
}

fn refuse(id: Option<&str>, reason: String) -> Refusal {
    Refusal {
        id: id.map(str::to_owned),
        reason,
    }
}

/// The record `text` as a document under the container's partition key `paths`.
pub fn prepare(text: &[u8], paths: &[String]) -> Result<Prepared, Refusal> {
    let mut doc: Value =
        serde_json::from_slice(text).map_err(|e| refuse(None, format!("not JSON: {e}")))?;
    let Some(object) = doc.as_object_mut() else {
        return Err(refuse(None, "not a JSON object".into()));
    };
    let id = match object.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::String(_)) => return Err(refuse(None, "the \"id\" is empty".into())),
        Some(_) => return Err(refuse(None, "the \"id\" is not a string".into())),
        None => return Err(refuse(None, "no \"id\"".into())),
    };
    for name in SYSTEM_PROPERTIES {
        object.remove(name);
    }
    let partition_key = from_document(&doc, paths).map_err(|e| refuse(Some(&id), e))?;
    Ok(Prepared {
        id,
        partition_key,
        doc,
    })
}

/// The reason for a record past [`MAX_DOCUMENT_BYTES`].
pub fn too_large(bytes: u64) -> String {
    format!("the document is {bytes} bytes; the service stores at most {MAX_DOCUMENT_BYTES}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_checked_before_sending() {
        let paths = ["/pk".to_owned()];
        /// The id and key wanted, or the id and a part of the reason.
        type Want<'a> = Result<(&'a str, &'a str), (Option<&'a str>, &'a str)>;
        let table: [(&str, Want); 9] = [
            (r#"{"id":"a","pk":"p","n":1}"#, Ok(("a", r#"["p"]"#))),
            (r#"{"id":"a","pk":7}"#, Ok(("a", "[7]"))),
            ("{", Err((None, "not JSON"))),
            ("[1]", Err((None, "not a JSON object"))),
            (r#"{"pk":"p"}"#, Err((None, "no \"id\""))),
            (r#"{"id":5,"pk":"p"}"#, Err((None, "not a string"))),
            (r#"{"id":"","pk":"p"}"#, Err((None, "empty"))),
            (
                r#"{"id":"a","pk":{"x":1}}"#,
                Err((Some("a"), "a partition key value is")),
            ),
            (
                r#"{"id":"a"}"#,
                Err((Some("a"), "no value at the partition key path /pk")),
            ),
        ];
        for (text, want) in table {
            let got = prepare(text.as_bytes(), &paths);
            match (got, want) {
                (Ok(p), Ok((id, pk))) => {
                    assert_eq!(p.id, id, "{text}");
                    assert_eq!(p.partition_key.as_json(), pk, "{text}");
                }
                (Err(r), Err((id, reason))) => {
                    assert_eq!(r.id.as_deref(), id, "{text}");
                    assert!(r.reason.contains(reason), "{text}: {}", r.reason);
                }
                (got, want) => panic!("{text}: {got:?} but wanted {want:?}"),
            }
        }
    }

    #[test]
    fn system_properties_are_dropped() {
        let text = br#"{"id":"a","pk":"p","_rid":"r","_self":"s","_etag":"e","_ts":1,"_attachments":"a","_lsn":3,"_own":1}"#;
        let p = prepare(text, &["/pk".to_owned()]).unwrap();
        assert_eq!(p.doc, serde_json::json!({"id":"a","pk":"p","_own":1}));
    }

    #[test]
    fn sizes_are_named() {
        assert!(too_large(3_000_000).contains("3000000 bytes"));
    }
}
