//! `/_emulator/account`: the account-level switches of the account document.
//!
//! `POST {"enablePerPartitionFailoverBehavior": false}` (or `true`, or `null` to leave it out of the
//! document) sets the per-partition failover switch, which SDKs read from `GET /` on their account
//! refresh (and which governs default hedging in some of them); `GET` answers the switches as they
//! stand.

use bytes::Bytes;
use http::Method;
use serde_json::{json, Map, Value};

use crate::exchange::{Reply, Shared};
use crate::protocol::ApiError;

/// The admin path.
pub(crate) const PATH: &str = "/_emulator/account";

/// The one switch this path sets, as the account document names it.
pub(crate) const PER_PARTITION_FAILOVER: &str = "enablePerPartitionFailoverBehavior";

/// Reads a POST body: the new value of the switch (`None`: unset it). Every other key is refused.
pub(crate) fn parse_update(body: &[u8]) -> Result<Option<bool>, String> {
    let parsed: Value = serde_json::from_slice(body)
        .map_err(|e| format!("The account body is invalid JSON: {e}"))?;
    let Value::Object(fields) = parsed else {
        return Err(format!(
            "The account body is a JSON object such as {{\"{PER_PARTITION_FAILOVER}\": false}}."
        ));
    };
    if let Some(other) = fields.keys().find(|k| k.as_str() != PER_PARTITION_FAILOVER) {
        return Err(format!(
            "Unknown account switch {other:?}; the switch this path sets is \"{PER_PARTITION_FAILOVER}\"."
        ));
    }
    match fields.get(PER_PARTITION_FAILOVER) {
        None => Err(format!(
            "The account body names no switch; send {{\"{PER_PARTITION_FAILOVER}\": true|false|null}}."
        )),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::Null) => Ok(None),
        Some(_) => Err(format!(
            "\"{PER_PARTITION_FAILOVER}\" is true, false or null."
        )),
    }
}

/// Handles `GET` and `POST /_emulator/account`.
pub(crate) fn account_admin(shared: &Shared, method: &Method, body: &[u8]) -> Reply {
    let outcome = match *method {
        Method::GET => Ok(()),
        Method::POST => parse_update(body)
            .map(|value| shared.account_switches.set_per_partition_failover(value))
            .map_err(ApiError::bad_request),
        _ => Err(ApiError::new(
            405,
            format!(
                "Use GET or POST {PATH} with {{\"{PER_PARTITION_FAILOVER}\": true|false|null}}."
            ),
        )),
    };
    match outcome {
        Ok(()) => {
            let mut answer = Map::new();
            answer.insert(
                PER_PARTITION_FAILOVER.to_owned(),
                shared
                    .account_switches
                    .per_partition_failover()
                    .map_or(Value::Null, Value::Bool),
            );
            Reply::json(200, Bytes::from(Value::Object(answer).to_string()), 0.0)
        }
        Err(e) => {
            let body = json!({"code": e.code(), "message": e.message}).to_string();
            Reply::json(e.status, Bytes::from(body), 0.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_bodies_table() {
        let table: &[(&str, Result<Option<bool>, &str>)] = &[
            (
                r#"{"enablePerPartitionFailoverBehavior": false}"#,
                Ok(Some(false)),
            ),
            (
                r#"{"enablePerPartitionFailoverBehavior": true}"#,
                Ok(Some(true)),
            ),
            (r#"{"enablePerPartitionFailoverBehavior": null}"#, Ok(None)),
            (r#"{}"#, Err("names no switch")),
            (
                r#"{"enablePerPartitionFailoverBehavior": "false"}"#,
                Err("true, false or null"),
            ),
            (
                r#"{"enablePerPartitionFailoverBehavior": 0}"#,
                Err("true, false or null"),
            ),
            (
                r#"{"x": 1, "enablePerPartitionFailoverBehavior": true}"#,
                Err("Unknown account switch \"x\""),
            ),
            ("[true]", Err("JSON object")),
            ("", Err("invalid JSON")),
            ("{", Err("invalid JSON")),
        ];
        for (body, want) in table {
            match (parse_update(body.as_bytes()), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, *want, "{body}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{body}: {got}"),
                (got, want) => panic!("{body}: got {got:?}, want {want:?}"),
            }
        }
    }
}
