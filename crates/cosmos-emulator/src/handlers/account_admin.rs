//! `/_emulator/account`: the account-level switches of the account document.
//!
//! `POST {"disableCrossRegionalHedging": true}` turns on the operator's kill switch for
//! cross-region hedging, which SDKs read from `GET /` on their account refresh; `false` turns it
//! off (the default), `null` leaves it out of the document. `enablePerPartitionFailoverBehavior`
//! (per-partition automatic failover) is set the same way and is left out by default. A body may
//! name one switch or both; the switches it does not name keep their values. `GET` answers both
//! as they stand (`null`: left out).

use bytes::Bytes;
use http::Method;
use serde_json::{json, Map, Value};

use crate::exchange::{Reply, Shared, SwitchUpdate, SwitchValues};
use crate::protocol::ApiError;

/// The admin path.
pub(crate) const PATH: &str = "/_emulator/account";

/// The hedging kill switch, as the account document names it.
pub(crate) const DISABLE_CROSS_REGIONAL_HEDGING: &str = "disableCrossRegionalHedging";

/// The per-partition failover switch, as the account document names it.
pub(crate) const PER_PARTITION_FAILOVER: &str = "enablePerPartitionFailoverBehavior";

/// The body this path takes, for error messages.
const USAGE: &str =
    "{\"disableCrossRegionalHedging\": true|false|null, \"enablePerPartitionFailoverBehavior\": true|false|null} (either or both)";

/// Reads a POST body into the update it asks for. Every other key, and any value but a boolean or
/// `null`, refuses the whole body.
pub(crate) fn parse_update(body: &[u8]) -> Result<SwitchUpdate, String> {
    let parsed: Value = serde_json::from_slice(body)
        .map_err(|e| format!("The account body is invalid JSON: {e}"))?;
    let Value::Object(fields) = parsed else {
        return Err(format!("The account body is a JSON object: {USAGE}."));
    };
    if let Some(other) = fields
        .keys()
        .find(|k| ![DISABLE_CROSS_REGIONAL_HEDGING, PER_PARTITION_FAILOVER].contains(&k.as_str()))
    {
        return Err(format!(
            "Unknown account switch {other:?}; this path sets {USAGE}."
        ));
    }
    let value = |name: &str| match fields.get(name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(Some(*b))),
        Some(Value::Null) => Ok(Some(None)),
        Some(_) => Err(format!("\"{name}\" is true, false or null.")),
    };
    let update = SwitchUpdate {
        disable_cross_regional_hedging: value(DISABLE_CROSS_REGIONAL_HEDGING)?,
        per_partition_failover: value(PER_PARTITION_FAILOVER)?,
    };
    if update == SwitchUpdate::default() {
        return Err(format!("The account body names no switch; send {USAGE}."));
    }
    Ok(update)
}

/// The switches as document fields: `(name, value)`, `None` for one left out.
pub(crate) fn fields(values: SwitchValues) -> [(&'static str, Option<bool>); 2] {
    [
        (
            DISABLE_CROSS_REGIONAL_HEDGING,
            values.disable_cross_regional_hedging,
        ),
        (PER_PARTITION_FAILOVER, values.per_partition_failover),
    ]
}

/// Handles `GET` and `POST /_emulator/account`.
pub(crate) fn account_admin(shared: &Shared, method: &Method, body: &[u8]) -> Reply {
    let outcome = match *method {
        Method::GET => Ok(shared.account_switches.get()),
        Method::POST => parse_update(body)
            .map(|update| shared.account_switches.apply(update))
            .map_err(ApiError::bad_request),
        _ => Err(ApiError::new(
            405,
            format!("Use GET or POST {PATH} with {USAGE}."),
        )),
    };
    match outcome {
        Ok(values) => {
            let answer: Map<String, Value> = fields(values)
                .into_iter()
                .map(|(name, v)| (name.to_owned(), v.map_or(Value::Null, Value::Bool)))
                .collect();
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

    fn update(kill: Option<Option<bool>>, ppaf: Option<Option<bool>>) -> SwitchUpdate {
        SwitchUpdate {
            disable_cross_regional_hedging: kill,
            per_partition_failover: ppaf,
        }
    }

    #[test]
    fn update_bodies_table() {
        let table: &[(&str, Result<SwitchUpdate, &str>)] = &[
            (
                r#"{"disableCrossRegionalHedging": true}"#,
                Ok(update(Some(Some(true)), None)),
            ),
            (
                r#"{"disableCrossRegionalHedging": false}"#,
                Ok(update(Some(Some(false)), None)),
            ),
            (
                r#"{"disableCrossRegionalHedging": null}"#,
                Ok(update(Some(None), None)),
            ),
            (
                r#"{"enablePerPartitionFailoverBehavior": false}"#,
                Ok(update(None, Some(Some(false)))),
            ),
            (
                r#"{"enablePerPartitionFailoverBehavior": null, "disableCrossRegionalHedging": true}"#,
                Ok(update(Some(Some(true)), Some(None))),
            ),
            (r#"{}"#, Err("names no switch")),
            (
                r#"{"disableCrossRegionalHedging": "true"}"#,
                Err("\"disableCrossRegionalHedging\" is true, false or null"),
            ),
            (
                r#"{"disableCrossRegionalHedging": true, "enablePerPartitionFailoverBehavior": 0}"#,
                Err("\"enablePerPartitionFailoverBehavior\" is true, false or null"),
            ),
            (
                r#"{"x": 1, "disableCrossRegionalHedging": true}"#,
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
