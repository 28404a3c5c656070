//! A script's definition as a create or replace request sends it, checked as the service checks
//! it, and sealed with its system properties. Pure.

use bytes::Bytes;
use serde_json::{Map, Value};

use crate::protocol::ids::{encode_rid, new_etag, unix_seconds};
use crate::protocol::{ApiError, ScriptKind};
use crate::store::document::id_of;

/// When a trigger runs: before or after the write that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TriggerType {
    Pre,
    Post,
}

/// Which writes a trigger may be named on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TriggerOperation {
    All,
    Create,
    Replace,
    Delete,
    Update,
}

/// The write a trigger is named on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteOperation {
    Create,
    Replace,
    Delete,
}

impl TriggerOperation {
    /// Whether a trigger registered for `self` may run on `write` (`Update` covers replaces, as the
    /// service's update operation does).
    pub(crate) fn covers(self, write: WriteOperation) -> bool {
        match self {
            TriggerOperation::All => true,
            TriggerOperation::Create => write == WriteOperation::Create,
            TriggerOperation::Replace | TriggerOperation::Update => {
                write == WriteOperation::Replace
            }
            TriggerOperation::Delete => write == WriteOperation::Delete,
        }
    }
}

/// Trigger settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TriggerSpec {
    pub trigger_type: TriggerType,
    pub operation: TriggerOperation,
}

/// A stored script.
#[derive(Clone, Debug)]
pub(crate) struct Script {
    pub id: String,
    pub kind: ScriptKind,
    /// The JavaScript source (the definition's `body`).
    pub source: String,
    pub trigger: Option<TriggerSpec>,
    pub rid: [u8; 16],
    /// The resource JSON the service answers.
    pub json: Bytes,
    pub etag: String,
}

/// The parts of a definition the emulator acts on, checked.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Checked {
    pub id: String,
    pub source: String,
    pub trigger: Option<TriggerSpec>,
}

/// Checks a definition: `id` as for every resource, `body` a string, and for a trigger
/// `triggerType` (`Pre`, `Post`) and `triggerOperation` (`All`, `Create`, `Replace`, `Delete`,
/// `Update`); 400 naming what is wrong otherwise.
pub(crate) fn check(kind: ScriptKind, map: &Map<String, Value>) -> Result<Checked, ApiError> {
    let id = id_of(map)?;
    let source = match map.get("body") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(invalid("body", "is not a string")),
        None => return Err(missing("body")),
    };
    let trigger = match kind {
        ScriptKind::Trigger => Some(TriggerSpec {
            trigger_type: match text(map, "triggerType")?.to_ascii_lowercase().as_str() {
                "pre" => TriggerType::Pre,
                "post" => TriggerType::Post,
                _ => return Err(invalid("triggerType", "is not one of Pre, Post")),
            },
            operation: match text(map, "triggerOperation")?.to_ascii_lowercase().as_str() {
                "all" => TriggerOperation::All,
                "create" => TriggerOperation::Create,
                "replace" => TriggerOperation::Replace,
                "delete" => TriggerOperation::Delete,
                "update" => TriggerOperation::Update,
                _ => {
                    return Err(invalid(
                        "triggerOperation",
                        "is not one of All, Create, Replace, Delete, Update",
                    ))
                }
            },
        }),
        _ => None,
    };
    Ok(Checked {
        id,
        source,
        trigger,
    })
}

fn text<'m>(map: &'m Map<String, Value>, name: &str) -> Result<&'m str, ApiError> {
    match map.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(invalid(name, "is not a string")),
        None => Err(missing(name)),
    }
}

fn missing(name: &str) -> ApiError {
    ApiError::bad_request(format!(
        "The input content is invalid because the required property, {name}, is missing."
    ))
}

fn invalid(name: &str, why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "The input content is invalid because the property {name} {why}."
    ))
}

/// The stored script for a checked definition: the client's properties (a trigger's settings
/// spelled as sent, as the service echoes them: the SDKs send `pre`, `all`) with the system ones
/// (`_rid`, `_self`, `_etag`, `_ts`) written by the emulator.
pub(crate) fn seal(
    kind: ScriptKind,
    mut map: Map<String, Value>,
    checked: Checked,
    rid: [u8; 16],
    self_link: String,
) -> Script {
    for name in ["_rid", "_self", "_etag", "_ts", "_attachments"] {
        map.shift_remove(name);
    }
    let etag = new_etag();
    map.insert("_rid".into(), Value::String(encode_rid(&rid)));
    map.insert("_self".into(), Value::String(self_link));
    map.insert("_etag".into(), Value::String(etag.clone()));
    map.insert("_ts".into(), Value::from(unix_seconds()));
    let json = serde_json::to_vec(&Value::Object(map)).unwrap_or_default();
    Script {
        id: checked.id,
        kind,
        source: checked.source,
        trigger: checked.trigger,
        rid,
        json: json.into(),
        etag,
    }
}

