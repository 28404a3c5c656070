//! Building stored items: validating the `id` and writing the system properties.

use serde_json::{Map, Value};

use crate::protocol::ids::{encode_rid, new_etag, unix_seconds};
use crate::protocol::route::invalid_id_reason;
use crate::protocol::ApiError;

/// System properties the service owns; any sent by a client are replaced.
pub(crate) const SYSTEM_PROPERTIES: [&str; 5] = ["_rid", "_self", "_etag", "_attachments", "_ts"];

/// Parses a request body as a JSON object, answering 400 with the parser's message otherwise.
pub(crate) fn parse_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_request(
            "The request body must be a JSON object.",
        )),
        Err(e) => Err(ApiError::bad_request(format!(
            "The request payload is invalid JSON: {e}"
        ))),
    }
}

/// Longest database or container id, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 255;

/// The `id` of a database or container body: an id (see [`id_of`]) of at most
/// [`MAX_NAME_CHARS`] characters.
pub(crate) fn name_of(map: &Map<String, Value>) -> Result<String, ApiError> {
    if let Some(Value::String(id)) = map.get("id") {
        let chars = id.chars().count();
        if chars > MAX_NAME_CHARS {
            return Err(ApiError::bad_request(format!(
                "The id is {chars} characters long. Ensure to provide a unique non-empty string less than '{MAX_NAME_CHARS}' characters."
            )));
        }
    }
    id_of(map)
}

/// The `id` of a body, checked as the service checks it.
pub(crate) fn id_of(map: &Map<String, Value>) -> Result<String, ApiError> {
    match map.get("id") {
        Some(Value::String(id)) => {
            if let Some(reason) = invalid_id_reason(id) {
                return Err(ApiError::bad_request(reason));
            }
            Ok(id.clone())
        }
        Some(_) => Err(ApiError::bad_request(
            "The input content is invalid because the required property, id, is not a string.",
        )),
        None => Err(ApiError::bad_request(
            "The input content is invalid because the required property, id, is missing.",
        )),
    }
}

/// A resource ready to store: its JSON text and etag.
pub(crate) struct Sealed {
    pub body: bytes::Bytes,
    pub etag: String,
}

/// Writes the system properties into `map` (replacing client-sent ones) and serializes it.
pub(crate) fn seal(mut map: Map<String, Value>, rid_bytes: &[u8], self_link: String) -> Sealed {
    for name in SYSTEM_PROPERTIES {
        map.shift_remove(name);
    }
    let etag = new_etag();
    map.insert("_rid".into(), Value::String(encode_rid(rid_bytes)));
    map.insert("_self".into(), Value::String(self_link));
    map.insert("_etag".into(), Value::String(etag.clone()));
    map.insert("_attachments".into(), Value::String("attachments/".into()));
    map.insert("_ts".into(), Value::from(unix_seconds()));
    let body = serde_json::to_vec(&Value::Object(map)).unwrap_or_default();
    Sealed {
        body: body.into(),
        etag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealing_replaces_client_system_properties() {
        let map = parse_object(br#"{"id":"a","_etag":"mine","_ts":1,"x":1}"#).unwrap();
        let sealed = seal(map, &[1, 2, 3, 4], "dbs/x/".into());
        let v: Value = serde_json::from_slice(&sealed.body).unwrap();
        assert_eq!(v["_etag"], Value::String(sealed.etag.clone()));
        assert_ne!(v["_ts"], Value::from(1));
        assert_eq!(v["x"], Value::from(1));
        assert!(sealed.etag.starts_with('"'));
    }

    #[test]
    fn bad_bodies_and_ids_are_400s() {
        assert_eq!(parse_object(b"{").unwrap_err().status, 400);
        assert!(parse_object(b"{").unwrap_err().message.contains("EOF"));
        assert_eq!(parse_object(b"[1]").unwrap_err().status, 400);
        for body in [r#"{}"#, r#"{"id":5}"#, r#"{"id":"a/b"}"#, r#"{"id":"a#"}"#] {
            let map = parse_object(body.as_bytes()).unwrap();
            assert_eq!(id_of(&map).unwrap_err().status, 400, "{body}");
        }
    }
}
