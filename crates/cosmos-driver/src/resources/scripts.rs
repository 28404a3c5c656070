//! Server-side scripts as typed data: stored procedures, triggers and user-defined functions, with
//! the JSON the service reads and writes, and the script log a stored procedure's response carries.

use serde::{Deserialize, Serialize};

/// A stored procedure: its id and its JavaScript body (`function name(...) { ... }`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoredProcedureProperties {
    /// The id (also its name when executed).
    pub id: String,
    /// The JavaScript source.
    pub body: String,
    /// The service's resource id (`_rid`), on what it returns.
    #[serde(rename = "_rid", default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<String>,
    /// The ETag (`_etag`), on what the service returns.
    #[serde(rename = "_etag", default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Last modified, seconds since the epoch (`_ts`), on what the service returns.
    #[serde(rename = "_ts", default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
}

impl StoredProcedureProperties {
    /// A stored procedure `id` with JavaScript `body`.
    pub fn new(id: impl Into<String>, body: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            body: body.into(),
            rid: None,
            etag: None,
            ts: None,
        }
    }
}

/// A user-defined function, callable from queries as `udf.{id}(...)`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct UserDefinedFunctionProperties {
    /// The id (the name queries call).
    pub id: String,
    /// The JavaScript source.
    pub body: String,
    /// The service's resource id (`_rid`), on what it returns.
    #[serde(rename = "_rid", default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<String>,
    /// The ETag (`_etag`), on what the service returns.
    #[serde(rename = "_etag", default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Last modified, seconds since the epoch (`_ts`), on what the service returns.
    #[serde(rename = "_ts", default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
}

impl UserDefinedFunctionProperties {
    /// A user-defined function `id` with JavaScript `body`.
    pub fn new(id: impl Into<String>, body: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            body: body.into(),
            rid: None,
            etag: None,
            ts: None,
        }
    }
}

/// When a trigger runs: before or after the write that names it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub enum TriggerType {
    /// Before the write, able to change the document.
    #[serde(alias = "pre", alias = "PRE")]
    Pre,
    /// After the write, inside its transaction.
    #[serde(alias = "post", alias = "POST")]
    Post,
}

/// Which writes a trigger may run around.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub enum TriggerOperation {
    /// Every write.
    #[serde(alias = "all", alias = "ALL")]
    All,
    /// Creates.
    #[serde(alias = "create", alias = "CREATE")]
    Create,
    /// Replaces.
    #[serde(alias = "replace", alias = "REPLACE")]
    Replace,
    /// Deletes.
    #[serde(alias = "delete", alias = "DELETE")]
    Delete,
    /// Updates (replaces and upserts).
    #[serde(alias = "update", alias = "UPDATE")]
    Update,
}

/// A trigger: its id, body, when it runs and around which writes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TriggerProperties {
    /// The id (the name a write's options give).
    pub id: String,
    /// The JavaScript source.
    pub body: String,
    /// Before or after the write.
    #[serde(rename = "triggerType")]
    pub trigger_type: TriggerType,
    /// Which writes.
    #[serde(rename = "triggerOperation")]
    pub trigger_operation: TriggerOperation,
    /// The service's resource id (`_rid`), on what it returns.
    #[serde(rename = "_rid", default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<String>,
    /// The ETag (`_etag`), on what the service returns.
    #[serde(rename = "_etag", default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Last modified, seconds since the epoch (`_ts`), on what the service returns.
    #[serde(rename = "_ts", default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
}

impl TriggerProperties {
    /// A trigger `id` with JavaScript `body`, running `trigger_type` around `operation`.
    pub fn new(
        id: impl Into<String>,
        body: impl Into<String>,
        trigger_type: TriggerType,
        operation: TriggerOperation,
    ) -> Self {
        Self {
            id: id.into(),
            body: body.into(),
            trigger_type,
            trigger_operation: operation,
            rid: None,
            etag: None,
            ts: None,
        }
    }
}

/// The script log of `x-ms-documentdb-script-log-results`: the service percent-encodes what the
/// script wrote with `console.log`; this decodes it. A `%` not followed by two hex digits is kept
/// as it is, and bytes that do not form UTF-8 are replaced, so a malformed header never fails the
/// response that carried it.
pub fn decode_script_log(header: &str) -> String {
    let bytes = header.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The header value naming triggers to run: their ids, comma-separated. `None` when there are none.
pub fn trigger_include_header(ids: &[String]) -> Option<String> {
    (!ids.is_empty()).then(|| ids.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn properties_round_trip_as_the_service_spells_them() {
        let t = TriggerProperties::new(
            "stamp",
            "function stamp() {}",
            TriggerType::Pre,
            TriggerOperation::Create,
        );
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(
            v,
            json!({"id": "stamp", "body": "function stamp() {}", "triggerType": "Pre", "triggerOperation": "Create"})
        );
        let back: TriggerProperties = serde_json::from_value(json!({
            "id": "stamp", "body": "b", "triggerType": "post", "triggerOperation": "all",
            "_rid": "r", "_etag": "\"e\"", "_ts": 5, "_self": "dbs/x/colls/y/triggers/z/"
        }))
        .unwrap();
        assert_eq!(
            (back.trigger_type, back.trigger_operation, back.ts),
            (TriggerType::Post, TriggerOperation::All, Some(5))
        );
        let s = StoredProcedureProperties::new("bulk", "function bulk(docs) {}");
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({"id": "bulk", "body": "function bulk(docs) {}"})
        );
        let u: UserDefinedFunctionProperties = serde_json::from_value(
            json!({"id": "tax", "body": "function tax(x) { return x; }", "_etag": "\"1\""}),
        )
        .unwrap();
        assert_eq!(u.etag.as_deref(), Some("\"1\""));
        assert!(
            serde_json::from_value::<TriggerProperties>(json!({"id": "t", "body": "b"})).is_err()
        );
    }

    #[test]
    fn script_logs_are_decoded() {
        for (header, want) in [
            ("", ""),
            ("plain", "plain"),
            ("inserted%2010%20docs", "inserted 10 docs"),
            ("line%0Anext", "line\nnext"),
            ("caf%C3%A9", "café"),
            ("100%", "100%"),
            ("%zz%4", "%zz%4"),
            ("%FF", "\u{FFFD}"),
        ] {
            assert_eq!(decode_script_log(header), want, "{header}");
        }
    }

    #[test]
    fn trigger_names_are_joined() {
        assert_eq!(trigger_include_header(&[]), None);
        assert_eq!(
            trigger_include_header(&["a".into(), "b".into()]).as_deref(),
            Some("a,b")
        );
    }
}