/// A script as a data directory kept it (its resource JSON, `_rid` bytes and kind), checked again
/// as a create would check it; Err naming what is wrong when the kept JSON is not a definition.
pub(crate) fn restore(kind: ScriptKind, json: Bytes, rid: [u8; 16]) -> Result<Script, String> {
    let map: Map<String, Value> = serde_json::from_slice(&json)
        .map_err(|e| format!("a kept {} definition is not JSON: {e}", kind.segment()))?;
    let checked = check(kind, &map).map_err(|e| {
        format!(
            "a kept {} definition is refused: {}",
            kind.segment(),
            e.message
        )
    })?;
    let etag = match map.get("_etag") {
        Some(Value::String(etag)) => etag.clone(),
        _ => {
            return Err(format!(
                "the kept {} {:?} has no _etag",
                kind.segment(),
                checked.id
            ))
        }
    };
    Ok(Script {
        id: checked.id,
        kind,
        source: checked.source,
        trigger: checked.trigger,
        rid,
        json,
        etag,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn definitions_are_checked_as_the_service_checks_them() {
        let sproc = ScriptKind::StoredProcedure;
        let trigger = ScriptKind::Trigger;
        let table: Vec<(ScriptKind, Value, Option<&str>)> = vec![
            (sproc, json!({"id": "a", "body": "function(){}"}), None),
            (sproc, json!({"id": "a"}), Some("body, is missing")),
            (
                sproc,
                json!({"id": "a", "body": 1}),
                Some("body is not a string"),
            ),
            (sproc, json!({"body": "x"}), Some("id, is missing")),
            (
                sproc,
                json!({"id": "a/b", "body": "x"}),
                Some("invalid character"),
            ),
            (
                trigger,
                json!({"id": "t", "body": "x", "triggerType": "Pre", "triggerOperation": "All"}),
                None,
            ),
            (
                trigger,
                json!({"id": "t", "body": "x", "triggerType": "post", "triggerOperation": "delete"}),
                None,
            ),
            (
                trigger,
                json!({"id": "t", "body": "x", "triggerOperation": "All"}),
                Some("triggerType, is missing"),
            ),
            (
                trigger,
                json!({"id": "t", "body": "x", "triggerType": "During", "triggerOperation": "All"}),
                Some("triggerType is not one of"),
            ),
            (
                trigger,
                json!({"id": "t", "body": "x", "triggerType": "Pre", "triggerOperation": "Read"}),
                Some("triggerOperation is not one of"),
            ),
            (
                trigger,
                json!({"id": "t", "body": "x", "triggerType": "Pre"}),
                Some("triggerOperation, is missing"),
            ),
        ];
        for (kind, body, want) in table {
            let got = check(kind, &map(body.clone()));
            match want {
                None => assert!(got.is_ok(), "{body}: {got:?}"),
                Some(text) => {
                    let e = got.unwrap_err();
                    assert_eq!(e.status, 400, "{body}");
                    assert!(e.message.contains(text), "{body}: {}", e.message);
                }
            }
        }
    }

    #[test]
    fn trigger_operations_cover_their_writes() {
        use TriggerOperation as T;
        use WriteOperation as W;
        let table = [
            (T::All, W::Create, true),
            (T::All, W::Delete, true),
            (T::Create, W::Create, true),
            (T::Create, W::Replace, false),
            (T::Replace, W::Replace, true),
            (T::Update, W::Replace, true),
            (T::Delete, W::Create, false),
            (T::Delete, W::Delete, true),
        ];
        for (op, write, want) in table {
            assert_eq!(op.covers(write), want, "{op:?} {write:?}");
        }
    }

    #[test]
    fn sealing_writes_system_properties_and_keeps_trigger_settings_as_sent() {
        let body = map(json!({"id": "t", "body": "x", "triggerType": "pre",
            "triggerOperation": "all", "_etag": "mine"}));
        let checked = check(ScriptKind::Trigger, &body).unwrap();
        let script = seal(ScriptKind::Trigger, body, checked, [1; 16], "self/".into());
        let v: Value = serde_json::from_slice(&script.json).unwrap();
        assert_eq!(v["triggerType"], "pre");
        assert_eq!(v["triggerOperation"], "all");
        assert_eq!(script.trigger.unwrap().trigger_type, TriggerType::Pre);
        assert_eq!(v["_etag"], Value::String(script.etag.clone()));
        assert_eq!(v["_self"], "self/");
        assert!(v["_ts"].is_u64());
    }

    #[test]
    fn a_kept_script_comes_back_as_it_was_sealed() {
        let body = map(
            json!({"id": "t", "body": "function(){}", "triggerType": "Post",
            "triggerOperation": "Delete"}),
        );
        let checked = check(ScriptKind::Trigger, &body).unwrap();
        let sealed = seal(ScriptKind::Trigger, body, checked, [3; 16], "self/".into());
        let back = restore(ScriptKind::Trigger, sealed.json.clone(), sealed.rid).unwrap();
        assert_eq!(back.id, "t");
        assert_eq!(back.source, "function(){}");
        assert_eq!(back.trigger, sealed.trigger);
        assert_eq!(
            (back.etag, back.rid, back.json),
            (sealed.etag, sealed.rid, sealed.json)
        );
        let refused = [
            (
                ScriptKind::Trigger,
                br#"{"id":"t","body":"x","_etag":"e"}"#.as_slice(),
                "triggerType",
            ),
            (
                ScriptKind::StoredProcedure,
                br#"{"id":"s","body":"x"}"#,
                "_etag",
            ),
            (ScriptKind::StoredProcedure, b"not json", "not JSON"),
        ];
        for (kind, json, why) in refused {
            let e = restore(kind, Bytes::from_static(json), [0; 16]).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
