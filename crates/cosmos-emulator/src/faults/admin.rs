//! The admin API under `/_emulator/` on the global port: pure request -> response, no I/O.
//!
//! | method & path                    | body                              | answer                          |
//! |----------------------------------|-----------------------------------|---------------------------------|
//! | `GET /_emulator/faults`          |                                   | `{"profile","profile_rules":[..],"rules":[..]}` with hits |
//! | `POST /_emulator/faults`         | rules JSON (see [`super::rule_json`]) | 201 `{"ids":[..]}`          |
//! | `DELETE /_emulator/faults`       |                                   | `{"removed":N}`                 |
//! | `GET /_emulator/faults/{id}`     |                                   | the rule with its hits          |
//! | `PATCH /_emulator/faults/{id}`   | `{"enabled":bool}`                | the rule with its hits          |
//! | `DELETE /_emulator/faults/{id}`  |                                   | `{"removed":id}`                |
//! | `GET /_emulator/counters`        |                                   | `{"East US":{"read":3,..},..}`  |
//! | `DELETE /_emulator/counters`     |                                   | `{"reset":true}`                |
//! | `GET /_emulator/profile`         |                                   | `{"name","regions"}`            |
//! | `PUT /_emulator/profile`         | `{"name":..}` (+ optional `"regions":[..]`) | `{"name","regions"}`  |
//!
//! Errors answer `{"code","message"}`: 400 for a bad body or id, 404 for an unknown rule or admin
//! path, 405 for a method a path does not take. `POST /_emulator/failover` is not handled here (the
//! server does it, since it needs the store): [`handle`] returns `None` for it, as for every path
//! outside `/_emulator/`.

use http::Method;
use serde_json::{json, Value};

use super::quote::{cut, quoted};
use super::rule_json::RuleJson;
use super::{FaultInjector, RequestCounters, RuleId};

/// Prefix of every admin path.
pub(crate) const PREFIX: &str = "/_emulator/";

/// An admin answer: a status and a JSON body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AdminResponse {
    /// HTTP status.
    pub status: u16,
    /// JSON body.
    pub body: Vec<u8>,
}

impl AdminResponse {
    pub(crate) fn json(status: u16, body: Value) -> Self {
        AdminResponse {
            status,
            body: body.to_string().into_bytes(),
        }
    }

    pub(crate) fn error(status: u16, code: &str, message: impl Into<String>) -> Self {
        Self::json(status, json!({ "code": code, "message": message.into() }))
    }
}

/// Answer an admin request. `None` = not an admin path (does not start with `/_emulator/`), or
/// `/_emulator/failover`, which the server handles itself.
pub(crate) fn handle(
    method: &Method,
    path_and_query: &str,
    body: &[u8],
    faults: &FaultInjector,
    counters: &RequestCounters,
) -> Option<AdminResponse> {
    let path = path_and_query.split(['?', '#']).next().unwrap_or_default();
    let rest = path.strip_prefix(PREFIX)?;
    let segments: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    let response = match segments.as_slice() {
        ["failover"] | ["outages"] => return None,
        ["faults"] => faults_collection(method, body, faults),
        ["faults", id] => match id.parse::<u64>() {
            Ok(id) => fault_item(method, RuleId(id), body, faults),
            Err(_) => AdminResponse::error(400, "BadRequest", format!("fault rule id {} is not a number", quoted(id))),
        },
        ["counters"] => match *method {
            Method::GET => AdminResponse::json(200, counters.snapshot()),
            Method::DELETE => {
                counters.reset();
                AdminResponse::json(200, json!({ "reset": true }))
            }
            _ => not_allowed(method, path, "GET or DELETE"),
        },
        ["profile"] => profile(method, path, body, faults),
        _ => AdminResponse::error(
            404,
            "NotFound",
            format!("unknown admin path {} (known: /_emulator/faults, /_emulator/faults/{{id}}, /_emulator/counters, /_emulator/profile, /_emulator/failover, /_emulator/outages)", quoted(path)),
        ),
    };
    Some(response)
}

fn faults_collection(method: &Method, body: &[u8], faults: &FaultInjector) -> AdminResponse {
    match *method {
        Method::GET => {
            let rules: Vec<Value> = faults.rules().iter().map(snapshot_to_json).collect();
            let profile_rules: Vec<Value> = faults
                .profile_rules()
                .iter()
                .map(snapshot_to_json)
                .collect();
            AdminResponse::json(
                200,
                json!({ "profile": faults.profile_name(), "profile_rules": profile_rules, "rules": rules }),
            )
        }
        Method::POST => match faults.load_json(body) {
            Ok(ids) => AdminResponse::json(201, json!({ "ids": ids })),
            Err(message) => AdminResponse::error(400, "BadRequest", message),
        },
        Method::DELETE => {
            let removed = faults.rules().len();
            faults.clear();
            AdminResponse::json(200, json!({ "removed": removed }))
        }
        _ => not_allowed(method, "/_emulator/faults", "GET, POST or DELETE"),
    }
}

fn fault_item(method: &Method, id: RuleId, body: &[u8], faults: &FaultInjector) -> AdminResponse {
    let missing = || AdminResponse::error(404, "NotFound", format!("no fault rule with id {id}"));
    let current = || faults.rules().into_iter().find(|rule| rule.id == id);
    match *method {
        Method::GET => current().map_or_else(missing, |rule| {
            AdminResponse::json(200, snapshot_to_json(&rule))
        }),
        Method::DELETE if faults.remove(id) => AdminResponse::json(200, json!({ "removed": id })),
        Method::DELETE => missing(),
        Method::PATCH => {
            let enabled = match serde_json::from_slice::<Value>(body) {
                Ok(value) => match value.get("enabled").and_then(Value::as_bool) {
                    Some(on) => on,
                    None => {
                        return AdminResponse::error(
                            400,
                            "BadRequest",
                            "enabled: expected {\"enabled\":true|false}",
                        )
                    }
                },
                Err(e) => {
                    return AdminResponse::error(
                        400,
                        "BadRequest",
                        format!("body is not valid JSON: {e}"),
                    )
                }
            };
            if !faults.set_enabled(id, enabled) {
                return missing();
            }
            current().map_or_else(missing, |rule| {
                AdminResponse::json(200, snapshot_to_json(&rule))
            })
        }
        _ => not_allowed(
            method,
            &format!("/_emulator/faults/{id}"),
            "GET, PATCH or DELETE",
        ),
    }
}

fn profile(method: &Method, path: &str, body: &[u8], faults: &FaultInjector) -> AdminResponse {
    match *method {
        Method::GET => profile_answer(faults),
        Method::PUT => {
            let value: Value = match serde_json::from_slice(body) {
                Ok(value) => value,
                Err(e) => {
                    return AdminResponse::error(
                        400,
                        "BadRequest",
                        format!("body is not valid JSON: {e}"),
                    )
                }
            };
            let Some(name) = value.get("name").and_then(Value::as_str) else {
                return AdminResponse::error(
                    400,
                    "BadRequest",
                    "name: expected {\"name\":\"geo\"} (a string)",
                );
            };
            let result = match value.get("regions") {
                None | Some(Value::Null) => faults.switch_profile(name),
                Some(Value::Array(items)) => {
                    match items.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
                        Some(regions) => {
                            let regions: Vec<String> =
                                regions.into_iter().map(str::to_owned).collect();
                            faults.set_profile(name, &regions)
                        }
                        None => Err("regions: expected an array of region names".to_owned()),
                    }
                }
                Some(_) => Err("regions: expected an array of region names".to_owned()),
            };
            match result {
                Ok(()) => profile_answer(faults),
                Err(message) => AdminResponse::error(400, "BadRequest", message),
            }
        }
        _ => not_allowed(method, path, "GET or PUT"),
    }
}

fn snapshot_to_json(snapshot: &super::RuleSnapshot) -> Value {
    serde_json::to_value(RuleJson::from_snapshot(snapshot)).unwrap_or(Value::Null)
}

fn profile_answer(faults: &FaultInjector) -> AdminResponse {
    AdminResponse::json(
        200,
        json!({ "name": faults.profile_name(), "regions": faults.profile_regions() }),
    )
}

fn not_allowed(method: &Method, path: &str, allowed: &str) -> AdminResponse {
    AdminResponse::error(
        405,
        "MethodNotAllowed",
        format!(
            "{} is not allowed on {} (use {allowed})",
            cut(method.as_str()),
            cut(path)
        ),
    )
}
